import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import { sandboxMerchant } from '../src/merchants/sandbox.js';
import { secretTables } from '../src/vault/secrets-at-rest.js';
import { acceptLink, dashboardClient } from './helpers/dashboard.js';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startReceiver, type ReceivedRequest, type Receiver } from './helpers/receiver.js';

/** Issue 13: `vault rotate-key` re-encrypts every secret at rest, and each still reads back. */
describe(`vault key rotation covers every secret at rest (${databaseKind})`, () => {
  let ctx: TestContext;
  let receiver: Receiver;
  before(async () => {
    ctx = await startTestApp();
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  async function rotate(): Promise<string> {
    const response = await ctx.tessera.server.inject({
      method: 'POST',
      url: '/admin/v1/vault/rotate_key',
      headers: { authorization: `Bearer ${ctx.operatorKey}` },
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.json().data.activeKeyId as string;
  }

  /** The key ids each secret column's ciphertexts use, e.g. {'webhook_endpoints.token_encrypted': ['vk_…']}. */
  async function keysInUse(): Promise<Record<string, string[]>> {
    const used: Record<string, string[]> = {};
    for (const spec of secretTables) {
      for (const column of spec.secretColumns) {
        const rows = await ctx.tessera.db.query<{ key_id: string }>(
          `SELECT DISTINCT split_part(${column}, ':', 1) AS key_id FROM ${spec.table} WHERE ${column} IS NOT NULL`,
        );
        used[`${spec.table}.${column}`] = rows.map((row) => row.key_id).sort();
      }
    }
    return used;
  }

  async function ok(merchant: TestMerchant, method: 'GET' | 'POST', route: string, body?: unknown) {
    const response = await merchant.call(method, route, body);
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  function signedWith(request: ReceivedRequest, token: string): boolean {
    const time = request.headers['request-time'];
    const expected = createHmac('sha256', token)
      .update(`${String(time)}.${request.rawBody}`)
      .digest('hex');
    return String(request.headers.signature).toUpperCase() === expected.toUpperCase();
  }

  test('after a rotation no row uses the old key, and tokens, legacy keys, cards and stored answers read back', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await ok(merchant, 'POST', '/webhook_endpoints/create', {
      url: receiver.url(),
      enabledEvents: ['payment.succeeded'],
      // Both kinds, so that both signing secrets are checked (legacy is opt-in, docs/decisions/0014-legacy-opt-in-and-sequence.md).
      legacyNotifications: true,
    });
    const legacyKey = await ctx.tessera.webhookEndpoints.legacyKeyFor(merchant.id);
    const replayKey = { 'idempotency-key': 'rotation-replay-1' };
    const customer = await merchant.call('POST', '/customers/create', { email: 'rotate@example.com' }, replayKey);
    assert.equal(customer.status, 200, customer.raw);
    const method = await ok(merchant, 'POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const initial = await ok(merchant, 'POST', '/payment/create', {
      amount: '1500',
      currency: 'USD',
      confirm: 'true',
      customerId: customer.body.data.id,
      paymentMethod: method.id,
      recurring: { initial: true },
    });
    assert.equal(initial.status, 'succeeded', JSON.stringify(initial));

    const before = await keysInUse();
    const oldKeys = new Set(Object.values(before).flat());
    assert.ok(before['webhook_endpoints.token_encrypted']!.length > 0);
    assert.ok(before['merchants.legacy_signing_key_encrypted']!.length > 0);
    assert.ok(before['idempotency_keys.response_body']!.length > 0);
    assert.ok(before['payment_methods.card_number_encrypted']!.length > 0);

    const activeKeyId = await rotate();
    assert.ok(!oldKeys.has(activeKeyId));
    for (const [column, keys] of Object.entries(await keysInUse())) {
      for (const key of keys) assert.equal(key, activeKeyId, `${column} still uses ${key}`);
    }

    // Each kind reads back through the public interface.
    const revealed = await ok(merchant, 'GET', `/webhook_endpoints/${endpoint.id}/reveal_token`);
    assert.equal(revealed.token, endpoint.token);
    assert.equal(await ctx.tessera.webhookEndpoints.legacyKeyFor(merchant.id), legacyKey);
    const replayed = await merchant.call('POST', '/customers/create', { email: 'rotate@example.com' }, replayKey);
    assert.equal(replayed.headers['idempotent-replayed'], 'true');
    assert.equal(replayed.raw, customer.raw);
    // A merchant-initiated payment reads the stored card (and its network credential) again.
    const mit = await ok(merchant, 'POST', '/payment/create', {
      amount: '990',
      currency: 'USD',
      confirm: 'true',
      recurring: { initial: false, relationPaymentId: initial.id },
    });
    assert.equal(mit.status, 'succeeded', JSON.stringify(mit));
    // A delivery after the rotation is signed with the same token.
    await ctx.tessera.webhookDispatcher.runOnce();
    // The endpoint kind is signed with the endpoint's token, the legacy kind with the legacy key.
    await receiver.waitFor(4);
    const ofMit = receiver.requests.filter((request) => request.body.includes(mit.id));
    assert.equal(ofMit.length, 2, 'both kinds of the payment after the rotation were delivered');
    assert.ok(
      ofMit.some((request) => signedWith(request, endpoint.token)),
      'one signed with the same token',
    );
    assert.ok(
      ofMit.some((request) => signedWith(request, legacyKey)),
      'one signed with the same legacy key',
    );
  });

  test('after a rotation a team member signs in with the TOTP secret enrolled before it', async () => {
    const password = 'correct horse battery';
    const created = await ctx.tessera.server.inject({
      method: 'POST',
      url: '/admin/v1/merchants/create',
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'Rotation shop', ownerEmail: 'owner@rotation.test' }),
    });
    const owner = dashboardClient(ctx);
    assert.equal((await acceptLink(owner, created.json().data.ownerSetPasswordUrl, password)).status, 303);
    const started = await owner.post('/dashboard/account/two-factor/start');
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(started.body)?.[1];
    assert.ok(secret, started.body);
    const codeOf = () =>
      new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: ctx.clock.now().getTime() });
    const confirmed = await owner.post('/dashboard/account/two-factor/confirm', { code: codeOf() });
    assert.equal(confirmed.status, 200, confirmed.body);

    const activeKeyId = await rotate();
    const stored = await ctx.tessera.db.query<{ totp_secret_encrypted: string; totp_pending_encrypted: string | null }>(
      "SELECT totp_secret_encrypted, totp_pending_encrypted FROM team_members WHERE email = 'owner@rotation.test'",
    );
    assert.ok(stored[0]!.totp_secret_encrypted.startsWith(`${activeKeyId}:`));
    if (stored[0]!.totp_pending_encrypted !== null)
      assert.ok(stored[0]!.totp_pending_encrypted.startsWith(`${activeKeyId}:`));

    ctx.clock.advance(30_000);
    const client = dashboardClient(ctx);
    await client.get('/dashboard/sign-in');
    const answer = await client.post('/dashboard/sign-in', { email: 'owner@rotation.test', password });
    const challenge = /name="challenge" value="([^"]+)"/.exec(answer.body)?.[1] ?? '';
    const signedIn = await client.post('/dashboard/sign-in/code', { challenge, code: codeOf() });
    assert.equal(signedIn.status, 303, signedIn.body);
  });

  test("after a rotation the development sandbox merchant's keys read back and still authenticate", async () => {
    const sandbox = await sandboxMerchant(ctx.tessera);
    const activeKeyId = await rotate();
    const [row] = await ctx.tessera.db.query<{ keys_encrypted: string }>('SELECT keys_encrypted FROM sandbox_merchant');
    assert.ok(row!.keys_encrypted.startsWith(`${activeKeyId}:`));
    const again = await sandboxMerchant(ctx.tessera);
    assert.deepEqual(again, sandbox, 'the same merchant and keys, not a new sandbox merchant');
    const answer = await ctx.tessera.server.inject({
      method: 'GET',
      url: '/api/services/v1/customers',
      headers: { authorization: `Bearer ${again.privateKey}` },
    });
    assert.equal(answer.statusCode, 200, answer.body);
  });
});
