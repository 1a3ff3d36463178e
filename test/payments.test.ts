import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { currencyExponent, formatAmount, normalizeCurrency, parseAmount } from '../src/money.js';
import { allowedTransitions, displayStatusOf, operations, paymentStatuses } from '../src/payments/states.js';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

const visa = '4242424242424242';
const dayMs = 24 * 60 * 60 * 1000;

describe('money', () => {
  test('knows ISO 4217 currencies in any case and their minor-unit exponents', () => {
    assert.equal(normalizeCurrency('usd'), 'USD');
    assert.equal(normalizeCurrency('XYZ'), undefined);
    assert.equal(normalizeCurrency('constructor'), undefined);
    assert.deepEqual(
      ['USD', 'EUR', 'JPY', 'KRW', 'CLP', 'ISK', 'KWD', 'BHD'].map(currencyExponent),
      [2, 2, 0, 0, 0, 0, 3, 3],
    );
  });

  test('parses amounts of up to 12 digits of minor units, as text or whole numbers, never as floats', () => {
    assert.equal(parseAmount('1999'), 1999n);
    assert.equal(parseAmount('0'), 0n);
    assert.equal(parseAmount(1999), 1999n);
    assert.equal(parseAmount('999999999999'), 999_999_999_999n);
    for (const bad of ['1000000000000', '-1', '1.5', '', ' 1', '1e3', 1.5, -1, 1e13]) {
      assert.equal(parseAmount(bad), undefined, String(bad));
    }
  });

  test('formats minor units for people in the currency exponent', () => {
    assert.equal(formatAmount(1999n, 'USD'), '19.99');
    assert.equal(formatAmount(5n, 'USD'), '0.05');
    assert.equal(formatAmount(1999n, 'JPY'), '1999');
    assert.equal(formatAmount(1234n, 'KWD'), '1.234');
  });
});

describe('payment states', () => {
  test('every operation moves only along the transition table', () => {
    for (const operation of Object.values(operations)) {
      for (const from of operation.from) {
        for (const to of operation.to) assert.ok(allowedTransitions[from].includes(to), `${from} → ${to}`);
      }
    }
  });

  test('final statuses go nowhere except a reversal of succeeded', () => {
    assert.deepEqual(allowedTransitions.failed, []);
    assert.deepEqual(allowedTransitions.canceled, []);
    assert.deepEqual(allowedTransitions.succeeded, ['failed']);
  });

  test('maps every status to its docs/api.md#states displayStatus', () => {
    assert.deepEqual(Object.fromEntries(paymentStatuses.map((status) => [status, displayStatusOf(status)])), {
      requires_payment_method: 'incomplete',
      requires_confirmation: 'incomplete',
      requires_action: 'incomplete',
      processing: 'pending',
      requires_capture: 'uncaptured',
      succeeded: 'succeeded',
      failed: 'failed',
      canceled: 'canceled',
    });
  });
});

