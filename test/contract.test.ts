/**
 * The contract as existing clients and black-box verifiers exercise it: docs/api.md#what-the-service-does, docs/api.md#operations requests in the
 * exact form a MoneyCollect client sends them, the order of refusals, and the edges of the HTTP layer
 * (unstorable text, malformed paths, content types) that must be 400s in the envelope, never 500s.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apiBase,
  databaseKind,
  injectRaw,
  startTestApp,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';

const visa = '4242424242424242';

describe(`contract as clients send it (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  async function storedPair(merchant: TestMerchant): Promise<{ customerId: string; paymentMethod: string }> {
    const customer = await merchant.call('POST', '/customers/create', { email: 'ada@example.com' });
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(method.status, 200, method.raw);
    return { customerId: customer.body.data.id, paymentMethod: method.body.data.id };
  }

  test('takes a docs/api.md#operations storing payment exactly as a MoneyCollect client sends it, and echoes its fields', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod } = await storedPair(merchant);
    const request = {
      amount: '1999',
      currency: 'USD',
      confirmationMethod: 'automatic',
      customerId,
      paymentMethod,
      description: 'Order 1001',
      ip: '203.0.113.7',
      confirm: 'true',
      // Store plugins send the unit price as the shop shows it, decimals included.
      lineItems: [
        {
          amount: 19.99,
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
      subsequentInitialType: null,
    };
    const response = await injectRaw(ctx, {
      method: 'POST',
      url: `${apiBase}/payment/create`,
      headers: {
        authorization: `bearer ${merchant.privateKey}`,
        'content-type': 'application/json;charset=UTF-8',
      },
      payload: JSON.stringify(request),
    });
    assert.equal(response.statusCode, 200, response.body);
    const payment = response.json().data;
    assert.equal(payment.status, 'succeeded');
    for (const [field, value] of Object.entries(request)) {
      assert.deepEqual(payment[field], value, `${field} is echoed as sent`);
    }
  });

  test('answers confirm as the docs/api.md#payments string, whether it was sent as "true" or true', async () => {
    const merchant = await ctx.merchant();
    const { paymentMethod } = await storedPair(merchant);
    const base = { amount: '100', currency: 'USD', paymentMethod };
    for (const [sent, answered] of [
      ['true', 'true'],
      [true, 'true'],
      ['false', 'false'],
      [false, 'false'],
      [undefined, 'false'],
    ] as const) {
      const response = await merchant.call('POST', '/payment/create', { ...base, confirm: sent });
      assert.equal(response.status, 200, response.raw);
      assert.equal(response.body.data.confirm, answered, `confirm ${String(sent)}`);
      const retrieved = await merchant.call('GET', `/payment/${response.body.data.id}`);
      assert.equal(retrieved.body.data.confirm, answered);
    }
  });

  test('refuses a negative or non-numeric line item amount, naming it', async () => {
    const merchant = await ctx.merchant();
    const { paymentMethod } = await storedPair(merchant);
    // Numeric text ("19.99") is the number (docs/api.md#compatibility-with-existing-clients); other text is not.
    for (const amount of [-1, '-1', 'nineteen', '19,99', true]) {
      const response = await merchant.call('POST', '/payment/create', {
        amount: '100',
        currency: 'USD',
        paymentMethod,
        lineItems: [{ amount, name: 'Notebook', quantity: 1 }],
      });
      assert.equal(response.status, 400, `${String(amount)}: ${response.raw}`);
      assert.equal(response.body.data.param, 'lineItems[0].amount');
    }
  });

  test('accepts an empty statementDescriptor, as docs/api.md#requests sets only its maximum', async () => {
    const merchant = await ctx.merchant();
    const { paymentMethod } = await storedPair(merchant);
    const response = await merchant.call('POST', '/payment/create', {
      amount: '100',
      currency: 'USD',
      paymentMethod,
      statementDescriptor: '',
    });
    assert.equal(response.status, 200, response.raw);
    assert.equal(response.body.data.statementDescriptor, '');
    const tooLong = await merchant.call('POST', '/payment/create', {
      amount: '100',
      currency: 'USD',
      paymentMethod,
      statementDescriptor: 'x'.repeat(23),
    });
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.body.data.param, 'statementDescriptor');
  });

  test('a validation refusal names the field and its rule (docs/api.md#requests), not a generic sentence', async () => {
    const merchant = await ctx.merchant();
    const cases: Array<[path: string, body: Record<string, unknown>, msg: string]> = [
      [
        '/payment_methods/create',
        { type: 'card', card: { cardNo: visa, expMonth: '13', expYear: '2030' } },
        'card.expMonth must be a two-digit month from 01 to 12',
      ],
      [
        '/payment/create',
        { amount: '-1', currency: 'USD', paymentMethod: 'pm_1000000000000000000' },
        'amount must be a string of digits (minor units) or a whole number, at most 12 digits',
      ],
      [
        '/payment/create',
        { amount: '1', currency: 'USD', paymentMethod: 'pm_1000000000000000000', confirm: 'yes' },
        'confirm must be true or false',
      ],
      [
        '/payment/create',
        { amount: '1', currency: 'USD', paymentMethod: 'pm_1000000000000000000', ip: 'somewhere' },
        'ip must be an IPv4 or IPv6 address',
      ],
      [
        '/payment/create',
        { amount: '1', currency: 'US', paymentMethod: 'pm_1000000000000000000' },
        'currency must be a three-letter ISO 4217 currency code',
      ],
      ['/customers/create', { address: { country: 'USA' } }, 'address.country must be a two-letter country code'],
    ];
    for (const [path, body, msg] of cases) {
      const response = await merchant.call('POST', path, body);
      assert.equal(response.status, 400, response.raw);
      assert.equal(response.body.code, 'invalid_request');
      assert.equal(response.body.msg, msg);
    }
  });

  test('checks the key before the request: without a valid key even a malformed request is 401', async () => {
    for (const [method, path, payload] of [
      ['POST', '/customers/create', '{"firstName":5}'],
      ['POST', '/payment/create', '{}'],
      ['POST', '/payment/create', '{not json'],
      ['GET', '/customers?limit=0', undefined],
      ['GET', '/payment/pt_%00', undefined],
    ] as const) {
      const response = await injectRaw(ctx, {
        method,
        url: `${apiBase}${path}`,
        headers: payload === undefined ? {} : { 'content-type': 'application/json' },
        payload,
      });
      assert.equal(response.statusCode, 401, `${method} ${path}: ${response.body}`);
      assert.equal(response.json().code, 'authentication_error');
      assert.ok(response.headers['x-traceid']);
    }
  });

  test('refuses a public key outside payment method creation with 403 before validating the body', async () => {
    const merchant = await ctx.merchant();
    const response = await injectRaw(ctx, {
      method: 'POST',
      url: `${apiBase}/payment/create`,
      headers: { authorization: `Bearer ${merchant.publicKey}`, 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(response.statusCode, 403, response.body);
    assert.equal(response.json().code, 'permission_denied');
  });

  test('refuses text the database cannot store (NUL, unpaired surrogates) with 400 naming the field, never 500', async () => {
    const merchant = await ctx.merchant();
    const { customerId, paymentMethod } = await storedPair(merchant);
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/customers/create', { firstName: 'A\u0000B' }, 'firstName'],
      ['POST', '/customers/create', { address: { city: '\u0000' } }, 'address.city'],
      ['POST', '/customers/create', { description: 'broken \ud800 text' }, 'description'],
      [
        'POST',
        '/payment/create',
        { amount: '100', currency: 'USD', paymentMethod, customerId, orderNo: 'o\u0000' },
        'orderNo',
      ],
      [
        'POST',
        '/payment/create',
        { amount: '100', currency: 'USD', paymentMethod, lineItems: [{ name: 'x\u0000' }] },
        'lineItems[0].name',
      ],
      ['GET', '/customers?email=%00', undefined, 'email'],
      ['GET', '/payment?orderNo=a%00', undefined, 'orderNo'],
      ['GET', '/customers?startingAfter=%00', undefined, 'startingAfter'],
      ['GET', '/customers/cus_%00', undefined, 'id'],
      ['GET', '/payment_methods/list/%00', undefined, 'customerId'],
      ['GET', '/events/%00', undefined, 'id'],
    ];
    for (const [method, path, body, param] of cases) {
      const response = await merchant.call(method as 'GET' | 'POST', path, body);
      assert.equal(response.status, 400, `${method} ${path}: ${response.raw}`);
      assert.equal(response.body.code, 'invalid_request');
      assert.equal(response.body.data.param, param, `${method} ${path}`);
    }
  });

  test('refuses a body nested deeper than any request with 400, never 500', async () => {
    const merchant = await ctx.merchant();
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const response = await merchant.call('POST', '/payment/create', `{"lineItems":${deep}}`);
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'invalid_request');
    assert.equal(response.body.data.param, 'body');
  });

  test('answers a malformed path and an over-long id in the envelope with an X-TraceId', async () => {
    const merchant = await ctx.merchant();
    const malformed = await merchant.call('GET', '/customers/%ZZ');
    assert.equal(malformed.status, 400, malformed.raw);
    assert.equal(malformed.body.code, 'invalid_request');
    assert.equal(malformed.body.data.param, 'path');
    assert.ok(malformed.headers['x-traceid']);

    const longId = await merchant.call('GET', `/payment/pt_${'1'.repeat(200)}`);
    assert.equal(longId.status, 404, longId.raw);
    assert.equal(longId.body.code, 'resource_missing');
    assert.ok(longId.headers['x-traceid']);
  });

  test('refuses a text/plain body as the wrong content type (JSON and forms are taken)', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/customers/create', '{}', { 'content-type': 'text/plain' });
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'invalid_request');
    assert.equal(response.body.msg, 'Content-Type must be application/json or application/x-www-form-urlencoded');
    assert.equal(response.body.data.param, 'body');
  });

  test('documents the error envelope and every error status on each API operation in OpenAPI', async () => {
    const response = await injectRaw(ctx, { method: 'GET', url: `${apiBase}/openapi.json` });
    const document = response.json() as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ name: `${method} ${path}`, operation })),
    );
    assert.ok(operations.length > 20);
    for (const { name, operation } of operations) {
      for (const status of ['200', '400', '401', '404', '500']) {
        const content = operation.responses[status]?.content;
        // The event stream answers its 200 as text/event-stream (tessera listen); its errors are JSON.
        const documented = content?.['application/json'] ?? (status === '200' && content?.['text/event-stream']);
        assert.ok(documented, `${name} documents ${status}`);
      }
    }
    const createPayment = document.paths[`${apiBase}/payment/create`]!.post as unknown as {
      requestBody: { content: { 'application/json': { schema: { properties: Record<string, any> } } } };
    };
    const lineItem = createPayment.requestBody.content['application/json'].schema.properties.lineItems.items;
    assert.equal(lineItem.properties.amount.type, 'number');
  });

  test('a refused request answers an error that matches the documented envelope exactly', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/payment/pt_0000000000000000000/cancel', {});
    assert.equal(response.status, 404);
    assert.deepEqual(Object.keys(response.body).sort(), ['code', 'data', 'msg']);
    assert.equal(response.body.data.param, 'id');
  });
});
