/**
 * Payments through a Stripe processor account over Tessera's HTTP API, against the stand-in for
 * Stripe through Stripe's official client (docs/processors.md, Testing). The account is a test-mode
 * one: it takes the place of the sandbox for the merchant's test keys.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startStripeStandIn, stripeTestCards, type StripeStandIn } from './helpers/stripe-stand-in.js';

describe('payments through a Stripe account', () => {
  let context: TestContext;
  let standIn: StripeStandIn;
  let merchant: TestMerchant;
  let webhookPath: string;

  before(async () => {
    standIn = await startStripeStandIn();
    context = await startTestApp({ env: { TESSERA_PROCESSOR_TIMEOUT_MS: '8000' } });
    merchant = await context.merchant();
    const account = await injectRaw(context, {
      method: 'POST',
      url: `/admin/v1/merchants/${merchant.id}/processor_accounts/create`,
      headers: { authorization: `Bearer ${context.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        processor: 'stripe',
        mode: 'test',
        credentials: { secretKey: standIn.secretKey, webhookSecret: standIn.webhookSecret },
        baseUrl: standIn.url,
      }),
    });
    assert.equal(account.statusCode, 200, account.body);
    webhookPath = new URL(JSON.parse(account.body).data.webhookUrl).pathname;
  });
  after(async () => {
    await context?.close();
    await standIn?.close();
  });

  async function method(cardNo: string): Promise<string> {
    const created = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(created.status, 200, created.raw);
    return created.body.data.id;
  }

  async function pay(fields: Record<string, unknown>) {
    const payment = await merchant.call('POST', '/payment/create', {
      amount: '1999',
      currency: 'USD',
      confirm: true,
      ...fields,
    });
    assert.equal(payment.status, 200, payment.raw);
    return payment.body.data;
  }

  const eventsOf = async (paymentId: string) => {
    const listed = await merchant.call('GET', '/events?limit=100');
    return (listed.body.data.data as Array<{ type: string; data: { id: string } }>)
      .filter((event) => event.data.id === paymentId)
      .map((event) => event.type)
      .sort();
  };

  const intentOf = (paymentId: string) =>
    [...standIn.api.intents.values()].find(
      (intent) => (intent.metadata as Record<string, string>).tessera_payment_id === paymentId,
    );

  test('a test-mode account takes the test keys: storing, then MIT with the network reference off session', async () => {
    const customer = await merchant.call('POST', '/customers/create', {
      firstName: 'Grace',
      email: 'grace@example.com',
      merchantUserId: `user-${Date.now()}`,
    });
    const customerId = customer.body.data.id as string;
    const pm = await method(stripeTestCards.succeeds);
    const first = await pay({ customerId, paymentMethod: pm, setupFutureUsage: 'on' });
    assert.equal(first.status, 'succeeded');
    const firstRequest = standIn.requests.find((request) => request.idempotencyKey === `${first.id}.authorize`);
    assert.equal(firstRequest?.params.setup_future_usage, 'off_session');
    const mit = await pay({ customerId, paymentMethod: pm, setupFutureUsage: 'on', subsequentInitialType: 'mit' });
    assert.equal(mit.status, 'succeeded', JSON.stringify(mit));
    const mitRequest = standIn.requests.find((request) => request.idempotencyKey === `${mit.id}.authorize`);
    assert.equal(mitRequest?.params.off_session, 'true');
    const options = mitRequest?.params.payment_method_options as Record<string, Record<string, Record<string, string>>>;
    assert.equal(typeof options.card?.mit_exemption?.network_transaction_id, 'string');
    assert.deepEqual(await eventsOf(mit.id), ['payment.succeeded']);
  });

  test("the ledger takes the fee Stripe reported for the payment instead of the merchant's schedule", async () => {
    const payment = await pay({ paymentMethod: await method(stripeTestCards.succeeds) });
    assert.equal(payment.status, 'succeeded');
    const entries = await merchant.call('GET', `/balance_transactions?source=${payment.id}`);
    assert.equal(entries.status, 200, entries.raw);
    const [entry] = entries.body.data.data;
    assert.equal(entry.type, 'payment');
    // The stand-in's fee is Stripe's US card price: 2.9 % + 30.
    assert.deepEqual(
      entry.feeDetails.map((line: { type: string; amount: string | number }) => [line.type, String(line.amount)]),
      [['processor_fee', String(Math.round(1999 * 0.029) + 30)]],
    );
  });

  test('a decline keeps Stripe’s decline code as the processor reason', async () => {
    const failed = await pay({ paymentMethod: await method(stripeTestCards.insufficientFunds) });
    assert.equal(failed.status, 'failed');
    assert.equal(failed.errorCode, 'insufficient_funds');
    assert.equal(failed.processorReason, 'insufficient_funds');
  });

  test('never charges twice: a reset connection leaves the payment processing and the sweep replays the key', async () => {
    const chargesBefore = standIn.capturedCharges();
    standIn.resetNext(2);
    const payment = await pay({ paymentMethod: await method(stripeTestCards.succeeds) });
    assert.equal(payment.status, 'processing');
    context.clock.advance(6 * 60 * 1000);
    await context.runJobs();
    const after = await merchant.call('GET', `/payment/${payment.id}`);
    assert.equal(after.body.data.status, 'succeeded', after.raw);
    assert.equal(standIn.count('confirmations', `${payment.id}.authorize`), 1);
    assert.equal(standIn.capturedCharges(), chargesBefore + 1);
    assert.deepEqual(await eventsOf(payment.id), ['payment.succeeded']);
  });

  test('payment_intent.succeeded that comes before the answer is applied once; a forged one is refused', async () => {
    standIn.hangNext(1);
    const payment = await pay({ paymentMethod: await method(stripeTestCards.succeeds) });
    assert.equal(payment.status, 'processing');
    const intent = intentOf(payment.id);
    assert.ok(intent);
    const forged = standIn.event('payment_intent.succeeded', intent, { tamper: true });
    const refused = await injectRaw(context, {
      method: 'POST',
      url: webhookPath,
      headers: forged.headers,
      payload: forged.rawBody,
    });
    assert.equal(refused.statusCode, 401);
    assert.equal((await merchant.call('GET', `/payment/${payment.id}`)).body.data.status, 'processing');
    const event = standIn.event('payment_intent.succeeded', intent);
    for (let sent = 0; sent < 2; sent += 1) {
      const answer = await injectRaw(context, {
        method: 'POST',
        url: webhookPath,
        headers: event.headers,
        payload: event.rawBody,
      });
      assert.equal(answer.statusCode, 200, answer.body);
    }
    assert.equal((await merchant.call('GET', `/payment/${payment.id}`)).body.data.status, 'succeeded');
    context.clock.advance(6 * 60 * 1000);
    await context.runJobs();
    assert.deepEqual(await eventsOf(payment.id), ['payment.succeeded']);
    assert.equal(standIn.count('confirmations', `${payment.id}.authorize`), 1);
  });

  test('a refund goes through the payment’s account', async () => {
    const payment = await pay({ paymentMethod: await method(stripeTestCards.succeeds) });
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '500' });
    assert.equal(refund.status, 200, refund.raw);
    assert.equal(standIn.count('refunds', refund.body.data.id), 1);
    assert.ok(['pending', 'succeeded'].includes(refund.body.data.status));
  });
});
