import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiBase, databaseKind, injectRaw, startTestApp, type TestContext } from './helpers/harness.js';

const timestampForm = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const fullCustomer = {
  address: {
    city: 'Lisbon',
    country: 'pt',
    line1: 'Rua Augusta 1',
    line2: '',
    postalCode: '1100-048',
    state: 'Lisboa',
  },
  description: 'Loyal customer',
  email: 'ana@example.com',
  firstName: 'Ana',
  lastName: 'Silva',
  phone: '+351 912 345 678',
  shipping: {
    firstName: 'Ana',
    lastName: 'Silva',
    phone: '+351 912 345 679',
    address: { city: 'Porto', country: 'PT', line1: 'Rua das Flores 2', postalCode: '4050-262' },
  },
  merchantUserId: 'user-1',
};

describe(`customers (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  test('creates a customer and echoes every field under its exact name', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/customers/create', fullCustomer);
    assert.equal(response.status, 200);
    assert.equal(response.body.code, 'success');
    assert.equal(response.body.msg, 'success');
    const customer = response.body.data;
    assert.match(customer.id, /^cus_\d{19}$/);
    assert.match(customer.created, timestampForm);
    assert.equal(customer.created, ctx.clock.now().toISOString());
    assert.deepEqual(customer, {
      id: customer.id,
      address: {
        city: 'Lisbon',
        country: 'PT',
        line1: 'Rua Augusta 1',
        line2: '',
        postalCode: '1100-048',
        state: 'Lisboa',
      },
      description: 'Loyal customer',
      email: 'ana@example.com',
      firstName: 'Ana',
      lastName: 'Silva',
      phone: '+351 912 345 678',
      shipping: {
        firstName: 'Ana',
        lastName: 'Silva',
        phone: '+351 912 345 679',
        address: {
          city: 'Porto',
          country: 'PT',
          line1: 'Rua das Flores 2',
          line2: null,
          postalCode: '4050-262',
          state: null,
        },
      },
      merchantUserId: 'user-1',
      created: customer.created,
    });
  });

  test('answers every field not given as null, shipping included', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/customers/create', { email: 'only@example.com' });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body.data, {
      id: response.body.data.id,
      address: null,
      description: null,
      email: 'only@example.com',
      firstName: null,
      lastName: null,
      phone: null,
      shipping: null,
      merchantUserId: null,
      created: response.body.data.created,
    });
  });

  test('creates a customer from an empty body', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/customers/create', {});
    assert.equal(response.status, 200);
    assert.match(response.body.data.id, /^cus_\d{19}$/);
  });

  test('creates and updates a customer from a POST without any body or Content-Type, as an empty object', async () => {
    const merchant = await ctx.merchant();
    const created = await merchant.call('POST', '/customers/create');
    assert.equal(created.status, 200, created.raw);
    assert.match(created.body.data.id, /^cus_\d{19}$/);
    const updated = await merchant.call('POST', `/customers/${created.body.data.id}/update`);
    assert.equal(updated.status, 200, updated.raw);
    assert.deepEqual(updated.body.data, created.body.data);
    const nullBody = await merchant.call('POST', '/customers/create', 'null');
    assert.equal(nullBody.status, 200, nullBody.raw);
  });

  test('treats an explicit null as a field not given', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/customers/create', {
      address: null,
      description: null,
      email: 'nulls@example.com',
      firstName: null,
      lastName: null,
      phone: null,
      shipping: { firstName: 'Bo', lastName: null, phone: null, address: null },
      merchantUserId: null,
    });
    assert.equal(response.status, 200, response.raw);
    const customer = response.body.data;
    assert.equal(customer.address, null);
    assert.equal(customer.firstName, null);
    assert.equal(customer.merchantUserId, null);
    assert.deepEqual(customer.shipping, { firstName: 'Bo', lastName: null, phone: null, address: null });
  });

  test('accepts application/json with a charset parameter', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call(
      'POST',
      '/customers/create',
      { firstName: 'Zoë' },
      { 'content-type': 'application/json;charset=UTF-8' },
    );
    assert.equal(response.status, 200, response.raw);
    assert.equal(response.body.data.firstName, 'Zoë');
  });

  test('retrieves a customer exactly as it was created', async () => {
    const merchant = await ctx.merchant();
    const created = await merchant.call('POST', '/customers/create', fullCustomer);
    const retrieved = await merchant.call('GET', `/customers/${created.body.data.id}`);
    assert.equal(retrieved.status, 200);
    assert.deepEqual(retrieved.body, created.body);
  });

  test('updates only the fields sent and merges a partial address', async () => {
    const merchant = await ctx.merchant();
    const created = (await merchant.call('POST', '/customers/create', fullCustomer)).body.data;
    const response = await merchant.call('POST', `/customers/${created.id}/update`, {
      email: 'new@example.com',
      address: { city: 'Faro' },
      phone: null,
    });
    assert.equal(response.status, 200, response.raw);
    const updated = response.body.data;
    assert.equal(updated.email, 'new@example.com');
    assert.deepEqual(updated.address, { ...created.address, city: 'Faro' });
    assert.equal(updated.phone, created.phone, 'null in an update leaves the field as it was');
    assert.equal(updated.firstName, created.firstName);
    assert.deepEqual(updated.shipping, created.shipping);
    assert.equal(updated.created, created.created);
    const retrieved = await merchant.call('GET', `/customers/${created.id}`);
    assert.deepEqual(retrieved.body.data, updated);
  });

  test('deletes a customer, after which it is not found', async () => {
    const merchant = await ctx.merchant();
    const created = (await merchant.call('POST', '/customers/create', { email: 'gone@example.com' })).body.data;
    const deleted = await merchant.call('DELETE', `/customers/${created.id}`);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body.data, { id: created.id, deleted: true });
    for (const [method, path] of [
      ['GET', `/customers/${created.id}`],
      ['POST', `/customers/${created.id}/update`],
      ['DELETE', `/customers/${created.id}`],
    ] as const) {
      const response = await merchant.call(method, path, method === 'POST' ? { email: 'x@example.com' } : undefined);
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal(response.body.code, 'resource_missing');
    }
    const list = await merchant.call('GET', '/customers');
    assert.deepEqual(list.body.data, { data: [], hasMore: false });
  });

  test('a deleted customer frees its merchantUserId', async () => {
    const merchant = await ctx.merchant();
    const first = (await merchant.call('POST', '/customers/create', { merchantUserId: 'reused' })).body.data;
    await merchant.call('DELETE', `/customers/${first.id}`);
    const second = await merchant.call('POST', '/customers/create', { merchantUserId: 'reused' });
    assert.equal(second.status, 200, second.raw);
  });

  test('lists customers newest first with limit, startingAfter, endingBefore and hasMore', async () => {
    const merchant = await ctx.merchant();
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const created = await merchant.call('POST', '/customers/create', { description: `customer ${index}` });
      ids.push(created.body.data.id);
      ctx.clock.advance(1000);
    }
    const newestFirst = [...ids].reverse();

    const all = await merchant.call('GET', '/customers');
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.body.data.data.map((customer: { id: string }) => customer.id),
      newestFirst,
    );
    assert.equal(all.body.data.hasMore, false);

    const first = await merchant.call('GET', '/customers?limit=2');
    assert.deepEqual(
      first.body.data.data.map((customer: { id: string }) => customer.id),
      newestFirst.slice(0, 2),
    );
    assert.equal(first.body.data.hasMore, true);

    const second = await merchant.call('GET', `/customers?limit=2&startingAfter=${newestFirst[1]}`);
    assert.deepEqual(
      second.body.data.data.map((customer: { id: string }) => customer.id),
      newestFirst.slice(2, 4),
    );
    assert.equal(second.body.data.hasMore, true);

    const last = await merchant.call('GET', `/customers?limit=2&startingAfter=${newestFirst[3]}`);
    assert.deepEqual(
      last.body.data.data.map((customer: { id: string }) => customer.id),
      newestFirst.slice(4),
    );
    assert.equal(last.body.data.hasMore, false);

    const before = await merchant.call('GET', `/customers?limit=2&endingBefore=${newestFirst[4]}`);
    assert.deepEqual(
      before.body.data.data.map((customer: { id: string }) => customer.id),
      newestFirst.slice(2, 4),
    );
    assert.equal(before.body.data.hasMore, true);
  });

  test('refuses a list cursor that names no customer of the list, and a limit out of range', async () => {
    const merchant = await ctx.merchant();
    const cursor = await merchant.call('GET', '/customers?startingAfter=cus_1000000000000000000');
    assert.equal(cursor.status, 400);
    assert.equal(cursor.body.code, 'invalid_request');
    assert.equal(cursor.body.data.param, 'startingAfter');
    for (const limit of ['0', '101', 'ten']) {
      const response = await merchant.call('GET', `/customers?limit=${limit}`);
      assert.equal(response.status, 400, `limit=${limit}`);
      assert.equal(response.body.data.param, 'limit');
    }
    const unknown = await merchant.call('GET', '/customers?colour=blue');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.data.param, 'colour');
  });

  test('filters the list by email (ignoring case) and by merchantUserId', async () => {
    const merchant = await ctx.merchant();
    const ana = (
      await merchant.call('POST', '/customers/create', { email: 'Ana@Example.com', merchantUserId: 'u-ana' })
    ).body.data;
    const bob = (
      await merchant.call('POST', '/customers/create', { email: 'bob@example.com', merchantUserId: 'u-bob' })
    ).body.data;
    const byEmail = await merchant.call('GET', '/customers?email=ana%40example.com');
    assert.deepEqual(
      byEmail.body.data.data.map((customer: { id: string }) => customer.id),
      [ana.id],
    );
    const byUser = await merchant.call('GET', '/customers?merchantUserId=u-bob');
    assert.deepEqual(
      byUser.body.data.data.map((customer: { id: string }) => customer.id),
      [bob.id],
    );
    const none = await merchant.call('GET', '/customers?merchantUserId=u-nobody');
    assert.deepEqual(none.body.data, { data: [], hasMore: false });
  });

  test('refuses a merchantUserId already used by another customer of the same merchant', async () => {
    const merchant = await ctx.merchant();
    await merchant.call('POST', '/customers/create', { merchantUserId: 'site-user-7' });
    const duplicate = await merchant.call('POST', '/customers/create', { merchantUserId: 'site-user-7' });
    assert.equal(duplicate.status, 400);
    assert.equal(duplicate.body.code, 'invalid_request');
    assert.equal(duplicate.body.data.param, 'merchantUserId');

    const other = (await merchant.call('POST', '/customers/create', { merchantUserId: 'site-user-8' })).body.data;
    const update = await merchant.call('POST', `/customers/${other.id}/update`, { merchantUserId: 'site-user-7' });
    assert.equal(update.status, 400);
    assert.equal(update.body.data.param, 'merchantUserId');
  });

  test('allows the same merchantUserId at two different merchants', async () => {
    const first = await ctx.merchant();
    const second = await ctx.merchant();
    assert.equal((await first.call('POST', '/customers/create', { merchantUserId: 'shared' })).status, 200);
    assert.equal((await second.call('POST', '/customers/create', { merchantUserId: 'shared' })).status, 200);
  });

  test("answers another merchant's customer as not found, for every operation", async () => {
    const owner = await ctx.merchant();
    const stranger = await ctx.merchant();
    const customer = (await owner.call('POST', '/customers/create', { email: 'mine@example.com' })).body.data;
    for (const [method, path, body] of [
      ['GET', `/customers/${customer.id}`, undefined],
      ['POST', `/customers/${customer.id}/update`, { email: 'stolen@example.com' }],
      ['DELETE', `/customers/${customer.id}`, undefined],
    ] as const) {
      const response = await stranger.call(method, path, body);
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal(response.body.code, 'resource_missing');
    }
    const list = await stranger.call('GET', '/customers');
    assert.deepEqual(list.body.data.data, []);
    const untouched = await owner.call('GET', `/customers/${customer.id}`);
    assert.equal(untouched.body.data.email, 'mine@example.com');
  });

  test('refuses a request without a key with 401 authentication_error', async () => {
    const response = await injectRaw(ctx, { method: 'GET', url: `${apiBase}/customers` });
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().code, 'authentication_error');
    assert.ok(response.headers['x-traceid']);
  });

  test('refuses an unknown or malformed key with 401 authentication_error, without echoing it', async () => {
    for (const key of [`test_pr_${'a'.repeat(40)}`, 'not-a-key', `live_pr_${'b'.repeat(40)}`]) {
      const response = await injectRaw(ctx, {
        method: 'POST',
        url: `${apiBase}/customers/create`,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: '{}',
      });
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().code, 'authentication_error');
      assert.ok(!response.body.includes(key));
    }
    const notBearer = await injectRaw(ctx, {
      method: 'GET',
      url: `${apiBase}/customers`,
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
    });
    assert.equal(notBearer.statusCode, 401);
  });

  test('refuses a public key with 403 permission_denied', async () => {
    const merchant = await ctx.merchant();
    const headers = { authorization: `Bearer ${merchant.publicKey}` };
    const create = await merchant.call('POST', '/customers/create', { email: 'pk@example.com' }, headers);
    assert.equal(create.status, 403);
    assert.equal(create.body.code, 'permission_denied');
    const list = await merchant.call('GET', '/customers', undefined, headers);
    assert.equal(list.status, 403);
    assert.equal(list.body.code, 'permission_denied');
    const nothingCreated = await merchant.call('GET', '/customers');
    assert.deepEqual(nothingCreated.body.data.data, []);
  });

  const badInputs: Array<[string, Record<string, unknown>, string]> = [
    ['an email that is not a string', { email: 42 }, 'email'],
    ['a malformed email', { email: 'not-an-email' }, 'email'],
    ['an email over 254 characters', { email: `${'a'.repeat(250)}@example.com` }, 'email'],
    ['a firstName that is not a string', { firstName: ['Ana'] }, 'firstName'],
    ['an empty firstName', { firstName: '' }, 'firstName'],
    ['a firstName over 100 characters', { firstName: 'x'.repeat(101) }, 'firstName'],
    ['a lastName that is not a string', { lastName: 7 }, 'lastName'],
    ['a lastName over 100 characters', { lastName: 'x'.repeat(101) }, 'lastName'],
    ['a phone that is not a string', { phone: 351912345678 }, 'phone'],
    ['a phone with letters', { phone: 'call me' }, 'phone'],
    ['a phone over 32 characters', { phone: '1'.repeat(33) }, 'phone'],
    ['a description that is not a string', { description: true }, 'description'],
    ['a description over 500 characters', { description: 'x'.repeat(501) }, 'description'],
    ['an empty merchantUserId', { merchantUserId: '' }, 'merchantUserId'],
    ['a merchantUserId over 128 characters', { merchantUserId: 'u'.repeat(129) }, 'merchantUserId'],
    ['a merchantUserId that is not a string', { merchantUserId: 12 }, 'merchantUserId'],
    ['an address that is not an object', { address: 'Rua Augusta 1' }, 'address'],
    ['a three-letter country', { address: { country: 'PRT' } }, 'address.country'],
    ['a country with a digit', { address: { country: 'P1' } }, 'address.country'],
    ['a country that is not a string', { address: { country: 1 } }, 'address.country'],
    ['a city over 100 characters', { address: { city: 'c'.repeat(101) } }, 'address.city'],
    ['a line1 over 200 characters', { address: { line1: 'l'.repeat(201) } }, 'address.line1'],
    ['a line2 that is not a string', { address: { line2: 2 } }, 'address.line2'],
    ['a postalCode over 20 characters', { address: { postalCode: '9'.repeat(21) } }, 'address.postalCode'],
    ['a state over 100 characters', { address: { state: 's'.repeat(101) } }, 'address.state'],
    ['an unknown address field', { address: { street: 'Augusta' } }, 'address.street'],
    ['a shipping that is not an object', { shipping: [] }, 'shipping'],
    ['a malformed shipping phone', { shipping: { phone: 'nope' } }, 'shipping.phone'],
    ['an empty shipping firstName', { shipping: { firstName: '' } }, 'shipping.firstName'],
    ['a malformed shipping country', { shipping: { address: { country: 'Portugal' } } }, 'shipping.address.country'],
    ['an unknown shipping field', { shipping: { carrier: 'DHL' } }, 'shipping.carrier'],
    ['an unknown field', { nickname: 'Ana' }, 'nickname'],
  ];
  for (const [what, body, param] of badInputs) {
    test(`refuses ${what} with 400 naming ${param}`, async () => {
      const merchant = await ctx.merchant();
      for (const path of ['/customers/create', 'update']) {
        let url = path;
        if (path === 'update') {
          const customer = (await merchant.call('POST', '/customers/create', {})).body.data;
          url = `/customers/${customer.id}/update`;
        }
        const response = await merchant.call('POST', url, body);
        assert.equal(response.status, 400, `${url}: ${response.raw}`);
        assert.equal(response.body.code, 'invalid_request');
        assert.equal(response.body.data.param, param);
        assert.ok(response.body.msg.startsWith(param), response.body.msg);
      }
    });
  }

  test('refuses a body that is not an object', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/customers/create', [1, 2]);
    assert.equal(response.status, 400);
    assert.equal(response.body.code, 'invalid_request');
    assert.equal(response.body.data.param, 'body');
  });

  test('refuses malformed JSON with 400 invalid_request, without quoting it', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/customers/create', '{"email": "secret-text@example.com",');
    assert.equal(response.status, 400);
    assert.equal(response.body.code, 'invalid_request');
    assert.equal(response.body.data.param, 'body');
    assert.ok(!response.raw.includes('secret-text'));
  });

  test('refuses a content type other than JSON with 400 invalid_request', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/customers/create', 'email=a@example.com', {
      'content-type': 'text/plain',
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.code, 'invalid_request');
    assert.equal(response.body.data.param, 'body');
  });

  test('replays the first response for a repeated Idempotency-Key and creates one customer', async () => {
    const merchant = await ctx.merchant();
    const headers = { 'idempotency-key': 'create-ana-1' };
    const first = await merchant.call('POST', '/customers/create', { email: 'ana@example.com' }, headers);
    const second = await merchant.call('POST', '/customers/create', { email: 'ana@example.com' }, headers);
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.equal(second.raw, first.raw);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const list = await merchant.call('GET', '/customers');
    assert.equal(list.body.data.data.length, 1);
  });

  test('refuses an Idempotency-Key reused with a different body with 400 idempotency_error', async () => {
    const merchant = await ctx.merchant();
    const headers = { 'idempotency-key': 'create-once' };
    await merchant.call('POST', '/customers/create', { email: 'first@example.com' }, headers);
    const conflict = await merchant.call('POST', '/customers/create', { email: 'second@example.com' }, headers);
    assert.equal(conflict.status, 400);
    assert.equal(conflict.body.code, 'idempotency_error');
    const list = await merchant.call('GET', '/customers');
    assert.deepEqual(
      list.body.data.data.map((customer: { email: string }) => customer.email),
      ['first@example.com'],
    );
  });

  test('keys are scoped to the merchant: the same Idempotency-Key at two merchants creates two customers', async () => {
    const first = await ctx.merchant();
    const second = await ctx.merchant();
    const headers = { 'idempotency-key': 'same-key' };
    const a = await first.call('POST', '/customers/create', { email: 'a@example.com' }, headers);
    const b = await second.call('POST', '/customers/create', { email: 'a@example.com' }, headers);
    assert.equal(b.headers['idempotent-replayed'], undefined);
    assert.notEqual(a.body.data.id, b.body.data.id);
  });

  test('puts an X-TraceId header on every response, errors included', async () => {
    const merchant = await ctx.merchant();
    const responses = [
      await merchant.call('POST', '/customers/create', {}),
      await merchant.call('GET', '/customers/cus_1000000000000000000'),
      await merchant.call('POST', '/customers/create', { email: 5 }),
      await merchant.call('GET', '/customers', undefined, { authorization: 'Bearer nope' }),
    ];
    const traceIds = responses.map((response) => response.headers['x-traceid']);
    for (const traceId of traceIds) assert.match(String(traceId), /^[0-9a-f]{24}$/);
    assert.equal(new Set(traceIds).size, traceIds.length);
  });

  test('does not echo an id that is not of the id form', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('GET', '/customers/%3Cscript%3E');
    assert.equal(response.status, 404);
    assert.ok(!response.raw.includes('script'));
  });

  test('answers GET /health with 200', async () => {
    const response = await injectRaw(ctx, { method: 'GET', url: '/health' });
    assert.equal(response.statusCode, 200);
    assert.ok(response.headers['x-traceid']);
  });
});
