/**
 * The ledger (docs/balances.md): each money movement writes its balance transaction in its own
 * transaction, and the balance is the sum of their nets, pending until availableOn.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { signedInOwner } from './helpers/dashboard.js';

const cards = {
  visa: '4242424242424242',
  reversedLater: '4000000000000259',
  refundFails: '4000000000005126',
  declined: '4000000000000002',
};
const followUpDelayMs = 3000;
const dayMs = 24 * 60 * 60 * 1000;

describe(`ledger: balance transactions and the balance (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({ followUpDelayMs });
  });
  after(() => ctx.close());

  async function pay(merchant: TestMerchant, amount: string, card = cards.visa, currency = 'USD') {
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: card, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(method.status, 200, method.raw);
    const payment = await merchant.call('POST', '/payment/create', {
      amount,
      currency,
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(payment.status, 200, payment.raw);
    return payment.body.data as { id: string; status: string };
  }

  async function get(merchant: TestMerchant, path: string) {
    const answer = await merchant.call('GET', path);
    assert.equal(answer.status, 200, answer.raw);
    return answer.body.data;
  }

  async function entriesOf(merchant: TestMerchant, source: string) {
    return (await get(merchant, `/balance_transactions?source=${source}&limit=100`)).data as Array<Record<string, any>>;
  }

  async function followUps() {
    ctx.clock.advance(followUpDelayMs);
    await ctx.runJobs();
  }

  test('a succeeded payment writes a payment entry with the default fee (2.9 % + 30, half up), pending for 2 days', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, '1999');
    const [entry, ...others] = await entriesOf(merchant, payment.id);
    assert.equal(others.length, 0);
    assert.match(entry!.id, /^txn_\d{19}$/);
    assert.equal(entry!.type, 'payment');
    assert.equal(entry!.amount, '1999');
    // 1999 × 2.9 % = 57.971 → 58, + 30.
    assert.equal(entry!.fee, '88');
    assert.equal(entry!.net, '1911');
    assert.equal(entry!.feeDetails.length, 1);
    assert.equal(entry!.feeDetails[0].type, 'tessera_fee');
    assert.equal(entry!.feeDetails[0].amount, '88');
    assert.equal(entry!.status, 'pending');
    assert.equal(entry!.reportingCategory, 'charge');
    assert.equal(entry!.payoutId, null);
    assert.equal(Date.parse(entry!.availableOn) - Date.parse(entry!.created), 2 * dayMs);
    assert.deepEqual(await get(merchant, `/balance_transactions/${entry!.id}`), entry);

    assert.deepEqual(await get(merchant, '/balance'), {
      available: [{ amount: '0', currency: 'USD' }],
      pending: [{ amount: '1911', currency: 'USD' }],
    });
    ctx.clock.advance(2 * dayMs);
    assert.deepEqual(await get(merchant, '/balance'), {
      available: [{ amount: '1911', currency: 'USD' }],
      pending: [{ amount: '0', currency: 'USD' }],
    });
    assert.equal((await get(merchant, `/balance_transactions/${entry!.id}`)).status, 'available');
  });

  test("the dashboard's payment page shows the payment's fee, its line and its net", async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, '1999');
    const declined = await pay(merchant, '1000', cards.declined);
    const owner = await signedInOwner(ctx, merchant.id, 'owner@ledger.test', 'correct horse battery');
    const page = await owner.get(`/dashboard/payments/${payment.id}`);
    assert.equal(page.status, 200);
    const text = page.body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    assert.match(text, /Fee 0\.88 USD \(Processing fee \(2\.9% \+ 30\)\)/);
    assert.match(text, /Net 19\.11 USD \(pending\)/);
    const none = await owner.get(`/dashboard/payments/${declined.id}`);
    assert.equal(none.status, 200);
    assert.doesNotMatch(none.body, /<dt>Fee<\/dt>/);
  });

  test('a declined payment writes nothing; a zero-decimal currency pays the same rule in its own minor units', async () => {
    const merchant = await ctx.merchant();
    const declined = await pay(merchant, '1000', cards.declined);
    assert.equal(declined.status, 'failed');
    assert.deepEqual(await entriesOf(merchant, declined.id), []);
    const yen = await pay(merchant, '1000', cards.visa, 'JPY');
    const [entry] = await entriesOf(merchant, yen.id);
    assert.equal(entry!.fee, '59');
    assert.equal(entry!.net, '941');
    assert.equal(entry!.currency, 'JPY');
  });

  test('a refund leaves the balance when created, with no fee; a failed refund comes back as refund_failure', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, '800', cards.refundFails);
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '500' });
    assert.equal(refund.status, 200, refund.raw);
    const refundId = refund.body.data.id as string;
    const [entry] = await entriesOf(merchant, refundId);
    assert.equal(entry!.type, 'refund');
    assert.equal(entry!.amount, '-500');
    assert.equal(entry!.fee, '0');
    assert.equal(entry!.net, '-500');
    assert.equal(entry!.status, 'available');
    assert.equal(entry!.reportingCategory, 'refund');

    await followUps();
    assert.equal((await get(merchant, `/refunds/${refundId}`)).status, 'failed');
    const entries = await entriesOf(merchant, refundId);
    assert.deepEqual(
      entries.map((row) => [row.type, row.amount, row.fee, row.net, row.reportingCategory]),
      [
        ['refund_failure', '500', '0', '500', 'refund_failure'],
        ['refund', '-500', '0', '-500', 'refund'],
      ],
    );
    // 800 − (2.9 % of 800 = 23.2 → 23) − 30.
    const balance = await get(merchant, '/balance');
    assert.deepEqual(balance.pending, [{ amount: '747', currency: 'USD' }]);
    assert.deepEqual(balance.available, [{ amount: '0', currency: 'USD' }]);
  });

  test('a refund that succeeds is written once, at creation', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, '1000');
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '300' });
    assert.equal(refund.status, 200, refund.raw);
    await followUps();
    assert.equal((await get(merchant, `/refunds/${refund.body.data.id}`)).status, 'succeeded');
    const entries = await entriesOf(merchant, refund.body.data.id);
    assert.deepEqual(
      entries.map((row) => [row.type, row.net]),
      [['refund', '-300']],
    );
  });

  test('a payment reversed after the fact withdraws what its refunds do not cover, as an adjustment; its fee stays', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, '1000', cards.reversedLater);
    assert.equal(payment.status, 'succeeded');
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '200' });
    assert.equal(refund.status, 200, refund.raw);
    await followUps();
    assert.equal((await get(merchant, `/payment/${payment.id}`)).errorCode, 'payment_reversed');
    const entries = await entriesOf(merchant, payment.id);
    assert.deepEqual(
      entries.map((row) => [row.type, row.amount, row.fee, row.net, row.reportingCategory]),
      [
        ['adjustment', '-800', '0', '-800', 'charge_failure'],
        ['payment', '1000', '59', '941', 'charge'],
      ],
    );
    // Nothing of the payment is left but its fee: 941 − 800 − 200.
    const balance = await get(merchant, '/balance');
    const total = BigInt(balance.available[0].amount) + BigInt(balance.pending[0].amount);
    assert.equal(total, -59n);
  });

  test('filters, pagination and the separation of merchants', async () => {
    const merchant = await ctx.merchant();
    const other = await ctx.merchant();
    const first = await pay(merchant, '1000');
    ctx.clock.advance(1000);
    const second = await pay(merchant, '2000');
    ctx.clock.advance(1000);
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: first.id, amount: '100' });
    assert.equal(refund.status, 200, refund.raw);

    const all = (await get(merchant, '/balance_transactions')).data as Array<Record<string, any>>;
    assert.deepEqual(
      all.map((row) => row.source),
      [refund.body.data.id, second.id, first.id],
    );
    const payments = (await get(merchant, '/balance_transactions?type=payment')).data as Array<Record<string, any>>;
    assert.deepEqual(
      payments.map((row) => row.source),
      [second.id, first.id],
    );
    const page = await get(merchant, '/balance_transactions?limit=1');
    assert.equal(page.hasMore, true);
    const next = await get(merchant, `/balance_transactions?limit=2&startingAfter=${page.data[0].id}`);
    assert.deepEqual(
      next.data.map((row: { source: string }) => row.source),
      [second.id, first.id],
    );
    const availableNow = await get(
      merchant,
      `/balance_transactions?availableOn[lte]=${encodeURIComponent(ctx.clock.now().toISOString())}`,
    );
    assert.deepEqual(
      availableNow.data.map((row: { type: string }) => row.type),
      ['refund'],
    );

    const bad = await merchant.call('GET', '/balance_transactions?type=bonus');
    assert.equal(bad.status, 400, bad.raw);
    assert.equal(bad.body.data.param, 'type');
    const missing = await other.call('GET', `/balance_transactions/${all[0]!.id}`);
    assert.equal(missing.status, 404, missing.raw);
    assert.deepEqual((await get(other, '/balance_transactions')).data, []);
    assert.deepEqual(await get(other, '/balance'), { available: [], pending: [] });
  });

  test('the summary of a period: opening balance + activity by category = closing balance', async () => {
    const merchant = await ctx.merchant();
    const before = await pay(merchant, '5000');
    ctx.clock.advance(60_000);
    const from = ctx.clock.now();
    const during = await pay(merchant, '3000');
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: before.id, amount: '1000' });
    assert.equal(refund.status, 200, refund.raw);
    ctx.clock.advance(60_000);
    const to = new Date(ctx.clock.now().getTime() + 1);
    const summary = await get(
      merchant,
      `/balance/summary?from=${from.toISOString()}&to=${encodeURIComponent(to.toISOString())}`,
    );
    assert.equal(summary.currencies.length, 1);
    const usd = summary.currencies[0];
    // 5000 − 145 − 30.
    assert.equal(usd.openingBalance, '4825');
    assert.deepEqual(usd.activity, [
      { reportingCategory: 'charge', count: 1, gross: '3000', fee: '117', net: '2883' },
      { reportingCategory: 'refund', count: 1, gross: '-1000', fee: '0', net: '-1000' },
    ]);
    assert.equal(usd.closingBalance, '6708');
    const balance = await get(merchant, '/balance');
    assert.equal(BigInt(balance.available[0].amount) + BigInt(balance.pending[0].amount), 6708n);
    assert.ok(during.id);

    const reversed = await merchant.call('GET', `/balance/summary?from=${to.toISOString()}&to=${from.toISOString()}`);
    assert.equal(reversed.status, 400, reversed.raw);
    assert.equal(reversed.body.data.param, 'to');
  });
});
