/**
 * docs/api.md#requests, docs/api.md#compatibility-with-existing-clients (issue 10): the provider's published clients work against Tessera by changing only
 * the host. Each test replays a request as a client sends it — method, path, content type, body
 * bytes — and checks the part of the answer that client relies on; the strictness that remains
 * (an unknown field is still 400 naming it) is checked beside it.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiBase, databaseKind, injectRaw, startTestApp, type TestContext } from './helpers/harness.js';
import { clientReplay, javaForm, json, visa } from './helpers/client-replay.js';

describe(`existing clients (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
  });
  afterEach(() => ctx.tessera.webhookDispatcher.stop());
  after(async () => {
    await ctx.close();
  });
  const { send, ok, refused, customer, method, payment, challengeReturn, preAuthorized } = clientReplay(() => ctx);

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
});
