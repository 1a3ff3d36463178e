import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { loadConfig } from '../src/config.js';
import { createWebhookHttpClient } from '../src/webhooks/http-client.js';
import { parseWebhookProxy } from '../src/config-egress.js';
import {
  databaseKind,
  payWithTestCard,
  startTestApp,
  type TestContext,
  type TestMerchant,
  migratedDataDir,
} from './helpers/harness.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { signedInOwner } from './helpers/dashboard.js';
import { runCli } from './helpers/cli-process.js';
import { squidMissing, startSquid, type Squid } from './helpers/squid.js';

// docs/webhooks.md#sending-addresses-allow-lists: where webhook deliveries leave from, and what merchants are told.

/** Each answer closes its connection, so that every delivery opens a new one (and Squid logs each tunnel). */
const closeEach = () => ({ status: 200, body: 'success', headers: { connection: 'close' } });

async function createEndpoint(merchant: TestMerchant, url: string): Promise<string> {
  const created = await merchant.call('POST', '/webhook_endpoints/create', { url, legacyNotifications: false });
  assert.equal(created.status, 200, created.raw);
  return created.body.data.id;
}

async function pay(merchant: TestMerchant): Promise<string> {
  const payment = await payWithTestCard(merchant);
  const events = await merchant.call('GET', `/events?objectId=${payment.id}`);
  return events.body.data.data[0].id;
}

async function attemptsOfEvent(merchant: TestMerchant, eventId: string) {
  const deliveries = await merchant.call('GET', `/events/${eventId}/deliveries`);
  assert.equal(deliveries.status, 200, deliveries.raw);
  const [delivery] = deliveries.body.data.data as Array<{ id: string; status: string }>;
  assert.ok(delivery, deliveries.raw);
  const attempts = await merchant.call('GET', `/webhook_deliveries/${delivery.id}/attempts`);
  return { delivery, attempts: attempts.body.data.data as Array<{ error: string | null; httpStatus: number | null }> };
}

