import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ownRowCondition, selectOwnRowById } from '../src/db/by-id.js';
import type { Db } from '../src/db/db.js';
import { reserveRefundSql } from '../src/payments/refund-queries.js';
import { databaseKind } from './helpers/harness.js';
import { captureStatements, sqlLiteral } from './helpers/plan-capture.js';
import { dueQueries, listQueries } from './helpers/plan-cases.js';
import { openPlanDatabase } from './helpers/plan-seed.js';

/*
 * One database for the file: migrated, seeded (test/helpers/plan-seed.ts) and never analyzed.
 */
let db: Db;
let plans: Awaited<ReturnType<typeof openPlanDatabase>>;
before(async () => {
  plans = await openPlanDatabase();
  db = plans.db;
});
after(async () => {
  await plans.close();
});

/*
 * A merchant's object is looked up by its id, and the plan must use the primary key whatever the
 * statistics say. Plans are cached per statement and made generic after a few runs; without
 * statistics (PGlite never gathers them; PostgreSQL not before autovacuum's first ANALYZE) a
 * generic plan for `id = $1 AND merchant_id = $2 AND mode = $3` chose the (merchant_id, mode,
 * created_at, id) list index and walked all the merchant's rows: payments got slower as a merchant
 * grew. The plans are checked here as PostgreSQL would cache them.
 */
