import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createTestDatabase, databaseKind } from './helpers/harness.js';
import { runCli, startAnyService, stopService } from './helpers/cli-process.js';

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
    const running = await startAnyService(env);
    try {
      assert.match(running.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/api\/services\/v1$/);
      assert.ok(running.privateKey, 'a sandbox private key is printed');
      assert.match(running.output(), /curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/api\/services\/v1\/customers\/create/);
      assert.match(running.output(), /Operator key/);
      // A first start says what it does before the banner (issue 21: no long silence).
      assert.match(running.output(), /^Starting: opening the (PGlite|PostgreSQL) database .*…$/m);
      assert.match(
        running.output(),
        /^Starting: applying \d+ database migration\(s\) \(\d{4}_\w+\.sql is the latest\) …$/m,
      );
      // README.md#running-it: without an SMTP server the banner says where e-mails are written instead.
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

      const listed = await runCli(['merchants', 'list', '--json'], cliEnv);
      assert.equal(listed.code, 0, listed.stderr);
      const ids = (JSON.parse(listed.stdout) as { data: Array<{ id: string }> }).data.map((row) => row.id);
      assert.ok(ids.includes(merchant.id));
      // Without --json: a table for people, one merchant a row, its capabilities as on/off.
      const table = await runCli(['merchants', 'list'], cliEnv);
      assert.equal(table.code, 0, table.stderr);
      const [header, ...rows] = table.stdout.trimEnd().split('\n');
      assert.match(header!, /^ID +NAME +TOKENIZATION +MIT +CREATED$/);
      assert.equal(rows.length, ids.length);
      const acme = rows.find((row) => row.startsWith(merchant.id));
      assert.match(
        acme ?? '',
        new RegExp(`^${merchant.id} +Acme +on +on +\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z$`),
        table.stdout,
      );

      // The webhooks commands use a merchant's key (docs/webhooks.md#what-is-sent signatureCase, settable from the CLI).
      const endpoint = await fetch(`${running.baseUrl}/webhook_endpoints/create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${running.privateKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/hooks', legacyNotifications: true }),
      });
      const endpointId = ((await endpoint.json()) as { data: { id: string } }).data.id;
      const merchantEnv = { TESSERA_URL: running.origin, TESSERA_API_KEY: running.privateKey! };
      const lowered = await runCli(['webhooks', 'update', endpointId, '--signature-case', 'lower'], merchantEnv);
      assert.equal(lowered.code, 0, lowered.stderr);
      assert.equal((JSON.parse(lowered.stdout) as { signatureCase: string }).signatureCase, 'lower');
      const endpoints = await runCli(['webhooks', 'list', '--json'], merchantEnv);
      assert.equal(endpoints.code, 0, endpoints.stderr);
      const listedEndpoint = (
        JSON.parse(endpoints.stdout) as { data: Array<{ id: string; signatureCase: string }> }
      ).data.find((row) => row.id === endpointId);
      assert.equal(listedEndpoint?.signatureCase, 'lower');
      // Event codes are taken as the API takes them: either name, any letter case (docs/webhooks.md#endpoints-and-tokens).
      const anyCase = await runCli(
        ['webhooks', 'update', endpointId, '--events', 'Payment.Succeeded,ENDPOINT_INVOICE.INVOICE_SENT'],
        merchantEnv,
      );
      assert.equal(anyCase.code, 0, anyCase.stderr);
      assert.deepEqual((JSON.parse(anyCase.stdout) as { enabledEvents: string[] }).enabledEvents, [
        'payment.succeeded',
        'Invoice.sent',
      ]);
      // Event codes are checked before anything is sent, with the closest code (docs/webhooks.md).
      const typo = await runCli(['webhooks', 'update', endpointId, '--events', 'payment.faild'], merchantEnv);
      assert.equal(typo.code, 1);
      assert.match(typo.stderr, /--events: 'payment\.faild' is not an event code; did you mean `payment\.failed`\?/);
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

      // The banner's sign-in link works once; dashboard-link prints a fresh one, each time another,
      // and the page of a used link says so.
      const banner = /Dashboard: +(http\S+)/.exec(running.output())![1]!;
      assert.match(running.output(), /tessera dashboard-link/);
      const links = [];
      for (let index = 0; index < 2; index++) {
        const printed = await runCli(['dashboard-link'], cliEnv);
        assert.equal(printed.code, 0, printed.stderr);
        const url = /^(http\S+\/dashboard\/link\?token=\S+)$/m.exec(printed.stdout)?.[1];
        assert.ok(url, printed.stdout);
        links.push(url);
        const page = await fetch(url.replace(/^http:\/\/[^/]+/, running.origin));
        assert.equal(page.status, 200);
        assert.match(await page.text(), /Sign in as owner@sandbox\.localhost/);
      }
      assert.equal(new Set([banner, ...links]).size, 3, 'a fresh link each time');
      const used = await fetch(`${running.origin}/dashboard/link?token=used-or-made-up`);
      assert.equal(used.status, 410);
      assert.match(await used.text(), /npx tessera dashboard-link/);
    } finally {
      await stopService(running);
    }

    // A second start on the same data folder prints the same sandbox key, which still works.
    const again = await startAnyService(env);
    try {
      assert.equal(again.privateKey, running.privateKey);
      assert.doesNotMatch(again.output(), /Operator key/);
      assert.doesNotMatch(again.output(), /applying \d+ database migration/, 'nothing left to apply');
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
    const running = await startAnyService({ ...env, TESSERA_LOG_LEVEL: 'info' });
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
    const badCheckpoint = await runCli(['start'], {
      TESSERA_PGLITE_CHECKPOINT_WAL_MB: '0',
      TESSERA_DATA_DIR: 'memory://',
    });
    assert.equal(badCheckpoint.code, 1);
    assert.match(badCheckpoint.stderr, /TESSERA_PGLITE_CHECKPOINT_WAL_MB must be a whole number from 1 to 4096/);
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

  test('every README.md#running-it setting has a matching command-line flag, which wins over the environment', () => {
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
});
