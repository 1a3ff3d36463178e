/**
 * docs/api.md#requests, docs/api.md#compatibility-with-existing-clients (issue 10): the provider's published clients work against Tessera by changing only
 * the host. Each test replays a request as a client sends it — method, path, content type, body
 * bytes — and checks the part of the answer that client relies on; the strictness that remains
 * (an unknown field is still 400 naming it) is checked beside it.
 */
import { createHmac } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apiBase,
  databaseKind,
  injectRaw,
  startTestApp,
  type ApiResponse,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';
import { startReceiver, type Receiver, type ReceivedRequest } from './helpers/receiver.js';

const visa = '4242424242424242';
const threeDSecureCard = '4000002500003155';
/** What the Java SDK's form requests carry (HttpContent.buildFormURLEncodedContent). */
const javaForm = 'application/x-www-form-urlencoded;charset=UTF-8';
const json = 'application/json';

describe(`existing clients (${databaseKind})`, () => {
  let ctx: TestContext;
  const receivers: Receiver[] = [];
  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
  });
  afterEach(() => ctx.tessera.webhookDispatcher.stop());
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await ctx.close();
  });

  /** Sends the bytes as given, with the merchant's private key unless `headers` says otherwise. */
  async function send(
    merchant: TestMerchant,
    method: 'GET' | 'POST' | 'DELETE' | 'OPTIONS',
    path: string,
    options: { type?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const response = await injectRaw(ctx, {
      method,
      url: `${apiBase}${path}`,
      headers: {
        authorization: `Bearer ${merchant.privateKey}`,
        ...(options.type ? { 'content-type': options.type } : {}),
        ...options.headers,
      },
      payload: options.body,
    });
    let body: ApiResponse['body'];
    try {
      body = JSON.parse(response.body);
    } catch {
      body = { code: '', msg: '', data: null };
    }
    return { status: response.statusCode, headers: response.headers, body, raw: response.body };
  }

  function ok(response: ApiResponse) {
    assert.equal(response.status, 200, response.raw);
    assert.equal(response.body.code, 'success');
    return response.body.data;
  }

  function refused(response: ApiResponse, param: string) {
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'invalid_request', response.raw);
    assert.equal(response.body.data.param, param, response.raw);
  }

  async function customer(merchant: TestMerchant): Promise<string> {
    return ok(await merchant.call('POST', '/customers/create', { email: 'ada@example.com' })).id;
  }

  async function method(merchant: TestMerchant, cardNo = visa): Promise<string> {
    const card = { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' };
    return ok(await merchant.call('POST', '/payment_methods/create', { type: 'card', card })).id;
  }

  async function payment(merchant: TestMerchant, fields: Record<string, unknown> = {}) {
    const body = { amount: '1999', currency: 'USD', paymentMethod: await method(merchant), ...fields };
    return ok(await merchant.call('POST', '/payment/create', body));
  }

  async function challengeReturn(returnUrl: string): Promise<{ location: string; paid: Record<string, any> }> {
    const merchant = await ctx.merchant();
    const paid = await payment(merchant, {
      paymentMethod: await method(merchant, threeDSecureCard),
      confirm: 'true',
      returnUrl,
    });
    assert.equal(paid.status, 'requires_action');
    const answered = await injectRaw(ctx, {
      method: 'POST',
      url: `/3ds/${paid.id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ secret: paid.clientSecret, outcome: 'pass' }).toString(),
    });
    assert.equal(answered.statusCode, 303, answered.body);
    return { location: String(answered.headers.location), paid };
  }

  async function preAuthorized(merchant: TestMerchant) {
    const authorized = await payment(merchant, { preAuth: 'y', confirm: 'true' });
    assert.equal(authorized.status, 'requires_capture');
    return authorized;
  }

  describe('form bodies (the Java SDK posts capture, cancel and attach as forms)', () => {
    test('cancels a payment posted as the Java SDK form: paymentId=…&cancellationReason=…', async () => {
      const merchant = await ctx.merchant();
      const created = await payment(merchant);
      const body = `paymentId=${created.id}&cancellationReason=requested_by_customer`;
      const canceled = ok(await send(merchant, 'POST', `/payment/${created.id}/cancel`, { type: javaForm, body }));
      assert.equal(canceled.status, 'canceled');
      assert.equal(canceled.cancellationReason, 'requested_by_customer');
    });

    test('captures a pre-authorization posted as the Java SDK form: paymentId=…', async () => {
      const merchant = await ctx.merchant();
      const authorized = await preAuthorized(merchant);
      const body = `paymentId=${authorized.id}`;
      const captured = ok(await send(merchant, 'POST', `/payment/${authorized.id}/capture`, { type: javaForm, body }));
      assert.equal(captured.status, 'succeeded');
      assert.equal(captured.amountReceived, '1999');
    });

    test('attaches a payment method posted as a form, as the Android sample server forwards it: id=…&customerId=…', async () => {
      const merchant = await ctx.merchant();
      const [customerId, methodId] = [await customer(merchant), await method(merchant)];
      const body = `id=${methodId}&customerId=${customerId}`;
      const attached = ok(
        await send(merchant, 'POST', `/payment_methods/${methodId}/attach`, {
          type: 'application/x-www-form-urlencoded',
          body,
        }),
      );
      assert.equal(attached.customerId, customerId);
    });

    test('creates a payment from a form with nested fields in bracket notation, its text values typed by the schema', async () => {
      const merchant = await ctx.merchant();
      const methodId = await method(merchant);
      const body = [
        'amount=1999',
        'currency=USD',
        `paymentMethod=${methodId}`,
        'confirm=true',
        'use3D=false',
        'orderNo=1001',
        'lineItems[0][name]=Notebook',
        'lineItems[0][quantity]=2',
        'lineItems[0][amount]=19.99',
        'lineItems[0][images][]=https%3A%2F%2Fshop.example.com%2Fa.png',
        'shipping[firstName]=Ada',
        'shipping[address][city]=S%C3%A3o+Paulo',
        'automaticPaymentMethods[enabled]=true',
        'paymentMethodTypes[0]=card',
      ].join('&');
      const created = ok(await send(merchant, 'POST', '/payment/create', { type: javaForm, body }));
      assert.equal(created.status, 'succeeded');
      assert.equal(created.confirm, 'true');
      assert.equal(created.orderNo, '1001');
      assert.deepEqual(created.lineItems, [
        {
          name: 'Notebook',
          quantity: 2,
          amount: 19.99,
          images: ['https://shop.example.com/a.png'],
          currency: null,
          description: null,
        },
      ]);
      assert.equal(created.shipping.firstName, 'Ada');
      assert.equal(created.shipping.address.city, 'São Paulo');
      assert.deepEqual(created.automaticPaymentMethods, { enabled: true });
    });

    test('takes dot notation too (the Java SDK writes nested keys as shipping.address.city)', async () => {
      const merchant = await ctx.merchant();
      const methodId = await method(merchant);
      const body = `amount=500&currency=EUR&paymentMethod=${methodId}&lineItems[0].name=Pen&shipping.address.city=Porto`;
      const created = ok(await send(merchant, 'POST', '/payment/create', { type: javaForm, body }));
      assert.equal(created.lineItems[0].name, 'Pen');
      assert.equal(created.shipping.address.city, 'Porto');
    });

    test('creates a payment method from a form with billingDetails[address][city]', async () => {
      const merchant = await ctx.merchant();
      const body =
        'type=card&card[cardNo]=4242424242424242&card[expMonth]=12&card[expYear]=2030&card[securityCode]=123' +
        '&billingDetails[firstName]=Ada&billingDetails[address][city]=Lisboa&billingDetails[address][country]=pt';
      const created = ok(await send(merchant, 'POST', '/payment_methods/create', { type: javaForm, body }));
      assert.equal(created.billingDetails.address.city, 'Lisboa');
      assert.equal(created.billingDetails.address.country, 'PT');
      assert.equal(created.card.last4, '4242');
      assert.ok(!JSON.stringify(created).includes(visa));
    });

    test('validates a form by the same schemas: an unknown field, a bad value and a clash are 400 naming them', async () => {
      const merchant = await ctx.merchant();
      const post = (body: string) => send(merchant, 'POST', '/payment/create', { type: javaForm, body });
      refused(await post('amount=1999&currency=USD&colour=red'), 'colour');
      refused(await post('amount=1999&currency=USD&lineItems[0][quantity]=two'), 'lineItems[0].quantity');
      refused(await post('amount=1999&currency=USD&use3D=yes'), 'use3D');
      refused(await post('amount=1999&currency=USD&shipping=x&shipping[firstName]=Ada'), 'shipping');
      refused(await post('currency=USD'), 'amount');
      refused(await post('amount=1999&currency=USD&lineItems[5000][name]=x'), 'lineItems');
    });
  });

  describe('the path id repeated in the body or the query', () => {
    test('capture and cancel take paymentId equal to the path id (JSON too) and refuse another, changing nothing', async () => {
      const merchant = await ctx.merchant();
      const authorized = await preAuthorized(merchant);
      const other = await payment(merchant);
      const mismatch = JSON.stringify({ paymentId: other.id });
      refused(
        await send(merchant, 'POST', `/payment/${authorized.id}/capture`, { type: json, body: mismatch }),
        'paymentId',
      );
      refused(
        await send(merchant, 'POST', `/payment/${authorized.id}/cancel`, {
          type: javaForm,
          body: `paymentId=${other.id}`,
        }),
        'paymentId',
      );
      assert.equal(ok(await merchant.call('GET', `/payment/${authorized.id}`)).status, 'requires_capture');
      const body = JSON.stringify({ paymentId: authorized.id });
      const captured = ok(await send(merchant, 'POST', `/payment/${authorized.id}/capture`, { type: json, body }));
      assert.equal(captured.status, 'succeeded');
    });

    test('attach and detach take the Java SDK JSON bodies {customerId, id} and {id}; another id is refused naming id', async () => {
      const merchant = await ctx.merchant();
      const [customerId, methodId, otherId] = [
        await customer(merchant),
        await method(merchant),
        await method(merchant),
      ];
      const attach = (id: string) =>
        send(merchant, 'POST', `/payment_methods/${methodId}/attach`, {
          type: 'application/json;charset=UTF-8',
          body: JSON.stringify({ customerId, id }),
        });
      refused(await attach(otherId), 'id');
      assert.equal(ok(await attach(methodId)).customerId, customerId);
      const detach = (id: string) =>
        send(merchant, 'POST', `/payment_methods/${methodId}/detach`, { type: json, body: JSON.stringify({ id }) });
      refused(await detach(otherId), 'id');
      assert.equal(ok(await detach(methodId)).customerId, null);
    });

    test('lists payment methods with customerId repeated in the query, as the Java SDK does', async () => {
      const merchant = await ctx.merchant();
      const [customerId, otherId] = [await customer(merchant), await customer(merchant)];
      const methodId = await method(merchant);
      ok(await merchant.call('POST', `/payment_methods/${methodId}/attach`, { customerId }));
      const listed = ok(
        await send(merchant, 'GET', `/payment_methods/list/${customerId}?customerId=${customerId}&limit=10`),
      );
      assert.deepEqual(
        listed.data.map((item: { id: string }) => item.id),
        [methodId],
      );
      refused(await send(merchant, 'GET', `/payment_methods/list/${customerId}?customerId=${otherId}`), 'customerId');
    });

    test('confirm takes the payment id as `id`, as the mobile SDKs send it', async () => {
      const merchant = await ctx.merchant();
      const created = await payment(merchant);
      const body = JSON.stringify({ id: created.id, ip: '203.0.113.7' });
      const confirmed = ok(await send(merchant, 'POST', `/payment/${created.id}/confirm`, { type: json, body }));
      assert.equal(confirmed.status, 'succeeded');
      refused(
        await send(merchant, 'POST', `/payment/${created.id}/confirm`, { type: json, body: '{"id":"pt_1"}' }),
        'id',
      );
    });
  });

  describe('empty bodies', () => {
    const emptyBodies: Array<[string, { type?: string; body?: string }]> = [
      ['no body at all', {}],
      ['an empty JSON body', { type: json, body: '' }],
      ['{}', { type: json, body: '{}' }],
      ['[] (PHP encodes an empty array so)', { type: json, body: '[]' }],
      ['"" (a JSON string)', { type: json, body: '""' }],
      ['an empty form', { type: javaForm, body: '' }],
    ];
    for (const [what, request] of emptyBodies) {
      test(`action POSTs take ${what} as "no fields"`, async () => {
        const merchant = await ctx.merchant();
        const created = await payment(merchant);
        assert.equal(ok(await send(merchant, 'POST', `/payment/${created.id}/update`, request)).id, created.id);
        assert.equal(ok(await send(merchant, 'POST', `/payment/${created.id}/confirm`, request)).status, 'succeeded');
        const authorized = await preAuthorized(merchant);
        assert.equal(
          ok(await send(merchant, 'POST', `/payment/${authorized.id}/capture`, request)).status,
          'succeeded',
        );
        const waiting = await payment(merchant);
        assert.equal(ok(await send(merchant, 'POST', `/payment/${waiting.id}/cancel`, request)).status, 'canceled');
      });
    }

    test('a body that is a non-empty list or other JSON text is still refused', async () => {
      const merchant = await ctx.merchant();
      const created = await payment(merchant);
      for (const body of ['[1]', '"cancel"', '7']) {
        refused(await send(merchant, 'POST', `/payment/${created.id}/cancel`, { type: json, body }), 'body');
      }
    });
  });

  describe('values that mean "not given"', () => {
    test('"" for optional ids, enums, URLs and numbers is absent; free text keeps ""; null is absent', async () => {
      const merchant = await ctx.merchant();
      const created = await payment(merchant, {
        customerId: '',
        preAuth: '',
        setupFutureUsage: '',
        subsequentInitialType: '',
        confirmationMethod: '',
        fromChannel: '',
        returnUrl: '',
        notifyUrl: '',
        website: '',
        confirm: '',
        recurring: { relationPaymentId: '' },
        lineItems: [{ name: 'Pen', quantity: '', amount: '', images: [''] }],
        statementDescriptor: null,
        shipping: { firstName: 'Ada', address: { state: null, line2: '' } },
        description: '',
      });
      assert.equal(created.customerId, null);
      assert.equal(created.preAuth, 'n');
      assert.equal(created.setupFutureUsage, 'off');
      assert.equal(created.subsequentInitialType, null);
      assert.equal(created.confirmationMethod, 'automatic');
      assert.equal(created.returnUrl, null);
      assert.equal(created.notifyUrl, null);
      assert.equal(created.status, 'requires_confirmation');
      assert.deepEqual(created.lineItems[0], {
        name: 'Pen',
        quantity: null,
        amount: null,
        images: null,
        currency: null,
        description: null,
      });
      assert.equal(created.statementDescriptor, null);
      assert.equal(created.shipping.address.state, null);
      assert.equal(created.shipping.address.line2, '');
      assert.equal(created.description, '');
    });

    test('"" is not a value where one is required, and an unknown field is refused even when ""', async () => {
      const merchant = await ctx.merchant();
      const post = (body: unknown) => merchant.call('POST', '/payment/create', body);
      refused(await post({ amount: '', currency: 'USD' }), 'amount');
      refused(await post({ amount: '1999', currency: '' }), 'currency');
      refused(await post({ amount: '1999', currency: 'USD', colour: '' }), 'colour');
      // An id given as "" is no id: confirming needs one.
      refused(await post({ amount: '1999', currency: 'USD', paymentMethod: '', confirm: 'true' }), 'paymentMethod');
    });

    test('paymentMethodTypes may hold null and mixed case; a list without card is refused naming it', async () => {
      const merchant = await ctx.merchant();
      const mixed = await payment(merchant, { paymentMethodTypes: [null, 'Card', 'Alipay'] });
      assert.deepEqual(mixed.paymentMethodTypes, ['card']);
      assert.deepEqual((await payment(merchant, { paymentMethodTypes: [null] })).paymentMethodTypes, ['card']);
      const body = { amount: '1999', currency: 'USD', paymentMethodTypes: ['Alipay', null] };
      const refusal = await merchant.call('POST', '/payment/create', body);
      refused(refusal, 'paymentMethodTypes');
      assert.match(refusal.body.msg, /must include card/);
    });

    test('confirmationMethod is compared without case (Automatic, Manual)', async () => {
      const merchant = await ctx.merchant();
      assert.equal((await payment(merchant, { confirmationMethod: 'Manual' })).confirmationMethod, 'manual');
      assert.equal((await payment(merchant, { confirmationMethod: 'AUTOMATIC' })).confirmationMethod, 'automatic');
      const body = { amount: '1999', currency: 'USD', confirmationMethod: 'Sometimes' };
      refused(await merchant.call('POST', '/payment/create', body), 'confirmationMethod');
    });
  });

  describe('types', () => {
    test('orderNo comes back exactly as sent: a JSON number as the same number, text as text', async () => {
      const merchant = await ctx.merchant();
      const numbered = await payment(merchant, { orderNo: 1001, confirm: true });
      assert.ok(/"orderNo":1001[,}]/.test(JSON.stringify(numbered)));
      assert.equal(ok(await merchant.call('GET', `/payment/${numbered.id}`)).orderNo, 1001);
      const listed = ok(await merchant.call('GET', '/payment?orderNo=1001'));
      assert.deepEqual(
        listed.data.map((item: { orderNo: unknown }) => item.orderNo),
        [1001],
      );
      const events = ok(await merchant.call('GET', `/events?objectId=${numbered.id}`));
      assert.equal(events.data[0].data.orderNo, 1001);
      assert.equal((await payment(merchant, { orderNo: '1002' })).orderNo, '1002');
      const updated = ok(
        await merchant.call('POST', `/payment/${(await payment(merchant)).id}/update`, { orderNo: 7 }),
      );
      assert.equal(updated.orderNo, 7);
    });

    test('an orderNo sent as a number and one sent as its text are the same order (duplicate_order)', async () => {
      const merchant = await ctx.merchant();
      await payment(merchant, { orderNo: 2001 });
      const again = await merchant.call('POST', '/payment/create', {
        amount: '1999',
        currency: 'USD',
        paymentMethod: await method(merchant),
        orderNo: '2001',
      });
      assert.equal(again.status, 400, again.raw);
      assert.equal(again.body.code, 'duplicate_order');
      assert.equal(again.body.data.param, 'orderNo');
    });

    test('refuses an orderNo that is a fraction, negative or beyond exact integers, naming it', async () => {
      const merchant = await ctx.merchant();
      for (const orderNo of [10.5, -1, 2 ** 53, true]) {
        refused(await merchant.call('POST', '/payment/create', { amount: '1', currency: 'USD', orderNo }), 'orderNo');
      }
    });

    test('line-item quantity and amount are taken as numbers or numeric text, answered as numbers', async () => {
      const merchant = await ctx.merchant();
      const created = await payment(merchant, { lineItems: [{ name: 'Pen', quantity: '3', amount: '2.50' }] });
      assert.equal(created.lineItems[0].quantity, 3);
      assert.equal(created.lineItems[0].amount, 2.5);
      const body = { amount: '1', currency: 'USD', lineItems: [{ quantity: '2.5' }] };
      refused(await merchant.call('POST', '/payment/create', body), 'lineItems[0].quantity');
    });
  });

  describe('names', () => {
    test('GET /payment filters by customer, the Java SDK name of customerId; different values are refused', async () => {
      const merchant = await ctx.merchant();
      const [customerId, otherId] = [await customer(merchant), await customer(merchant)];
      const mine = await payment(merchant, { customerId });
      await payment(merchant, { customerId: otherId });
      const listed = ok(await send(merchant, 'GET', `/payment?customer=${customerId}&limit=10`));
      assert.deepEqual(
        listed.data.map((item: { id: string }) => item.id),
        [mine.id],
      );
      const both = ok(await send(merchant, 'GET', `/payment?customer=${customerId}&customerId=${customerId}`));
      assert.equal(both.data.length, 1);
      refused(await send(merchant, 'GET', `/payment?customer=${customerId}&customerId=${otherId}`), 'customer');
    });

    test('POST /payment/{id} updates the payment, as /payment/{id}/update does (the Java SDK update)', async () => {
      const merchant = await ctx.merchant();
      const created = await payment(merchant);
      const body = JSON.stringify({ description: 'Order 12', amount: 2500 });
      const updated = ok(await send(merchant, 'POST', `/payment/${created.id}`, { type: json, body }));
      assert.equal(updated.description, 'Order 12');
      assert.equal(updated.amount, '2500');
      refused(await merchant.call('POST', `/payment/${created.id}`, { colour: 'red' }), 'colour');
    });

    test('customer and payment lists filter by created[gt|gte|lt|lte] and by the Java SDK form created.gte', async () => {
      const merchant = await ctx.merchant();
      const start = ctx.clock.now().toISOString();
      const first = await customer(merchant);
      const firstPayment = await payment(merchant);
      ctx.clock.advance(60_000);
      const middle = ctx.clock.now().toISOString();
      const second = await customer(merchant);
      const secondPayment = await payment(merchant);
      const ids = async (path: string) =>
        ok(await send(merchant, 'GET', path)).data.map((item: { id: string }) => item.id) as string[];
      assert.deepEqual(await ids(`/customers?created[gte]=${middle}`), [second]);
      assert.deepEqual(await ids(`/customers?created%5Blt%5D=${middle}`), [first]);
      assert.deepEqual(await ids(`/customers?created.gte=${middle}`), [second]);
      assert.deepEqual(await ids(`/customers?created[gt]=${start}&created[lte]=${middle}`), [second]);
      assert.deepEqual(await ids(`/payment?created.lt=${middle}`), [firstPayment.id]);
      assert.deepEqual(await ids(`/payment?created.gte=${middle}`), [secondPayment.id]);
      refused(await send(merchant, 'GET', '/customers?created[gte]=yesterday'), 'created[gte]');
      refused(await send(merchant, 'GET', '/customers?created[after]=2026-01-01T00:00:00.000Z'), 'created[after]');
    });

    test('cancel takes cancellationReason from the query string; body and query must agree', async () => {
      const merchant = await ctx.merchant();
      const created = await payment(merchant);
      const conflict = await send(merchant, 'POST', `/payment/${created.id}/cancel?cancellationReason=duplicate`, {
        type: json,
        body: '{"cancellationReason":"fraudulent"}',
      });
      refused(conflict, 'cancellationReason');
      const canceled = ok(await send(merchant, 'POST', `/payment/${created.id}/cancel?cancellationReason=duplicate`));
      assert.equal(canceled.cancellationReason, 'duplicate');
      refused(
        await send(merchant, 'POST', `/payment/${created.id}/cancel?cancellationReason=bored`),
        'cancellationReason',
      );
    });

    test('POST /payment_methods/{id}/update takes {billingDetails: {…}} and the bare billing-details object', async () => {
      const merchant = await ctx.merchant();
      const methodId = await method(merchant);
      const update = (body: unknown) =>
        send(merchant, 'POST', `/payment_methods/${methodId}/update`, { type: json, body: JSON.stringify(body) });
      const wrapped = ok(await update({ billingDetails: { firstName: 'Ada', address: { city: 'Porto' } } }));
      assert.equal(wrapped.billingDetails.firstName, 'Ada');
      const bare = ok(await update({ lastName: 'Lovelace', email: 'ada@example.com', address: { country: 'PT' } }));
      assert.equal(bare.billingDetails.firstName, 'Ada');
      assert.equal(bare.billingDetails.lastName, 'Lovelace');
      assert.deepEqual([bare.billingDetails.address.city, bare.billingDetails.address.country], ['Porto', 'PT']);
      const withCard = ok(await update({ phone: '+351 21 000 0000', card: { expYear: '2031' } }));
      assert.equal(withCard.billingDetails.phone, '+351 21 000 0000');
      assert.equal(withCard.card.expYear, '2031');
      refused(await update({ billingDetails: { firstName: 'Ada' }, lastName: 'L' }), 'lastName');
      refused(await update({ nickname: 'A' }), 'nickname');
    });
  });

  describe('responses the clients read', () => {
    test('nextAction is left out when there is no action, in answers, lists, events and the OpenAPI schema', async () => {
      const merchant = await ctx.merchant();
      const succeeded = await payment(merchant, { confirm: 'true' });
      assert.equal('nextAction' in succeeded, false);
      const listed = ok(await merchant.call('GET', '/payment?limit=1'));
      assert.equal('nextAction' in listed.data[0], false);
      const events = ok(await merchant.call('GET', `/events?objectId=${succeeded.id}`));
      assert.equal('nextAction' in events.data[0].data, false);
      const challenged = await payment(merchant, { confirm: 'true', use3D: true });
      assert.equal(challenged.status, 'requires_action');
      assert.equal(challenged.nextAction.type, 'redirect');
      const openapi = (await injectRaw(ctx, { method: 'GET', url: `${apiBase}/openapi.json` })).json();
      const answer = openapi.paths[`${apiBase}/payment/{id}`].get.responses['200'].content['application/json'];
      const reference = String(answer.schema.properties.data.$ref).split('/').pop()!;
      const schema = openapi.components.schemas[reference] as { required: string[]; properties: Record<string, any> };
      assert.ok(!schema.required.includes('nextAction'));
      assert.ok(!JSON.stringify(schema.properties.nextAction).includes('null'));
      assert.ok(schema.required.includes('amount'));
      assert.equal(schema.properties.amount.type, 'string');
    });

    test('a payment always has a non-null amount, also while it waits for a payment method', async () => {
      const merchant = await ctx.merchant();
      const body = JSON.stringify({ amount: 1999, currency: 'JPY', paymentMethod: null });
      const waiting = ok(await send(merchant, 'POST', '/payment/create', { type: json, body }));
      assert.equal(waiting.status, 'requires_payment_method');
      assert.equal(waiting.amount, '1999');
      assert.equal(ok(await merchant.call('GET', `/payment/${waiting.id}`)).amount, '1999');
    });

    test('the 3-D Secure return carries payment_id, payment_client_secret and source_redirect_slug after ?', async () => {
      const { location, paid } = await challengeReturn('https://shop.example.com/return');
      assert.ok(location.startsWith(`https://shop.example.com/return?payment_id=${paid.id}&`), location);
      const query = new URL(location).searchParams;
      assert.equal(query.get('payment_client_secret'), paid.clientSecret);
      assert.match(query.get('source_redirect_slug') ?? '', /^src_[0-9a-f]{24}$/);
    });

    test('a returnUrl with a query keeps it as written and gets the parameters after &', async () => {
      const { location, paid } = await challengeReturn('https://shop.example.com/return?order=12&lang=pt#done');
      assert.ok(
        location.startsWith(`https://shop.example.com/return?order=12&lang=pt&payment_id=${paid.id}&`),
        location,
      );
      assert.ok(location.endsWith('#done'), location);
      assert.equal(new URL(location).searchParams.get('payment_client_secret'), paid.clientSecret);
    });

    test('expYear is answered with four digits; two digits (as card forms send them) are 20xx', async () => {
      const merchant = await ctx.merchant();
      const create = (expYear: unknown) =>
        merchant.call('POST', '/payment_methods/create', {
          type: 'card',
          card: { cardNo: visa, expMonth: '12', expYear, securityCode: '123' },
        });
      assert.equal(ok(await create('30')).card.expYear, '2030');
      assert.equal(ok(await create(31)).card.expYear, '2031');
      assert.equal(ok(await create('2032')).card.expYear, '2032');
      const updated = ok(
        await merchant.call('POST', `/payment_methods/${ok(await create(30)).id}/update`, { card: { expYear: '33' } }),
      );
      assert.equal(updated.card.expYear, '2033');
      refused(await create('20'), 'card.expYear');
      refused(await create('203'), 'card.expYear');
    });
  });

  /**
   * The provider's store plugins run against Tessera (issue 21): what WooCommerce
   * (includes/class-wc-mc-gateway.php, payment-methods/class-mc-creditcard.php), OpenCart
   * (catalog/controller/extension/moneycollect/checkout.php) and Magento
   * (Model/PaymentMethod.php, Model/Method/Card.php) send, and the fields they read back.
   */
  describe('store plugins (WooCommerce, OpenCart, Magento)', () => {
    /** The billing details of an order as the plugins build them; WooCommerce's phone is optional. */
    const orderBilling = (phone: string) => ({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone,
      address: { country: 'GB', state: '', city: 'London', line1: '12 St James Sq', line2: '', postalCode: 'SW1Y 4JH' },
    });

    /** What the plugins print into the order note: `paymentMethodDetails.type` and `.card.brand`. */
    function assertCardDetails(paid: Record<string, any>, card: Record<string, any>) {
      assert.deepEqual(paid.paymentMethodDetails, {
        type: 'card',
        card: {
          brand: card.brand,
          last4: card.last4,
          expMonth: card.expMonth,
          expYear: card.expYear,
          country: card.country,
          fingerprint: card.fingerprint,
        },
      });
    }

    test('every payment answers paymentMethodDetails: created, read, listed, confirmed and in its webhook body', async () => {
      const merchant = await ctx.merchant();
      const target = await startReceiver();
      receivers.push(target);
      const methodId = await method(merchant);
      const card = ok(await merchant.call('GET', `/payment_methods/${methodId}`)).card;
      // The WooCommerce card payment (class-mc-creditcard.php): confirm "true", automatic, notifyUrl.
      const paid = ok(
        await merchant.call('POST', '/payment/create', {
          orderNo: 5001,
          amount: 2598,
          currency: 'USD',
          confirm: 'true',
          confirmationMethod: 'automatic',
          lineItems: [{ amount: 12.99, currency: 'USD', description: '', images: [''], name: 'Tee', quantity: 2 }],
          paymentMethod: methodId,
          customerId: '',
          ip: '203.0.113.7',
          notifyUrl: target.url('/?wc-api=wc_mc_webhook'),
          returnUrl: 'https://shop.example.com/checkout/order-received/5001/?key=wc_order_x',
          preAuth: 'n',
          setupFutureUsage: 'off',
          statementDescriptor: '',
          website: 'https://shop.example.com',
        }),
      );
      assert.equal(paid.status, 'succeeded');
      assertCardDetails(paid, card);
      assert.equal(paid.paymentMethodDetails.card.last4, '4242');
      assertCardDetails(ok(await merchant.call('GET', `/payment/${paid.id}`)), card);
      const listed = ok(await merchant.call('GET', '/payment?limit=1')).data[0];
      assertCardDetails(listed, card);

      // A payment waiting for a method has none; the method given later shows.
      const waiting = ok(await merchant.call('POST', '/payment/create', { amount: '100', currency: 'USD' }));
      assert.equal(waiting.paymentMethodDetails, null);
      const given = ok(
        await merchant.call('POST', `/payment/${waiting.id}/confirm`, { paymentMethod: await method(merchant) }),
      );
      assert.equal(given.paymentMethodDetails.type, 'card');
      assert.equal(given.paymentMethodDetails.card.last4, '4242');

      // The webhook body, as the plugins' notify handlers read it (`data.paymentMethodDetails`).
      await ctx.tessera.webhookDispatcher.runOnce();
      const received = await target.waitFor(1);
      const bodies = received.map((request) => JSON.parse(request.rawBody.toString()));
      const succeeded = bodies.find((body) => body.data.id === paid.id);
      assert.ok(succeeded, JSON.stringify(bodies.map((body) => body.type)));
      assertCardDetails(succeeded.data, card);
    });

    test('every field the plugins read back is there, with the type their PHP expects', async () => {
      const merchant = await ctx.merchant();
      const target = await startReceiver();
      receivers.push(target);
      // WooCommerce and OpenCart create a customer per shop account and keep `data.id`.
      const customerId = ok(
        await merchant.call('POST', '/customers/create', { ...orderBilling(''), description: '' }),
      ).id;
      assert.match(customerId, /^cus_\d{19}$/);
      // The hosted payment page of all three: they redirect the shopper to `data.url`.
      const session = ok(
        await merchant.call('POST', '/checkout/session/create', {
          customer: customerId,
          customerEmail: '',
          cancelUrl: 'https://shop.example.com/checkout/',
          returnUrl: 'https://shop.example.com/index.php?route=extension/moneycollect/back',
          notifyUrl: target.url('/index.php?route=extension/moneycollect/webhook'),
          preAuth: 'n',
          website: 'https://shop.example.com',
          paymentMethodTypes: ['card'],
          orderNo: 5004,
          currency: 'USD',
          amountTotal: 2598,
          billingDetails: orderBilling(''),
          lineItems: [{ amount: 25.98, currency: 'USD', description: '', images: [''], name: 'Tee', quantity: 1 }],
        }),
      );
      assert.match(session.url, /^https?:\/\/[^/]+\/checkout\/cs_\d{19}$/);

      // The in-page card payment (WooCommerce class-mc-creditcard.php): `data.id`, and `nextAction`
      // only when the shopper must go somewhere: `type` "redirect" and `redirectToUrl`.
      const inPage = (paymentMethod: string, orderNo: number) =>
        merchant.call('POST', '/payment/create', {
          orderNo,
          amount: 2598,
          currency: 'USD',
          confirm: 'true',
          confirmationMethod: 'automatic',
          paymentMethod,
          customerId,
          ip: '203.0.113.7',
          notifyUrl: target.url('/?wc-api=wc_mc_webhook'),
          returnUrl: `https://shop.example.com/checkout/order-received/${orderNo}/?key=wc_order_z`,
          preAuth: 'n',
          setupFutureUsage: 'off',
          website: 'https://shop.example.com',
        });
      const paid = ok(await inPage(await method(merchant), 5005));
      assert.match(paid.id, /^pt_\d{19}$/);
      assert.equal('nextAction' in paid, false);
      const challenged = ok(await inPage(await method(merchant, threeDSecureCard), 5006));
      assert.equal(challenged.nextAction.type, 'redirect');
      assert.match(challenged.nextAction.redirectToUrl, /^https?:\/\/\S+$/);

      // The return page and the webhook handler read the payment again (GET /payment/{id}): the
      // order by `orderNo` (as sent: a number), the shop account by `customerId`, the outcome by
      // `status` (`displayStatus` and `errorMessage` shown to the shopper), the note by
      // `paymentMethodDetails.type` and `.card.brand`.
      const read = ok(await merchant.call('GET', `/payment/${paid.id}`));
      assert.equal(read.orderNo, 5005);
      assert.equal(read.customerId, customerId);
      assert.equal(read.status, 'succeeded');
      assert.equal(read.displayStatus, 'succeeded');
      assert.equal(read.errorMessage, null);
      assert.equal(read.paymentMethodDetails.type, 'card');
      assert.equal(read.paymentMethodDetails.card.brand, 'visa');
      const declined = ok(await inPage(await method(merchant, '4000000000000002'), 5007));
      const readDeclined = ok(await merchant.call('GET', `/payment/${declined.id}`));
      assert.equal(readDeclined.status, 'failed');
      assert.equal(typeof readDeclined.displayStatus, 'string');
      assert.equal(typeof readDeclined.errorMessage, 'string');
      assert.ok(readDeclined.errorMessage.length > 0);

      // The webhook handlers take a body whose `type` contains "payment", then `data.orderNo` and `data.id`.
      await ctx.tessera.webhookDispatcher.runOnce();
      const received = await target.waitFor(2);
      const bodies = received.map((request) => JSON.parse(request.rawBody.toString()));
      for (const [orderNo, id] of [
        [5005, paid.id],
        [5007, declined.id],
      ]) {
        const body = bodies.find((candidate) => candidate.data.id === id);
        assert.ok(body, JSON.stringify(bodies.map((candidate) => [candidate.type, candidate.data.id])));
        assert.ok(body.type.includes('payment'), body.type);
        assert.equal(body.data.orderNo, orderNo);
      }
    });

    test('"" for every optional pattern-checked field is absent: an order without a phone checks out', async () => {
      const merchant = await ctx.merchant();
      // WooCommerce's card payment method for an order without a phone (class-mc-creditcard.php).
      const created = ok(
        await merchant.call('POST', '/payment_methods/create', {
          type: 'card',
          billingDetails: orderBilling(''),
          card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
        }),
      );
      assert.equal(created.billingDetails.phone, null);
      assert.equal(created.billingDetails.address.line2, '');
      // The checkout session of all three plugins (base_data + order_data), shipping to the same address.
      const session = ok(
        await merchant.call('POST', '/checkout/session/create', {
          customer: '',
          customerEmail: 'ada@example.com',
          cancelUrl: 'https://shop.example.com/checkout/',
          returnUrl: 'https://shop.example.com/checkout/order-received/5002/?key=wc_order_y',
          notifyUrl: 'https://shop.example.com/?wc-api=wc_mc_webhook',
          preAuth: 'n',
          website: 'https://shop.example.com',
          paymentMethodTypes: ['card'],
          orderNo: 5002,
          currency: 'USD',
          amountTotal: 2598,
          billingDetails: orderBilling(''),
          shipping: { firstName: 'Ada', lastName: 'Lovelace', phone: '', address: { country: 'GB', state: '' } },
          lineItems: [{ amount: 25.98, currency: 'USD', description: '', images: [''], name: 'Tee', quantity: 1 }],
        }),
      );
      assert.match(session.id, /^cs_\d{19}$/);
      // Customers too (the plugins create one per shop account), with an empty phone and country.
      const customer = ok(
        await merchant.call('POST', '/customers/create', {
          email: 'ada@example.com',
          phone: '',
          address: { country: '' },
        }),
      );
      assert.equal(customer.phone, null);
      // A payment's shipping phone and receipt e-mail alike; a phone that is given is still checked.
      const shipped = await payment(merchant, { shipping: { firstName: 'Ada', phone: '' }, receiptEmail: '', ip: '' });
      assert.equal(shipped.shipping.phone, null);
      assert.equal(shipped.receiptEmail, null);
      refused(
        await merchant.call('POST', '/payment_methods/create', {
          type: 'card',
          billingDetails: orderBilling('call me'),
          card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
        }),
        'billingDetails.phone',
      );
    });

    test('returnUrl and cancelUrl keep their query byte for byte; payment_id is appended after &', async () => {
      const merchant = await ctx.merchant();
      // OpenCart's $this->url->link('extension/moneycollect/back') and Magento's return URL.
      const returnUrl = 'https://shop.example.com/index.php?route=extension/moneycollect/back&x=a%20b+c';
      const cancelUrl = 'https://shop.example.com/index.php?route=checkout/checkout';
      const session = ok(
        await merchant.call('POST', '/checkout/session/create', {
          amountTotal: '2598',
          currency: 'USD',
          orderNo: 'oc-5003',
          returnUrl,
          cancelUrl,
        }),
      );
      assert.equal(session.returnUrl, returnUrl);
      const canceled = await injectRaw(ctx, { method: 'GET', url: `/checkout/${session.id}/cancel` });
      assert.equal(canceled.headers.location, cancelUrl);
      const paid = await injectRaw(ctx, {
        method: 'POST',
        url: `/checkout/${session.id}/pay`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ cardNo: visa, expiry: '12/30', securityCode: '123', name: 'Ada' }).toString(),
      });
      assert.equal(paid.statusCode, 303, paid.body);
      assert.match(
        String(paid.headers.location),
        /^https:\/\/shop\.example\.com\/index\.php\?route=extension\/moneycollect\/back&x=a%20b\+c&payment_id=pt_\d{19}$/,
      );
      // The 3-D Secure return of a payment made directly keeps it the same way.
      const { location } = await challengeReturn(returnUrl);
      assert.ok(location.startsWith(`${returnUrl}&payment_id=pt_`), location);
    });
  });

  describe('public keys and CORS', () => {
    const publicHeaders = (merchant: TestMerchant, extra: Record<string, string> = {}) => ({
      authorization: `Bearer ${merchant.publicKey}`,
      origin: 'https://shop.example.com',
      ...extra,
    });

    test('a public key creates and reads a payment method, and confirms and reads a payment with its clientSecret', async () => {
      const merchant = await ctx.merchant();
      const card = { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' };
      const created = ok(
        await send(merchant, 'POST', '/payment_methods/create', {
          type: json,
          body: JSON.stringify({ type: 'card', card }),
          headers: publicHeaders(merchant),
        }),
      );
      const read = await send(merchant, 'GET', `/payment_methods/${created.id}`, { headers: publicHeaders(merchant) });
      assert.equal(ok(read).id, created.id);
      assert.equal(read.headers['access-control-allow-origin'], '*');
      const waiting = await payment(merchant);
      const withSecret = publicHeaders(merchant, { clientSecret: waiting.clientSecret });
      const fetched = await send(merchant, 'GET', `/payment/${waiting.id}`, { headers: withSecret });
      assert.equal(ok(fetched).status, 'requires_confirmation');
      const body = JSON.stringify({ paymentMethod: created.id });
      const confirmed = await send(merchant, 'POST', `/payment/${waiting.id}/confirm`, {
        type: json,
        body,
        headers: withSecret,
      });
      assert.equal(ok(confirmed).status, 'succeeded');
      assert.equal(confirmed.headers['access-control-allow-origin'], '*');
    });

    test("a public key without the payment's clientSecret, or with another payment's, is 403 permission_denied", async () => {
      const merchant = await ctx.merchant();
      const [waiting, other] = [await payment(merchant), await payment(merchant)];
      for (const headers of [
        publicHeaders(merchant),
        publicHeaders(merchant, { clientSecret: other.clientSecret }),
        publicHeaders(merchant, { clientSecret: `${waiting.clientSecret}0` }),
      ]) {
        for (const [verb, path] of [
          ['GET', `/payment/${waiting.id}`],
          ['POST', `/payment/${waiting.id}/confirm`],
        ] as const) {
          const response = await send(merchant, verb, path, {
            headers,
            ...(verb === 'POST' ? { type: json, body: '{}' } : {}),
          });
          assert.equal(response.status, 403, `${verb} ${path}: ${response.raw}`);
          assert.equal(response.body.code, 'permission_denied');
          assert.equal(response.headers['access-control-allow-origin'], '*');
        }
      }
      assert.equal(ok(await merchant.call('GET', `/payment/${waiting.id}`)).status, 'requires_confirmation');
      // A private key needs no clientSecret.
      assert.equal(ok(await merchant.call('GET', `/payment/${other.id}`)).id, other.id);
    });

    /** Every route Fastify has registered, read from its route tree: [method, url with :params]. */
    function registeredRoutes(): Array<[string, string]> {
      const tree = ctx.tessera.server.printRoutes({ commonPrefix: false });
      const parents: string[] = [];
      const routes: Array<[string, string]> = [];
      for (const line of tree.split('\n')) {
        const match = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
        if (!match) continue;
        const depth = match[1]!.length / 4;
        const url = (parents[depth - 1] ?? '') + match[2]!;
        parents[depth] = url;
        parents.length = depth + 1;
        for (const verb of (match[3] ?? '').split(', ').filter(Boolean)) routes.push([verb, url]);
      }
      return routes;
    }

    test('every other registered route of the merchant API refuses a public key with 403 permission_denied', async () => {
      const merchant = await ctx.merchant();
      const allowed = new Set([
        `POST ${apiBase}/payment_methods/create`,
        `GET ${apiBase}/payment_methods/:id`,
        `POST ${apiBase}/payment/:id/confirm`,
        `GET ${apiBase}/payment/:id`,
        `HEAD ${apiBase}/payment_methods/:id`,
        `HEAD ${apiBase}/payment/:id`,
      ]);
      // The OpenAPI document is public (no key at all), and OPTIONS answers preflights (below).
      const checked = registeredRoutes().filter(
        ([verb, url]) =>
          url.startsWith(`${apiBase}/`) &&
          url !== `${apiBase}/openapi.json` &&
          verb !== 'OPTIONS' &&
          !allowed.has(`${verb} ${url}`),
      );
      assert.ok(checked.length >= 25, `only ${checked.length} routes found`);
      for (const [verb, url] of checked) {
        const path = url
          .slice(apiBase.length)
          .replace(':customerId', 'cus_1000000000000000000')
          .replace(':id', 'pt_1000000000000000000');
        const response = await send(merchant, verb as 'GET', path, {
          headers: publicHeaders(merchant),
          ...(verb === 'POST' ? { type: json, body: '{}' } : {}),
        });
        assert.equal(response.status, 403, `${verb} ${url}: ${response.raw}`);
        if (verb !== 'HEAD') assert.equal(response.body.code, 'permission_denied', `${verb} ${url}`);
      }
    });

    test('CORS preflights of the four public routes are answered from any origin with the headers they need', async () => {
      const paths: Array<[string, string]> = [
        ['POST', '/payment_methods/create'],
        ['GET', '/payment_methods/pm_1000000000000000000'],
        ['POST', '/payment/pt_1000000000000000000/confirm'],
        ['GET', '/payment/pt_1000000000000000000'],
      ];
      for (const [verb, path] of paths) {
        const preflight = await injectRaw(ctx, {
          method: 'OPTIONS',
          url: `${apiBase}${path}`,
          headers: {
            origin: 'https://any-shop.example',
            'access-control-request-method': verb,
            'access-control-request-headers': 'authorization,content-type,clientsecret,idempotency-key',
          },
        });
        assert.equal(preflight.statusCode, 204, `${path}: ${preflight.body}`);
        assert.equal(preflight.headers['access-control-allow-origin'], '*');
        assert.ok(String(preflight.headers['access-control-allow-methods']).split(', ').includes(verb), path);
        const allowedHeaders = String(preflight.headers['access-control-allow-headers']).toLowerCase().split(', ');
        for (const name of ['authorization', 'content-type', 'clientsecret', 'idempotency-key']) {
          assert.ok(allowedHeaders.includes(name), `${path} allows ${name}`);
        }
      }
      const privateOnly = await injectRaw(ctx, {
        method: 'OPTIONS',
        url: `${apiBase}/payment/pt_1000000000000000000/capture`,
        headers: { origin: 'https://any-shop.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(privateOnly.headers['access-control-allow-origin'], undefined);
      assert.notEqual(privateOnly.statusCode, 204);
      const merchant = await ctx.merchant();
      const privateAnswer = await merchant.call('GET', '/customers', undefined, { origin: 'https://any-shop.example' });
      assert.equal(privateAnswer.headers['access-control-allow-origin'], undefined);
    });
  });

  describe('signatureCase', () => {
    async function receiver(): Promise<Receiver> {
      const started = await startReceiver();
      receivers.push(started);
      return started;
    }

    /** The receiver's own check, as the Java SDK's Webhook.constructEvent: lower-case hex, compared exactly. */
    function verifiesLowerCase(request: ReceivedRequest, token: string): boolean {
      const requestTime = request.headers['request-time'] as string;
      const expected = createHmac('sha256', token)
        .update(Buffer.concat([Buffer.from(`${requestTime}.`), request.rawBody]))
        .digest('hex');
      return request.headers.signature === expected;
    }

    async function deliverPayment(merchant: TestMerchant, fields: Record<string, unknown> = {}): Promise<void> {
      await payment(merchant, { confirm: 'true', ...fields });
      await ctx.tessera.webhookDispatcher.runOnce();
    }

    test('an endpoint switched to lower is signed in lower-case hex that a case-sensitive verifier accepts', async () => {
      const merchant = await ctx.merchant();
      const target = await receiver();
      const created = ok(
        await merchant.call('POST', '/webhook_endpoints/create', { url: target.url(), legacyNotifications: false }),
      );
      assert.equal(created.signatureCase, 'upper');
      await deliverPayment(merchant);
      const [upper] = await target.waitFor(1);
      assert.equal(verifiesLowerCase(upper!, created.token), false);
      assert.match(String(upper!.headers.signature), /^[0-9A-F]{64}$/);

      const updated = ok(
        await merchant.call('POST', `/webhook_endpoints/${created.id}/update`, { signatureCase: 'lower' }),
      );
      assert.equal(updated.signatureCase, 'lower');
      assert.equal(ok(await merchant.call('GET', `/webhook_endpoints/${created.id}`)).signatureCase, 'lower');
      await deliverPayment(merchant);
      const [, lower] = await target.waitFor(2);
      assert.ok(verifiesLowerCase(lower!, created.token), String(lower!.headers.signature));
    });

    test('the dynamic notifyUrl endpoint has its own signatureCase', async () => {
      const merchant = await ctx.merchant();
      const target = await receiver();
      const endpoints = ok(await merchant.call('GET', '/webhook_endpoints'));
      const dynamic = endpoints.data.find((endpoint: { kind: string }) => endpoint.kind === 'dynamic');
      assert.equal(dynamic.signatureCase, 'upper');
      ok(
        await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/update`, {
          signatureCase: 'lower',
          legacyNotifications: false,
        }),
      );
      const { token } = ok(await merchant.call('GET', `/webhook_endpoints/${dynamic.id}/reveal_token`));
      await deliverPayment(merchant, { notifyUrl: target.url('/notify') });
      const [request] = await target.waitFor(1);
      assert.ok(verifiesLowerCase(request!, token));
    });

    test('a new endpoint may be created lower; anything but upper or lower is refused naming signatureCase', async () => {
      const merchant = await ctx.merchant();
      const url = 'https://shop.example.com/hooks';
      assert.equal(
        ok(await merchant.call('POST', '/webhook_endpoints/create', { url, signatureCase: 'lower' })).signatureCase,
        'lower',
      );
      refused(
        await merchant.call('POST', '/webhook_endpoints/create', { url, signatureCase: 'mixed' }),
        'signatureCase',
      );
    });
  });
});