describe('egress settings are checked at start-up (docs/webhooks.md#sending-addresses-allow-lists)', () => {
  test('a proxy that is not an http:// URL is refused naming the setting, never echoing a password', () => {
    assert.throws(
      () => loadConfig({ TESSERA_WEBHOOK_PROXY: 'socks5://127.0.0.1:1080' }),
      /TESSERA_WEBHOOK_PROXY must be an http:\/\/ URL/,
    );
    assert.throws(
      () => loadConfig({ TESSERA_WEBHOOK_PROXY: 'http://egress:hunter2secret@proxy.internal:3128/path' }),
      (err: Error) => /TESSERA_WEBHOOK_PROXY/.test(err.message) && !err.message.includes('hunter2secret'),
    );
    const proxy = loadConfig({ TESSERA_WEBHOOK_PROXY: 'http://egress:hunter2secret@proxy.internal:3128' }).webhookProxy;
    assert.equal(proxy?.host, 'proxy.internal');
    assert.equal(proxy?.port, 3128);
    assert.equal(proxy?.display, 'http://egress:***@proxy.internal:3128');
    assert.equal(proxy?.authorization, `Basic ${Buffer.from('egress:hunter2secret').toString('base64')}`);
  });

  test('sending addresses must be IP addresses or CIDR ranges', () => {
    for (const bad of ['hooks.example.com', '10.0.0.0/33', '2001:db8::/129', '203.0.113.7/28/1', '1.2.3']) {
      assert.throws(
        () => loadConfig({ TESSERA_WEBHOOK_SENDING_ADDRESSES: `203.0.113.7,${bad}` }),
        new RegExp(
          `TESSERA_WEBHOOK_SENDING_ADDRESSES must list IP addresses or CIDR ranges.*"${bad.replace(/[.*/]/g, '\\$&')}"`,
        ),
      );
    }
    const config = loadConfig({ TESSERA_WEBHOOK_SENDING_ADDRESSES: ' 203.0.113.7, 198.51.100.0/28,2001:db8::/64 ' });
    assert.deepEqual(config.webhookSendingAddresses, ['203.0.113.7', '198.51.100.0/28', '2001:db8::/64']);
    assert.deepEqual(loadConfig({}).webhookSendingAddresses, []);
  });

  test('source addresses must be IP addresses, each once', () => {
    assert.throws(() => loadConfig({ TESSERA_WEBHOOK_SOURCE_ADDRESSES: 'eth0' }), /"eth0" is not an IP address/);
    assert.throws(() => loadConfig({ TESSERA_WEBHOOK_SOURCE_ADDRESSES: '127.0.0.2,127.0.0.2' }), /twice/);
  });

  test('a source address this host does not have stops `tessera start` with one line', async () => {
    const dataDir = await migratedDataDir('tessera-egress-');
    try {
      const result = await runCli(['start', '--port', '0'], {
        TESSERA_DATA_DIR: dataDir,
        TESSERA_WEBHOOK_SOURCE_ADDRESSES: '127.0.0.2,192.0.2.77',
      });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.equal(
        result.stderr.trim(),
        'tessera: TESSERA_WEBHOOK_SOURCE_ADDRESSES: this host has no address 192.0.2.77 to send webhooks from (EADDRNOTAVAIL)',
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe(`deliveries leave from the fixed source addresses, in turn (${databaseKind})`, () => {
  let ctx: TestContext;
  let hook: Receiver;
  before(async () => {
    ctx = await startTestApp({
      env: { TESSERA_WEBHOOK_SOURCE_ADDRESSES: '127.0.0.2,127.0.0.3', TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' },
    });
    hook = await startReceiver(closeEach);
  });
  after(async () => {
    await hook.close();
    await ctx.close();
  });

  test('each new connection binds the next source address', async () => {
    const merchant = await ctx.merchant();
    await createEndpoint(merchant, hook.url());
    for (let index = 0; index < 4; index++) {
      await pay(merchant);
      await ctx.tessera.webhookDispatcher.runOnce();
    }
    await hook.waitFor(4);
    assert.deepEqual(
      hook.requests.map((request) => request.remoteAddress),
      ['127.0.0.2', '127.0.0.3', '127.0.0.2', '127.0.0.3'],
    );
  });
});

describe(`merchants see the sending addresses (${databaseKind})`, () => {
  let fixed: TestContext;
  let open: TestContext;
  before(async () => {
    fixed = await startTestApp({ env: { TESSERA_WEBHOOK_SENDING_ADDRESSES: '203.0.113.7,198.51.100.0/28' } });
    open = await startTestApp();
  });
  after(async () => {
    await fixed.close();
    await open.close();
  });

  test('GET /webhook_endpoints/sending_addresses lists them, or says they are not fixed', async () => {
    const merchant = await fixed.merchant();
    const answer = await merchant.call('GET', '/webhook_endpoints/sending_addresses');
    assert.equal(answer.status, 200, answer.raw);
    assert.deepEqual(answer.body.data.addresses, ['203.0.113.7', '198.51.100.0/28']);
    assert.equal(answer.body.data.fixed, true);
    assert.equal(answer.body.data.object, 'sending_addresses');

    const unfixed = await (await open.merchant()).call('GET', '/webhook_endpoints/sending_addresses');
    assert.equal(unfixed.status, 200, unfixed.raw);
    assert.equal(unfixed.body.data.fixed, false);
    assert.deepEqual(unfixed.body.data.addresses, []);
    assert.match(unfixed.body.data.message, /not fixed/);
  });

  test('a public key is refused', async () => {
    const merchant = await fixed.merchant();
    const answer = await merchant.call('GET', '/webhook_endpoints/sending_addresses', undefined, {
      authorization: `Bearer ${merchant.publicKey}`,
    });
    assert.notEqual(answer.status, 200, answer.raw);
  });

  test("the go-live check's report carries them", async () => {
    const merchant = await fixed.merchant();
    const hook = await startReceiver();
    try {
      const endpointId = await createEndpoint(merchant, hook.url());
      const check = await merchant.call('POST', `/webhook_endpoints/${endpointId}/check`, {});
      assert.equal(check.status, 200, check.raw);
      assert.deepEqual(check.body.data.sendingAddresses.addresses, ['203.0.113.7', '198.51.100.0/28']);
      const history = await merchant.call('GET', `/webhook_endpoints/${endpointId}/checks`);
      assert.equal(history.body.data.data[0].sendingAddresses.fixed, true, history.raw);
    } finally {
      await hook.close();
    }
  });

  test("the dashboard's webhook pages show them, or say they are not fixed", async () => {
    const fixedMerchant = await fixed.merchant();
    const owner = await signedInOwner(fixed, fixedMerchant.id, 'owner@egress.example', 'correct horse battery');
    const list = await owner.get('/dashboard/developers/webhooks');
    assert.equal(list.status, 200);
    assert.match(list.body, /Sending addresses/);
    assert.match(list.body, /<code>203\.0\.113\.7<\/code>/);
    assert.match(list.body, /<code>198\.51\.100\.0\/28<\/code>/);
    // The endpoint's page, beside its go-live check.
    const endpointId = await createEndpoint(fixedMerchant, 'https://hooks.example/egress');
    const detail = await owner.get(`/dashboard/developers/webhooks/${endpointId}`);
    assert.equal(detail.status, 200);
    assert.match(detail.body, /Run go-live check/);
    assert.match(detail.body, /Sending addresses/);
    assert.match(detail.body, /<code>203\.0\.113\.7<\/code>/);

    const openMerchant = await open.merchant();
    const other = await signedInOwner(open, openMerchant.id, 'owner@open.example', 'correct horse battery');
    const page = await other.get('/dashboard/developers/webhooks');
    assert.match(page.body, /Sending addresses/);
    assert.match(page.body, /not fixed/);
  });
});

const missing = squidMissing();
describe(`deliveries through an egress proxy, Squid (${databaseKind})`, { skip: missing }, () => {
  let ctx: TestContext;
  let squid: Squid;
  let hook: Receiver;
  before(async () => {
    squid = await startSquid();
    hook = await startReceiver(closeEach);
    ctx = await startTestApp({
      env: {
        TESSERA_WEBHOOK_PROXY: squid.url,
        TESSERA_WEBHOOK_RETRY_DELAYS_SECONDS: '1,1,1',
        TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000',
      },
    });
  });
  after(async () => {
    await ctx?.close();
    await hook?.close();
    await squid?.close();
  });

  test('every delivery goes through the proxy, which tunnels to the address Tessera chose', async () => {
    const merchant = await ctx.merchant();
    await createEndpoint(merchant, hook.url());
    const eventId = await pay(merchant);
    await ctx.tessera.webhookDispatcher.runOnce();
    await hook.waitFor(1);
    const port = new URL(hook.url()).port;
    const line = await squid.waitForLog(new RegExp(`CONNECT 127\\.0\\.0\\.1:${port} `));
    assert.match(line, /TCP_TUNNEL\/200/);
    const { delivery } = await attemptsOfEvent(merchant, eventId);
    assert.equal(delivery.status, 'succeeded');
  });

  test('a stopped proxy turns into failed attempts that succeed once it is back', async () => {
    const merchant = await ctx.merchant();
    const target = await startReceiver(closeEach);
    try {
      await createEndpoint(merchant, target.url());
      await squid.stop();
      const eventId = await pay(merchant);
      await ctx.tessera.webhookDispatcher.runOnce();
      const failed = await attemptsOfEvent(merchant, eventId);
      assert.equal(failed.delivery.status, 'pending');
      assert.equal(failed.attempts.length, 1);
      assert.equal(failed.attempts[0]?.error, `Proxy unreachable at 127.0.0.1:${squid.port} (connection refused)`);
      assert.equal(target.requests.length, 0);

      await squid.start();
      ctx.clock.advance(1000);
      await ctx.tessera.webhookDispatcher.runOnce();
      await target.waitFor(1);
      const recovered = await attemptsOfEvent(merchant, eventId);
      assert.equal(recovered.delivery.status, 'succeeded');
      assert.equal(recovered.attempts.length, 2);
    } finally {
      await target.close();
    }
  });

  test("a proxy's refusal is the attempt's error, retried like any other failure", async () => {
    const refused = await startReceiver(closeEach);
    const strict = await startSquid({ deniedPorts: [Number(new URL(refused.url()).port)] });
    const app = await startTestApp({
      env: { TESSERA_WEBHOOK_PROXY: strict.url, TESSERA_WEBHOOK_RETRY_DELAYS_SECONDS: '1' },
    });
    try {
      const merchant = await app.merchant();
      await createEndpoint(merchant, refused.url());
      const eventId = await pay(merchant);
      await app.tessera.webhookDispatcher.runOnce();
      const { delivery, attempts } = await attemptsOfEvent(merchant, eventId);
      assert.equal(delivery.status, 'pending');
      assert.match(
        attempts[0]?.error ?? '',
        new RegExp(`^Proxy refused the connection to 127\\.0\\.0\\.1:${new URL(refused.url()).port} \\(403`),
      );
      assert.equal(refused.requests.length, 0);
    } finally {
      await app.close();
      await strict.close();
      await refused.close();
    }
  });

  test('a destination the SSRF rules refuse never reaches the proxy', async () => {
    const proxy = parseWebhookProxy(squid.url);
    // A name that resolves to loopback at delivery time, as after a DNS rebinding.
    const client = createWebhookHttpClient({
      timeoutMs: 5000,
      production: true,
      proxy,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const before = squid.accessLog().length;
    try {
      for (const url of [
        'http://hooks.example.com/webhook',
        'http://10.1.2.3/webhook',
        'http://169.254.169.254/latest',
      ]) {
        const { durationMs, ...outcome } = await client.post(url, { 'Content-Type': 'application/json' }, '{}');
        assert.ok(Number.isInteger(durationMs) && durationMs >= 0, String(durationMs));
        assert.deepEqual(outcome, {
          ok: false,
          error: 'The endpoint resolves to an address that is not public, which is refused in production',
        });
      }
    } finally {
      await client.close();
    }
    // Squid writes a line for every request it gets, refused or not, when its connection ends: a
    // request it does get, sent after those, shows its log has caught up with them.
    const marker = await startReceiver(closeEach);
    const allowed = createWebhookHttpClient({ timeoutMs: 5000, production: false, proxy });
    try {
      const answered = await allowed.post(marker.url(), { 'Content-Type': 'application/json' }, '{}');
      assert.equal(answered.ok, true, JSON.stringify(answered));
    } finally {
      await allowed.close();
      await marker.close();
    }
    await squid.waitForLog(new RegExp(`CONNECT 127\\.0\\.0\\.1:${new URL(marker.url()).port} `));
    const added = squid.accessLog().slice(before);
    assert.equal(added.length, 1, added.join('\n'));
  });
});
