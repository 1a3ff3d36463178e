import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext } from './helpers/harness.js';

describe(`Idempotency-Key (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  test('replays a request whose body has the same fields in another order', async () => {
    const merchant = await ctx.merchant();
    const headers = { 'idempotency-key': 'order-insensitive-1' };
    const first = await merchant.call('POST', '/customers/create', { firstName: 'Ada', lastName: 'Lovelace' }, headers);
    const second = await merchant.call(
      'POST',
      '/customers/create',
      { lastName: 'Lovelace', firstName: 'Ada' },
      headers,
    );
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.body.data.id, first.body.data.id);
    const listed = await merchant.call('GET', '/customers');
    assert.equal(listed.body.data.data.length, 1);
  });

  test('keeps stored answers encrypted: neither personal data nor webhook tokens are readable in the table', async () => {
    const merchant = await ctx.merchant();
    const customer = await merchant.call(
      'POST',
      '/customers/create',
      { email: 'stored-encrypted@example.com' },
      { 'idempotency-key': 'encrypted-customer' },
    );
    assert.equal(customer.status, 200);
    const endpoint = await merchant.call(
      'POST',
      '/webhook_endpoints/create',
      { url: 'http://127.0.0.1:9/hook' },
      { 'idempotency-key': 'encrypted-endpoint' },
    );
    assert.equal(endpoint.status, 200);
    const token = endpoint.body.data.token as string;
    assert.ok(token);
    const rows = await ctx.tessera.db.query<{ response_body: string }>(
      'SELECT response_body FROM idempotency_keys WHERE merchant_id = $1',
      [merchant.id],
    );
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.ok(!row.response_body.includes('stored-encrypted@example.com'));
      assert.ok(!row.response_body.includes(token));
    }
    const replay = await merchant.call(
      'POST',
      '/webhook_endpoints/create',
      { url: 'http://127.0.0.1:9/hook' },
      { 'idempotency-key': 'encrypted-endpoint' },
    );
    assert.equal(replay.body.data.token, token);
  });

  test('never replays a token reveal: every reveal runs and is audit-logged', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await merchant.call('POST', '/webhook_endpoints/create', { url: 'http://127.0.0.1:9/hook' });
    const id = endpoint.body.data.id as string;
    const headers = { 'idempotency-key': 'reveal-twice' };
    const first = await merchant.call('POST', `/webhook_endpoints/${id}/reveal_token`, undefined, headers);
    const second = await merchant.call('POST', `/webhook_endpoints/${id}/reveal_token`, undefined, headers);
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.equal(second.headers['idempotent-replayed'], undefined);
    const audits = await ctx.tessera.db.query(
      "SELECT id FROM audit_log WHERE object_id = $1 AND action = 'webhook_endpoint.token_revealed'",
      [id],
    );
    assert.equal(audits.length, 2);
  });
});