describe(`payments (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  async function createMethod(merchant: TestMerchant, cardNo = visa): Promise<string> {
    const response = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(response.status, 200, response.raw);
    return response.body.data.id;
  }

  async function createCustomer(merchant: TestMerchant): Promise<string> {
    const response = await merchant.call('POST', '/customers/create', { email: 'holder@example.com' });
    assert.equal(response.status, 200, response.raw);
    return response.body.data.id;
  }

  async function create(merchant: TestMerchant, body: Record<string, unknown>) {
    const response = await merchant.call('POST', '/payment/create', { amount: '1000', currency: 'USD', ...body });
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  async function retrieve(merchant: TestMerchant, id: string) {
    const response = await merchant.call('GET', `/payment/${id}`);
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  async function eventTypes(merchant: TestMerchant, objectId: string): Promise<string[]> {
    const response = await merchant.call('GET', `/events?objectId=${objectId}`);
    return (response.body.data.data as Array<{ type: string }>).map((event) => event.type).reverse();
  }

  function assertInvalidState(response: { status: number; body: any; raw: string }, status: string) {
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'invalid_state');
    assert.equal(response.body.data.status, status);
    assert.match(response.body.msg, new RegExp(`status is ${status}`));
  }

  test('without confirm a payment waits in requires_confirmation, with no event, until /confirm authorizes it', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, { paymentMethod: await createMethod(merchant) });
    assert.equal(payment.status, 'requires_confirmation');
    assert.equal(payment.displayStatus, 'incomplete');
    assert.equal(payment.confirm, 'false');
    assert.equal(payment.riskInfo, null);
    // docs/api.md#compatibility-with-existing-clients: left out, not null, when there is no action.
    assert.equal('nextAction' in payment, false);
    assert.equal(payment.amountReceived, '0');
    assert.deepEqual(await eventTypes(merchant, payment.id), []);

    const confirmed = await merchant.call('POST', `/payment/${payment.id}/confirm`, {
      returnUrl: 'https://shop.example.com/done',
      ip: '2001:db8::1',
    });
    assert.equal(confirmed.status, 200, confirmed.raw);
    assert.equal(confirmed.body.data.status, 'succeeded');
    assert.equal(confirmed.body.data.amountReceived, '1000');
    assert.equal(confirmed.body.data.returnUrl, 'https://shop.example.com/done');
    assert.equal(confirmed.body.data.ip, '2001:db8::1');
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.succeeded']);

    assertInvalidState(await merchant.call('POST', `/payment/${payment.id}/confirm`, {}), 'succeeded');
  });

  test('without a payment method: requires_payment_method until an update gives it one (docs/api.md#states)', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const payment = await create(merchant, { customerId });
    assert.equal(payment.status, 'requires_payment_method');
    assert.equal(payment.displayStatus, 'incomplete');
    assert.equal(payment.paymentMethod, null);
    assert.deepEqual(await retrieve(merchant, payment.id), payment);

    const confirmed = await merchant.call('POST', `/payment/${payment.id}/confirm`, {});
    assert.equal(confirmed.status, 400, confirmed.raw);
    assert.equal(confirmed.body.code, 'invalid_request');
    assert.equal(confirmed.body.data.param, 'paymentMethod');
    assert.equal(confirmed.body.msg, 'paymentMethod is required to confirm a payment');

    const unrelated = await merchant.call('POST', `/payment/${payment.id}/update`, { description: 'Order 7' });
    assert.equal(unrelated.body.data.status, 'requires_payment_method', unrelated.raw);

    const paymentMethod = await createMethod(merchant);
    const updated = await merchant.call('POST', `/payment/${payment.id}/update`, { paymentMethod });
    assert.equal(updated.status, 200, updated.raw);
    assert.equal(updated.body.data.status, 'requires_confirmation');
    assert.equal(updated.body.data.paymentMethod, paymentMethod);
    assert.equal(updated.body.data.description, 'Order 7');

    const done = await merchant.call('POST', `/payment/${payment.id}/confirm`, {});
    assert.equal(done.body.data.status, 'succeeded', done.raw);
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.succeeded']);
  });

  test('a payment without a method: an unknown customer is refused; it can be confirmed with one, or canceled', async () => {
    const merchant = await ctx.merchant();
    const unknown = await merchant.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      customerId: 'cus_0000000000000000000',
    });
    assert.equal(unknown.status, 404, unknown.raw);
    assert.equal(unknown.body.data.param, 'customerId');
    assert.deepEqual((await merchant.call('GET', '/payment')).body.data.data, []);

    const first = await create(merchant, {});
    const confirmed = await merchant.call('POST', `/payment/${first.id}/confirm`, {
      paymentMethod: await createMethod(merchant),
    });
    assert.equal(confirmed.body.data.status, 'succeeded', confirmed.raw);

    const second = await create(merchant, {});
    const canceled = await merchant.call('POST', `/payment/${second.id}/cancel`, {});
    assert.equal(canceled.body.data.status, 'canceled', canceled.raw);
    assert.equal(canceled.body.data.paymentMethod, null);
    assert.deepEqual(await eventTypes(merchant, second.id), ['payment.canceled']);
  });

  test('confirm may change the payment method, and the new one is checked', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, { paymentMethod: await createMethod(merchant) });
    const missing = await merchant.call('POST', `/payment/${payment.id}/confirm`, {
      paymentMethod: 'pm_0000000000000000000',
    });
    assert.equal(missing.status, 404, missing.raw);
    assert.equal(missing.body.data.param, 'paymentMethod');
    assert.equal((await retrieve(merchant, payment.id)).status, 'requires_confirmation');

    const declining = await createMethod(merchant, '4000000000009995');
    const confirmed = await merchant.call('POST', `/payment/${payment.id}/confirm`, { paymentMethod: declining });
    assert.equal(confirmed.body.data.paymentMethod, declining);
    assert.equal(confirmed.body.data.status, 'failed');
    assert.equal(confirmed.body.data.errorCode, 'insufficient_funds');
  });

  test('a pre-authorization waits for capture, which collects the full amount', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, {
      amount: '4200',
      paymentMethod: await createMethod(merchant),
      preAuth: 'y',
      confirm: true,
    });
    assert.equal(payment.status, 'requires_capture');
    assert.equal(payment.displayStatus, 'uncaptured');
    assert.equal(payment.preAuth, 'y');
    assert.equal(payment.amountCapturable, '4200');
    assert.equal(payment.amountReceived, '0');

    // Events of one instant have no order among themselves; a second apart they do.
    ctx.clock.advance(1000);
    const captured = await merchant.call('POST', `/payment/${payment.id}/capture`, {});
    assert.equal(captured.status, 200, captured.raw);
    assert.equal(captured.body.data.status, 'succeeded');
    assert.equal(captured.body.data.displayStatus, 'succeeded');
    assert.equal(captured.body.data.amountReceived, '4200');
    assert.equal(captured.body.data.amountCapturable, '0');
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.requires_capture', 'payment.succeeded']);

    assertInvalidState(await merchant.call('POST', `/payment/${payment.id}/capture`, {}), 'succeeded');
    assertInvalidState(await merchant.call('POST', `/payment/${payment.id}/cancel`, {}), 'succeeded');
    // A captured payment is not canceled by the 7-day expiry.
    ctx.clock.advance(8 * dayMs);
    await ctx.runJobs();
    assert.equal((await retrieve(merchant, payment.id)).status, 'succeeded');
  });

  test('a pre-authorization can be canceled, with the reason and the time, and then not captured', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, {
      paymentMethod: await createMethod(merchant),
      preAuth: 'y',
      confirm: true,
    });
    ctx.clock.advance(1000);
    const canceled = await merchant.call('POST', `/payment/${payment.id}/cancel`, {
      cancellationReason: 'requested_by_customer',
    });
    assert.equal(canceled.status, 200, canceled.raw);
    assert.equal(canceled.body.data.status, 'canceled');
    assert.equal(canceled.body.data.displayStatus, 'canceled');
    assert.equal(canceled.body.data.cancellationReason, 'requested_by_customer');
    assert.equal(canceled.body.data.canceledAt, ctx.clock.now().toISOString());
    assert.equal(canceled.body.data.amountCapturable, '0');
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.requires_capture', 'payment.canceled']);
    assertInvalidState(await merchant.call('POST', `/payment/${payment.id}/capture`, {}), 'canceled');
    assertInvalidState(await merchant.call('POST', `/payment/${payment.id}/cancel`, {}), 'canceled');
  });

  test('cancels a payment that is not confirmed yet, with no reason', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, { paymentMethod: await createMethod(merchant) });
    const canceled = await merchant.call('POST', `/payment/${payment.id}/cancel`);
    assert.equal(canceled.status, 200, canceled.raw);
    assert.equal(canceled.body.data.status, 'canceled');
    assert.equal(canceled.body.data.cancellationReason, null);
    assertInvalidState(await merchant.call('POST', `/payment/${payment.id}/confirm`, {}), 'canceled');
  });

  test('refuses to cancel a succeeded, failed or processing payment (invalid_state naming the status)', async () => {
    const merchant = await ctx.merchant();
    const succeeded = await create(merchant, { paymentMethod: await createMethod(merchant), confirm: true });
    assertInvalidState(await merchant.call('POST', `/payment/${succeeded.id}/cancel`, {}), 'succeeded');
    const failed = await create(merchant, {
      paymentMethod: await createMethod(merchant, '4000000000000002'),
      confirm: true,
    });
    assertInvalidState(await merchant.call('POST', `/payment/${failed.id}/cancel`, {}), 'failed');
    const processing = await create(merchant, {
      paymentMethod: await createMethod(merchant, '4000000000000630'),
      confirm: true,
    });
    assertInvalidState(await merchant.call('POST', `/payment/${processing.id}/cancel`, {}), 'processing');
    // Capture needs requires_capture.
    assertInvalidState(await merchant.call('POST', `/payment/${succeeded.id}/capture`), 'succeeded');
  });

  test('refuses an unknown cancellationReason, naming it', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, { paymentMethod: await createMethod(merchant) });
    const response = await merchant.call('POST', `/payment/${payment.id}/cancel`, { cancellationReason: 'bored' });
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.data.param, 'cancellationReason');
  });

  test('cancels an uncaptured pre-authorization automatically after 7 days', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, {
      paymentMethod: await createMethod(merchant),
      preAuth: 'y',
      confirm: true,
    });
    ctx.clock.advance(7 * dayMs - 60_000);
    await ctx.runJobs();
    assert.equal((await retrieve(merchant, payment.id)).status, 'requires_capture');

    ctx.clock.advance(60_000);
    await ctx.runJobs();
    const expired = await retrieve(merchant, payment.id);
    assert.equal(expired.status, 'canceled');
    assert.equal(expired.cancellationReason, 'automatic');
    assert.equal(expired.canceledAt, ctx.clock.now().toISOString());
    assert.equal(expired.amountCapturable, '0');
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.requires_capture', 'payment.canceled']);
    assertInvalidState(await merchant.call('POST', `/payment/${payment.id}/capture`, {}), 'canceled');
  });

  test('a payment left in processing by a process that died mid-authorization is resumed after 5 minutes', async () => {
    const merchant = await ctx.merchant();
    const paymentMethod = await createMethod(merchant);
    const payment = await create(merchant, { paymentMethod });
    // What /confirm leaves behind when its process dies between claiming the payment and recording
    // the processor's answer.
    await ctx.tessera.db.query("UPDATE payments SET status = 'processing', updated_at = $2 WHERE id = $1", [
      payment.id,
      ctx.clock.now(),
    ]);
    ctx.clock.advance(4 * 60_000);
    await ctx.runJobs();
    assert.equal((await retrieve(merchant, payment.id)).status, 'processing');
    assert.deepEqual(await eventTypes(merchant, payment.id), []);

    ctx.clock.advance(2 * 60_000);
    await ctx.runJobs();
    const resumed = await retrieve(merchant, payment.id);
    assert.equal(resumed.status, 'succeeded');
    assert.equal(resumed.amountReceived, '1000');
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.succeeded']);
    const events = (await merchant.call('GET', `/events?objectId=${payment.id}`)).body.data.data;
    assert.deepEqual(events[0].data, { ...resumed, actionStatus: null });
    // Resumed once: later sweeps find nothing more to do.
    ctx.clock.advance(10 * 60_000);
    await ctx.runJobs();
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.succeeded']);
  });

  test('updates a payment before it is processed, and refuses afterwards', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, { paymentMethod: await createMethod(merchant), description: 'Draft' });
    const otherMethod = await createMethod(merchant, '5555555555554444');
    const updated = await merchant.call('POST', `/payment/${payment.id}/update`, {
      amount: 2500,
      currency: 'eur',
      description: 'Final',
      receiptEmail: 'buyer@example.com',
      returnUrl: 'https://shop.example.com/return',
      notifyUrl: 'https://shop.example.com/notify',
      paymentMethod: otherMethod,
      statementDescriptor: 'SHOP',
      statementDescriptorSuffix: 'ORDER 1',
      lineItems: [{ name: 'Book', quantity: 2, amount: 1250, currency: 'eur' }],
    });
    assert.equal(updated.status, 200, updated.raw);
    const data = updated.body.data;
    assert.equal(data.status, 'requires_confirmation');
    assert.equal(data.amount, '2500');
    assert.equal(data.currency, 'EUR');
    assert.equal(data.description, 'Final');
    assert.equal(data.receiptEmail, 'buyer@example.com');
    assert.equal(data.returnUrl, 'https://shop.example.com/return');
    assert.equal(data.notifyUrl, 'https://shop.example.com/notify');
    assert.equal(data.paymentMethod, otherMethod);
    assert.equal(data.statementDescriptor, 'SHOP');
    assert.equal(data.statementDescriptorSuffix, 'ORDER 1');
    assert.deepEqual(data.lineItems, [
      { name: 'Book', quantity: 2, amount: 1250, currency: 'EUR', description: null, images: null },
    ]);
    assert.deepEqual(await retrieve(merchant, payment.id), data);

    // Every rule is checked again on the updated payment.
    const refused = await merchant.call('POST', `/payment/${payment.id}/update`, { setupFutureUsage: 'on' });
    assert.equal(refused.status, 400, refused.raw);
    assert.equal(refused.body.data.param, 'customerId');

    const confirmed = await merchant.call('POST', `/payment/${payment.id}/confirm`, {});
    assert.equal(confirmed.body.data.amountReceived, '2500');
    assertInvalidState(
      await merchant.call('POST', `/payment/${payment.id}/update`, { description: 'Too late' }),
      'succeeded',
    );
    assert.equal((await retrieve(merchant, payment.id)).description, 'Final');
  });

  test('refuses to update the order number to one in use (duplicate_order)', async () => {
    const merchant = await ctx.merchant();
    const paymentMethod = await createMethod(merchant);
    await create(merchant, { paymentMethod, orderNo: 'taken' });
    const payment = await create(merchant, { paymentMethod, orderNo: 'mine' });
    const response = await merchant.call('POST', `/payment/${payment.id}/update`, { orderNo: 'taken' });
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'duplicate_order');
    assert.equal((await retrieve(merchant, payment.id)).orderNo, 'mine');
  });

  test('retrieves a payment exactly as it was answered; an unknown id is 404', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, { paymentMethod: await createMethod(merchant), confirm: 'true' });
    assert.deepEqual(await retrieve(merchant, payment.id), payment);
    for (const id of ['pt_0000000000000000000', 'nonsense']) {
      const response = await merchant.call('GET', `/payment/${id}`);
      assert.equal(response.status, 404, response.raw);
      assert.equal(response.body.code, 'resource_missing');
    }
  });

  test('lists payments newest first, filtered by customer, order number and creation time, page by page', async () => {
    const merchant = await ctx.merchant();
    const paymentMethod = await createMethod(merchant);
    const customerId = await createCustomer(merchant);
    const start = ctx.clock.now();
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      ctx.clock.advance(1000);
      const payment = await create(merchant, {
        paymentMethod,
        orderNo: `list-${index}`,
        ...(index % 2 === 0 ? { customerId } : {}),
      });
      ids.push(payment.id);
    }
    const newestFirst = [...ids].reverse();
    const list = async (query: string) => {
      const response = await merchant.call('GET', `/payment${query}`);
      assert.equal(response.status, 200, response.raw);
      return {
        ids: (response.body.data.data as Array<{ id: string }>).map((payment) => payment.id),
        hasMore: response.body.data.hasMore as boolean,
      };
    };

    assert.deepEqual(await list(''), { ids: newestFirst, hasMore: false });
    assert.deepEqual((await list(`?customerId=${customerId}`)).ids, [ids[4], ids[2], ids[0]]);
    assert.deepEqual((await list('?orderNo=list-3')).ids, [ids[3]]);

    const second = new Date(start.getTime() + 2000).toISOString();
    const fourth = new Date(start.getTime() + 4000).toISOString();
    assert.deepEqual((await list(`?created[gte]=${second}&created[lt]=${fourth}`)).ids, [ids[2], ids[1]]);
    assert.deepEqual((await list(`?created[gt]=${second}&created[lte]=${fourth}`)).ids, [ids[3], ids[2]]);

    const firstPage = await list('?limit=2');
    assert.deepEqual(firstPage, { ids: newestFirst.slice(0, 2), hasMore: true });
    const secondPage = await list(`?limit=2&startingAfter=${firstPage.ids[1]}`);
    assert.deepEqual(secondPage, { ids: newestFirst.slice(2, 4), hasMore: true });
    const lastPage = await list(`?limit=2&startingAfter=${secondPage.ids[1]}`);
    assert.deepEqual(lastPage, { ids: newestFirst.slice(4), hasMore: false });
    assert.deepEqual((await list(`?limit=2&endingBefore=${lastPage.ids[0]}`)).ids, newestFirst.slice(2, 4));

    const bad = await merchant.call('GET', '/payment?created[gt]=yesterday');
    assert.equal(bad.status, 400, bad.raw);
    assert.equal(bad.body.data.param, 'created[gt]');
    const unknown = await merchant.call('GET', '/payment?created[after]=2026-01-01T00:00:00Z');
    assert.equal(unknown.status, 400, unknown.raw);
  });

  test("another merchant's payment is answered as missing (404) everywhere, and never listed", async () => {
    const owner = await ctx.merchant();
    const stranger = await ctx.merchant();
    const payment = await create(owner, { paymentMethod: await createMethod(owner), preAuth: 'y', confirm: true });
    const attempts: Array<[string, string, unknown]> = [
      ['GET', `/payment/${payment.id}`, undefined],
      ['POST', `/payment/${payment.id}/update`, { description: 'x' }],
      ['POST', `/payment/${payment.id}/confirm`, {}],
      ['POST', `/payment/${payment.id}/capture`, {}],
      ['POST', `/payment/${payment.id}/cancel`, {}],
    ];
    for (const [method, path, body] of attempts) {
      const response = await stranger.call(method as 'GET' | 'POST', path, body);
      assert.equal(response.status, 404, `${method} ${path}: ${response.raw}`);
      assert.equal(response.body.code, 'resource_missing');
    }
    assert.deepEqual((await stranger.call('GET', '/payment')).body.data.data, []);
    assert.equal((await retrieve(owner, payment.id)).status, 'requires_capture');
  });

  test('accepts explicit null for every optional field and answers them as null', async () => {
    const merchant = await ctx.merchant();
    const paymentMethod = await createMethod(merchant);
    const optionalFields = [
      'confirmationMethod',
      'customerId',
      'description',
      'ip',
      'confirm',
      'lineItems',
      'notifyUrl',
      'orderNo',
      'preAuth',
      'receiptEmail',
      'returnUrl',
      'setupFutureUsage',
      'subsequentInitialType',
      'statementDescriptor',
      'statementDescriptorSuffix',
      'website',
      'userAgent',
      'shipping',
      'appScheme',
      'openUserId',
      'use3D',
      'paymentMethodTypes',
      'automaticPaymentMethods',
      'recurring',
      'fromChannel',
    ];
    const body = Object.fromEntries(optionalFields.map((field) => [field, null]));
    const payment = await create(merchant, { ...body, paymentMethod });
    assert.equal(payment.status, 'requires_confirmation');
    const defaults: Record<string, unknown> = {
      confirmationMethod: 'automatic',
      confirm: 'false',
      preAuth: 'n',
      setupFutureUsage: 'off',
      use3D: false,
      paymentMethodTypes: ['card'],
    };
    for (const field of optionalFields) assert.deepEqual(payment[field], defaults[field] ?? null, field);
  });

  test('echoes the extra fields existing clients send', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, {
      paymentMethod: await createMethod(merchant),
      // The first payment of a recurring series stores the card, so it needs a customer.
      customerId: await createCustomer(merchant),
      amount: 500,
      currency: 'jpy',
      userAgent: 'Mozilla/5.0',
      shipping: {
        firstName: 'Ana',
        lastName: 'Silva',
        phone: '+351 912 345 678',
        address: { city: 'Porto', country: 'pt', line1: 'Rua das Flores 2', postalCode: '4050-262' },
      },
      appScheme: 'shopapp://',
      openUserId: 'wx-123',
      paymentMethodTypes: ['card'],
      automaticPaymentMethods: { enabled: true },
      recurring: { initial: true },
      fromChannel: 'APP',
    });
    assert.equal(payment.amount, '500');
    assert.equal(payment.currency, 'JPY');
    assert.equal(payment.userAgent, 'Mozilla/5.0');
    assert.deepEqual(payment.shipping, {
      firstName: 'Ana',
      lastName: 'Silva',
      phone: '+351 912 345 678',
      address: {
        city: 'Porto',
        country: 'PT',
        line1: 'Rua das Flores 2',
        line2: null,
        postalCode: '4050-262',
        state: null,
      },
    });
    assert.equal(payment.appScheme, 'shopapp://');
    assert.equal(payment.openUserId, 'wx-123');
    assert.deepEqual(payment.paymentMethodTypes, ['card']);
    assert.equal(payment.paymentMethodType, 'card');
    assert.deepEqual(payment.automaticPaymentMethods, { enabled: true });
    assert.deepEqual(payment.recurring, { initial: true, relationPaymentId: null });
    assert.equal(payment.fromChannel, 'APP');
  });

  test('replays payment/create for the same Idempotency-Key: one payment, one authorization', async () => {
    const merchant = await ctx.merchant();
    const body = {
      amount: '1000',
      currency: 'USD',
      paymentMethod: await createMethod(merchant),
      confirm: true,
      orderNo: 'idem-1',
    };
    const headers = { 'idempotency-key': 'create-idem-1' };
    const first = await merchant.call('POST', '/payment/create', body, headers);
    const second = await merchant.call('POST', '/payment/create', body, headers);
    assert.equal(first.status, 200, first.raw);
    assert.equal(second.status, 200, second.raw);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.raw, first.raw);
    const listed = await merchant.call('GET', '/payment?orderNo=idem-1');
    assert.equal(listed.body.data.data.length, 1);
    assert.deepEqual(await eventTypes(merchant, first.body.data.id), ['payment.succeeded']);

    const different = await merchant.call('POST', '/payment/create', { ...body, amount: '2000' }, headers);
    assert.equal(different.status, 400, different.raw);
    assert.equal(different.body.code, 'idempotency_error');
  });

  /** [what is wrong, the body change, the param named]; each must be 400 invalid_request. */
  const badInputs: Array<[string, Record<string, unknown>, string]> = [
    ['missing amount', { amount: undefined }, 'amount'],
    ['missing currency', { currency: undefined }, 'currency'],
    ['confirm without a paymentMethod', { paymentMethod: undefined, confirm: 'true' }, 'paymentMethod'],
    ['a negative amount', { amount: -1 }, 'amount'],
    ['a fractional amount', { amount: 10.5 }, 'amount'],
    ['an amount with a decimal point', { amount: '10.50' }, 'amount'],
    ['an amount that is not digits', { amount: '12a' }, 'amount'],
    ['an amount of 13 digits', { amount: '1000000000000' }, 'amount'],
    ['an amount that is a boolean', { amount: true }, 'amount'],
    ['a two-letter currency', { currency: 'US' }, 'currency'],
    ['a four-letter currency', { currency: 'USDD' }, 'currency'],
    ['an unknown currency', { currency: 'XYZ' }, 'currency'],
    ['a numeric currency', { currency: 840 }, 'currency'],
    ['an unknown confirmationMethod', { confirmationMethod: 'auto' }, 'confirmationMethod'],
    ['a numeric customerId', { customerId: 5 }, 'customerId'],
    // An empty customerId or paymentMethod is "not given" (docs/api.md#compatibility-with-existing-clients, test/existing-clients.test.ts).
    ['a paymentMethod that is too long', { paymentMethod: `pm_${'1'.repeat(70)}` }, 'paymentMethod'],
    ['a description that is too long', { description: 'x'.repeat(1001) }, 'description'],
    ['a malformed IPv4 address', { ip: '999.1.1.1' }, 'ip'],
    ['an ip that is not an address', { ip: 'localhost' }, 'ip'],
    ['confirm "yes"', { confirm: 'yes' }, 'confirm'],
    ['confirm 1', { confirm: 1 }, 'confirm'],
    ['lineItems that are not an array', { lineItems: 'book' }, 'lineItems'],
    ['a line item with an unknown field', { lineItems: [{ name: 'Book', colour: 'red' }] }, 'lineItems[0].colour'],
    ['a line item quantity of 0', { lineItems: [{ name: 'Book', quantity: 0 }] }, 'lineItems[0].quantity'],
    ['a fractional line item quantity', { lineItems: [{ quantity: 1.5 }] }, 'lineItems[0].quantity'],
    ['a line item amount that is text', { lineItems: [{ amount: 'ten' }] }, 'lineItems[0].amount'],
    ['a line item image that is no URL', { lineItems: [{ images: ['not a url'] }] }, 'lineItems[0].images[0]'],
    ['a line item in an unknown currency', { lineItems: [{ currency: 'ABC' }] }, 'lineItems[0].currency'],
    ['a notifyUrl that is not http', { notifyUrl: 'ftp://shop.example.com/notify' }, 'notifyUrl'],
    ['a notifyUrl with a password', { notifyUrl: 'https://shop:secret@shop.example.com/notify' }, 'notifyUrl'],
    ['a returnUrl that is not a URL', { returnUrl: 'back home' }, 'returnUrl'],
    ['a website that is not a URL', { website: 'shop.example.com' }, 'website'],
    ['an orderNo that is too long', { orderNo: 'o'.repeat(65) }, 'orderNo'],
    ['an empty orderNo', { orderNo: '' }, 'orderNo'],
    ['preAuth "yes"', { preAuth: 'yes' }, 'preAuth'],
    ['a malformed receiptEmail', { receiptEmail: 'not-an-email' }, 'receiptEmail'],
    ['setupFutureUsage "on_session"', { setupFutureUsage: 'on_session' }, 'setupFutureUsage'],
    ['an unknown subsequentInitialType', { subsequentInitialType: 'xit' }, 'subsequentInitialType'],
    ['a statementDescriptor over 22 characters', { statementDescriptor: 'S'.repeat(23) }, 'statementDescriptor'],
    ['a statementDescriptor with <', { statementDescriptor: 'SHOP <1>' }, 'statementDescriptor'],
    [
      'a statementDescriptorSuffix over 10 characters',
      { statementDescriptorSuffix: 'S'.repeat(11) },
      'statementDescriptorSuffix',
    ],
    ['a userAgent that is too long', { userAgent: 'u'.repeat(1025) }, 'userAgent'],
    ['shipping with an unknown field', { shipping: { name: 'Ana' } }, 'shipping.name'],
    ['a shipping country of three letters', { shipping: { address: { country: 'PRT' } } }, 'shipping.address.country'],
    ['an empty appScheme', { appScheme: '' }, 'appScheme'],
    ['an openUserId that is too long', { openUserId: 'o'.repeat(129) }, 'openUserId'],
    ['use3D as text', { use3D: 'true' }, 'use3D'],
    ['a paymentMethodTypes without card', { paymentMethodTypes: ['paypal'] }, 'paymentMethodTypes'],
    ['a paymentMethodTypes entry that is no type', { paymentMethodTypes: ['card', 'a b'] }, 'paymentMethodTypes[1]'],
    ['an empty paymentMethodTypes', { paymentMethodTypes: [] }, 'paymentMethodTypes'],
    ['automaticPaymentMethods without enabled', { automaticPaymentMethods: {} }, 'automaticPaymentMethods.enabled'],
    ['recurring with an unknown field', { recurring: { interval: 'month' } }, 'recurring.interval'],
    [
      'recurring.relationPaymentId that is no payment id',
      { recurring: { relationPaymentId: 'x' } },
      'recurring.relationPaymentId',
    ],
    ['an unknown fromChannel', { fromChannel: 'web' }, 'fromChannel'],
    ['an unknown field', { amountt: '1000' }, 'amountt'],
  ];

  for (const [what, change, param] of badInputs) {
    test(`refuses ${what} with 400 invalid_request naming ${param}`, async () => {
      const merchant = await ctx.merchant();
      const body: Record<string, unknown> = {
        amount: '1000',
        currency: 'USD',
        paymentMethod: 'pm_1000000000000000000',
        ...change,
      };
      for (const [key, value] of Object.entries(change)) if (value === undefined) delete body[key];
      const response = await merchant.call('POST', '/payment/create', body);
      assert.equal(response.status, 400, response.raw);
      assert.equal(response.body.code, 'invalid_request');
      assert.equal(response.body.data.param, param, response.raw);
      assert.ok(response.body.msg.includes(param), response.body.msg);
      assert.deepEqual((await merchant.call('GET', '/payment')).body.data.data, [], 'no payment was created');
    });
  }

  test('refuses unknown fields on update, confirm, capture and cancel, naming them', async () => {
    const merchant = await ctx.merchant();
    const payment = await create(merchant, { paymentMethod: await createMethod(merchant) });
    for (const [path, body, param] of [
      ['update', { confirm: true }, 'confirm'],
      ['update', { subsequentInitialType: 'cit' }, 'subsequentInitialType'],
      ['confirm', { amount: '5' }, 'amount'],
      ['capture', { amount: '5' }, 'amount'],
      ['cancel', { reason: 'duplicate' }, 'reason'],
    ] as const) {
      const response = await merchant.call('POST', `/payment/${payment.id}/${path}`, body);
      assert.equal(response.status, 400, response.raw);
      assert.equal(response.body.data.param, param);
    }
  });
});
