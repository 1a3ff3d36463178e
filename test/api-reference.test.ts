import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, injectRaw, startTestApp, type TestContext } from './helpers/harness.js';

describe(`API reference and service conventions (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  test('serves an OpenAPI document listing every merchant operation, without a key', async () => {
    const response = await injectRaw(ctx, { method: 'GET', url: '/api/services/v1/openapi.json' });
    assert.equal(response.statusCode, 200);
    const document = response.json() as { openapi: string; paths: Record<string, Record<string, unknown>> };
    assert.match(document.openapi, /^3\./);
    const expected: Array<[string, string]> = [
      ['post', '/api/services/v1/customers/create'],
      ['get', '/api/services/v1/customers/{id}'],
      ['get', '/api/services/v1/customers'],
      ['post', '/api/services/v1/customers/{id}/update'],
      ['delete', '/api/services/v1/customers/{id}'],
      ['post', '/api/services/v1/payment_methods/create'],
      ['get', '/api/services/v1/payment_methods/{id}'],
      ['get', '/api/services/v1/payment_methods/list/{customerId}'],
      ['post', '/api/services/v1/payment_methods/{id}/attach'],
      ['post', '/api/services/v1/payment_methods/{id}/detach'],
      ['post', '/api/services/v1/payment_methods/{id}/update'],
      ['post', '/api/services/v1/payment/create'],
      ['get', '/api/services/v1/payment/{id}'],
      ['get', '/api/services/v1/payment'],
      ['post', '/api/services/v1/payment/{id}/update'],
      ['post', '/api/services/v1/payment/{id}/confirm'],
      ['post', '/api/services/v1/payment/{id}/capture'],
      ['post', '/api/services/v1/payment/{id}/cancel'],
      ['get', '/api/services/v1/events/{id}'],
      ['get', '/api/services/v1/events'],
      ['post', '/api/services/v1/invoices/create'],
      ['get', '/api/services/v1/invoices/{id}'],
      ['get', '/api/services/v1/invoices'],
      ['post', '/api/services/v1/invoices/{id}/update'],
      ['post', '/api/services/v1/invoices/{id}/finalize'],
      ['post', '/api/services/v1/invoices/{id}/send'],
      ['post', '/api/services/v1/invoices/{id}/pay'],
      ['post', '/api/services/v1/invoices/{id}/void'],
      ['post', '/api/services/v1/invoices/{id}/mark_uncollectible'],
      ['delete', '/api/services/v1/invoices/{id}'],
    ];
    for (const [method, path] of expected) {
      assert.ok(document.paths[path]?.[method], `${method.toUpperCase()} ${path} is documented`);
    }
    const createPayment = document.paths['/api/services/v1/payment/create']!.post as {
      requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    };
    const fields = Object.keys(createPayment.requestBody.content['application/json']!.schema.properties);
    for (const field of [
      'amount',
      'currency',
      'customerId',
      'paymentMethod',
      'setupFutureUsage',
      'subsequentInitialType',
      'notifyUrl',
    ]) {
      assert.ok(fields.includes(field), `payment/create documents ${field}`);
    }
  });

  test('documents a request body as required only where the operation requires a field', async () => {
    const response = await injectRaw(ctx, { method: 'GET', url: '/api/services/v1/openapi.json' });
    const paths = response.json().paths as Record<string, { post?: { requestBody?: { required?: boolean } } }>;
    const bodyRequired = (path: string) => paths[`/api/services/v1${path}`]?.post?.requestBody?.required;
    assert.equal(bodyRequired('/payment/create'), true);
    assert.equal(bodyRequired('/payment_methods/create'), true);
    assert.equal(bodyRequired('/customers/create'), false);
    assert.equal(bodyRequired('/payment_methods/{id}/detach'), false);
    assert.equal(bodyRequired('/payment/{id}/confirm'), false);
    assert.equal(bodyRequired('/invoices/create'), true);
    assert.equal(bodyRequired('/invoices/{id}/pay'), false);
    // As documented: no body at all is an empty object.
    const merchant = await ctx.merchant();
    assert.equal((await merchant.call('POST', '/customers/create')).status, 200);
  });

  test('renders a readable API reference page at /docs', async () => {
    const response = await injectRaw(ctx, { method: 'GET', url: '/docs/' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /text\/html/);
    assert.match(response.body, /swagger/i);
  });

  test('answers an unknown route with the envelope and 404 resource_missing', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('GET', '/no_such_thing');
    assert.equal(response.status, 404);
    assert.equal(response.body.code, 'resource_missing');
    assert.equal(response.body.data, null);
    assert.ok(response.headers['x-traceid']);
  });

  test('health answers 200 once ready', async () => {
    const response = await injectRaw(ctx, { method: 'GET', url: '/health' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { status: 'ok' });
  });

  test('the operator API refuses a missing or wrong operator key', async () => {
    const missing = await injectRaw(ctx, { method: 'GET', url: '/admin/v1/merchants' });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().code, 'authentication_error');
    const wrong = await injectRaw(ctx, {
      method: 'GET',
      url: '/admin/v1/merchants',
      headers: { authorization: 'Bearer wrong-operator-key-0000000000' },
    });
    assert.equal(wrong.statusCode, 401);
    const merchantKey = (await ctx.merchant()).privateKey;
    const withMerchantKey = await injectRaw(ctx, {
      method: 'GET',
      url: '/admin/v1/merchants',
      headers: { authorization: `Bearer ${merchantKey}` },
    });
    assert.equal(withMerchantKey.statusCode, 401);
  });

  test('rolled merchant keys stop working at once and the new ones work', async () => {
    const merchant = await ctx.merchant();
    // Used before the roll, so that whatever the service remembers about the key is tested too.
    assert.equal((await merchant.call('GET', '/customers')).status, 200);
    const rolled = await injectRaw(ctx, {
      method: 'POST',
      url: `/admin/v1/merchants/${merchant.id}/roll_keys`,
      headers: { authorization: `Bearer ${ctx.operatorKey}` },
    });
    assert.equal(rolled.statusCode, 200);
    const newKey = rolled.json().data.keys.privateKey as string;
    assert.notEqual(newKey, merchant.privateKey);
    const old = await merchant.call('GET', '/customers');
    assert.equal(old.status, 401);
    const fresh = await injectRaw(ctx, {
      method: 'GET',
      url: '/api/services/v1/customers',
      headers: { authorization: `Bearer ${newKey}` },
    });
    assert.equal(fresh.statusCode, 200);
  });

  test('operator POSTs honour Idempotency-Key: a retried merchant creation makes one merchant', async () => {
    const create = (name: string) =>
      injectRaw(ctx, {
        method: 'POST',
        url: '/admin/v1/merchants/create',
        headers: { authorization: `Bearer ${ctx.operatorKey}`, 'idempotency-key': 'operator-create-1' },
        payload: { name },
      });
    const first = await create('Idempotent shop');
    assert.equal(first.statusCode, 200, first.body);
    const again = await create('Idempotent shop');
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().data.id, first.json().data.id);
    const different = await create('Another shop');
    assert.equal(different.statusCode, 400);
    assert.equal(different.json().code, 'idempotency_error');
    const listed = await injectRaw(ctx, {
      method: 'GET',
      url: '/admin/v1/merchants',
      headers: { authorization: `Bearer ${ctx.operatorKey}` },
    });
    const named = (listed.json().data.data as Array<{ name: string }>).filter((m) => m.name === 'Idempotent shop');
    assert.equal(named.length, 1);
    // A merchant's key of the same text is its own: it does not replay the operator's answer.
    const merchant = await ctx.merchant();
    const customer = await merchant.call('POST', '/customers/create', {}, { 'idempotency-key': 'operator-create-1' });
    assert.equal(customer.status, 200);
    assert.match(customer.body.data.id, /^cus_/);
  });

  test('capability flags changed by the operator take effect on the next request', async () => {
    const merchant = await ctx.merchant({ tokenization: false, mit: false });
    const storing = {
      amount: '1000',
      currency: 'USD',
      customerId: 'cus_1000000000000000000',
      paymentMethod: 'pm_1000000000000000000',
      setupFutureUsage: 'on',
    };
    const refused = await merchant.call('POST', '/payment/create', storing);
    assert.equal(refused.body.code, 'tokenization_not_enabled', refused.raw);
    const update = await injectRaw(ctx, {
      method: 'POST',
      url: `/admin/v1/merchants/${merchant.id}/update`,
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ tokenization: true, mit: true }),
    });
    assert.equal(update.statusCode, 200);
    assert.equal(update.json().data.tokenization, true);
    assert.equal(update.json().data.mit, true);
    // Allowed now: the same request gets as far as looking for the customer.
    const allowed = await merchant.call('POST', '/payment/create', storing);
    assert.equal(allowed.body.code, 'resource_missing', allowed.raw);
    assert.equal(allowed.body.data.param, 'customerId');
    const badFlag = await injectRaw(ctx, {
      method: 'POST',
      url: `/admin/v1/merchants/${merchant.id}/update`,
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ mit: 'yes' }),
    });
    assert.equal(badFlag.statusCode, 400);
    assert.equal(badFlag.json().data.param, 'mit');
  });
});
