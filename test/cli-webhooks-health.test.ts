import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { databaseKind, storeIndependent, migratedStorage, type TestStorage } from './helpers/harness.js';
import { apiCaller, runCli, startService, stopService, type RunningService } from './helpers/cli-process.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

/*
 * `tessera webhooks list` as a table with each endpoint's health (--json for scripts) and
 * `tessera webhooks recover` (issue 20), against a started service that really delivers.
 */
describe(
  `tessera webhooks list|recover against a started service (${databaseKind})`,
  { skip: storeIndependent },
  () => {
    let storage: TestStorage | undefined;
    let running: RunningService;
    let call: ReturnType<typeof apiCaller>;
    let cliEnv: Record<string, string>;
    let receiver: Receiver;

    before(async () => {
      storage = await migratedStorage('tessera-health-');
      running = await startService({
        TESSERA_WEBHOOK_TIMEOUT_MS: '1000',
        TESSERA_WEBHOOK_POLL_INTERVAL_MS: '100',
        ...storage.env,
      });
      call = apiCaller(running);
      cliEnv = { TESSERA_URL: running.origin, TESSERA_API_KEY: running.privateKey };
      receiver = await startReceiver(() => ({ status: 500, body: 'down for maintenance' }));
    });
    after(async () => {
      await receiver.close();
      await stopService(running);
      await storage?.remove();
    });

    async function pay(): Promise<string> {
      const method = await call('/payment_methods/create', {
        type: 'card',
        card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
      });
      const payment = await call('/payment/create', {
        amount: '500',
        currency: 'USD',
        paymentMethod: method.id,
        confirm: true,
      });
      assert.equal(payment.status, 'succeeded');
      return payment.id;
    }

    test('list prints a table with health, since when, the next attempt and the last error; --json the objects', async () => {
      const failing = await call('/webhook_endpoints/create', {
        url: receiver.url('/failing'),
        enabledEvents: ['payment.succeeded'],
        legacyNotifications: false,
      });
      await pay();
      for (let tries = 0; tries < 200; tries++) {
        if ((await call(`/webhook_endpoints/${failing.id}`)).health === 'failing') break;
        await sleep(50);
      }

      const table = await runCli(['webhooks', 'list'], cliEnv);
      assert.equal(table.code, 0, table.stderr);
      const [header, ...rows] = table.stdout.trimEnd().split('\n');
      assert.match(header ?? '', /^ID +URL +HEALTH +FAILING SINCE +NEXT ATTEMPT +LAST ERROR$/);
      const row = rows.find((line) => line.startsWith(failing.id)) ?? '';
      assert.match(
        row,
        new RegExp(`${failing.id} +${receiver.url('/failing').replace(/[.?]/g, '\\$&')} +failing +\\d{4}-`),
      );
      assert.match(row, /The endpoint answered HTTP 500, not 2xx$/);
      assert.ok(
        rows.some((line) => /notifyUrl \(dynamic\) +healthy/.test(line)),
        table.stdout,
      );
      // Not a terminal: no color codes in the table.
      assert.ok(!table.stdout.includes('\u001b['), table.stdout);

      const json = await runCli(['webhooks', 'list', '--json'], cliEnv);
      const listed = (JSON.parse(json.stdout) as { data: Array<Record<string, unknown>> }).data.find(
        (endpoint) => endpoint.id === failing.id,
      );
      assert.equal(listed?.health, 'failing');
      assert.equal(listed?.lastError, 'The endpoint answered HTTP 500, not 2xx');
    });

    test('re-enabling prints how to recover; recover sends what was missed; bad input is named', async () => {
      const endpoint = await call('/webhook_endpoints/create', {
        url: receiver.url('/recover'),
        enabledEvents: ['payment.succeeded'],
        legacyNotifications: false,
      });
      const disabled = await runCli(['webhooks', 'update', endpoint.id, '--status', 'disabled'], cliEnv);
      assert.equal(disabled.code, 0, disabled.stderr);
      const refused = await runCli(['webhooks', 'recover', endpoint.id, '--since', '1h'], cliEnv);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /endpoint_disabled: .*enable it first/);

      const paymentId = await pay();
      const enabled = await runCli(['webhooks', 'update', endpoint.id, '--status', 'enabled'], cliEnv);
      assert.equal(enabled.code, 0, enabled.stderr);
      assert.equal((JSON.parse(enabled.stdout) as { status: string }).status, 'enabled');
      assert.match(enabled.stderr, new RegExp(`tessera webhooks recover ${endpoint.id} --since 24h`));

      receiver.respond(() => ({ status: 200, body: 'success' }));
      const before = receiver.requests.filter((request) => request.path === '/recover').length;
      const recovered = await runCli(['webhooks', 'recover', endpoint.id, '--since', '1h'], cliEnv);
      assert.equal(recovered.code, 0, recovered.stderr);
      assert.match(recovered.stdout, /^1 event\(s\) from .* sent again to we_\d+, oldest first/);
      for (let tries = 0; tries < 200; tries++) {
        if (receiver.requests.filter((request) => request.path === '/recover').length > before) break;
        await sleep(50);
      }
      const sent = receiver.requests.filter((request) => request.path === '/recover').slice(before);
      assert.equal(sent.length, 1);
      assert.equal((JSON.parse(sent[0]!.body) as { data: { id: string } }).data.id, paymentId);

      const future = await runCli(['webhooks', 'recover', endpoint.id, '--since', '2999-01-01T00:00:00Z'], cliEnv);
      assert.equal(future.code, 1);
      assert.match(future.stderr, /invalid_request: since must not be in the future/);
      const malformed = await runCli(['webhooks', 'recover', endpoint.id, '--since', 'soon'], cliEnv);
      assert.equal(malformed.code, 1);
      assert.match(malformed.stderr, /--since takes an ISO 8601 time/);
    });
    test('roll --signature-algorithm ed25519 --expires-in prints the public key; a bad algorithm is named', async () => {
      const endpoint = await call('/webhook_endpoints/create', { url: receiver.url('/roll'), format: 'standard' });
      const rolled = await runCli(
        ['webhooks', 'roll', endpoint.id, '--signature-algorithm', 'ed25519', '--expires-in', '60'],
        cliEnv,
      );
      assert.equal(rolled.code, 0, rolled.stderr);
      const answer = JSON.parse(rolled.stdout) as { token: string; previousTokenExpiresAt: string | null };
      assert.match(answer.token, /^whpk_[A-Za-z0-9+/]{43}=$/);
      assert.ok(answer.previousTokenExpiresAt);
      assert.equal((await call(`/webhook_endpoints/${endpoint.id}`)).publicKey, answer.token);
      const refused = await runCli(['webhooks', 'roll', endpoint.id, '--signature-algorithm', 'rsa'], cliEnv);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /--signature-algorithm takes hmac-sha256 or ed25519/);
    });
  },
);
