import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

const timestampForm = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const visa = '4242424242424242';
const declinedCard = '4000000000000002';

describe(`tokenization: storing, CIT and MIT payments (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  async function createCustomer(merchant: TestMerchant): Promise<string> {
    const response = await merchant.call('POST', '/customers/create', {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
    });
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

  async function pay(merchant: TestMerchant, body: Record<string, unknown>) {
    return merchant.call('POST', '/payment/create', { amount: '1000', currency: 'USD', confirm: 'true', ...body });
  }

  /** A customer and a payment method bound to it by a successful storing payment. */
  async function storedPair(merchant: TestMerchant, cardNo = visa) {
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant, cardNo);
    const storing = await pay(merchant, { customerId, paymentMethod, setupFutureUsage: 'on' });
    assert.equal(storing.status, 200, storing.raw);
    assert.equal(storing.body.data.status, 'succeeded');
    return { customerId, paymentMethod, storingId: storing.body.data.id as string };
  }

  async function methodOf(merchant: TestMerchant, id: string) {
    const response = await merchant.call('GET', `/payment_methods/${id}`);
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  async function eventsOf(merchant: TestMerchant, objectId: string) {
    const response = await merchant.call('GET', `/events?objectId=${objectId}`);
    assert.equal(response.status, 200, response.raw);
    // Newest first; oldest first reads like the payment's history.
    return (response.body.data.data as Array<Record<string, any>>).reverse();
  }

  test('docs/api.md#operations flow: a storing payment binds customer and method, then CIT and MIT charge the stored pair', async () => {
    const merchant = await ctx.merchant();

    // (a) the customer.
    const customer = await merchant.call('POST', '/customers/create', {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      merchantUserId: 'user-42',
    });
    assert.equal(customer.status, 200, customer.raw);
    const customerId: string = customer.body.data.id;
    assert.match(customerId, /^cus_\d{19}$/);

    // (b) the payment method, not bound to anyone yet.
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(method.status, 200, method.raw);
    const paymentMethod: string = method.body.data.id;
    assert.match(paymentMethod, /^pm_\d{19}$/);
    assert.equal(method.body.data.customerId, null);
    assert.equal(method.body.data.card.tokenType, null);

    // (c) the first storing payment, with the docs/api.md#payments request fields as the contract writes them.
    const request = {
      amount: '1999',
      currency: 'USD',
      confirmationMethod: 'automatic',
      customerId,
      paymentMethod,
      description: 'First order',
      ip: '203.0.113.7',
      confirm: 'true',
      lineItems: [
        {
          amount: 1999,
          currency: 'USD',
          description: 'A notebook',
          images: ['https://shop.example.com/notebook.png'],
          name: 'Notebook',
          quantity: 1,
        },
      ],
      notifyUrl: 'https://shop.example.com/notify',
      orderNo: 'order-1001',
      preAuth: 'n',
      receiptEmail: 'ada@example.com',
      returnUrl: 'https://shop.example.com/return',
      setupFutureUsage: 'on',
      statementDescriptor: 'SHOP EXAMPLE',
      statementDescriptorSuffix: '',
      website: 'https://shop.example.com',
    };
    const storing = await merchant.call('POST', '/payment/create', request);
    assert.equal(storing.status, 200, storing.raw);
    assert.equal(storing.body.code, 'success');
    assert.equal(storing.body.msg, 'success');
    const payment = storing.body.data;
    assert.match(payment.id, /^pt_\d{19}$/);
    assert.match(payment.clientSecret, new RegExp(`^${payment.id}_secret_[0-9a-f]{64}$`));
    assert.match(payment.created, timestampForm);
    assert.equal(payment.riskInfo.riskMessage, 'risk_pass');
    assert.ok(Number.isInteger(payment.riskInfo.riskScore));
    assert.deepEqual(payment, {
      id: payment.id,
      amount: '1999',
      currency: 'USD',
      confirmationMethod: 'automatic',
      customerId,
      paymentMethod,
      description: 'First order',
      ip: '203.0.113.7',
      confirm: 'true',
      lineItems: request.lineItems,
      notifyUrl: 'https://shop.example.com/notify',
      orderNo: 'order-1001',
      preAuth: 'n',
      receiptEmail: 'ada@example.com',
      returnUrl: 'https://shop.example.com/return',
      setupFutureUsage: 'on',
      subsequentInitialType: null,
      statementDescriptor: 'SHOP EXAMPLE',
      statementDescriptorSuffix: '',
      website: 'https://shop.example.com',
      userAgent: null,
      shipping: null,
      appScheme: null,
      openUserId: null,
      fromChannel: null,
      automaticPaymentMethods: null,
      recurring: null,
      paymentMethodTypes: ['card'],
      paymentMethodType: 'card',
      paymentMethodDetails: {
        type: 'card',
        card: {
          brand: method.body.data.card.brand,
          last4: '4242',
          expMonth: '12',
          expYear: '2030',
          country: method.body.data.card.country,
          fingerprint: method.body.data.card.fingerprint,
        },
      },
      clientSecret: payment.clientSecret,
      canceledAt: null,
      cancellationReason: null,
      amountReceived: '1999',
      amountCapturable: '0',
      amountRefunded: '0',
      amountDisputed: '0',
      disputes: [],
      created: ctx.clock.now().toISOString(),
      riskInfo: payment.riskInfo,
      status: 'succeeded',
      displayStatus: 'succeeded',
      errorCode: null,
      errorMessage: null,
      processorReason: null,
      invoiceId: null,
      use3D: false,
    });

    // The service bound the pair and provisioned a network token.
    const bound = await methodOf(merchant, paymentMethod);
    assert.equal(bound.customerId, customerId);
    assert.equal(bound.card.tokenType, 'network_token');

    // docs/api.md#tokenization-rules: CIT with the stored pair.
    const cit = await pay(merchant, {
      amount: '2500',
      customerId,
      paymentMethod,
      setupFutureUsage: 'on',
      subsequentInitialType: 'cit',
    });
    assert.equal(cit.status, 200, cit.raw);
    assert.equal(cit.body.data.status, 'succeeded');
    assert.equal(cit.body.data.subsequentInitialType, 'cit');
    assert.equal(cit.body.data.customerId, customerId);
    assert.equal(cit.body.data.paymentMethod, paymentMethod);
    assert.equal(cit.body.data.amountReceived, '2500');

    // docs/api.md#tokenization-rules: MIT, the same call with subsequentInitialType = mit.
    const mit = await pay(merchant, {
      amount: '2500',
      customerId,
      paymentMethod,
      setupFutureUsage: 'on',
      subsequentInitialType: 'mit',
    });
    assert.equal(mit.status, 200, mit.raw);
    assert.equal(mit.body.data.status, 'succeeded');
    assert.equal(mit.body.data.subsequentInitialType, 'mit');
    assert.equal(mit.body.data.use3D, false);
  });

  test('MIT rides on the network transaction reference kept by the storing payment', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod, storingId } = await storedPair(merchant);
    const mit = await pay(merchant, { customerId, paymentMethod, subsequentInitialType: 'mit' });
    assert.equal(mit.body.data.status, 'succeeded', mit.raw);
    const rows = await ctx.tessera.db.query<{ id: string; network_transaction_id: string | null }>(
      'SELECT id, network_transaction_id FROM payments WHERE id = ANY($1::text[])',
      [[storingId, mit.body.data.id]],
    );
    const byId = new Map(rows.map((row) => [row.id, row.network_transaction_id]));
    assert.ok(byId.get(storingId));
    assert.equal(byId.get(mit.body.data.id), byId.get(storingId));
  });

  test('erases the security code after the first authorization, and later payments need none', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod } = await storedPair(merchant);
    const [row] = await ctx.tessera.db.query<{ security_code_encrypted: string | null }>(
      'SELECT security_code_encrypted FROM payment_methods WHERE id = $1',
      [paymentMethod],
    );
    assert.equal(row?.security_code_encrypted, null);
    const cit = await pay(merchant, { customerId, paymentMethod, subsequentInitialType: 'cit' });
    assert.equal(cit.body.data.status, 'succeeded', cit.raw);
  });

  test('writes an event for the storing payment whose data is the payment plus actionStatus', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant);
    const storing = await pay(merchant, { customerId, paymentMethod, setupFutureUsage: 'on' });
    const payment = storing.body.data;
    const events = await eventsOf(merchant, payment.id);
    assert.equal(events.length, 1);
    const [event] = events;
    assert.match(event!.id, /^evt_\d{19}$/);
    assert.deepEqual(Object.keys(event!).sort(), ['apiVersion', 'created', 'data', 'id', 'sequence', 'type']);
    assert.equal(event!.apiVersion, 'v1');
    assert.equal(event!.type, 'payment.succeeded');
    assert.match(event!.created, timestampForm);
    assert.deepEqual(event!.data, { ...payment, actionStatus: null });
  });

  test('refuses a storing payment when the merchant has no tokenization (403 tokenization_not_enabled)', async () => {
    const merchant = await ctx.merchant({ tokenization: false, mit: false });
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant);
    const storing = await pay(merchant, { customerId, paymentMethod, setupFutureUsage: 'on' });
    assert.equal(storing.status, 403, storing.raw);
    assert.equal(storing.body.code, 'tokenization_not_enabled');
    assert.equal(storing.body.data.param, 'setupFutureUsage');

    for (const subsequentInitialType of ['cit', 'mit']) {
      const later = await pay(merchant, { customerId, paymentMethod, setupFutureUsage: 'on', subsequentInitialType });
      assert.equal(later.status, 403, later.raw);
      assert.equal(later.body.code, 'tokenization_not_enabled');
    }

    // A one-off payment needs no capability, and creates nothing to reuse.
    const oneOff = await pay(merchant, { customerId, paymentMethod });
    assert.equal(oneOff.status, 200, oneOff.raw);
    assert.equal(oneOff.body.data.status, 'succeeded');
    assert.equal((await methodOf(merchant, paymentMethod)).customerId, null);
  });

  test('refuses MIT when the merchant has no MIT capability (403 mit_not_enabled), while CIT works', async () => {
    const merchant = await ctx.merchant({ tokenization: true, mit: false });
    const { customerId, paymentMethod } = await storedPair(merchant);
    const mit = await pay(merchant, {
      customerId,
      paymentMethod,
      setupFutureUsage: 'on',
      subsequentInitialType: 'mit',
    });
    assert.equal(mit.status, 403, mit.raw);
    assert.equal(mit.body.code, 'mit_not_enabled');
    assert.equal(mit.body.data.param, 'subsequentInitialType');
    const cit = await pay(merchant, {
      customerId,
      paymentMethod,
      setupFutureUsage: 'on',
      subsequentInitialType: 'cit',
    });
    assert.equal(cit.status, 200, cit.raw);
    assert.equal(cit.body.data.status, 'succeeded');
  });

  test('refuses CIT and MIT with a pair no storing payment bound (payment_method_not_bound)', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const fresh = await createMethod(merchant);
    // Attached without a storing payment: listed with the customer, but no credential is stored.
    const attached = await createMethod(merchant);
    const attach = await merchant.call('POST', `/payment_methods/${attached}/attach`, { customerId });
    assert.equal(attach.status, 200, attach.raw);

    for (const paymentMethod of [fresh, attached]) {
      for (const subsequentInitialType of ['cit', 'mit']) {
        const response = await pay(merchant, {
          customerId,
          paymentMethod,
          setupFutureUsage: 'on',
          subsequentInitialType,
        });
        assert.equal(response.status, 400, response.raw);
        assert.equal(response.body.code, 'payment_method_not_bound');
        assert.equal(response.body.data.param, 'paymentMethod');
      }
    }
    const list = await merchant.call('GET', `/payment?customerId=${customerId}`);
    assert.deepEqual(list.body.data.data, [], 'no payment was created');
  });

  test('refuses a method bound to one customer with another customer (payment_method_bound_elsewhere)', async () => {
    const merchant = await ctx.merchant();
    const { paymentMethod } = await storedPair(merchant);
    const otherCustomer = await createCustomer(merchant);
    for (const extra of [
      { setupFutureUsage: 'on' },
      { setupFutureUsage: 'on', subsequentInitialType: 'cit' },
      { subsequentInitialType: 'mit' },
      {},
    ]) {
      const response = await pay(merchant, { customerId: otherCustomer, paymentMethod, ...extra });
      assert.equal(response.status, 400, response.raw);
      assert.equal(response.body.code, 'payment_method_bound_elsewhere');
      assert.equal(response.body.data.param, 'paymentMethod');
    }
    // Nor without a customer: the card belongs to its customer now.
    const anonymous = await pay(merchant, { paymentMethod });
    assert.equal(anonymous.status, 400, anonymous.raw);
    assert.equal(anonymous.body.code, 'payment_method_bound_elsewhere');
  });

  test('a failed storing payment binds nothing, so CIT is still refused', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant, declinedCard);
    const storing = await pay(merchant, { customerId, paymentMethod, setupFutureUsage: 'on' });
    assert.equal(storing.status, 200, storing.raw);
    assert.equal(storing.body.data.status, 'failed');
    assert.equal(storing.body.data.errorCode, 'card_declined');
    const method = await methodOf(merchant, paymentMethod);
    assert.equal(method.customerId, null);
    assert.equal(method.card.tokenType, null);
    const cit = await pay(merchant, {
      customerId,
      paymentMethod,
      setupFutureUsage: 'on',
      subsequentInitialType: 'cit',
    });
    assert.equal(cit.status, 400, cit.raw);
    assert.equal(cit.body.code, 'payment_method_not_bound');
  });

  test('accepts a zero amount only on a storing payment (zero-amount authorization)', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant);

    const oneOff = await pay(merchant, { amount: '0', customerId, paymentMethod });
    assert.equal(oneOff.status, 400, oneOff.raw);
    assert.equal(oneOff.body.code, 'invalid_request');
    assert.equal(oneOff.body.data.param, 'amount');

    const storing = await pay(merchant, { amount: '0', customerId, paymentMethod, setupFutureUsage: 'on' });
    assert.equal(storing.status, 200, storing.raw);
    assert.equal(storing.body.data.status, 'succeeded');
    assert.equal(storing.body.data.amount, '0');
    assert.equal(storing.body.data.amountReceived, '0');
    assert.equal((await methodOf(merchant, paymentMethod)).customerId, customerId);

    for (const subsequentInitialType of ['cit', 'mit']) {
      const later = await pay(merchant, { amount: 0, customerId, paymentMethod, subsequentInitialType });
      assert.equal(later.status, 400, later.raw);
      assert.equal(later.body.data.param, 'amount');
    }
  });

  test('refuses a storing payment, CIT or MIT without customerId, naming it', async () => {
    const merchant = await ctx.merchant();
    const paymentMethod = await createMethod(merchant);
    for (const extra of [
      { setupFutureUsage: 'on' },
      { subsequentInitialType: 'cit' },
      { subsequentInitialType: 'mit' },
    ]) {
      const response = await pay(merchant, { paymentMethod, ...extra });
      assert.equal(response.status, 400, response.raw);
      assert.equal(response.body.code, 'invalid_request');
      assert.equal(response.body.data.param, 'customerId');
    }
  });

  test('refuses 3-D Secure on MIT, where the cardholder is absent, naming use3D', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod } = await storedPair(merchant);
    const response = await pay(merchant, { customerId, paymentMethod, subsequentInitialType: 'mit', use3D: true });
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'invalid_request');
    assert.equal(response.body.data.param, 'use3D');
  });

  test('refuses a detached payment method (invalid_state)', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod } = await storedPair(merchant);
    const detach = await merchant.call('POST', `/payment_methods/${paymentMethod}/detach`);
    assert.equal(detach.status, 200, detach.raw);
    for (const extra of [{ subsequentInitialType: 'cit' }, { subsequentInitialType: 'mit' }, {}]) {
      const response = await pay(merchant, { customerId, paymentMethod, ...extra });
      assert.equal(response.status, 400, response.raw);
      assert.equal(response.body.code, 'invalid_state');
      assert.equal(response.body.data.param, 'paymentMethod');
    }
  });

  test('refuses an orderNo still used by a payment that may succeed (duplicate_order), frees it on failure or cancel', async () => {
    const merchant = await ctx.merchant();
    const paymentMethod = await createMethod(merchant);
    const first = await pay(merchant, { paymentMethod, orderNo: 'order-7' });
    assert.equal(first.body.data.status, 'succeeded', first.raw);
    const again = await pay(merchant, { paymentMethod, orderNo: 'order-7' });
    assert.equal(again.status, 400, again.raw);
    assert.equal(again.body.code, 'duplicate_order');
    assert.equal(again.body.data.param, 'orderNo');

    // An unconfirmed payment holds its order number too, until it is canceled.
    const pending = await merchant.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      paymentMethod,
      orderNo: 'order-8',
    });
    assert.equal(pending.body.data.status, 'requires_confirmation', pending.raw);
    assert.equal((await pay(merchant, { paymentMethod, orderNo: 'order-8' })).body.code, 'duplicate_order');
    await merchant.call('POST', `/payment/${pending.body.data.id}/cancel`, {});
    const afterCancel = await pay(merchant, { paymentMethod, orderNo: 'order-8' });
    assert.equal(afterCancel.body.data.status, 'succeeded', afterCancel.raw);

    // A declined payment does not hold its order number: the customer may try another card.
    const declined = await pay(merchant, {
      paymentMethod: await createMethod(merchant, declinedCard),
      orderNo: 'order-9',
    });
    assert.equal(declined.body.data.status, 'failed', declined.raw);
    const retry = await pay(merchant, { paymentMethod, orderNo: 'order-9' });
    assert.equal(retry.body.data.status, 'succeeded', retry.raw);

    // Order numbers are per merchant.
    const other = await ctx.merchant();
    const otherResponse = await pay(other, { paymentMethod: await createMethod(other), orderNo: 'order-7' });
    assert.equal(otherResponse.body.data.status, 'succeeded', otherResponse.raw);
  });

  test('two storing payments racing on one method with two customers bind it at most once', async () => {
    const merchant = await ctx.merchant();
    const paymentMethod = await createMethod(merchant);
    const customers = [await createCustomer(merchant), await createCustomer(merchant)];
    const responses = await Promise.all(
      customers.map((customerId) => pay(merchant, { customerId, paymentMethod, setupFutureUsage: 'on' })),
    );
    const succeeded = responses.filter((response) => response.body.data?.status === 'succeeded');
    assert.equal(succeeded.length, 1, responses.map((response) => response.raw).join('\n'));
    const winner = succeeded[0]!.body.data.customerId;
    for (const response of responses) {
      if (response.body.data?.status === 'succeeded') continue;
      // The loser was refused up front, or failed when its binding found the method taken.
      if (response.status === 400) {
        assert.equal(response.body.code, 'payment_method_bound_elsewhere');
      } else {
        assert.equal(response.body.data.status, 'failed');
        assert.equal(response.body.data.errorCode, 'payment_method_bound_elsewhere');
      }
    }
    assert.equal((await methodOf(merchant, paymentMethod)).customerId, winner);
  });

  test('records an event for each state change of a storing payment that settles later', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant, '4000000000000630');
    const storing = await pay(merchant, { customerId, paymentMethod, setupFutureUsage: 'on' });
    assert.equal(storing.body.data.status, 'processing', storing.raw);
    // Not succeeded yet, so not bound yet.
    assert.equal((await methodOf(merchant, paymentMethod)).customerId, null);

    ctx.clock.advance(5000);
    await ctx.runJobs();
    const settled = await merchant.call('GET', `/payment/${storing.body.data.id}`);
    assert.equal(settled.body.data.status, 'succeeded');
    const method = await methodOf(merchant, paymentMethod);
    assert.equal(method.customerId, customerId);
    assert.equal(method.card.tokenType, 'network_token');

    const events = await eventsOf(merchant, storing.body.data.id);
    assert.deepEqual(
      events.map((event) => [event.type, event.data.status]),
      [
        ['payment.processing', 'processing'],
        ['payment.succeeded', 'succeeded'],
      ],
    );
    for (const event of events) {
      assert.equal(event.apiVersion, 'v1');
      assert.equal(event.data.id, storing.body.data.id);
      assert.equal(event.data.actionStatus, null);
    }
    const cit = await pay(merchant, { customerId, paymentMethod, subsequentInitialType: 'cit' });
    assert.equal(cit.body.data.status, 'processing', cit.raw);
  });

  test("another merchant's customer or payment method is answered as missing (404)", async () => {
    const merchant = await ctx.merchant();
    const other = await ctx.merchant();
    const { customerId, paymentMethod } = await storedPair(other);
    const ownMethod = await createMethod(merchant);
    const withCustomer = await pay(merchant, { customerId, paymentMethod: ownMethod, setupFutureUsage: 'on' });
    assert.equal(withCustomer.status, 404, withCustomer.raw);
    assert.equal(withCustomer.body.code, 'resource_missing');
    assert.equal(withCustomer.body.data.param, 'customerId');
    const withMethod = await pay(merchant, { paymentMethod });
    assert.equal(withMethod.status, 404, withMethod.raw);
    assert.equal(withMethod.body.data.param, 'paymentMethod');
  });
});
