/**
 * PGlite runs PostgreSQL as a single-user backend, which has no checkpointer: the embedded
 * default's WAL grew with every change for as long as the process ran (a crash then replayed all of
 * it), and each new 16 MB segment was filled with zeros while every request waited. The database
 * thread now takes a checkpoint once TESSERA_PGLITE_CHECKPOINT_WAL_MB of WAL were written since the
 * last, and starts PostgreSQL with wal_init_zero off (docs/decisions/0031).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { databaseKind, injectRaw, startTestApp, type TestContext } from './helpers/harness.js';

const megabyte = 1024 * 1024;

describe('PGlite checkpoints', { skip: databaseKind !== 'pglite' }, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_PGLITE_CHECKPOINT_WAL_MB: '4' } });
    await ctx.tessera.db.query('CREATE TABLE checkpoint_scratch (body text NOT NULL)');
  });
  after(async () => {
    await ctx?.tessera.db.query('DROP TABLE IF EXISTS checkpoint_scratch');
    await ctx?.close();
  });

  async function scraped(series: string): Promise<number> {
    const answer = await injectRaw(ctx, {
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${ctx.operatorKey}` },
    });
    assert.equal(answer.statusCode, 200);
    const line = answer.body.split('\n').find((entry) => entry.startsWith(`${series} `));
    assert.ok(line, `${series} is scraped`);
    return Number(line.slice(series.length + 1));
  }

  /** About `megabytes` of WAL: rows of 1 kB that compress badly. */
  async function writeWal(megabytes: number): Promise<void> {
    await ctx.tessera.db.query(
      `INSERT INTO checkpoint_scratch (body)
       SELECT repeat(md5(i::text), 32) FROM generate_series(1, $1::int) AS i`,
      [megabytes * 900],
    );
  }

  async function walSinceCheckpoint(): Promise<number> {
    return scraped('tessera_pglite_wal_since_checkpoint_bytes');
  }

  test('starts PostgreSQL without zero-filling new WAL segments', async () => {
    const [setting] = await ctx.tessera.db.query<{ wal_init_zero: string }>('SHOW wal_init_zero');
    assert.equal(setting?.wal_init_zero, 'off');
  });

  test('takes a checkpoint each time the WAL since the last reaches the setting, keeping pg_wal small', async () => {
    const taken = () => scraped('tessera_pglite_checkpoints_total{outcome="taken"}');
    const takenBefore = await taken();
    const rounds = 8;
    for (let round = 0; round < rounds; round += 1) {
      await writeWal(12);
      // The thread looks at most once a second, between two requests or when idle.
      const deadline = Date.now() + 5000;
      while ((await walSinceCheckpoint()) >= 4 * megabyte && Date.now() < deadline) await sleep(100);
      const since = await walSinceCheckpoint();
      assert.ok(
        since < 4 * megabyte,
        `round ${round}: ${(since / megabyte).toFixed(1)} MB of WAL since the last checkpoint`,
      );
    }
    assert.ok((await taken()) - takenBefore >= rounds, 'a checkpoint after each round at least');
    assert.equal(await scraped('tessera_pglite_checkpoints_total{outcome="failed"}'), 0);
    assert.ok((await scraped('tessera_pglite_checkpoint_seconds_total')) > 0);
    // 96 MB of WAL written, which pg_wal would hold whole without checkpoints (32 MB with them here).
    const [wal] = await ctx.tessera.db.query<{ bytes: string }>('SELECT sum(size)::text AS bytes FROM pg_ls_waldir()');
    const bytes = Number(wal?.bytes);
    assert.ok(bytes <= 64 * megabyte, `pg_wal holds ${(bytes / megabyte).toFixed(0)} MB`);
  });
});
