/**
 * PGlite runs PostgreSQL as a single-user backend, which has neither checkpointer nor autovacuum:
 * the embedded default's WAL grew with every change for as long as the process ran (a crash then
 * replayed all of it), each new 16 MB segment was filled with zeros while every request waited, and
 * no table was ever vacuumed (dead rows kept, nothing frozen). The database thread now takes a
 * checkpoint once TESSERA_PGLITE_CHECKPOINT_WAL_MB of WAL were written since the last, vacuums the
 * tables PostgreSQL's autovacuum would, and starts PostgreSQL with wal_init_zero off
 * (docs/decisions/0031). In a data folder on disk, a file PostgreSQL looks for that does not exist
 * is answered without an exception (docs/decisions/0033).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { openDb } from '../src/db/db.js';
import { waitUntil } from './helpers/event-stream.js';
import { databaseKind, scrapedMetric, startTestApp, type TestContext } from './helpers/harness.js';

const megabyte = 1024 * 1024;

describe('PGlite upkeep', { skip: databaseKind !== 'pglite' }, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_PGLITE_CHECKPOINT_WAL_MB: '4' } });
    await ctx.tessera.db.query('CREATE TABLE checkpoint_scratch (body text NOT NULL)');
    await ctx.tessera.db.query('CREATE TABLE vacuum_scratch (id int PRIMARY KEY, hits int NOT NULL)');
    // As PostgreSQL's autovacuum, PGlite's leaves a table alone whose storage parameter says so.
    await ctx.tessera.db.query(
      'CREATE TABLE vacuum_off_scratch (id int PRIMARY KEY, hits int NOT NULL) WITH (autovacuum_enabled = off)',
    );
  });
  after(async () => {
    await ctx?.tessera.db.query('DROP TABLE IF EXISTS checkpoint_scratch, vacuum_scratch, vacuum_off_scratch');
    await ctx?.close();
  });

  const scraped = (series: string) => scrapedMetric(ctx, series);

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
    const rounds = 6;
    for (let round = 0; round < rounds; round += 1) {
      await writeWal(24);
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
    // 144 MB of WAL written, which pg_wal would hold whole without checkpoints. With them it holds
    // the segments since the last one and those PostgreSQL keeps for reuse: up to min_wal_size
    // (80 MB; more than 64 MB were seen with two test processes at once).
    const [wal] = await ctx.tessera.db.query<{ bytes: string; kept: string }>(
      `SELECT (SELECT sum(size) FROM pg_ls_waldir())::text AS bytes,
              (SELECT setting FROM pg_settings WHERE name = 'min_wal_size')::text AS kept`,
    );
    const bytes = Number(wal?.bytes);
    const kept = Number(wal?.kept) * megabyte;
    assert.ok(bytes <= kept + 32 * megabyte, `pg_wal holds ${(bytes / megabyte).toFixed(0)} MB`);
  });

  test('from half the interval on, writes the changed buffers ahead in slices, so the checkpoint finds few', async () => {
    const db = ctx.tessera.db;
    // A new table that no vacuum changes behind the test's back (the last test's 144 MB dropped).
    await db.query('DROP TABLE checkpoint_scratch');
    await db.query('CREATE TABLE checkpoint_scratch (body text NOT NULL) WITH (autovacuum_enabled = off)');
    await db.query('CHECKPOINT');
    const writtenBefore = await scraped('tessera_pglite_buffers_written_ahead_total');
    // Past half of the 4 MB interval, short of a checkpoint: about 2.7 MB of WAL, some 350 pages.
    await writeWal(3);
    const dirtyBuffers = async () => {
      const [row] = await db.query<{ dirty: number }>(
        'SELECT count(*)::int AS dirty FROM tessera_upkeep.pg_buffercache WHERE isdirty',
      );
      return row!.dirty;
    };
    const written = async () => (await scraped('tessera_pglite_buffers_written_ahead_total')) - writtenBefore;
    // The thread looks at the WAL once a second, then writes a slice every 50 ms between requests.
    const done = async () => (await written()) >= 200 && (await dirtyBuffers()) < 100;
    for (let deadline = Date.now() + 8000; !(await done()) && Date.now() < deadline;) await sleep(100);
    assert.ok((await written()) >= 200, `${await written()} buffers written ahead`);
    assert.ok((await walSinceCheckpoint()) < 4 * megabyte, 'no checkpoint yet');
    assert.ok((await dirtyBuffers()) < 100, `${await dirtyBuffers()} buffers still dirty`);
    assert.equal(await scraped('tessera_pglite_write_ahead_total{outcome="failed"}'), 0);
    assert.ok((await scraped('tessera_pglite_write_ahead_total{outcome="done"}')) > 0);
    await db.query('DROP TABLE checkpoint_scratch');
  });

  test('a CHECKPOINT statement starts a new interval, even when more WAL than before follows at once', async () => {
    const db = ctx.tessera.db;
    await db.query('CREATE TABLE checkpoint_scratch (body text NOT NULL) WITH (autovacuum_enabled = off)');
    const written = () => scraped('tessera_pglite_buffers_written_ahead_total');
    const listed = () => scraped('tessera_pglite_write_ahead_total{outcome="done"}');
    // Past half the interval (about 2.25 MB of WAL): listed, the next list set a quarter later.
    await db.query('CHECKPOINT');
    let stepsBefore = await listed();
    await writeWal(2.5);
    await waitUntil(async () => (await listed()) > stepsBefore, 10_000, 'the first list');
    // Its slices written (one every 50 ms), so that what follows is counted alone.
    let last = await written();
    for (;;) {
      await sleep(300);
      const now = await written();
      if (now === last) break;
      last = now;
    }
    // A CHECKPOINT, and at once more WAL (about 2.9 MB) than the last look saw, short of the list
    // the old interval had set: a checkpointer that tells a new interval by less WAL since misses it.
    stepsBefore = await listed();
    await db.query('CHECKPOINT');
    await writeWal(3.2);
    await waitUntil(async () => (await written()) - last >= 200, 10_000, 'the new interval to be written ahead');
    assert.ok((await listed()) > stepsBefore);
    await db.query('DROP TABLE checkpoint_scratch');
  });

  test('writes ahead again after a failed step: its schema dropped is made again', async () => {
    const db = ctx.tessera.db;
    const failed = () => scraped('tessera_pglite_write_ahead_total{outcome="failed"}');
    const written = () => scraped('tessera_pglite_buffers_written_ahead_total');
    // Counted before the drop: a slice the last test listed may still be written, and fail, after it
    // (CI once saw that failure before this count, and the list then made the schema again).
    const failedBefore = await failed();
    await db.query('CREATE TABLE checkpoint_scratch (body text NOT NULL) WITH (autovacuum_enabled = off)');
    await db.query('DROP SCHEMA tessera_upkeep CASCADE');
    // A new interval however soon the WAL below follows (told by the checkpoint's redo point).
    await db.query('CHECKPOINT');
    // Past half the interval the list fails (the schema is gone), unless a slice left over failed
    // first; either way the next list, a quarter later, makes the schema again.
    await writeWal(3);
    await waitUntil(async () => (await failed()) > failedBefore, 8000, 'a step without its schema to fail');
    const writtenBefore = await written();
    // More WAL, a look at a time, until the next list (or, past a checkpoint, the next interval's).
    for (let step = 0; (await written()) - writtenBefore < 100; step += 1) {
      assert.ok(step < 20, 'buffers written ahead again');
      await writeWal(0.5);
      await sleep(1100);
    }
    assert.equal(await failed(), failedBefore + 1);
    await db.query('DROP TABLE checkpoint_scratch');
  });

  test('vacuums a table once PostgreSQL autovacuum would, leaving no dead rows', async () => {
    const db = ctx.tessera.db;
    const vacuums = () => scraped('tessera_pglite_vacuums_total{outcome="done"}');
    const tables = ['vacuum_scratch', 'vacuum_off_scratch'];
    for (const table of tables) {
      await db.query(`INSERT INTO ${table} (id, hits) SELECT i, 0 FROM generate_series(1, 2000) AS i`);
    }
    const deadRows = async (table = 'vacuum_scratch') => {
      const [row] = await db.query<{ dead: string; vacuumed: Date | null }>(
        `SELECT n_dead_tup::text AS dead, last_vacuum AS vacuumed FROM pg_stat_user_tables WHERE relname = $1`,
        [table],
      );
      return row!;
    };
    // Wait until the insert's vacuum (rows inserted: 1,000 + 20 % of the table) is done.
    for (let deadline = Date.now() + 10_000; (await deadRows()).vacuumed === null && Date.now() < deadline;) {
      await sleep(200);
    }
    const first = await deadRows();
    assert.ok(first.vacuumed, 'the inserted rows were vacuumed');
    const before = await vacuums();
    // 4,000 dead rows: far past 50 + 20 % of 2,000.
    for (let round = 0; round < 2; round += 1) {
      for (const table of tables) await db.query(`UPDATE ${table} SET hits = hits + 1`);
    }
    let now = await deadRows();
    for (let deadline = Date.now() + 10_000; now.vacuumed!.getTime() === first.vacuumed!.getTime();) {
      assert.ok(Date.now() < deadline, `not vacuumed again (${now.dead} dead rows)`);
      await sleep(200);
      now = await deadRows();
    }
    assert.equal(Number(now.dead), 0);
    // A backend reports its tables' counts at most once a second (PostgreSQL's pgstat), so the other
    // table's may not be in yet: read until they are (CI once read 0 dead rows straight away).
    await waitUntil(
      async () => Number((await deadRows('vacuum_off_scratch')).dead) >= 2000,
      10_000,
      'the dead rows of the table with autovacuum_enabled off to be reported',
    );
    const off = await deadRows('vacuum_off_scratch');
    assert.equal(off.vacuumed, null, 'a table with autovacuum_enabled off is not vacuumed');
    assert.ok(Number(off.dead) >= 2000, `${off.dead} dead rows kept`);
    assert.ok((await vacuums()) > before);
    assert.equal(await scraped('tessera_pglite_vacuums_total{outcome="failed"}'), 0);
    assert.ok((await scraped('tessera_pglite_vacuum_seconds_total')) > 0);
  });
});

describe('PGlite in a data folder on disk', { skip: databaseKind !== 'pglite' }, () => {
  test('a file PostgreSQL looks for that does not exist is answered without an exception', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'tessera-pglite-disk-'));
    const db = await openDb({ dataDir: dir });
    try {
      await db.query('CREATE TABLE names_scratch (id int PRIMARY KEY, body text NOT NULL)');
      const before = (await db.pgliteStats!()).missingNames;
      // Each new page of the index asks its free space map for a free page: the map's file does
      // not exist, and PostgreSQL opens it again at every page (src/db/pglite-disk.ts).
      await db.query(`INSERT INTO names_scratch SELECT i, md5(i::text) FROM generate_series(1, 20000) AS i`);
      const after = (await db.pgliteStats!()).missingNames;
      assert.ok(after - before >= 20, `${after - before} names answered as missing without an exception`);
      const [row] = await db.query<{ count: string }>('SELECT count(*)::text AS count FROM names_scratch');
      assert.equal(row?.count, '20000');
    } finally {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
