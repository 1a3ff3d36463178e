/**
 * payment/create's two write paths (the processor keeping no state or some) and a notifyUrl's
 * rules in production (test/payments.test.ts has the payment's life cycle).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSandboxProcessor } from '../src/processor/sandbox.js';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

const visa = '4242424242424242';

/**
 * A payment created with confirm is written once, with the processor's answer, when the processor
 * keeps no state (the sandbox); otherwise it is written in processing before the processor is
 * asked. Both paths, told apart by counting the processor's calls.
 */
for (const statelessAuthorize of [true, false]) {
  describe(`payment/create with confirm, statelessAuthorize ${statelessAuthorize} (${databaseKind})`, () => {
    const calls = { authorize: 0, cancel: 0 };
    let ctx: TestContext;
    before(async () => {
      const sandbox = createSandboxProcessor({ followUpDelayMs: 3000 });
      ctx = await startTestApp({
        processor: {
          ...sandbox,
          statelessAuthorize,
          authorize: (request) => {
            calls.authorize += 1;
            return sandbox.authorize(request);
          },
          cancel: (reference) => {
            calls.cancel += 1;
            return sandbox.cancel(reference);
          },
        },
      });
    });
    after(() => ctx.close());

    async function pay(merchant: TestMerchant, body: Record<string, unknown>) {
      return merchant.call('POST', '/payment/create', { amount: '1000', currency: 'USD', confirm: 'true', ...body });
    }

    test('stores the card, then charges it as MIT, each payment with its one event', async () => {
      const merchant = await ctx.merchant();
      const customerId = (await merchant.call('POST', '/customers/create', { email: 'a@example.com' })).body.data.id;
      const paymentMethod = (
        await merchant.call('POST', '/payment_methods/create', {
          type: 'card',
          card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
        })
      ).body.data.id;
      const storing = await pay(merchant, { customerId, paymentMethod, setupFutureUsage: 'on' });
      assert.equal(storing.body.data.status, 'succeeded', storing.raw);
      const mit = await pay(merchant, { customerId, paymentMethod, subsequentInitialType: 'mit', amount: '250' });
      assert.equal(mit.body.data.status, 'succeeded', mit.raw);
      for (const payment of [storing.body.data, mit.body.data]) {
        assert.deepEqual((await merchant.call('GET', `/payment/${payment.id}`)).body.data, payment);
        const events = (await merchant.call('GET', `/events?objectId=${payment.id}`)).body.data.data;
        assert.deepEqual(
          events.map((event: { type: string }) => event.type),
          ['payment.succeeded'],
        );
        assert.deepEqual(events[0].data, { ...payment, actionStatus: null });
      }
      const method = (await merchant.call('GET', `/payment_methods/${paymentMethod}`)).body.data;
      assert.equal(method.customerId, customerId);
    });

    test('a duplicate orderNo is refused with nothing written, and no authorization left held', async () => {
      const merchant = await ctx.merchant();
      const paymentMethod = (
        await merchant.call('POST', '/payment_methods/create', {
          type: 'card',
          card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
        })
      ).body.data.id;
      const first = await pay(merchant, { paymentMethod, orderNo: 'order-1' });
      assert.equal(first.body.data.status, 'succeeded', first.raw);
      const before = { ...calls };
      const again = await pay(merchant, { paymentMethod, orderNo: 'order-1', amount: '2000' });
      assert.equal(again.status, 400, again.raw);
      assert.equal(again.body.code, 'duplicate_order');
      assert.equal(again.body.data.param, 'orderNo');
      // Written first: refused before the processor is asked. Written once: asked, then released.
      const asked = statelessAuthorize ? 1 : 0;
      assert.deepEqual(calls, { authorize: before.authorize + asked, cancel: before.cancel + asked });
      const payments = (await merchant.call('GET', '/payment')).body.data.data;
      assert.deepEqual(
        payments.map((payment: { id: string }) => payment.id),
        [first.body.data.id],
      );
      assert.equal((await merchant.call('GET', '/events')).body.data.data.length, 1);
    });
  });
}

/*
 * docs/webhooks.md#endpoints-and-tokens: a notifyUrl is a webhook endpoint for one payment, so in production it follows an
 * endpoint url's rules: no loopback, private, link-local or metadata address (checked again when
 * each delivery connects), refused when the payment is created, updated or confirmed.
 */
describe(`notifyUrl in production mode (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({ env: { NODE_ENV: 'production' } });
  });
  after(() => ctx.close());

  async function methodOf(merchant: TestMerchant): Promise<string> {
    const response = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    return response.body.data.id;
  }

  const refused = [
    ['http://127.0.0.1:4000/notify', 'notifyUrl is a loopback address, which is not allowed in production'],
    ['http://localhost:4000/notify', 'notifyUrl names localhost, which is not allowed in production'],
    ['http://10.1.2.3/notify', 'notifyUrl is a private address, which is not allowed in production'],
    ['http://169.254.169.254/latest', 'notifyUrl is a cloud metadata address, which is not allowed in production'],
  ] as const;

  for (const [notifyUrl, message] of refused) {
    test(`payment/create refuses ${notifyUrl} with 400 naming notifyUrl, writing nothing`, async () => {
      const merchant = await ctx.merchant();
      const paymentMethod = await methodOf(merchant);
      const response = await merchant.call('POST', '/payment/create', {
        amount: '1000',
        currency: 'USD',
        paymentMethod,
        confirm: true,
        notifyUrl,
      });
      assert.equal(response.status, 400, response.raw);
      assert.equal(response.body.code, 'invalid_request');
      assert.equal(response.body.data.param, 'notifyUrl');
      assert.equal(response.body.msg, message);
      assert.deepEqual((await merchant.call('GET', '/payment')).body.data.data, [], 'no payment was created');
    });
  }

  test('update and confirm refuse a loopback notifyUrl too; a public address is taken', async () => {
    const merchant = await ctx.merchant();
    const paymentMethod = await methodOf(merchant);
    const created = await merchant.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      paymentMethod,
      notifyUrl: 'https://93.184.215.14/notify',
    });
    assert.equal(created.status, 200, created.raw);
    const id = created.body.data.id;
    for (const path of ['update', 'confirm']) {
      const response = await merchant.call('POST', `/payment/${id}/${path}`, { notifyUrl: 'http://[::1]:4000/notify' });
      assert.equal(response.status, 400, response.raw);
      assert.equal(response.body.data.param, 'notifyUrl');
    }
    const payment = (await merchant.call('GET', `/payment/${id}`)).body.data;
    assert.equal(payment.notifyUrl, 'https://93.184.215.14/notify');
    assert.equal(payment.status, 'requires_confirmation');
  });
});
