import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { verifyWebhook } from '../sdk/verify-webhook.js';
import { databaseKind, storeIndependent, migratedStorage, type TestStorage } from './helpers/harness.js';
import { apiCaller, runCli, startService, stopService, type RunningService } from './helpers/cli-process.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

describe(
  `tessera webhooks check|doctor against a started service (${databaseKind})`,
  { skip: storeIndependent },
  () => {
    let storage: TestStorage | undefined;
    let running: RunningService;
    let call: ReturnType<typeof apiCaller>;
    let cliEnv: Record<string, string>;
    const receivers: Receiver[] = [];

    before(async () => {
      storage = await migratedStorage('tessera-golive-');
      running = await startService({
        TESSERA_WEBHOOK_TIMEOUT_MS: '1000',
        ...storage.env,
      });
      call = apiCaller(running);
      cliEnv = { TESSERA_URL: running.origin, TESSERA_API_KEY: running.privateKey };
    });
    after(async () => {
      await Promise.all(receivers.map((receiver) => receiver.close()));
      await stopService(running);
      await storage?.remove();
    });

    test('check prints ✓ for every case of a verifying receiver and exits 0', async () => {
      let token = '';
      const receiver = await startReceiver((request) => {
        try {
          verifyWebhook({ headers: request.headers, rawBody: request.rawBody, token });
          return { status: 200, body: 'success' };
        } catch (err) {
          return { status: 401, body: (err as Error).message };
        }
      });
      receivers.push(receiver);
      const endpoint = await call('/webhook_endpoints/create', { url: receiver.url() });
      token = endpoint.token;
      const result = await runCli(['webhooks', 'check', endpoint.id], cliEnv);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      const lines = result.stdout.split('\n').filter((line) => /^[✓✗] /.test(line));
      assert.equal(lines.length, 8, result.stdout);
      for (const line of lines) assert.match(line, /^✓ /);
      assert.match(result.stdout, /✓ stale_request_time +Refused \(HTTP 401\)/);
      const stored = await call(`/webhook_endpoints/${endpoint.id}/checks`);
      assert.equal(stored.data.length, 1);
      assert.equal(stored.data[0].passed, true);
    });

    test('check prints ✗ with the reason for each case a careless receiver gets wrong and exits 1', async () => {
      const receiver = await startReceiver(() => ({ status: 200, body: 'success' }));
      receivers.push(receiver);
      const endpoint = await call('/webhook_endpoints/create', { url: receiver.url() });
      const result = await runCli(['webhooks', 'check', endpoint.id], cliEnv);
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(result.stdout, /✓ valid +Answered HTTP 200 success/);
      assert.match(
        result.stdout,
        /✗ bad_signature +Answered "success" to a delivery whose Signature was made with another token/,
      );
      assert.match(result.stdout, /✗ stale_request_time .*4 minutes old/);
      assert.match(result.stdout, /✗ future_request_time .*4 minutes ahead/);
      assert.match(result.stdout, /✗ changed_body .*altered after it was signed/);
      assert.match(result.stdout, /✗ legacy_kind .*legacy/);
      assert.match(result.stdout, /failed/);
    });

    test('check of the dynamic endpoint without --check-url exits 1 naming url', async () => {
      const endpoints = await call('/webhook_endpoints?limit=100');
      const dynamic = endpoints.data.find((row: { kind: string }) => row.kind === 'dynamic');
      const result = await runCli(['webhooks', 'check', dynamic.id], cliEnv);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /url is required to check the dynamic endpoint/);
    });

    test('doctor names each cause from files and exits 0 only when the signature verifies', async () => {
      const receiver = await startReceiver();
      receivers.push(receiver);
      const endpoint = await call('/webhook_endpoints/create', { url: receiver.url() });
      const another = await call('/webhook_endpoints/create', { url: receiver.url('/other') });
      await call(`/webhook_endpoints/${endpoint.id}/check`, {});
      const request = receiver.requests[0]!;
      const headerLines: string[] = [];
      for (let index = 0; index < request.rawHeaders.length; index += 2) {
        headerLines.push(`${request.rawHeaders[index]}: ${request.rawHeaders[index + 1]}`);
      }
      const file = (name: string, text: string) => {
        const at = path.join(storage!.dataDir, name);
        writeFileSync(at, text);
        return at;
      };
      const headers = file('h.txt', headerLines.join('\n'));
      const body = file('body.json', request.body);
      const doctor = (...args: string[]) => runCli(['webhooks', 'doctor', '--headers', headers, ...args], cliEnv);

      const fine = await doctor('--body', body, '--token', endpoint.token);
      assert.equal(fine.code, 0, fine.stdout + fine.stderr);
      assert.match(fine.stdout, /^✓ verifies: /m);
      assert.doesNotMatch(fine.stdout, new RegExp(endpoint.token));

      const pretty = file('pretty.json', `${JSON.stringify(JSON.parse(request.body), null, 2)}\n`);
      const changed = await doctor('--body', pretty, '--token', endpoint.token);
      assert.equal(changed.code, 1, changed.stdout + changed.stderr);
      assert.match(changed.stdout, /^✗ body_changed: .*re-encoded.*First difference at position 1/m);

      const wrong = await doctor('--body', body, '--token', another.token, '--endpoint', endpoint.id);
      assert.equal(wrong.code, 1);
      assert.match(wrong.stdout, new RegExp(`✗ wrong_token: Signed with the token of endpoint ${endpoint.id}`));

      const noSignature = file('h2.txt', headerLines.filter((line) => !line.startsWith('Signature')).join('\n'));
      const missing = await runCli(['webhooks', 'doctor', '--headers', noSignature, '--body', body], cliEnv);
      assert.equal(missing.code, 1);
      assert.match(missing.stdout, /✗ header_missing: The Signature header is missing/);
    });
  },
);