describe(`lookups by id use the primary key in a generic plan without statistics (${databaseKind})`, () => {
  async function genericPlan(sql: string, params: unknown[]): Promise<string> {
    return db.transaction(async (tx) => {
      await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await tx.query(`PREPARE plan_check AS ${sql}`);
      try {
        const rows = await tx.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN EXECUTE plan_check(${params.map((param) => `'${String(param)}'`).join(', ')})`,
        );
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      } finally {
        await tx.query('DEALLOCATE plan_check');
      }
    });
  }

  type Lookup = { table: string; listIndex: string; sql: string; params: unknown[] };
  /** SELECT … by id, merchant and mode, as selectOwnRowById writes it. */
  const selectById = (table: string, listIndex: string, condition?: string): Lookup => ({
    table,
    listIndex,
    sql: selectOwnRowById(table, 'id', condition),
    params: ['x_1', 'mer_1', 'test'],
  });
  const lookups: Lookup[] = [
    selectById('customers', 'customers_list', 'deleted_at IS NULL'),
    selectById('payments', 'payments_list'),
    selectById('events', 'events_list'),
    selectById('webhook_deliveries', 'webhook_deliveries_list'),
    selectById('refunds', 'refunds_list'),
    selectById('invoices', 'invoices_list'),
    {
      table: 'invoices',
      listIndex: 'invoices_list',
      sql: `DELETE FROM invoices WHERE ${ownRowCondition('invoices', '$1', '$2', '$3')} AND status = 'draft' RETURNING id`,
      params: ['x_1', 'mer_1', 'test'],
    },
    {
      table: 'customers',
      listIndex: 'customers_list',
      sql: `UPDATE customers SET email = $4 WHERE ${ownRowCondition('customers', '$1', '$2', '$3')} RETURNING id`,
      params: ['x_1', 'mer_1', 'test', 'a@example.com'],
    },
    {
      // The refund claim: the payment is locked and changed through its primary key alone.
      table: 'payments',
      listIndex: 'payments_list',
      sql: reserveRefundSql,
      params: ['x_1', 'mer_1', 'test', '100', '2026-01-01T00:00:00.000Z', '{succeeded}'],
    },
    {
      table: 'webhook_endpoints',
      listIndex: 'webhook_endpoints_merchant',
      sql: `UPDATE webhook_endpoints SET description = $4 WHERE ${ownRowCondition('webhook_endpoints', '$3', '$1', '$2')} RETURNING id`,
      params: ['mer_1', 'test', 'x_1', 'd'],
    },
  ];
  for (const { table, listIndex, sql, params } of lookups) {
    test(`${sql.split(' ')[0]} ${table}: found through ${table}_pkey, not ${listIndex}`, async () => {
      const plan = await genericPlan(sql, params);
      assert.match(plan, new RegExp(`${table}_pkey`), plan);
      assert.doesNotMatch(plan, new RegExp(listIndex), plan);
    });
  }
});

/*
 * Flat cost (issue 13): every list and filter query of the service, as its query function sends
 * it (captured, not copied), is explained and run on a database seeded with more than 100,000
 * rows and never analyzed, in the generic plan PostgreSQL caches and in a custom plan. Each page
 * must be read through its intended index, without a sequential scan and without filtering out
 * more rows than a page holds; a cursor is found through the primary key.
 */
describe(`every list and filter query reads only its page without statistics (${databaseKind})`, () => {
  async function executedPlan(mode: string, sql: string, params: readonly unknown[], analyze = true): Promise<string> {
    return db.transaction(async (tx) => {
      await tx.query(`SET LOCAL plan_cache_mode = ${mode}`);
      await tx.query(`PREPARE plan_check AS ${sql}`);
      try {
        const options = analyze ? 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF' : 'COSTS OFF';
        const rows = await tx.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (${options}) EXECUTE plan_check(${params.map(sqlLiteral).join(', ')})`,
        );
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      } finally {
        await tx.query('DEALLOCATE plan_check');
      }
    });
  }

  const removed = (plan: string) =>
    [...plan.matchAll(/Rows Removed by (?:Filter|Index Recheck): (\d+)/g)].reduce((sum, [, n]) => sum + Number(n), 0);

  test('the seeded database is large and has no statistics', async () => {
    const [total] = await db.query<{ count: string | number }>(
      `SELECT sum((xpath('/row/c/text()', query_to_xml('SELECT count(*) AS c FROM ' || table_name, false, true, '')))[1]::text::bigint) AS count
         FROM information_schema.tables WHERE table_schema = 'public'`,
    );
    assert.ok(Number(total?.count) >= 100_000, String(total?.count));
    const [statistics] = await db.query<{ stats: string | number }>(
      "SELECT count(*) AS stats FROM pg_stats WHERE schemaname = 'public'",
    );
    assert.equal(Number(statistics?.stats), 0);
  });

  for (const query of listQueries) {
    test(`${query.name}: through ${query.index}`, async () => {
      const statements = await captureStatements(query.run);
      assert.ok(statements.length > 0);
      for (const { sql, params } of statements) {
        // A cursor is found by its primary key, or among the few rows a narrowing filter names.
        const table = /FROM \(SELECT \* FROM (\w+)/.exec(sql)?.[1] ?? '';
        const index = sql.includes('AS cursor_row') ? `(${table}_pkey|${query.index})` : query.index;
        for (const mode of ['force_generic_plan', 'force_custom_plan']) {
          const plan = await executedPlan(mode, sql, params);
          const context = `${mode}\n${sql}\n${plan}`;
          assert.match(
            plan,
            new RegExp(`Index (Only )?Scan using ${index} |Bitmap Index Scan on ${index}(\\s|$)`, 'm'),
            context,
          );
          assert.doesNotMatch(plan, /Seq Scan/, context);
          assert.ok(removed(plan) <= (query.maxRemoved ?? 20), `${removed(plan)} rows filtered out\n${context}`);
        }
      }
    });
  }

  for (const query of dueQueries) {
    test(`${query.name}: through ${query.index} (explained, not run)`, async () => {
      const statements = await captureStatements(query.run);
      assert.equal(statements.length, 1);
      for (const { sql, params } of statements) {
        for (const mode of ['force_generic_plan', 'force_custom_plan']) {
          const plan = await executedPlan(mode, sql, params, false);
          const context = `${mode}\n${sql}\n${plan}`;
          assert.match(
            plan,
            new RegExp(`Index (Only )?Scan using ${query.index} |Bitmap Index Scan on ${query.index}(\\s|$)`, 'm'),
            context,
          );
          assert.doesNotMatch(plan, /Seq Scan on (webhook_deliveries|events)\b|webhook_deliveries_status/, context);
        }
      }
    });
  }
});
