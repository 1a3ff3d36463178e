import assert from 'node:assert/strict';
import { assertScriptsUnderNonce } from './helpers/page-safety.js';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestContext } from './helpers/harness.js';
import { dashboardClient, signedInOwner, type DashboardClient } from './helpers/dashboard.js';

describe('dashboard: payments search and the home figures (issue 11)', () => {
  let ctx: TestContext;
  let owner: DashboardClient;
  const password = 'correct horse battery';
  const ids: Record<'alice' | 'bob' | 'plain', string> = { alice: '', bob: '', plain: '' };

  before(async () => {
    ctx = await startTestApp();
    const merchant = await ctx.merchant({ name: 'Search shop' });
    owner = await signedInOwner(ctx, merchant.id, 'owner@search.test', password);
    const card = async (cardNo: string, email?: string) => {
      const created = await merchant.call('POST', '/payment_methods/create', {
        type: 'card',
        card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
        ...(email ? { billingDetails: { email } } : {}),
      });
      assert.equal(created.status, 200, created.raw);
      return created.body.data.id as string;
    };
    const pay = async (amount: string, paymentMethod: string, extra: Record<string, unknown>) => {
      const paid = await merchant.call('POST', '/payment/create', {
        amount,
        currency: 'USD',
        confirm: true,
        paymentMethod,
        ...extra,
      });
      assert.equal(paid.status, 200, paid.raw);
      return paid.body.data.id as string;
    };
    const customer = await merchant.call('POST', '/customers/create', { email: 'Alice@Search.test' });
    ids.alice = await pay('1000', await card('4242424242424242'), {
      customerId: customer.body.data.id,
      orderNo: 'ORD-1',
    });
    ids.bob = await pay('5000', await card('4000000000000002', 'bob@search.test'), { orderNo: 'ORD-2' });
    ids.plain = await pay('9000', await card('5555555555554444'), {});
  });
  after(() => ctx?.close());

  /** A new session after the clock moved past the idle time. */
  async function signInAgain() {
    owner = dashboardClient(ctx);
    await owner.get('/dashboard/sign-in');
    const answer = await owner.post('/dashboard/sign-in', { email: 'owner@search.test', password });
    assert.equal(answer.status, 303);
  }

  /** The payments a list page shows, by their test names. */
  async function shown(query: string): Promise<string[]> {
    const answer = await owner.get(`/dashboard/payments?${query}`);
    assert.equal(answer.status, 200, answer.body);
    return Object.entries(ids)
      .filter(([, id]) => answer.body.includes(`/dashboard/payments/${id}"`))
      .map(([name]) => name)
      .sort();
  }

  it('filters by status', async () => {
    assert.deepEqual(await shown('status=failed'), ['bob']);
    assert.deepEqual(await shown('status=succeeded'), ['alice', 'plain']);
  });

  it('filters by amount in major units of the currency, bounds included', async () => {
    assert.deepEqual(await shown('amountMin=10&amountMax=50.00'), ['alice', 'bob']);
    assert.deepEqual(await shown('amountMin=50.01'), ['plain']);
    assert.deepEqual(await shown('currency=usd&amountMin=10.5'), ['bob', 'plain']);
    assert.deepEqual(await shown('currency=EUR'), []);
  });

  it('searches by payment id, order number and e-mail (the customer’s or the card holder’s, any case)', async () => {
    assert.deepEqual(await shown(`q=${ids.plain}`), ['plain']);
    assert.deepEqual(await shown('q=ORD-2'), ['bob']);
    assert.deepEqual(await shown('q=alice%40search.TEST'), ['alice']);
    assert.deepEqual(await shown('q=bob%40search.test'), ['bob']);
    assert.deepEqual(await shown('q=nobody%40search.test'), []);
    assert.deepEqual(await shown('q=bob%40search.test&status=succeeded'), []);
  });

  it('names the field and keeps the typed values when a filter is not valid', async () => {
    const answer = await owner.get('/dashboard/payments?amountMin=ten&q=ORD-1');
    assert.equal(answer.status, 400);
    assert.match(answer.body, /id="f-amountMin-error"[^>]*>amountMin must be an amount in the currency/);
    const decimals = await owner.get('/dashboard/payments?currency=JPY&amountMin=10.5');
    assert.equal(decimals.status, 400);
    assert.match(decimals.body, /amountMin must be an amount in JPY with at most 0 decimals/);
    assert.match(answer.body, /value="ten"/);
    assert.match(answer.body, /value="ORD-1"/);
    const status = await owner.get('/dashboard/payments?status=lost');
    assert.equal(status.status, 400);
    assert.match(status.body, /id="f-status-error"/);
  });

  it("shows today's volume, count and success rate, and the last 30 days as SVG charts and a table", async () => {
    const today = ctx.clock.now().toISOString().slice(0, 10);
    const home = await owner.get('/dashboard');
    assert.equal(home.status, 200);
    // 10.00 + 90.00 USD succeeded, 50.00 USD failed: 3 payments, 2 of 3 decided ones succeeded.
    assert.match(home.body, /id="today-volume">100\.00 USD</);
    assert.match(home.body, /id="today-count">3</);
    assert.match(home.body, /id="today-rate">66\.7 %</);
    assert.match(home.body, /<svg[^>]*role="img"[^>]*aria-labelledby="volume-USD-title"/);
    assert.match(home.body, new RegExp(`<title>${today}: 100\\.00 USD</title>`));
    assert.equal((home.body.match(/<rect class="bar"/g) ?? []).length, 90, '30 days × 3 charts');
    assert.match(home.body, new RegExp(`<td[^>]*>${today}</td>\\s*<td[^>]*class="num">100\\.00 USD</td>`));
    // No inline script (docs/decisions/0005, 0047): the one script is the dashboard's own file, under the page's nonce.
    assert.deepEqual(assertScriptsUnderNonce(home.headers, home.body), ['/dashboard/assets/dashboard.js']);
  });

  it('moves the figures to the day they belong to as days pass, and drops days older than 30', async () => {
    const today = ctx.clock.now().toISOString().slice(0, 10);
    ctx.clock.advance(24 * 60 * 60 * 1000);
    await signInAgain();
    const tomorrow = await owner.get('/dashboard');
    assert.match(tomorrow.body, /id="today-count">0</);
    assert.match(tomorrow.body, /id="today-rate">—</);
    assert.match(tomorrow.body, new RegExp(`<td[^>]*>${today}</td>\\s*<td[^>]*class="num">100\\.00 USD</td>`));
    ctx.clock.advance(30 * 24 * 60 * 60 * 1000);
    await signInAgain();
    const later = await owner.get('/dashboard');
    assert.doesNotMatch(later.body, new RegExp(`<td[^>]*>${today}</td>`));
  });
});
