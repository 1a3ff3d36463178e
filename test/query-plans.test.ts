import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { selectOwnRowById } from '../src/db/by-id.js';
import { openDb, type Db } from '../src/db/db.js';
import { migrate } from '../src/db/migrate.js';
import { createTestDatabase, databaseKind } from './helpers/harness.js';

/*
 * A merchant's object is looked up by its id, and the plan must use the primary key whatever the
 * statistics say. Plans are cached per statement and made generic after a few runs; without
 * statistics (PGlite never gathers them; PostgreSQL not before autovacuum's first ANALYZE) a
 * generic plan for `id = $1 AND merchant_id = $2 AND mode = $3` chose the (merchant_id, mode,
 * created_at, id) list index and walked all the merchant's rows: payments got slower as a merchant
 * grew. The plans are checked here as PostgreSQL would cache them.
 */
describe(`lookups by id use the primary key in a generic plan without statistics (${databaseKind})`, () => {
  let db: Db;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    const database = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
    drop = database?.drop;
    db = await openDb({ databaseUrl: database?.url, dataDir: 'memory://' });
    await migrate(db);
  });
  after(async () => {
    await db.close();
    await drop?.();
  });

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

  for (const [table, condition] of [
    ['customers', 'deleted_at IS NULL'],
    ['payments', undefined],
    ['events', undefined],
  ] as const) {
    test(`${table}: found through ${table}_pkey, not ${table}_list`, async () => {
      const plan = await genericPlan(selectOwnRowById(table, 'id', condition), ['x_1', 'mer_1', 'test']);
      assert.match(plan, new RegExp(`${table}_pkey`), plan);
      assert.doesNotMatch(plan, new RegExp(`${table}_list`), plan);
    });
  }
});
