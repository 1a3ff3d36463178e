import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestContext } from './helpers/harness.js';
import { signedInOwner, type DashboardClient } from './helpers/dashboard.js';

describe('dashboard: payments list filters and search (issue 11)', () => {
  let ctx: TestContext;
  let owner: DashboardClient;
  const ids: Record<'alice' | 'bob' | 'plain', string> = { alice: '', bob: '', plain: '' };

  before(async () => {
    ctx = await startTestApp();
    const merchant = await ctx.merchant({ name: 'Search shop' });
    owner = await signedInOwner(ctx, merchant.id, 'owner@search.test', 'correct horse battery');
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

  it('filters by amount, bounds included', async () => {
    assert.deepEqual(await shown('amountMin=1000&amountMax=5000'), ['alice', 'bob']);
    assert.deepEqual(await shown('amountMin=5001'), ['plain']);
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
    assert.match(answer.body, /id="f-amountMin-error"[^>]*>amountMin must be a whole number/);
    assert.match(answer.body, /value="ten"/);
    assert.match(answer.body, /value="ORD-1"/);
    const status = await owner.get('/dashboard/payments?status=lost');
    assert.equal(status.status, 400);
    assert.match(status.body, /id="f-status-error"/);
  });
});
