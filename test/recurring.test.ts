import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  legacyOnDynamicEndpoint,
  databaseKind,
  startTestApp,
  type ApiResponse,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';
import { startReceiver } from './helpers/receiver.js';

const visa = '4242424242424242';
const declinedCard = '4000000000000002';
/** docs/api.md#sandbox-test-cards: the storing payment succeeds, every later MIT is declined. */
const mitDeclinedCard = '4000000000000341';
const unknownPaymentId = 'pt_1000000000000000001';

describe(`recurring series (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  async function createCustomer(merchant: TestMerchant): Promise<string> {
    const response = await merchant.call('POST', '/customers/create', { email: 'ada@example.com' });
    assert.equal(response.status, 200, response.raw);
    return response.body.data.id;
  }

  async function createMethod(merchant: TestMerchant, cardNo = visa): Promise<string> {
    const response = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(response.status, 200, response.raw);
    return response.body.data.id;
  }

  function pay(merchant: TestMerchant, body: Record<string, unknown>): Promise<ApiResponse> {
    return merchant.call('POST', '/payment/create', { amount: '1500', currency: 'USD', confirm: 'true', ...body });
  }

  async function paid(merchant: TestMerchant, body: Record<string, unknown>) {
    const response = await pay(merchant, body);
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  /** The first payment of a series, succeeded: the customer and method are bound by it. */
  async function startSeries(merchant: TestMerchant, cardNo = visa) {
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant, cardNo);
    const initial = await paid(merchant, { customerId, paymentMethod, recurring: { initial: true } });
    assert.equal(initial.status, 'succeeded', JSON.stringify(initial));
    return { customerId, paymentMethod, initialId: initial.id as string, initial };
  }

  const followUp = (relationPaymentId: string) => ({ recurring: { initial: false, relationPaymentId } });

  function assertRefused(response: ApiResponse, param: string, code = 'invalid_request', status = 400) {
    assert.equal(response.status, status, response.raw);
    assert.equal(response.body.code, code, response.raw);
    assert.equal(response.body.data?.param, param, response.raw);
  }

  test('a series of three: the first payment stores the card, two follow-ups without customer or method charge it as MIT', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod, initialId, initial } = await startSeries(merchant);
    assert.equal(initial.setupFutureUsage, 'on');
    assert.equal(initial.subsequentInitialType, null);
    assert.deepEqual(initial.recurring, { initial: true, relationPaymentId: null });
    const method = (await merchant.call('GET', `/payment_methods/${paymentMethod}`)).body.data;
    assert.equal(method.customerId, customerId, 'the first payment of the series bound the card');

    const second = await paid(merchant, { amount: '990', ...followUp(initialId) });
    const third = await paid(merchant, { amount: '990', recurring: { initial: false, relationPaymentId: second.id } });
    for (const payment of [second, third]) {
      assert.equal(payment.status, 'succeeded', JSON.stringify(payment));
      assert.equal(payment.customerId, customerId);
      assert.equal(payment.paymentMethod, paymentMethod);
      assert.equal(payment.subsequentInitialType, 'mit');
      assert.equal(payment.amountReceived, '990');
      const retrieved = (await merchant.call('GET', `/payment/${payment.id}`)).body.data;
      assert.deepEqual(retrieved, payment);
    }
    assert.deepEqual(second.recurring, { initial: false, relationPaymentId: initialId });
    assert.deepEqual(third.recurring, { initial: false, relationPaymentId: second.id });
  });

  test('a follow-up may repeat its customerId and paymentMethod when they equal the series’', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod, initialId } = await startSeries(merchant);
    const payment = await paid(merchant, {
      customerId,
      paymentMethod,
      subsequentInitialType: 'mit',
      ...followUp(initialId),
    });
    assert.equal(payment.status, 'succeeded');
    assert.equal(payment.subsequentInitialType, 'mit');
  });

  test('"" for relationPaymentId means absent', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant);
    const initial = await paid(merchant, {
      customerId,
      paymentMethod,
      recurring: { initial: true, relationPaymentId: '' },
    });
    assert.equal(initial.status, 'succeeded');
    assert.deepEqual(initial.recurring, { initial: true, relationPaymentId: null });
    assertRefused(await pay(merchant, followUp('')), 'recurring.relationPaymentId');
  });

  test('refuses a follow-up without relationPaymentId, naming recurring.relationPaymentId', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod } = await startSeries(merchant);
    const response = await pay(merchant, { customerId, paymentMethod, recurring: { initial: false } });
    assertRefused(response, 'recurring.relationPaymentId');
    assert.match(response.body.msg, /required/);
  });

  test('refuses a relation to an unknown payment or to another merchant’s, with 400 naming the field (not 404)', async () => {
    const merchant = await ctx.merchant();
    const other = await ctx.merchant();
    const { initialId: othersPayment } = await startSeries(other);
    for (const relation of [unknownPaymentId, othersPayment]) {
      const response = await pay(merchant, followUp(relation));
      assertRefused(response, 'recurring.relationPaymentId');
      assert.match(response.body.msg, /names no payment of this merchant/);
    }
  });

  test('refuses a relation to a failed or not yet succeeded payment, naming the field and its status', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const failed = await paid(merchant, {
      customerId,
      paymentMethod: await createMethod(merchant, declinedCard),
      recurring: { initial: true },
    });
    assert.equal(failed.status, 'failed');
    const waiting = await paid(merchant, {
      customerId,
      paymentMethod: await createMethod(merchant),
      recurring: { initial: true },
      confirm: 'false',
    });
    assert.equal(waiting.status, 'requires_confirmation');
    for (const [relation, status] of [
      [failed.id, 'failed'],
      [waiting.id, 'requires_confirmation'],
    ]) {
      const response = await pay(merchant, followUp(relation));
      assertRefused(response, 'recurring.relationPaymentId');
      assert.match(response.body.msg, new RegExp(`succeeded payment; '${relation}' is ${status}`));
    }
  });

  test('refuses a relation to a payment without a customer', async () => {
    const merchant = await ctx.merchant();
    const oneOff = await paid(merchant, { paymentMethod: await createMethod(merchant) });
    assert.equal(oneOff.status, 'succeeded');
    assertRefused(await pay(merchant, followUp(oneOff.id)), 'recurring.relationPaymentId');
  });

  test('refuses a follow-up whose customerId or paymentMethod differs from the series’', async () => {
    const merchant = await ctx.merchant();
    const { initialId } = await startSeries(merchant);
    const otherCustomer = await createCustomer(merchant);
    const otherMethod = await createMethod(merchant);
    assertRefused(await pay(merchant, { customerId: otherCustomer, ...followUp(initialId) }), 'customerId');
    assertRefused(await pay(merchant, { paymentMethod: otherMethod, ...followUp(initialId) }), 'paymentMethod');
  });

  test('refuses recurring together with a conflicting subsequentInitialType or setupFutureUsage', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod, initialId } = await startSeries(merchant);
    assertRefused(
      await pay(merchant, { subsequentInitialType: 'cit', ...followUp(initialId) }),
      'subsequentInitialType',
    );
    const fresh = { customerId: await createCustomer(merchant), paymentMethod: await createMethod(merchant) };
    for (const subsequentInitialType of ['cit', 'mit']) {
      assertRefused(
        await pay(merchant, { ...fresh, subsequentInitialType, recurring: { initial: true } }),
        'subsequentInitialType',
      );
    }
    assertRefused(
      await pay(merchant, { ...fresh, setupFutureUsage: 'off', recurring: { initial: true } }),
      'setupFutureUsage',
    );
    assertRefused(
      await pay(merchant, { customerId, paymentMethod, recurring: { initial: true, relationPaymentId: initialId } }),
      'recurring.relationPaymentId',
    );
  });

  test('the first payment of a series has every rule of a storing payment', async () => {
    const merchant = await ctx.merchant();
    const paymentMethod = await createMethod(merchant);
    const response = await pay(merchant, { paymentMethod, recurring: { initial: true } });
    assertRefused(response, 'customerId');
    const noTokenization = await ctx.merchant({ tokenization: false });
    assertRefused(
      await pay(noTokenization, {
        customerId: await createCustomer(noTokenization),
        paymentMethod: await createMethod(noTokenization),
        recurring: { initial: true },
      }),
      'setupFutureUsage',
      'tokenization_not_enabled',
      403,
    );
  });

  test('a follow-up has every rule of a MIT payment: the mit capability and a bound pair', async () => {
    const noMit = await ctx.merchant({ mit: false });
    const { initialId } = await startSeries(noMit);
    assertRefused(await pay(noMit, followUp(initialId)), 'subsequentInitialType', 'mit_not_enabled', 403);

    // A succeeded payment with a customer but no storing: its pair was never bound.
    const merchant = await ctx.merchant();
    const unbound = await paid(merchant, {
      customerId: await createCustomer(merchant),
      paymentMethod: await createMethod(merchant),
    });
    assert.equal(unbound.status, 'succeeded');
    assertRefused(await pay(merchant, followUp(unbound.id)), 'paymentMethod', 'payment_method_not_bound');
  });

  test('a follow-up of a series on the MIT-declined test card 4000000000000341 is declined and failed', async () => {
    const merchant = await ctx.merchant();
    const { initialId } = await startSeries(merchant, mitDeclinedCard);
    const payment = await paid(merchant, followUp(initialId));
    assert.equal(payment.status, 'failed');
    assert.equal(payment.errorCode, 'card_declined');
    assert.equal(payment.subsequentInitialType, 'mit');
  });

  test("the follow-up's webhooks carry subsequentInitialType mit and the series", async () => {
    const merchant = await ctx.merchant();
    await legacyOnDynamicEndpoint(merchant);
    const receiver = await startReceiver();
    try {
      const { initialId } = await startSeries(merchant);
      const payment = await paid(merchant, { notifyUrl: receiver.url('/notify'), ...followUp(initialId) });
      assert.equal(payment.status, 'succeeded');
      // Both kinds of the event, sent by the delivery engine over real HTTP.
      assert.equal(await ctx.tessera.webhookDispatcher.runOnce(), 2);
      const requests = await receiver.waitFor(2, 10_000);
      const bodies = requests.map((request) => JSON.parse(request.body));
      assert.deepEqual(bodies.map((body) => body.type).sort(), [
        'endpoint_payment.payment_succeeded',
        'payment.succeeded',
      ]);
      for (const body of bodies) {
        assert.equal(body.data.id, payment.id);
        assert.equal(body.data.subsequentInitialType, 'mit');
        assert.deepEqual(body.data.recurring, { initial: false, relationPaymentId: initialId });
      }
    } finally {
      await receiver.close();
    }
  });

  test('/payment/{id}/update turns a payment into a follow-up, and refuses what contradicts its series', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod, initialId } = await startSeries(merchant);
    const draft = await paid(merchant, { confirm: 'false' });
    assert.equal(draft.status, 'requires_payment_method');

    const updated = await merchant.call('POST', `/payment/${draft.id}/update`, followUp(initialId));
    assert.equal(updated.status, 200, updated.raw);
    assert.equal(updated.body.data.status, 'requires_confirmation');
    assert.equal(updated.body.data.customerId, customerId);
    assert.equal(updated.body.data.paymentMethod, paymentMethod);
    assert.equal(updated.body.data.subsequentInitialType, 'mit');

    assertRefused(
      await merchant.call('POST', `/payment/${draft.id}/update`, { customerId: await createCustomer(merchant) }),
      'customerId',
    );
    assertRefused(
      await merchant.call('POST', `/payment/${draft.id}/update`, {
        recurring: { initial: true },
        setupFutureUsage: 'off',
      }),
      'setupFutureUsage',
    );
    assertRefused(
      await merchant.call('POST', `/payment/${draft.id}/confirm`, { paymentMethod: await createMethod(merchant) }),
      'paymentMethod',
    );

    const confirmed = await merchant.call('POST', `/payment/${draft.id}/confirm`, {});
    assert.equal(confirmed.status, 200, confirmed.raw);
    assert.equal(confirmed.body.data.status, 'succeeded');
    assert.equal(confirmed.body.data.subsequentInitialType, 'mit');
  });

  test('an update that leaves a series drops the mit it implied', async () => {
    const merchant = await ctx.merchant();
    const { initialId } = await startSeries(merchant);
    const payment = await paid(merchant, { confirm: 'false', ...followUp(initialId) });
    assert.equal(payment.subsequentInitialType, 'mit');
    const left = await merchant.call('POST', `/payment/${payment.id}/update`, { recurring: { initial: true } });
    assert.equal(left.status, 200, left.raw);
    assert.equal(left.body.data.subsequentInitialType, null);
    assert.equal(left.body.data.setupFutureUsage, 'on');
    assert.deepEqual(left.body.data.recurring, { initial: true, relationPaymentId: null });
  });
});
