/**
 * TESSERA_LISTEN_DATABASE_URL (docs/operations.md "PgBouncer"): the event stream's LISTEN session
 * may connect elsewhere than the pool (PgBouncer in transaction mode delivers no notifications).
 * A LISTEN URL reaching the same database streams events and its self-check probe comes back; one
 * reaching another database gets nothing, and the self-check says so in one warning naming the
 * setting and in tessera_event_stream_probes_total; a bad value is refused at start.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../src/config-rules.js';
import { loadConfig } from '../src/config.js';
import { createTessera } from '../src/composition/app.js';
import { createLogger } from '../src/logger.js';
import { createSandboxProcessor } from '../src/processor/sandbox.js';
import { probeTimeoutMs } from '../src/events/feed.js';
import { openStream, waitUntil } from './helpers/event-stream.js';
import {
  createTestDatabase,
  databaseKind,
  payWithTestCard,
  startTestApp,
  type TestContext,
} from './helpers/harness.js';

const testDatabaseUrl = process.env.TESSERA_TEST_DATABASE_URL;
const onPostgres = databaseKind === 'postgres' ? false : 'PostgreSQL only: PGlite has no LISTEN URL';

async function probes(ctx: TestContext): Promise<{ received: number; missing: number }> {
  const { body } = await ctx.tessera.ops.metrics.render();
  const count = (outcome: string) =>
    Number(new RegExp(`^tessera_event_stream_probes_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(body)?.[1] ?? 0);
  return { received: count('received'), missing: count('missing') };
}

/** The test database's URL with another database name (PostgreSQL's own `postgres`), or a marker added. */
function sibling(databaseUrl: string, change: (url: URL) => void): string {
  const url = new URL(databaseUrl);
  change(url);
  return url.toString();
}

describe(`TESSERA_LISTEN_DATABASE_URL (${databaseKind})`, () => {
  const contexts: TestContext[] = [];
  const drops: Array<() => Promise<void>> = [];
  after(async () => {
    for (const ctx of contexts) await ctx.close();
    for (const drop of drops) await drop();
  });

  /** A Tessera on a fresh migrated database, its LISTEN URL made from that database's URL. */
  async function startWithListenUrl(change: (url: URL) => void): Promise<TestContext> {
    const database = await createTestDatabase({ migrated: true });
    drops.push(database.drop);
    const ctx = await startTestApp({
      env: { DATABASE_URL: database.url, TESSERA_LISTEN_DATABASE_URL: sibling(database.url, change) },
    });
    contexts.push(ctx);
    return ctx;
  }

  test(
    'a LISTEN URL to the same database: the stream gets events and the self-check passes',
    { skip: onPostgres },
    async () => {
      const ctx = await startWithListenUrl((url) => url.searchParams.set('application_name', 'tessera_listen'));
      const merchant = await ctx.merchant();
      const stream = await openStream(ctx, merchant.privateKey);
      try {
        const payment = await payWithTestCard(merchant);
        await waitUntil(() => stream.text().includes(payment.id), 10_000, 'the payment on the stream');
        assert.match(stream.text(), /endpoint_payment\.payment_succeeded/);
        await waitUntil(async () => (await probes(ctx)).received >= 1, probeTimeoutMs, 'the probe');
        assert.equal((await probes(ctx)).missing, 0);
        assert.ok(!ctx.logLines().some((line) => line.includes('TESSERA_LISTEN_DATABASE_URL')));
      } finally {
        stream.close();
      }
    },
  );

  test(
    'a LISTEN URL to another database: one warning naming the setting, and the metric',
    { skip: onPostgres },
    async () => {
      const ctx = await startWithListenUrl((url) => (url.pathname = new URL(testDatabaseUrl!).pathname));
      const merchant = await ctx.merchant();
      const stream = await openStream(ctx, merchant.privateKey);
      try {
        await waitUntil(async () => (await probes(ctx)).missing >= 1, probeTimeoutMs + 5000, 'the missing probe');
        const warnings = ctx.logLines().filter((line) => line.includes('TESSERA_LISTEN_DATABASE_URL'));
        assert.equal(warnings.length, 1, warnings.join(''));
        assert.equal(JSON.parse(warnings[0]!).level, 40);
        assert.equal((await probes(ctx)).received, 0);
      } finally {
        stream.close();
      }
    },
  );

  test('a bad value is refused at start, in one line naming the setting', async () => {
    const base = {
      NODE_ENV: 'test',
      TESSERA_MASTER_KEY: 'ab'.repeat(32),
      TESSERA_ADMIN_KEY: 'x'.repeat(32),
      TESSERA_DATA_DIR: 'memory://',
    };
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig({ ...base, ...env });
      } catch (err) {
        return err as Error;
      }
      assert.fail('accepted');
    };
    const refused: Array<Record<string, string>> = [
      { DATABASE_URL: 'postgres://127.0.0.1/tessera', TESSERA_LISTEN_DATABASE_URL: 'mysql://127.0.0.1/tessera' },
      { TESSERA_LISTEN_DATABASE_URL: 'postgres://127.0.0.1/tessera' },
    ];
    for (const env of refused) {
      const err = refusal(env);
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^TESSERA_LISTEN_DATABASE_URL [^\n]+$/);
    }
    if (!testDatabaseUrl) return;
    // A URL nothing answers on: refused when the database opens, before anything else starts.
    const config = loadConfig({
      ...base,
      DATABASE_URL: testDatabaseUrl,
      TESSERA_LISTEN_DATABASE_URL: sibling(testDatabaseUrl, (url) => (url.port = '1')),
    });
    await assert.rejects(
      createTessera({
        config,
        logger: createLogger('silent'),
        processor: createSandboxProcessor({ followUpDelayMs: 3000 }),
      }),
      (err: Error) => err instanceof ConfigError && /^TESSERA_LISTEN_DATABASE_URL [^\n]+$/.test(err.message),
    );
  });
});
