/**
 * Tests only: a PGlite database that a test's Tessera loaded from the migrated template is put back
 * to the template's state when that Tessera closes, and the next Tessera of the same test process
 * takes it instead of loading the template again (src/db/pglite-reset.ts). What must hold: the next
 * Tessera sees nothing of the one before — no rows, no session state — and a database whose schema
 * a test changed is never taken again.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { databaseKind, payWithTestCard, startTestApp } from './helpers/harness.js';

/** When the database's PostgreSQL started: the same for a database taken again, new for a new one. */
async function startedAt(context: Awaited<ReturnType<typeof startTestApp>>): Promise<string> {
  const [row] = await context.tessera.db.query<{ started: string }>(
    'SELECT pg_postmaster_start_time()::text AS started',
  );
  return row!.started;
}

describe('a PGlite template database taken again by the next Tessera', { skip: databaseKind !== 'pglite' }, () => {
  test('starts with nothing of the Tessera before it, and pays as a new one does', async () => {
    const first = await startTestApp();
    const merchant = await first.merchant();
    const paid = await payWithTestCard(merchant);
    assert.equal(paid.status, 'succeeded');
    // Session state a Tessera could leave behind: a lock held, a setting.
    await first.tessera.db.query('SELECT pg_advisory_lock(4242)');
    await first.tessera.db.query("SELECT set_config('application_name', 'left behind', false)");
    const firstStarted = await startedAt(first);
    await first.close();

    const second = await startTestApp();
    try {
      assert.equal(await startedAt(second), firstStarted, 'the database was taken again, not loaded anew');
      const counts = await second.tessera.db.query<{ merchants: number; payments: number; events: number }>(
        `SELECT (SELECT count(*)::int FROM merchants) AS merchants, (SELECT count(*)::int FROM payments) AS payments,
                (SELECT count(*)::int FROM events) AS events`,
      );
      assert.deepEqual(counts[0], { merchants: 0, payments: 0, events: 0 });
      const [lock] = await second.tessera.db.query<{ taken: boolean }>('SELECT pg_try_advisory_lock(4242) AS taken');
      assert.equal(lock!.taken, true, 'the lock of the Tessera before was released');
      const [setting] = await second.tessera.db.query<{ name: string }>(
        "SELECT current_setting('application_name') AS name",
      );
      assert.notEqual(setting!.name, 'left behind');
      // Its own merchant, customer and card, with ids and keys of its own, as on a new database.
      const again = await second.merchant();
      assert.equal((await payWithTestCard(again)).status, 'succeeded');
    } finally {
      await second.close();
    }
  });

  test('is not taken again when a test changed its schema', async () => {
    const first = await startTestApp();
    await first.tessera.db.execute('CREATE TABLE left_behind (id int)');
    const firstStarted = await startedAt(first);
    await first.close();

    const second = await startTestApp();
    try {
      assert.notEqual(await startedAt(second), firstStarted, 'a new database was loaded');
      const [table] = await second.tessera.db.query<{ found: string | null }>(
        "SELECT to_regclass('left_behind')::text AS found",
      );
      assert.equal(table!.found, null);
    } finally {
      await second.close();
    }
  });

  test('refuses a statement that comes once its database is closing, so nothing reaches the next Tessera', async () => {
    const first = await startTestApp();
    const firstStarted = await startedAt(first);
    // The database's close starts putting it back; a statement sent after that would run after the
    // reset, in the next Tessera's database.
    const closing = first.tessera.db.close();
    const late = assert.rejects(
      first.tessera.db.execute("INSERT INTO rate_limit_buckets (name, tokens, updated_at) VALUES ('late', 1, now())"),
      /The database is closed/,
    );
    await closing;
    await late;
    await first.close().catch(() => {});

    const second = await startTestApp();
    try {
      assert.equal(await startedAt(second), firstStarted, 'the database was taken again');
      const rows = await second.tessera.db.query('SELECT name FROM rate_limit_buckets');
      assert.deepEqual(rows, []);
    } finally {
      await second.close();
    }
  });
});
