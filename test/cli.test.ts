import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createTestDatabase, databaseKind } from './helpers/harness.js';
import { startReceiver } from './helpers/receiver.js';
import { runCli } from './helpers/cli-process.js';

const cliArgs = ['--import', 'tsx', 'src/cli.ts'];

interface Running {
  child: ChildProcess;
  output: () => string;
  baseUrl: string;
  origin: string;
  privateKey: string | undefined;
}

/** Runs `tessera start` as a newcomer would and reads what it prints. */
async function startService(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, [...cliArgs, 'start'], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', TESSERA_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 120_000; // generous: test files run four at a time
  while (!/Try it:|API reference/.test(output) || (env.NODE_ENV !== 'production' && !output.includes('Try it:'))) {
    if (child.exitCode !== null) throw new Error(`tessera start exited: ${output}`);
    if (Date.now() > deadline) {
      // Killed, or its open pipes would keep the test file's process (and so the run) going forever.
      child.kill('SIGKILL');
      throw new Error(`tessera start printed no base URL in time: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const baseUrl = /API base URL:\s+(\S+)/.exec(output)?.[1];
  assert.ok(baseUrl, output);
  return {
    child,
    output: () => output,
    baseUrl,
    origin: new URL(baseUrl).origin,
    privateKey: /private key: (test_pr_\w+)/.exec(output)?.[1],
  };
}

async function stopService(running: Running): Promise<void> {
  if (running.child.exitCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGTERM');
  await exited;
}

/** Calls the merchant API of a started service with its sandbox key: GET without a body, POST with one. */
function apiCaller(running: Running) {
  return async (route: string, body?: unknown): Promise<any> => {
    const response = await fetch(`${running.baseUrl}${route}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${running.privateKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const parsed = (await response.json()) as { code: string; data: any };
    assert.equal(parsed.code, 'success', JSON.stringify(parsed));
    return parsed.data;
  };
}

/** Creates the webhook endpoint, then a card and a payment with confirm, which succeeds. */
async function payWithEndpoint(call: ReturnType<typeof apiCaller>, endpoint: Record<string, unknown>) {
  await call('/webhook_endpoints/create', endpoint);
  const method = await call('/payment_methods/create', {
    type: 'card',
    card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
  });
  const payment = await call('/payment/create', {
    amount: '1999',
    currency: 'USD',
    paymentMethod: method.id,
    confirm: true,
  });
  assert.equal(payment.status, 'succeeded');
  return payment;
}

/** A crash: SIGKILL, no chance to finish anything. */
async function killService(running: Running): Promise<void> {
  if (running.child.exitCode !== null || running.child.signalCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGKILL');
  await exited;
}

describe(`tessera command (${databaseKind})`, () => {
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let env: Record<string, string>;

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'tessera-cli-'));
    database = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
    env = { TESSERA_DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}) };
  });
  after(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await database?.drop();
  });

  test('start prints the base URL, a working sandbox key and the operator key, and the merchants commands use them', async () => {
    const running = await startService(env);
    try {
      assert.match(running.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/api\/services\/v1$/);
      assert.ok(running.privateKey, 'a sandbox private key is printed');
      assert.match(running.output(), /curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/api\/services\/v1\/customers\/create/);
      assert.match(running.output(), /Operator key/);
      // DESIGN §8: without an SMTP server the banner says where e-mails are written instead.
      assert.ok(
        running
          .output()
          .includes(
            `E-mail:         no SMTP server (TESSERA_SMTP_URL unset): each message is written as an .eml file into ${path.join(dataDir, 'mail')}`,
          ),
        running.output(),
      );

      const health = await fetch(`${running.origin}/health`);
      assert.equal(health.status, 200);
      const created = await fetch(`${running.baseUrl}/customers/create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${running.privateKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ firstName: 'Ada' }),
      });
      assert.equal(created.status, 200);
      assert.equal(((await created.json()) as { code: string }).code, 'success');

      // The merchant commands find the operator key in the data folder and call the running service.
      const cliEnv = { TESSERA_URL: running.origin, TESSERA_DATA_DIR: dataDir };
      const made = await runCli(['merchants', 'create', '--name', 'Acme', '--tokenization'], cliEnv);
      assert.equal(made.code, 0, made.stderr);
      const merchant = JSON.parse(made.stdout) as {
        id: string;
        tokenization: boolean;
        mit: boolean;
        keys: { privateKey: string };
      };
      assert.equal(merchant.tokenization, true);
      assert.equal(merchant.mit, false);
      assert.match(merchant.keys.privateKey, /^test_pr_/);

      const updated = await runCli(['merchants', 'update', merchant.id, '--mit', 'true'], cliEnv);
      assert.equal(updated.code, 0, updated.stderr);
      assert.equal((JSON.parse(updated.stdout) as { mit: boolean }).mit, true);

      const listed = await runCli(['merchants', 'list'], cliEnv);
      assert.equal(listed.code, 0, listed.stderr);
      const ids = (JSON.parse(listed.stdout) as { data: Array<{ id: string }> }).data.map((row) => row.id);
      assert.ok(ids.includes(merchant.id));

      // The webhooks commands use a merchant's key (DESIGN §5 signatureCase, settable from the CLI).
      const endpoint = await fetch(`${running.baseUrl}/webhook_endpoints/create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${running.privateKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/hooks' }),
      });
      const endpointId = ((await endpoint.json()) as { data: { id: string } }).data.id;
      const merchantEnv = { TESSERA_URL: running.origin, TESSERA_API_KEY: running.privateKey! };
      const lowered = await runCli(['webhooks', 'update', endpointId, '--signature-case', 'lower'], merchantEnv);
      assert.equal(lowered.code, 0, lowered.stderr);
      assert.equal((JSON.parse(lowered.stdout) as { signatureCase: string }).signatureCase, 'lower');
      const endpoints = await runCli(['webhooks', 'list'], merchantEnv);
      assert.equal(endpoints.code, 0, endpoints.stderr);
      const listedEndpoint = (
        JSON.parse(endpoints.stdout) as { data: Array<{ id: string; signatureCase: string }> }
      ).data.find((row) => row.id === endpointId);
      assert.equal(listedEndpoint?.signatureCase, 'lower');
      const badCase = await runCli(['webhooks', 'update', endpointId, '--signature-case', 'mixed'], merchantEnv);
      assert.equal(badCase.code, 1);
      assert.match(badCase.stderr, /--signature-case takes upper or lower/);
      const noKey = await runCli(['webhooks', 'list'], { TESSERA_URL: running.origin });
      assert.equal(noKey.code, 1);
      assert.match(noKey.stderr, /TESSERA_API_KEY/);

      const refused = await runCli(['merchants', 'list'], {
        ...cliEnv,
        TESSERA_ADMIN_KEY: 'not-the-operator-key-at-all-000',
      });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /authentication_error/);
    } finally {
      await stopService(running);
    }

    // A second start on the same data folder prints the same sandbox key, which still works.
    const again = await startService(env);
    try {
      assert.equal(again.privateKey, running.privateKey);
      assert.doesNotMatch(again.output(), /Operator key/);
      const listed = await fetch(`${again.baseUrl}/customers`, {
        headers: { authorization: `Bearer ${again.privateKey}` },
      });
      assert.equal(((await listed.json()) as { data: { data: unknown[] } }).data.data.length, 1);
    } finally {
      await stopService(again);
    }
    assert.ok(readFileSync(path.join(dataDir, 'admin.key'), 'utf8').trim().length >= 24);
  });

  test("start on a pipe logs JSON lines, prints no deprecation warning, and each request's log lines carry its X-TraceId as traceId", async () => {
    const running = await startService({ ...env, TESSERA_LOG_LEVEL: 'info' });
    try {
      const response = await fetch(`${running.baseUrl}/customers`, {
        headers: { authorization: `Bearer ${running.privateKey}` },
      });
      assert.equal(response.status, 200);
      const traceId = response.headers.get('x-traceid');
      assert.ok(traceId);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const lines = running
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.ok(
        lines.some((line) => line.traceId === traceId),
        running.output(),
      );
      assert.doesNotMatch(running.output(), /DeprecationWarning|FSTDEP/);
    } finally {
      await stopService(running);
    }
  });

  test('migrate applies the migrations once and reports nothing to apply the second time', async () => {
    const migrateDir = mkdtempSync(path.join(tmpdir(), 'tessera-migrate-'));
    const migrateDb = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
    const migrateEnv = { TESSERA_DATA_DIR: migrateDir, ...(migrateDb ? { DATABASE_URL: migrateDb.url } : {}) };
    try {
      const first = await runCli(['migrate'], migrateEnv);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /Applied 0001_core\.sql/);
      const second = await runCli(['migrate'], migrateEnv);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, /Nothing to apply/);
    } finally {
      rmSync(migrateDir, { recursive: true, force: true });
      await migrateDb?.drop();
    }
  });

  test('an unknown setting or invalid value stops start-up with a message naming it', async () => {
    const unknown = await runCli(['start'], { TESSERA_PORTT: '1', TESSERA_DATA_DIR: 'memory://' });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Unknown setting TESSERA_PORTT/);
    const badPort = await runCli(['start'], { PORT: 'eighty', TESSERA_DATA_DIR: 'memory://' });
    assert.equal(badPort.code, 1);
    assert.match(badPort.stderr, /PORT must be a whole number/);
    const production = await runCli(['start'], { NODE_ENV: 'production', TESSERA_DATA_DIR: 'memory://' });
    assert.equal(production.code, 1);
    assert.match(production.stderr, /TESSERA_MASTER_KEY is required/);
    const badSmtp = await runCli(['start'], {
      TESSERA_SMTP_URL: 'http://u:hunter22@mail',
      TESSERA_DATA_DIR: 'memory://',
    });
    assert.equal(badSmtp.code, 1);
    assert.match(badSmtp.stderr, /TESSERA_SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/);
    assert.doesNotMatch(badSmtp.stderr, /hunter22/);
  });

  test('every DESIGN §8 setting has a matching command-line flag, which wins over the environment', () => {
    const masterKey = 'ab'.repeat(32);
    const config = loadConfig({ PORT: '1', NODE_ENV: 'development' }, [
      '--port',
      '8081',
      '--host=0.0.0.0',
      '--database-url',
      'postgres://db.example/tessera',
      '--data-dir',
      'memory://',
      '--master-key',
      masterKey,
      '--node-env',
      'production',
    ]);
    assert.equal(config.port, 8081);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.databaseUrl, 'postgres://db.example/tessera');
    assert.equal(config.dataDir, 'memory://');
    assert.equal(config.masterKey?.toString('hex'), masterKey);
    assert.equal(config.nodeEnv, 'production');
    assert.throws(() => loadConfig({}, ['--node-env', 'staging']), /NODE_ENV must be one of/);
  });

  test('with TESSERA_WEBHOOK_DISPATCHER=off start sends no webhook; they wait for a process with it on', async () => {
    const switchDir = mkdtempSync(path.join(tmpdir(), 'tessera-dispatcher-'));
    const switchDb = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
    const switchEnv = {
      TESSERA_DATA_DIR: switchDir,
      ...(switchDb ? { DATABASE_URL: switchDb.url } : {}),
      // Polling often, so that a dispatcher that should not run would have sent by the check.
      TESSERA_WEBHOOK_POLL_INTERVAL_MS: '20',
    };
    const receiver = await startReceiver();
    try {
      const refused = await runCli(['start'], { TESSERA_WEBHOOK_DISPATCHER: 'no', TESSERA_DATA_DIR: 'memory://' });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /TESSERA_WEBHOOK_DISPATCHER must be one of on, off/);

      const off = await startService({ ...switchEnv, TESSERA_WEBHOOK_DISPATCHER: 'off' });
      let eventId: string;
      try {
        assert.match(off.output(), /TESSERA_WEBHOOK_DISPATCHER=off/);
        const call = apiCaller(off);
        const payment = await payWithEndpoint(call, { url: receiver.url() });
        eventId = (await call(`/events?objectId=${payment.id}`)).data[0].id;
        await new Promise((resolve) => setTimeout(resolve, 500));
        assert.equal(receiver.requests.length, 0, 'nothing is sent while the dispatcher is off');
        const deliveries = (await call(`/events/${eventId}/deliveries`)).data as Array<{ status: string }>;
        assert.deepEqual(
          deliveries.map((delivery) => delivery.status),
          ['pending', 'pending'],
        );
      } finally {
        // Killed, not stopped: what was committed survives a crash.
        await killService(off);
      }

      // The default (on): the next start on the same database sends what waited.
      const on = await startService(switchEnv);
      try {
        const received = await receiver.waitFor(2, 10_000);
        assert.deepEqual(new Set(received.map((request) => JSON.parse(request.body).id)), new Set([eventId]));
      } finally {
        await stopService(on);
      }
    } finally {
      await receiver.close();
      rmSync(switchDir, { recursive: true, force: true });
      await switchDb?.drop();
    }
  });

  test(
    'a service killed while its webhook is in flight: the next start delivers it once the lease has run out',
    { timeout: 180_000 },
    async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'tessera-killed-'));
      const database = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
      const env = {
        TESSERA_DATA_DIR: dataDir,
        ...(database ? { DATABASE_URL: database.url } : {}),
        // The lease is the timeout plus a minute (engine/claimer.ts, leaseMsFor).
        TESSERA_WEBHOOK_TIMEOUT_MS: '1000',
        TESSERA_WEBHOOK_POLL_INTERVAL_MS: '200',
      };
      // The first attempt never gets an answer: the service dies while it waits.
      const receiver = await startReceiver(() => ({ status: 200, body: 'success', delayMs: 600_000 }));
      try {
        const first = await startService(env);
        let eventId: string;
        try {
          const call = apiCaller(first);
          await payWithEndpoint(call, { url: receiver.url(), legacyNotifications: false });
          const [inFlight] = await receiver.waitFor(1, 10_000);
          eventId = JSON.parse(inFlight!.body).id;
        } finally {
          await killService(first);
        }

        receiver.respond(() => ({ status: 200, body: 'success' }));
        const second = await startService(env);
        try {
          const started = Date.now();
          const received = await receiver.waitFor(2, 120_000);
          assert.equal(JSON.parse(received[1]!.body).id, eventId);
          // Not before the lease of the dead process ran out (about a minute).
          assert.ok(Date.now() - started > 30_000, 'the second attempt waited for the lease');
          // Delivered once: nothing more comes.
          await new Promise((resolve) => setTimeout(resolve, 1000));
          assert.equal(receiver.requests.length, 2);
        } finally {
          await stopService(second);
        }
      } finally {
        await receiver.close();
        rmSync(dataDir, { recursive: true, force: true });
        await database?.drop();
      }
    },
  );
});
