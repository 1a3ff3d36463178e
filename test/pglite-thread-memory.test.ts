/**
 * The PGlite database thread keeps nothing of the answers it passes on: PGlite's execProtocolRaw
 * parsed every answer for its own listeners and kept each parsed message in a list that only its
 * execProtocol empties, so the embedded default's heap grew with every statement it ever ran (about
 * as much as the rows it read) until the process ran out of memory. /metrics shows that thread's
 * heap (tessera_pglite_thread_heap_used_bytes), which the default process metrics do not see.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databaseKind, scrapedMetric, startTestApp, type TestContext } from './helpers/harness.js';

const series = 'tessera_pglite_thread_heap_used_bytes';

describe('the PGlite database thread over many statements', { skip: databaseKind !== 'pglite' }, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx?.close());

  const threadHeap = () => scrapedMetric(ctx, series);

  test('keeps its heap flat while it answers 80 MB of rows', async () => {
    // Warmed up first, so that what the thread loads once is not counted.
    for (let index = 0; index < 100; index += 1) {
      await ctx.tessera.db.query("SELECT repeat('x', 2000) AS text FROM generate_series(1, 20)");
    }
    const before = await threadHeap();
    for (let index = 0; index < 2000; index += 1) {
      // 40 kB of rows each: 80 MB in all, which a thread that kept its answers would still hold.
      const rows = await ctx.tessera.db.query<{ text: string }>(
        "SELECT repeat('x', 2000) AS text FROM generate_series(1, 20)",
      );
      assert.equal(rows.length, 20);
    }
    const grown = (await threadHeap()) - before;
    assert.ok(grown < 30_000_000, `the database thread's heap grew by ${(grown / 1e6).toFixed(1)} MB`);
  });
});
