import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Db } from '../src/db/db.js';
import { claimDueDeliveriesOf, recordAttemptGroup } from '../src/webhooks/engine/queries.js';
import { databaseKind } from './helpers/harness.js';
import { captureStatements, sqlLiteral } from './helpers/plan-capture.js';
import { openPlanDatabase } from './helpers/plan-seed.js';

/*
 * Issue 19 (docs/performance.md#the-webhook-engine): the engine's lease writes, planned
 * as PostgreSQL plans them once the table has statistics and a backlog, as in a drain.
 *
 * - A refill claim joined its UPDATE to the CTE of picked rows, and with statistics the planner
 *   chose a hash join over a sequential scan of the whole of webhook_deliveries: every refill read
 *   every delivery ever kept. It must reach the picked rows by primary key.
 * - A lease is written as a heap-only (HOT) update only while no index of webhook_deliveries names
 *   locked_until or locked_by (as its key or in its predicate): migration 0150.
 * - A record makes the followers of its deliveries in a recover's chain due: it must probe the
 *   partial index of waiting deliveries, also while a large chain waits (migration 0165).
 */
let db: Db;
let plans: Awaited<ReturnType<typeof openPlanDatabase>>;
before(async () => {
  plans = await openPlanDatabase();
  db = plans.db;
  // A backlog: a quarter of the deliveries pending and due, over eight targets; then statistics.
  await db.query(
    `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = created_at,
       url = 'https://example.com/' || (right(id, 1)::int % 8)
     WHERE right(id, 1)::int % 4 = 0`,
  );
  // A large recover under way: a fifth of the deliveries wait in a chain (docs/decisions/0030).
  await db.query(
    `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = NULL,
       follows = 'whd_' || (substr(id, 5)::bigint - 2)::text
     WHERE right(id, 1)::int % 4 = 2`,
  );
  await db.query('ANALYZE webhook_deliveries');
});
after(async () => {
  await plans.close();
});

/** sqlLiteral, with arrays that hold NULLs and dates (the record's columns). */
function literal(value: unknown): string {
  if (!Array.isArray(value)) return sqlLiteral(value);
  const item = (element: unknown) =>
    element === null ? 'NULL' : `"${element instanceof Date ? element.toISOString() : String(element)}"`;
  return `'{${value.map(item).join(',')}}'`;
}

async function plan(mode: string, sql: string, params: readonly unknown[]): Promise<string> {
  return db.transaction(async (tx) => {
    await tx.query(`SET LOCAL plan_cache_mode = ${mode}`);
    await tx.query(`PREPARE lease_check AS ${sql}`);
    try {
      const rows = await tx.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (COSTS OFF) EXECUTE lease_check(${params.map(literal).join(', ')})`,
      );
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await tx.query('DEALLOCATE lease_check');
    }
  });
}

const now = new Date('2026-06-01T00:00:00Z');
const targets = Array.from({ length: 8 }, (_, index) => `https://example.com/${index}`);

describe(`webhook lease writes with statistics and a backlog (${databaseKind})`, () => {
  test('a refill claim leases the picked rows by primary key, not by reading the table', async () => {
    const statements = await captureStatements((recorder) =>
      claimDueDeliveriesOf(recorder, { now, leaseUntil: now, targets, rooms: targets.map(() => 8), claimedBy: 'p' }),
    );
    assert.equal(statements.length, 1);
    const { sql, params } = statements[0]!;
    for (const mode of ['force_generic_plan', 'force_custom_plan']) {
      const explained = await plan(mode, sql, params);
      const context = `${mode}\n${explained}`;
      assert.doesNotMatch(explained, /Seq Scan on webhook_deliveries\b/, context);
      assert.match(explained, /Index Scan using webhook_deliveries_pkey on webhook_deliveries/, context);
    }
  });

  test('a record reaches its deliveries by primary key', async () => {
    const statements = await captureStatements((recorder) =>
      recordAttemptGroup(
        recorder,
        Array.from({ length: 64 }, (_, index) => ({
          deliveryId: `whd_${index * 4 + 4}`,
          leaseUntil: now,
          attemptId: `wa_${index}`,
          attemptNumber: 1,
          attemptedAt: now,
          durationMs: 1,
          httpStatus: 200,
          responseExcerpt: 'success',
          error: null,
          succeeded: true,
          status: 'succeeded' as const,
          nextAttemptAt: null,
          url: targets[index % 8]!,
          now,
          endpointId: 'we_1',
          countsForHealth: true,
        })),
      ),
    );
    const { sql, params } = statements[0]!;
    for (const mode of ['force_generic_plan', 'force_custom_plan']) {
      const explained = await plan(mode, sql, params);
      const context = `${mode}\n${explained}`;
      assert.doesNotMatch(explained, /Seq Scan on webhook_deliveries\b/, context);
      // Their followers in a recover's chain (docs/decisions/0030): probes of the partial index of
      // waiting deliveries, which holds a recover's chain and nothing else.
      assert.match(explained, /(Index Scan using|Bitmap Index Scan on) webhook_deliveries_follows\b/, context);
    }
  });

  test('no index of webhook_deliveries names the lease columns, so that a lease is a HOT update', async () => {
    const indexes = await db.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'webhook_deliveries'`,
    );
    assert.ok(indexes.length > 5, 'the table has its indexes');
    const naming = indexes.filter((index) => /locked_(until|by)/.test(index.indexdef));
    assert.deepEqual(naming, []);
    const [options] = await db.query<{ reloptions: string[] | null }>(
      `SELECT reloptions FROM pg_class WHERE relname = 'webhook_deliveries'`,
    );
    // The seed (test/helpers/plan-seed.ts) adds autovacuum_enabled=off; the migration's is the fill factor.
    assert.ok(options?.reloptions?.includes('fillfactor=70'), `reloptions ${JSON.stringify(options?.reloptions)}`);
  });
});
