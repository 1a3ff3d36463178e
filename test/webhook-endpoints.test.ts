import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { hashKey } from '../src/core/merchant-context.js';
import { createIdempotency } from '../src/http/idempotency.js';
import { idempotencySealer } from '../src/vault/secrets-at-rest.js';
import { beatEveryMs, staleAfterMs } from '../src/ops/heartbeat.js';
import { buildServer, type App } from '../src/http/server.js';
import { webhookEndpointRoutes } from '../src/webhooks/endpoints/routes.js';
import { createWebhookEndpointService, type WebhookEndpointService } from '../src/webhooks/endpoints/service.js';
import { apiBase, databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

const tokenForm = /^whsec_[A-Za-z0-9]{48}$/;
const timestampForm = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const receiver = 'http://localhost:4000/webhooks/tessera';

/** Every token answered during the run, so that the last test can search the logs for them. */
const tokensSeen = new Set<string>();
function remember(token: string): string {
  tokensSeen.add(token);
  return token;
}

describe(`webhook endpoints (${databaseKind})`, () => {
  let ctx: TestContext;
  /** The same service the app uses, constructed directly, as the delivery engine will call it. */
  let service: WebhookEndpointService;
  before(async () => {
    ctx = await startTestApp();
    service = createWebhookEndpointService({
      db: ctx.tessera.db,
      clock: ctx.clock,
      vault: ctx.tessera.vault,
      production: false,
    });
  });
  after(() => ctx.close());

  async function createEndpoint(merchant: TestMerchant, body: Record<string, unknown> = {}) {
    const response = await merchant.call('POST', '/webhook_endpoints/create', { url: receiver, ...body });
    assert.equal(response.status, 200, response.raw);
    remember(response.body.data.token);
    return response.body.data as { id: string; token: string } & Record<string, unknown>;
  }

  async function dynamicEndpointOf(merchant: TestMerchant): Promise<{ id: string } & Record<string, unknown>> {
    const list = await merchant.call('GET', '/webhook_endpoints?limit=100');
    const dynamic = list.body.data.data.find((endpoint: { kind: string }) => endpoint.kind === 'dynamic');
    assert.ok(dynamic, 'the list includes the dynamic endpoint');
    return dynamic;
  }

  async function auditRows(objectId: string) {
    return ctx.tessera.db.query<{
      merchant_id: string;
      mode: string;
      action: string;
      object_id: string;
      actor: string;
      trace_id: string;
    }>('SELECT merchant_id, mode, action, object_id, actor, trace_id FROM audit_log WHERE object_id = $1 ORDER BY id', [
      objectId,
    ]);
  }

  test('creates an endpoint with the defaults and answers its token once', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/webhook_endpoints/create', { url: receiver });
    assert.equal(response.status, 200, response.raw);
    assert.equal(response.body.code, 'success');
    const endpoint = response.body.data;
    assert.match(endpoint.token, tokenForm);
    remember(endpoint.token);
    assert.match(endpoint.id, /^we_\d{19}$/);
    assert.match(endpoint.created, timestampForm);
    assert.deepEqual(endpoint, {
      id: endpoint.id,
      kind: 'static',
      url: receiver,
      description: null,
      enabledEvents: ['*'],
      // docs/decisions/0014-legacy-opt-in-and-sequence.md: the legacy kind is opt-in for endpoints created from now on.
      legacyNotifications: false,
      signatureCase: 'upper',
      format: 'moneycollect',
      signatureAlgorithm: 'hmac-sha256',
      publicKey: null,
      status: 'enabled',
      health: 'healthy',
      failingSince: null,
      lastError: null,
      disabledReason: null,
      nextAttemptAt: null,
      created: ctx.clock.now().toISOString(),
      token: endpoint.token,
    });
    assert.equal(response.headers['cache-control'], 'no-store');

    const retrieved = await merchant.call('GET', `/webhook_endpoints/${endpoint.id}`);
    assert.equal(retrieved.status, 200);
    const { token, ...withoutToken } = endpoint;
    assert.deepEqual(retrieved.body.data, withoutToken);
    const list = await merchant.call('GET', '/webhook_endpoints');
    const updated = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/update`, { description: 'x' });
    for (const answer of [retrieved, list, updated]) {
      assert.ok(!answer.raw.includes(token), 'the token is not in a later answer');
      assert.ok(!answer.raw.includes('whsec_'), 'no token at all is in a later answer');
      assert.ok(!/"token"/.test(answer.raw));
    }
  });

  test('stores the description, events and legacy switch given', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await createEndpoint(merchant, {
      description: 'Order service',
      enabledEvents: ['payment.succeeded', 'Invoice.sent', 'refund.failed'],
      legacyNotifications: false,
    });
    const retrieved = (await merchant.call('GET', `/webhook_endpoints/${endpoint.id}`)).body.data;
    assert.equal(retrieved.description, 'Order service');
    assert.deepEqual(retrieved.enabledEvents, ['payment.succeeded', 'Invoice.sent', 'refund.failed']);
    assert.equal(retrieved.legacyNotifications, false);
  });

  test('lists an event code once, and "*" stands for all of them', async () => {
    const merchant = await ctx.merchant();
    const twice = await createEndpoint(merchant, { enabledEvents: ['payment.failed', 'payment.failed'] });
    assert.deepEqual(twice.enabledEvents, ['payment.failed']);
    const star = await createEndpoint(merchant, { enabledEvents: ['payment.failed', '*'] });
    assert.deepEqual(star.enabledEvents, ['*']);
  });

  const badEvents: Array<[string, unknown, string]> = [
    ['an unknown event code', ['payment.exploded'], 'enabledEvents[0]'],
    ['a misspelt code', ['payment.succeeded', 'payment.faild'], 'enabledEvents[1]'],
    ['an empty list', [], 'enabledEvents'],
    ['a string instead of a list', 'payment.succeeded', 'enabledEvents'],
    ['a number in the list', [1], 'enabledEvents[0]'],
  ];
  for (const [what, enabledEvents, param] of badEvents) {
    test(`refuses ${what} in enabledEvents, naming ${param}`, async () => {
      const merchant = await ctx.merchant();
      const existing = await createEndpoint(merchant);
      for (const path of ['/webhook_endpoints/create', `/webhook_endpoints/${existing.id}/update`]) {
        const response = await merchant.call('POST', path, { url: receiver, enabledEvents });
        assert.equal(response.status, 400, `${path}: ${response.raw}`);
        assert.equal(response.body.code, 'invalid_request');
        assert.equal(response.body.data.param, param);
        assert.ok(response.body.msg.startsWith(param), response.body.msg);
      }
    });
  }

  test('subscribes by either name of a code, in any letter case, stored and answered as docs/webhooks.md#event-codes writes it', async () => {
    const merchant = await ctx.merchant();
    const names = ['endpoint_payment.payment_succeeded', 'INVOICE.SENT', 'refund.Pending', 'payment.succeeded'];
    const created = await merchant.call('POST', '/webhook_endpoints/create', { url: receiver, enabledEvents: names });
    assert.equal(created.status, 200, created.raw);
    assert.deepEqual(created.body.data.enabledEvents, ['payment.succeeded', 'Invoice.sent', 'refund.pending']);
    const updated = await merchant.call('POST', `/webhook_endpoints/${created.body.data.id}/update`, {
      enabledEvents: ['endpoint_Invoice.Invoice_voided', 'Endpoint_Refund.Refund_Failed'],
    });
    assert.equal(updated.status, 200, updated.raw);
    assert.deepEqual(updated.body.data.enabledEvents, ['Invoice.voided', 'refund.failed']);
  });

  test('answers a misspelt code in enabledEvents with the closest code', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/webhook_endpoints/create', {
      url: receiver,
      enabledEvents: ['payment.faild'],
    });
    assert.equal(response.status, 400, response.raw);
    assert.match(response.body.msg, /did you mean `payment\.failed`\?/);
  });

  const badUrls: Array<[string, unknown]> = [
    ['an ftp URL', 'ftp://example.com/hooks'],
    ['a URL without a scheme', 'example.com/hooks'],
    ['a scheme without a host', 'http://'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['a file: URL', 'file:///etc/passwd'],
    ['a URL with a space', 'http://exa mple.com/'],
    ['a URL over 2048 characters', `https://example.com/${'a'.repeat(2030)}`],
    ['a number', 42],
    ['a URL with credentials', 'https://admin:hunter2@example.com/hooks'],
    ['a URL with a user name', 'https://admin@example.com/hooks'],
    ['a malformed IPv6 host', 'http://[::1/hooks'],
  ];
  for (const [what, url] of badUrls) {
    test(`refuses ${what} as url with 400 naming url`, async () => {
      const merchant = await ctx.merchant();
      const existing = await createEndpoint(merchant);
      for (const path of ['/webhook_endpoints/create', `/webhook_endpoints/${existing.id}/update`]) {
        const response = await merchant.call('POST', path, { url });
        assert.equal(response.status, 400, `${path}: ${response.raw}`);
        assert.equal(response.body.code, 'invalid_request');
        assert.equal(response.body.data.param, 'url');
        assert.ok(response.body.msg.startsWith('url '), response.body.msg);
        assert.ok(!response.raw.includes('hunter2'), 'a password in the URL is not repeated');
      }
      const list = await merchant.call('GET', '/webhook_endpoints');
      assert.equal(list.body.data.data.length, 2, 'nothing was created');
    });
  }

  test('requires url on create and refuses unknown fields', async () => {
    const merchant = await ctx.merchant();
    const missing = await merchant.call('POST', '/webhook_endpoints/create', { description: 'no url' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.data.param, 'url');
    assert.equal(missing.body.msg, 'url is required');
    const nullUrl = await merchant.call('POST', '/webhook_endpoints/create', { url: null });
    assert.equal(nullUrl.body.data.param, 'url');
    const unknown = await merchant.call('POST', '/webhook_endpoints/create', { url: receiver, secret: 'mine' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.data.param, 'secret');
    const badStatus = await merchant.call('POST', '/webhook_endpoints/create', { url: receiver, status: 'disabled' });
    assert.equal(badStatus.body.data.param, 'status', 'status is set by update only');
    const badLegacy = await merchant.call('POST', '/webhook_endpoints/create', {
      url: receiver,
      legacyNotifications: 'no',
    });
    assert.equal(badLegacy.body.data.param, 'legacyNotifications');
  });

  test('lists the dynamic endpoint, created on the first list and only once', async () => {
    const merchant = await ctx.merchant();
    const first = await merchant.call('GET', '/webhook_endpoints');
    assert.equal(first.status, 200);
    assert.equal(first.body.data.hasMore, false);
    assert.equal(first.body.data.data.length, 1);
    const dynamic = first.body.data.data[0];
    assert.deepEqual(dynamic, {
      id: dynamic.id,
      kind: 'dynamic',
      url: null,
      description: null,
      enabledEvents: ['*'],
      // docs/decisions/0014-legacy-opt-in-and-sequence.md: a new merchant's dynamic endpoint sends no legacy kind unless asked.
      legacyNotifications: false,
      signatureCase: 'upper',
      format: 'moneycollect',
      signatureAlgorithm: 'hmac-sha256',
      publicKey: null,
      status: 'enabled',
      health: 'healthy',
      failingSince: null,
      lastError: null,
      disabledReason: null,
      nextAttemptAt: null,
      created: dynamic.created,
    });
    ctx.clock.advance(1000);
    const endpoint = await createEndpoint(merchant);
    const lists = await Promise.all([1, 2, 3, 4].map(() => merchant.call('GET', '/webhook_endpoints')));
    for (const list of lists) {
      assert.deepEqual(
        list.body.data.data.map((item: { id: string }) => item.id),
        [endpoint.id, dynamic.id],
      );
    }
    const retrieved = await merchant.call('GET', `/webhook_endpoints/${dynamic.id}`);
    assert.deepEqual(retrieved.body.data, dynamic);
  });

  test('creates one dynamic endpoint when many ask for it at once', async () => {
    const merchant = await ctx.merchant();
    const scope = { merchantId: merchant.id, mode: 'test' };
    const results = await Promise.all([
      ...[1, 2, 3, 4, 5].map(() => service.ensureDynamicEndpoint(ctx.tessera.db, scope)),
      merchant.call('GET', '/webhook_endpoints').then((list) => ({ id: list.body.data.data[0].id as string })),
    ]);
    assert.equal(new Set(results.map((result) => result.id)).size, 1);
    const rows = await ctx.tessera.db.query(
      "SELECT id FROM webhook_endpoints WHERE merchant_id = $1 AND kind = 'dynamic'",
      [merchant.id],
    );
    assert.equal(rows.length, 1);
    assert.deepEqual(await service.ensureDynamicEndpoint(ctx.tessera.db, scope), {
      id: results[0]!.id,
      legacyNotifications: false,
      enabled: true,
    });
  });

  test('lists newest first with limit, startingAfter and endingBefore', async () => {
    const merchant = await ctx.merchant();
    await merchant.call('GET', '/webhook_endpoints');
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      ctx.clock.advance(1000);
      ids.push((await createEndpoint(merchant, { description: `endpoint ${index}` })).id);
    }
    const newestFirst = [...ids].reverse();
    const page = await merchant.call('GET', '/webhook_endpoints?limit=2');
    assert.deepEqual(
      page.body.data.data.map((item: { id: string }) => item.id),
      newestFirst.slice(0, 2),
    );
    assert.equal(page.body.data.hasMore, true);
    const next = await merchant.call('GET', `/webhook_endpoints?limit=2&startingAfter=${newestFirst[1]}`);
    assert.equal(next.body.data.data[0].id, newestFirst[2]);
    assert.equal(next.body.data.data[1].kind, 'dynamic');
    assert.equal(next.body.data.hasMore, false);
    const before = await merchant.call('GET', `/webhook_endpoints?limit=1&endingBefore=${newestFirst[1]}`);
    assert.deepEqual(
      before.body.data.data.map((item: { id: string }) => item.id),
      [newestFirst[0]],
    );
    const tooMany = await merchant.call('GET', '/webhook_endpoints?limit=101');
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.data.param, 'limit');
  });

  test('reveals the token given at creation and writes an audit row naming the request', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await createEndpoint(merchant);
    assert.deepEqual(await auditRows(endpoint.id), [], 'creating writes no reveal row');
    const revealed = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/reveal_token`);
    assert.equal(revealed.status, 200, revealed.raw);
    assert.deepEqual(revealed.body.data, { token: endpoint.token });
    assert.equal(revealed.headers['cache-control'], 'no-store');
    assert.deepEqual(await auditRows(endpoint.id), [
      {
        merchant_id: merchant.id,
        mode: 'test',
        action: 'webhook_endpoint.token_revealed',
        object_id: endpoint.id,
        actor: 'api_key:private',
        trace_id: revealed.headers['x-traceid'],
      },
    ]);
    await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/reveal_token`);
    assert.equal((await auditRows(endpoint.id)).length, 2, 'every reveal is logged');
  });

  test('reveals the token with GET too (docs/api.md#operations: GET reads), audit-logged and not cached', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await createEndpoint(merchant);
    const revealed = await merchant.call('GET', `/webhook_endpoints/${endpoint.id}/reveal_token`);
    assert.equal(revealed.status, 200, revealed.raw);
    assert.deepEqual(revealed.body.data, { token: endpoint.token });
    assert.equal(revealed.headers['cache-control'], 'no-store');
    const rows = await auditRows(endpoint.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.trace_id, revealed.headers['x-traceid']);
    assert.equal((await merchant.call('GET', '/webhook_endpoints/we_1000000000000000000/reveal_token')).status, 404);
    const stranger = await ctx.merchant();
    assert.equal((await stranger.call('GET', `/webhook_endpoints/${endpoint.id}/reveal_token`)).status, 404);
  });

  test('rolls the token: the new one is answered, revealed and used at once, the old one is gone', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await createEndpoint(merchant);
    assert.equal(await service.tokenFor(endpoint.id), endpoint.token);
    const rolled = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/roll_token`);
    assert.equal(rolled.status, 200, rolled.raw);
    const newToken = remember(rolled.body.data.token);
    assert.match(newToken, tokenForm);
    assert.notEqual(newToken, endpoint.token);
    assert.deepEqual(rolled.body.data, { token: newToken, previousTokenExpiresAt: null });
    assert.equal(rolled.headers['cache-control'], 'no-store');
    assert.equal(await service.tokenFor(endpoint.id), newToken, 'the delivery engine signs with the new token');
    const revealed = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/reveal_token`);
    assert.equal(revealed.body.data.token, newToken);
    const rows = await auditRows(endpoint.id);
    assert.deepEqual(
      rows.map((row) => [row.action, row.actor]),
      [
        ['webhook_endpoint.token_rolled', 'api_key:private'],
        ['webhook_endpoint.token_revealed', 'api_key:private'],
      ],
    );
    assert.equal(rows[0]!.trace_id, rolled.headers['x-traceid']);
    const retrieved = await merchant.call('GET', `/webhook_endpoints/${endpoint.id}`);
    assert.equal(retrieved.body.data.url, receiver, 'rolling changes nothing else');
  });

  test('stores tokens encrypted, each bound to its endpoint', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await createEndpoint(merchant);
    const [row] = await ctx.tessera.db.query<{ token_encrypted: string }>(
      'SELECT token_encrypted FROM webhook_endpoints WHERE id = $1',
      [endpoint.id],
    );
    assert.ok(row);
    assert.ok(!row.token_encrypted.includes(endpoint.token.slice(6)));
    await assert.rejects(ctx.tessera.vault.decrypt(row.token_encrypted, 'we_0000000000000000000'));
    assert.equal(await ctx.tessera.vault.decrypt(row.token_encrypted, endpoint.id), endpoint.token);
  });

  test('gives every endpoint its own token, the dynamic one included', async () => {
    const merchant = await ctx.merchant();
    const first = await createEndpoint(merchant);
    const second = await createEndpoint(merchant);
    const dynamic = await dynamicEndpointOf(merchant);
    const dynamicToken = remember(
      (await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/reveal_token`)).body.data.token,
    );
    assert.match(dynamicToken, tokenForm);
    assert.equal(new Set([first.token, second.token, dynamicToken]).size, 3);
    assert.equal(await service.tokenFor(dynamic.id), dynamicToken);
  });

  test('the dynamic endpoint reveals and rolls its token like any other', async () => {
    const merchant = await ctx.merchant();
    const dynamic = await dynamicEndpointOf(merchant);
    const before = (await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/reveal_token`)).body.data.token;
    const rolled = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/roll_token`);
    assert.equal(rolled.status, 200);
    const after = remember(rolled.body.data.token);
    remember(before);
    assert.notEqual(after, before);
    assert.equal(await service.tokenFor(dynamic.id), after);
    assert.deepEqual(
      (await auditRows(dynamic.id)).map((row) => row.action),
      ['webhook_endpoint.token_revealed', 'webhook_endpoint.token_rolled'],
    );
  });

  test('the dynamic endpoint cannot be deleted or given a url or events', async () => {
    const merchant = await ctx.merchant();
    const dynamic = await dynamicEndpointOf(merchant);
    const deleted = await merchant.call('DELETE', `/webhook_endpoints/${dynamic.id}`);
    assert.equal(deleted.status, 400);
    assert.equal(deleted.body.code, 'invalid_state');
    const withUrl = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/update`, { url: receiver });
    assert.equal(withUrl.status, 400);
    assert.equal(withUrl.body.code, 'invalid_request');
    assert.equal(withUrl.body.data.param, 'url');
    const withEvents = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/update`, {
      enabledEvents: ['payment.succeeded'],
    });
    assert.equal(withEvents.status, 400);
    assert.equal(withEvents.body.data.param, 'enabledEvents');
    const retrieved = await merchant.call('GET', `/webhook_endpoints/${dynamic.id}`);
    assert.deepEqual(retrieved.body.data, dynamic, 'the refused changes changed nothing');
  });

  test('the dynamic endpoint takes a description, the legacy switch and a status', async () => {
    const merchant = await ctx.merchant();
    const dynamic = await dynamicEndpointOf(merchant);
    const updated = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/update`, {
      description: 'notifyUrl deliveries',
      legacyNotifications: false,
      status: 'disabled',
    });
    assert.equal(updated.status, 200, updated.raw);
    assert.deepEqual(updated.body.data, {
      ...dynamic,
      description: 'notifyUrl deliveries',
      legacyNotifications: false,
      status: 'disabled',
      health: 'disabled',
    });
    assert.deepEqual(await service.ensureDynamicEndpoint(ctx.tessera.db, { merchantId: merchant.id, mode: 'test' }), {
      id: dynamic.id,
      legacyNotifications: false,
      enabled: false,
    });
  });

  test('updates only the fields sent', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await createEndpoint(merchant, { description: 'before', enabledEvents: ['payment.failed'] });
    const response = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/update`, {
      url: 'https://example.com/new-hooks',
      status: 'disabled',
      description: null,
    });
    assert.equal(response.status, 200, response.raw);
    const { token: _token, ...created } = endpoint;
    assert.deepEqual(response.body.data, {
      ...created,
      url: 'https://example.com/new-hooks',
      status: 'disabled',
      health: 'disabled',
    });
    const again = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/update`, {
      status: 'enabled',
      enabledEvents: ['*'],
      legacyNotifications: false,
      description: '',
    });
    assert.equal(again.body.data.status, 'enabled');
    assert.deepEqual(again.body.data.enabledEvents, ['*']);
    assert.equal(again.body.data.legacyNotifications, false);
    assert.equal(again.body.data.description, '');
    const badStatus = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/update`, { status: 'paused' });
    assert.equal(badStatus.status, 400);
    assert.equal(badStatus.body.data.param, 'status');
    assert.equal(await service.tokenFor(endpoint.id), endpoint.token, 'updating keeps the token');
  });

  test('deletes an endpoint, after which every operation on it is not found', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await createEndpoint(merchant);
    const deleted = await merchant.call('DELETE', `/webhook_endpoints/${endpoint.id}`);
    assert.equal(deleted.status, 200, deleted.raw);
    assert.deepEqual(deleted.body.data, { id: endpoint.id, deleted: true });
    for (const [method, path] of [
      ['GET', `/webhook_endpoints/${endpoint.id}`],
      ['POST', `/webhook_endpoints/${endpoint.id}/update`],
      ['DELETE', `/webhook_endpoints/${endpoint.id}`],
      ['POST', `/webhook_endpoints/${endpoint.id}/reveal_token`],
      ['POST', `/webhook_endpoints/${endpoint.id}/roll_token`],
    ] as const) {
      const response = await merchant.call(method, path, path.endsWith('/update') ? { description: 'x' } : undefined);
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal(response.body.code, 'resource_missing');
    }
    const list = await merchant.call('GET', '/webhook_endpoints');
    assert.deepEqual(
      list.body.data.data.map((item: { kind: string }) => item.kind),
      ['dynamic'],
    );
    assert.deepEqual(await auditRows(endpoint.id), [], 'nothing was revealed');
  });

  test("answers another merchant's endpoint as not found, for every operation", async () => {
    const owner = await ctx.merchant();
    const stranger = await ctx.merchant();
    const endpoint = await createEndpoint(owner);
    const dynamic = await dynamicEndpointOf(owner);
    for (const id of [endpoint.id, dynamic.id]) {
      for (const [method, path, body] of [
        ['GET', `/webhook_endpoints/${id}`, undefined],
        ['POST', `/webhook_endpoints/${id}/update`, { description: 'stolen' }],
        ['DELETE', `/webhook_endpoints/${id}`, undefined],
        ['POST', `/webhook_endpoints/${id}/reveal_token`, undefined],
        ['POST', `/webhook_endpoints/${id}/roll_token`, undefined],
      ] as const) {
        const response = await stranger.call(method, path, body);
        assert.equal(response.status, 404, `${method} ${path}`);
        assert.equal(response.body.code, 'resource_missing');
        assert.ok(!response.raw.includes('whsec_'));
      }
    }
    const strangerList = await stranger.call('GET', '/webhook_endpoints');
    assert.ok(strangerList.body.data.data.every((item: { id: string }) => item.id !== endpoint.id));
    assert.equal(await service.tokenFor(endpoint.id), endpoint.token, "the owner's token is untouched");
    assert.deepEqual(await auditRows(endpoint.id), []);
    const untouched = await owner.call('GET', `/webhook_endpoints/${endpoint.id}`);
    assert.equal(untouched.body.data.description, null);
  });

  test('refuses a public key with 403 permission_denied', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await createEndpoint(merchant);
    const headers = { authorization: `Bearer ${merchant.publicKey}` };
    for (const [method, path, body] of [
      ['POST', '/webhook_endpoints/create', { url: receiver }],
      ['GET', '/webhook_endpoints', undefined],
      ['GET', `/webhook_endpoints/${endpoint.id}`, undefined],
      ['POST', `/webhook_endpoints/${endpoint.id}/reveal_token`, undefined],
      ['POST', `/webhook_endpoints/${endpoint.id}/roll_token`, undefined],
      ['DELETE', `/webhook_endpoints/${endpoint.id}`, undefined],
    ] as const) {
      const response = await merchant.call(method, path, body, headers);
      assert.equal(response.status, 403, `${method} ${path}`);
      assert.equal(response.body.code, 'permission_denied');
    }
    assert.deepEqual(await auditRows(endpoint.id), []);
  });

  test('does not echo an id that is not of the id form', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('GET', '/webhook_endpoints/%3Cscript%3E');
    assert.equal(response.status, 404);
    assert.ok(!response.raw.includes('script'));
  });

  test('targetsFor: enabled, live static endpoints of the merchant subscribed to the type, oldest first', async () => {
    const merchant = await ctx.merchant();
    const other = await ctx.merchant();
    const scope = { merchantId: merchant.id, mode: 'test' };
    await service.ensureDynamicEndpoint(ctx.tessera.db, scope);
    const all = await createEndpoint(merchant, { legacyNotifications: true });
    ctx.clock.advance(1000);
    const succeeded = await createEndpoint(merchant, {
      enabledEvents: ['payment.succeeded', 'Invoice.sent'],
      legacyNotifications: false,
    });
    ctx.clock.advance(1000);
    const failed = await createEndpoint(merchant, { enabledEvents: ['payment.failed'] });
    const disabled = await createEndpoint(merchant);
    await merchant.call('POST', `/webhook_endpoints/${disabled.id}/update`, { status: 'disabled' });
    const deleted = await createEndpoint(merchant);
    await merchant.call('DELETE', `/webhook_endpoints/${deleted.id}`);
    await createEndpoint(other);

    assert.deepEqual(await service.targetsFor(ctx.tessera.db, scope, 'payment.succeeded'), [
      { id: all.id, url: receiver, legacyNotifications: true },
      { id: succeeded.id, url: receiver, legacyNotifications: false },
    ]);
    assert.deepEqual(
      (await service.targetsFor(ctx.tessera.db, scope, 'payment.failed')).map((target) => target.id),
      [all.id, failed.id],
    );
    assert.deepEqual(
      (await service.targetsFor(ctx.tessera.db, scope, 'Invoice.sent')).map((target) => target.id),
      [all.id, succeeded.id],
    );
    assert.deepEqual(
      (await service.targetsFor(ctx.tessera.db, scope, 'invoice.sent')).map((target) => target.id),
      [all.id],
      'codes are matched exactly as written',
    );
    assert.deepEqual(
      await service.targetsFor(ctx.tessera.db, { merchantId: merchant.id, mode: 'live' }, 'payment.failed'),
      [],
    );
    await ctx.tessera.db.transaction(async (tx) => {
      assert.equal((await service.targetsFor(tx, scope, 'refund.pending')).length, 1, 'works inside a transaction');
    });
  });

  test('legacyKeyFor: one key per merchant, created once even when asked at once, stored encrypted', async () => {
    const first = await ctx.merchant();
    const second = await ctx.merchant();
    const keys = await Promise.all([1, 2, 3, 4].map(() => service.legacyKeyFor(first.id)));
    assert.equal(new Set(keys).size, 1);
    const key = keys[0]!;
    assert.ok(key.length >= 48);
    // Another service instance (another process) reads the same key.
    const otherProcess = createWebhookEndpointService({
      db: ctx.tessera.db,
      clock: ctx.clock,
      vault: ctx.tessera.vault,
      production: false,
    });
    assert.equal(await otherProcess.legacyKeyFor(first.id), key);
    const secondKey = await otherProcess.legacyKeyFor(second.id);
    assert.notEqual(secondKey, key);
    const endpoint = await createEndpoint(first);
    assert.notEqual(await service.tokenFor(endpoint.id), key, 'the legacy key is not an endpoint token');
    const [row] = await ctx.tessera.db.query<{ legacy_signing_key_encrypted: string }>(
      'SELECT legacy_signing_key_encrypted FROM merchants WHERE id = $1',
      [first.id],
    );
    assert.ok(row && !row.legacy_signing_key_encrypted.includes(key));
    assert.equal(await ctx.tessera.vault.decrypt(row.legacy_signing_key_encrypted, `legacy:${first.id}`), key);
    await assert.rejects(service.legacyKeyFor('mer_0000000000000000000'));
    await assert.rejects(service.tokenFor('we_0000000000000000000'));
  });

  describe('in production mode', () => {
    let server: App;
    const lookup = async (hostname: string): Promise<string[]> => {
      const table: Record<string, string[]> = {
        'hooks.internal.example': ['10.0.0.1'],
        'metadata.example': ['169.254.169.254'],
        'hooks.example.com': ['93.184.216.34'],
        'rebind.example.com': ['93.184.216.34', '::ffff:127.0.0.1'],
      };
      const addresses = table[hostname];
      if (!addresses) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      return addresses;
    };
    before(async () => {
      // The same routes and service as the app, with production on and a resolver that needs no
      // network, behind the real server (key authentication, envelope, idempotency).
      const production = createWebhookEndpointService({
        db: ctx.tessera.db,
        clock: ctx.clock,
        vault: ctx.tessera.vault,
        production: true,
        lookup,
      });
      server = await buildServer({
        logger: ctx.tessera.logger,
        keys: ctx.tessera.merchants.keyLookup,
        operatorKeyHash: hashKey(ctx.operatorKey),
        idempotency: createIdempotency({
          db: ctx.tessera.db,
          clock: ctx.clock,
          sealer: idempotencySealer(ctx.tessera.vault),
          liveness: { staleAfterMs, beatEveryMs },
        }),
        merchantRoutes: [webhookEndpointRoutes(production)],
        operatorRoutes: [],
        publicRoutes: [],
        isStopping: () => false,
        isDraining: () => false,
      });
      await server.ready();
    });
    after(() => server.close());

    async function call(merchant: TestMerchant, path: string, body: unknown) {
      const response = await server.inject({
        method: 'POST',
        url: `${apiBase}${path}`,
        headers: { authorization: `Bearer ${merchant.privateKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      return { status: response.statusCode, body: response.json(), raw: response.body };
    }

    const hostNotAllowed =
      'url must have a host name that resolves to public addresses only, as required in production';
    const refusals: Array<[string, string]> = [
      ['https://hooks.internal.example/tessera', hostNotAllowed],
      ['http://metadata.example/', hostNotAllowed],
      ['https://rebind.example.com/', hostNotAllowed],
      ['http://localhost:4000/hooks', 'url names localhost, which is not allowed in production'],
      ['http://127.0.0.1:4000/hooks', 'url is a loopback address, which is not allowed in production'],
      ['http://[::1]:4000/hooks', 'url is a loopback address, which is not allowed in production'],
      ['http://192.168.0.10/hooks', 'url is a private address, which is not allowed in production'],
      ['http://169.254.169.254/latest', 'url is a cloud metadata address, which is not allowed in production'],
      ['https://unknown.example.com/', hostNotAllowed],
    ];
    for (const [url, message] of refusals) {
      test(`refuses ${url}: "${message}"`, async () => {
        const merchant = await ctx.merchant();
        const created = await call(merchant, '/webhook_endpoints/create', { url });
        assert.equal(created.status, 400, created.raw);
        assert.deepEqual(created.body, {
          code: 'invalid_request',
          msg: message,
          data: { param: 'url', rule: created.body.data.rule },
        });
        assert.ok(!created.raw.includes('10.0.0.1') && !created.raw.includes('whsec_'));
      });
    }

    test('answers a host name that does not resolve as one that resolves to a private address, logging which', async () => {
      const merchant = await ctx.merchant();
      const start = ctx.logLines().length;
      const unresolvable = await call(merchant, '/webhook_endpoints/create', { url: 'https://unknown.example.com/' });
      const internal = await call(merchant, '/webhook_endpoints/create', { url: 'https://hooks.internal.example/' });
      assert.equal(unresolvable.status, 400);
      assert.equal(unresolvable.raw, internal.raw);
      const logged = ctx.logLines().slice(start).join('\n');
      assert.match(logged, /"detail":"the host name does not resolve"/);
      assert.match(logged, /"detail":"the host name resolves to a private address"/);
    });

    test('accepts a public URL, and refuses an update to a private one', async () => {
      const merchant = await ctx.merchant();
      const created = await call(merchant, '/webhook_endpoints/create', { url: 'https://hooks.example.com/tessera' });
      assert.equal(created.status, 200, created.raw);
      remember(created.body.data.token);
      const updated = await call(merchant, `/webhook_endpoints/${created.body.data.id}/update`, {
        url: 'https://hooks.internal.example/tessera',
      });
      assert.equal(updated.status, 400);
      assert.equal(updated.body.data.param, 'url');
      const retrieved = await merchant.call('GET', `/webhook_endpoints/${created.body.data.id}`);
      assert.equal(retrieved.body.data.url, 'https://hooks.example.com/tessera');
    });
  });

  // Last: searches every log line this run wrote for every token it answered.
  test('never writes a token to the logs', async () => {
    assert.ok(tokensSeen.size >= 10, `${tokensSeen.size} tokens seen`);
    const logFile = path.resolve(
      '.test-logs',
      `${path.basename(process.argv[1] ?? 'test')}-${databaseKind}-${process.pid}.log`,
    );
    // The log stream writes asynchronously: a request made now, once its line is in the file,
    // shows that every line written before it is there too.
    const marker = `we_logmarker${Date.now()}`;
    const probe = await (await ctx.merchant()).call('GET', `/webhook_endpoints/${marker}`);
    assert.equal(probe.status, 404, probe.raw);
    let text = await readFile(logFile, 'utf8');
    for (const started = Date.now(); !text.includes(marker) && Date.now() - started < 10_000;) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      text = await readFile(logFile, 'utf8');
    }
    assert.ok(text.includes(marker), 'the marker request reached the log');
    assert.ok(text.includes('/webhook_endpoints/'), 'the log holds this run');
    for (const token of tokensSeen) assert.ok(!text.includes(token), 'a token is in the logs');
    assert.ok(!text.includes('whsec_'));
  });
});
