import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { databaseKind, injectRaw, startTestApp, type TestContext } from './helpers/harness.js';
import { errorCatalog } from '../src/core/errors.js';

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

  type Operation = { summary?: string; description?: string };
  async function documentAt(url: string) {
    const response = await injectRaw(ctx, { method: 'GET', url });
    assert.equal(response.statusCode, 200);
    return response.json() as {
      info: { description: string };
      paths: Record<string, Record<string, Operation>>;
      components?: unknown;
    };
  }
  const operationsOf = (document: Awaited<ReturnType<typeof documentAt>>) =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
    );

  test('every operation of both documents has a summary and a description', async () => {
    for (const url of ['/api/services/v1/openapi.json', '/admin/v1/openapi.json']) {
      const operations = operationsOf(await documentAt(url));
      assert.ok(operations.length > 5, url);
      for (const { name, operation } of operations) {
        assert.ok(operation.summary && operation.summary.length > 3, `${name} has a summary`);
        assert.ok(operation.description && operation.description.length > 10, `${name} has a description`);
      }
    }
  });

  test('the operator API is in its own document, not in the merchant one that /docs shows', async () => {
    const merchant = await documentAt('/api/services/v1/openapi.json');
    assert.deepEqual(
      Object.keys(merchant.paths).filter((path) => path.startsWith('/admin')),
      [],
    );
    const shown = await documentAt('/docs/json');
    assert.deepEqual(
      Object.keys(shown.paths).filter((path) => path.startsWith('/admin')),
      [],
    );
    const operator = await documentAt('/admin/v1/openapi.json');
    const paths = Object.keys(operator.paths);
    assert.ok(paths.includes('/admin/v1/merchants/create'));
    assert.ok(
      paths.every((path) => path.startsWith('/admin/v1/')),
      paths.join(', '),
    );
  });

  test('every patterned field has a hand-written example that matches it and does not look like a regex', async () => {
    const document = await documentAt('/api/services/v1/openapi.json');
    const problems: string[] = [];
    let checked = 0;
    const walk = (node: unknown, at: string) => {
      if (!node || typeof node !== 'object') return;
      const schema = node as { pattern?: unknown; example?: unknown };
      if (typeof schema.pattern === 'string') {
        checked++;
        // Without an example, Swagger UI makes one from the expression (`https://fG$~7e…`).
        if (typeof schema.example !== 'string') problems.push(`${at}: no example for ${schema.pattern}`);
        else if (!new RegExp(schema.pattern).test(schema.example)) problems.push(`${at}: ${schema.example}`);
      }
      if (typeof schema.example === 'string' && /[\\^$]|\[[^\]]*\]\{|\(\?/.test(schema.example)) {
        problems.push(`${at}: regex-looking example ${schema.example}`);
      }
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
    };
    walk(document.paths, '');
    walk(document.components, '#components');
    assert.ok(checked > 50, `checked ${checked}`);
    assert.deepEqual(problems, []);
    const create = document.paths['/api/services/v1/payment/create']!.post as unknown as {
      requestBody: { content: { 'application/json': { example: { amount: string; currency: string } } } };
    };
    // The operations of a first integration show a whole request (captured from a real run).
    const example = create.requestBody.content['application/json'].example;
    assert.equal(example.amount, '1999');
    assert.equal(example.currency, 'USD');
  });

  test('the six operations of a first integration show a whole 200 answer that validates against its schema', async () => {
    const document = await documentAt('/api/services/v1/openapi.json');
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(document, 'openapi');
    const schemas = (document.components as { schemas: Record<string, { properties?: object }> }).schemas;
    for (const path of [
      '/customers/create',
      '/payment_methods/create',
      '/payment/create',
      '/refunds/create',
      '/invoices/create',
      '/webhook_endpoints/create',
    ]) {
      const full = `/api/services/v1${path}`;
      const operation = document.paths[full]!.post as unknown as {
        responses: { 200: { content: { 'application/json': { example?: { data?: object }; schema: any } } } };
      };
      const json = operation.responses[200].content['application/json'];
      assert.ok(json.example, `${path} has a response example`);
      const pointer = `/paths/${full.replaceAll('/', '~1')}/post/responses/200/content/application~1json/schema`;
      const validate = ajv.compile({ $ref: `openapi#${pointer}` });
      assert.ok(validate(json.example), `${path}: ${ajv.errorsText(validate.errors)}`);
      // Whole: the schema requires every field it always has; none is shown that the answer lacks.
      const dataRef = String(json.schema.properties.data.$ref ?? '').replace('#/components/schemas/', '');
      const fields = Object.keys(schemas[dataRef]?.properties ?? json.schema.properties.data.properties);
      assert.deepEqual(
        Object.keys(json.example.data!).filter((field) => !fields.includes(field)),
        [],
        path,
      );
    }
  });

  test('no description has text in angle brackets that a renderer takes for an HTML tag', async () => {
    const document = await documentAt('/api/services/v1/openapi.json');
    assert.match(document.info.description, /`Authorization: Bearer PRIVATE_KEY`/);
    const tags: string[] = [];
    const walk = (node: unknown) => {
      if (!node || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        // Code spans render literally; anywhere else `<private key>` disappears as a tag.
        if (key === 'description' && typeof value === 'string' && /<[A-Za-z]/.test(value.replace(/`[^`]*`/g, ''))) {
          tags.push(value);
        }
        walk(value);
      }
    };
    walk(document);
    assert.deepEqual(tags, []);
  });

  test('the reference opens with a quickstart and every sandbox test card of the API guide', async () => {
    const response = await injectRaw(ctx, { method: 'GET', url: '/api/services/v1/openapi.json' });
    const intro = (response.json() as { info: { description: string } }).info.description;
    assert.match(intro, /Quickstart/);
    assert.match(intro, /subsequentInitialType/);
    const guide = readFileSync('docs/api.md', 'utf8');
    const cards = [...guide.matchAll(/^\| (\d{15,16}) +\|/gm)].map((match) => match[1]!);
    assert.ok(cards.length >= 17, `test cards found in docs/api.md: ${cards.length}`);
    for (const card of cards) assert.ok(intro.includes(`| ${card} |`), `${card} is missing from the /docs intro`);
  });

  test('GET / redirects to the API reference', async () => {
    const response = await injectRaw(ctx, { method: 'GET', url: '/' });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/docs');
  });

  test('renders the API reference at /docs from this origin only: Redoc and the merchant document', async () => {
    const response = await injectRaw(ctx, { method: 'GET', url: '/docs/' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /text\/html/);
    assert.match(response.body, /<redoc\s+spec-url="\/api\/services\/v1\/openapi\.json"/);
    // Every address the page names is of this origin: no CDN, no font host.
    assert.deepEqual(response.body.match(/(?:src|href)="(?!\/)[^"]*"|https?:\/\//g), null);
    const script = await injectRaw(ctx, { method: 'GET', url: '/docs/redoc.standalone.js' });
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /javascript/);
    assert.ok(script.rawPayload.length > 100_000);
  });

  test('the merchant reference offers a private and a public key, never the operator key', async () => {
    const merchant = await documentAt('/api/services/v1/openapi.json');
    const schemes = (merchant as unknown as { components: { securitySchemes: Record<string, unknown> } }).components
      .securitySchemes;
    assert.deepEqual(Object.keys(schemes).sort(), ['privateKey', 'publicKey']);
    const operations = merchant.paths as unknown as Record<string, Record<string, { security?: unknown }>>;
    assert.deepEqual(operations['/api/services/v1/payment_methods/create']!.post!.security, [
      { privateKey: [] },
      { publicKey: [] },
    ]);
    assert.equal(operations['/api/services/v1/customers/create']!.post!.security, undefined);
    const operator = await documentAt('/admin/v1/openapi.json');
    const operatorSchemes = (operator as unknown as { components: { securitySchemes: Record<string, unknown> } })
      .components.securitySchemes;
    assert.deepEqual(Object.keys(operatorSchemes), ['operatorKey']);
  });

  test('every merchant operation has curl and @tessera/node samples, and every JSON one a request, answer and error example', async () => {
    const merchant = await documentAt('/api/services/v1/openapi.json');
    type Media = { example?: unknown };
    type Operation = {
      'x-codeSamples'?: Array<{ label: string; source: string }>;
      requestBody?: { content: Record<string, Media> };
      responses: Record<string, { content?: Record<string, Media> }>;
    };
    const problems: string[] = [];
    for (const [path, item] of Object.entries(merchant.paths as unknown as Record<string, Record<string, Operation>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        const labels = (operation['x-codeSamples'] ?? []).map((sample) => sample.label);
        if (labels.join() !== 'curl,@tessera/node') problems.push(`${name}: samples ${labels.join()}`);
        if (path.endsWith('/events/stream')) continue;
        if (operation.responses['200']?.content?.['application/json']?.example === undefined) {
          problems.push(`${name}: no 200 example`);
        }
        const errors = Object.entries(operation.responses).filter(
          ([status, response]) => status !== '200' && response.content?.['application/json']?.example !== undefined,
        );
        if (errors.length === 0) problems.push(`${name}: no error example`);
        const body = operation.requestBody?.content['application/json'];
        if (
          method === 'post' &&
          body &&
          body.example === undefined &&
          !/\/(detach|capture|finalize|send|void|pay|mark_uncollectible|roll_token|reveal_token|check|resend|fast_forward|expire)$|\/invoices\/\{id\}$/.test(
            path,
          )
        ) {
          problems.push(`${name}: no request example`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  test('the reference holds the guides and the error catalog as sections of its own', async () => {
    const merchant = await documentAt('/api/services/v1/openapi.json');
    const intro = (merchant as unknown as { info: { description: string } }).info.description;
    for (const guide of [
      'Quickstart',
      'Authentication',
      'Errors',
      'Idempotency',
      'Pagination',
      'Webhooks',
      'Test cards',
      'Going live',
    ]) {
      assert.match(intro, new RegExp(`^# ${guide}$`, 'm'), guide);
    }
    for (const code of ['invalid_request', 'idempotency_error', 'resource_missing', 'rate_limited', 'internal_error']) {
      assert.match(intro, new RegExp(`^\\| \`${code}\` \\| \\d{3} \\|`, 'm'), code);
    }
  });

  test('the error catalog gives every code the status of its kind (docs/decisions/0046-layers.md)', async () => {
    const merchant = await documentAt('/api/services/v1/openapi.json');
    const intro = (merchant as unknown as { info: { description: string } }).info.description;
    const listed = new Map(
      [...intro.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1]!, Number(match[2])]),
    );
    const expected: Record<string, number> = {
      invalid_request: 400,
      idempotency_error: 400,
      payment_method_not_bound: 400,
      payment_method_bound_elsewhere: 400,
      duplicate_order: 400,
      invalid_state: 400,
      amount_too_large: 400,
      authentication_error: 401,
      permission_denied: 403,
      tokenization_not_enabled: 403,
      mit_not_enabled: 403,
      resource_missing: 404,
      endpoint_disabled: 409,
      no_live_processor: 409,
      processor_account_exists: 409,
      bank_account_missing: 409,
      payout_not_cancelable: 409,
      dispute_not_open: 409,
      rate_limited: 429,
      internal_error: 500,
      service_unavailable: 503,
      processor_error: 503,
    };
    assert.deepEqual(Object.fromEntries(listed), expected);
  });

  test("the SDK's TesseraErrorCode names every code of the catalog, and no other", () => {
    const source = readFileSync('sdk/src/errors.ts', 'utf8');
    const union = /export type TesseraErrorCode =([^;]*);/.exec(source)?.[1] ?? '';
    const named = [...union.matchAll(/'([a-z_]+)'/g)].map((match) => match[1]!);
    assert.deepEqual([...named].sort(), Object.keys(errorCatalog).sort());
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
    assert.equal(response.json().status, 'ok');
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
