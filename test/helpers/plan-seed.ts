import { openDb, type Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createTestDatabase, databaseKind } from './harness.js';
import { migratedPgliteTemplate } from './templates.js';

/** Rows in each large table of the plan test: over 250,000 in all (issue 13: at least 100,000). */
export const seedRows = 20_000;

/**
 * Fills a migrated database for test/query-plans.test.ts with one INSERT … SELECT generate_series
 * per table, and never ANALYZEs it. Nine rows in ten belong to `mer_big`, six in seven of those
 * are in test mode, so the big merchant's list indexes hold most of each table and a filter that
 * is not in an index's prefix must walk them. Row i of a table is created i seconds after
 * 2026-01-01; `cus_7` has about five payments, `pay_7`'s events are a handful, `evt_7` has one
 * delivery: the rare values a flat plan reaches without reading the rest.
 */
export async function seedPlanDatabase(db: Db, rows = seedRows): Promise<void> {
  const customers = Math.floor(rows / 5);
  const merchant = `CASE WHEN i % 10 = 0 THEN 'mer_small' ELSE 'mer_big' END`;
  const mode = `CASE WHEN i % 7 = 0 THEN 'live' ELSE 'test' END`;
  const created = `timestamptz '2026-01-01T00:00:00Z' + i * interval '1 second'`;
  const series = (count: number) => `FROM generate_series(1, ${count}) AS i`;
  const statements = [
    `INSERT INTO merchants (id, name, created_at, updated_at) VALUES
       ('mer_big', 'Big', now(), now()), ('mer_small', 'Small', now(), now())`,
    `INSERT INTO customers (id, merchant_id, mode, merchant_user_id, email, created_at, updated_at)
     SELECT 'cus_' || i, ${merchant}, ${mode}, 'user_' || i, 'c' || i || '@example.com', ${created}, ${created}
     ${series(customers)}`,
    `INSERT INTO payment_methods (id, merchant_id, mode, type, customer_id, billing_details, card_brand, card_country,
       card_exp_month, card_exp_year, card_last4, card_fingerprint, card_number_encrypted, created_at, updated_at)
     SELECT 'pm_' || i, ${merchant}, ${mode}, 'card', 'cus_' || i, jsonb_build_object('email', 'b' || i || '@example.com'),
       'visa', 'US', '12', '2030', '4242', 'fp', 'key:iv:tag:ct', ${created}, ${created}
     ${series(customers)}`,
    `INSERT INTO payments (id, merchant_id, mode, customer_id, payment_method_id, amount, currency, status, order_no,
       confirmation_method, pre_auth, setup_future_usage, details, created_at, updated_at)
     SELECT 'pay_' || i, ${merchant}, ${mode}, 'cus_' || (i % ${customers} + 1), 'pm_' || (i % ${customers} + 1),
       i % 1000, 'USD', (ARRAY['succeeded', 'failed', 'succeeded', 'processing', 'succeeded'])[i % 5 + 1],
       'order_' || i, 'automatic', 'false', 'none', '{}', ${created}, ${created}
     ${series(rows)}`,
    `INSERT INTO events (id, merchant_id, mode, type, object_id, body, created_at)
     SELECT 'evt_' || i, ${merchant}, ${mode}, 'payment.' || (ARRAY['succeeded', 'failed', 'created'])[i % 3 + 1],
       'pay_' || (i / 4 + 1), '{}', ${created}
     ${series(rows)}`,
    `INSERT INTO webhook_endpoints (id, merchant_id, mode, kind, url, enabled_events, status, token_encrypted,
       created_at, updated_at)
     SELECT 'we_' || i, ${merchant}, ${mode}, 'static', 'https://example.com/' || i, '["*"]', 'enabled', 't',
       ${created}, ${created}
     ${series(rows / 10)}`,
    `INSERT INTO webhook_deliveries (id, event_id, merchant_id, mode, endpoint_id, url, kind, body, status, attempts,
       created_at, updated_at)
     SELECT 'whd_' || i, 'evt_' || i, ${merchant}, ${mode}, 'we_' || (i % ${rows / 10} + 1), 'https://example.com/',
       'endpoint', '{}', CASE WHEN i % 100 = 0 THEN 'failed' ELSE 'succeeded' END, 1, ${created}, ${created}
     ${series(rows)}`,
    `INSERT INTO webhook_attempts (id, delivery_id, attempt_number, attempted_at, duration_ms, http_status, succeeded,
       created_at)
     SELECT 'wha_' || i, 'whd_' || i, 1, ${created}, 5, 200, true, ${created}
     ${series(rows)}`,
    `INSERT INTO webhook_checks (id, merchant_id, mode, endpoint_id, url, passed, cases, created_at)
     SELECT 'whc_' || i, ${merchant}, ${mode}, 'we_' || (i % ${rows / 10} + 1), 'https://example.com/', true, '[]',
       ${created}
     ${series(rows)}`,
    `INSERT INTO refunds (id, merchant_id, mode, payment_id, amount, currency, status, created_at, updated_at)
     SELECT 're_' || i, ${merchant}, ${mode}, 'pay_' || i, 1, 'USD',
       CASE WHEN i % 100 = 0 THEN 'failed' ELSE 'succeeded' END, ${created}, ${created}
     ${series(rows)}`,
    `INSERT INTO invoices (id, merchant_id, mode, customer_id, currency, line_items, amount_due, amount_remaining,
       collection_method, status, created_at, updated_at)
     SELECT 'in_' || i, ${merchant}, ${mode}, 'cus_' || (i % ${customers} + 1), 'USD', '[]', 100, 100,
       'send_invoice', CASE WHEN i % 100 = 0 THEN 'void' ELSE 'paid' END, ${created}, ${created}
     ${series(rows)}`,
    `INSERT INTO checkout_sessions (id, merchant_id, mode, status, amount_total, currency, details, expires_at,
       created_at, updated_at)
     SELECT 'cs_' || i, ${merchant}, ${mode}, CASE WHEN i % 100 = 0 THEN 'open' ELSE 'complete' END, 100, 'USD', '{}',
       ${created}, ${created}, ${created}
     ${series(rows)}`,
    `INSERT INTO api_request_logs (id, merchant_id, mode, method, route, status_code, latency_ms, trace_id, key_kind,
       created_at)
     SELECT 'req_' || i, ${merchant}, ${mode}, 'GET', '/api/services/v1/payments',
       CASE WHEN i % 100 = 0 THEN 500 ELSE 200 END, 3, 't', 'private', ${created}
     ${series(rows)}`,
    `INSERT INTO audit_log (merchant_id, mode, action, actor, created_at)
     SELECT ${merchant}, ${mode}, 'payment.created', 'key', ${created}
     ${series(rows)}`,
    `INSERT INTO team_members (id, merchant_id, email, name, role, created_at, updated_at)
     SELECT 'mem_' || i, ${merchant}, 'm' || i || '@example.com', 'M', 'developer', ${created}, ${created}
     ${series(rows / 10)}`,
  ];
  await db.transaction(async (tx) => {
    // The rows refer to each other correctly by construction: skipping the foreign key triggers
    // makes seeding several times faster on PGlite.
    await tx.query('SET LOCAL session_replication_role = replica');
    for (const sql of statements) await tx.query(sql);
    // Neither PostgreSQL's autovacuum nor PGlite's (src/db/pglite-vacuum.ts) may vacuum or analyze
    // them while their plans are checked: plans without statistics are what the tests are about.
    for (const table of new Set(statements.map((sql) => /INSERT INTO (\w+)/.exec(sql)![1]!))) {
      await tx.query(`ALTER TABLE ${table} SET (autovacuum_enabled = off)`);
    }
  });
}

/**
 * A database for a plan test: a copy of the migrated template (./templates.ts; no table has
 * statistics yet), seeded by seedPlanDatabase. `close()` closes it and drops it (PostgreSQL).
 */
export async function openPlanDatabase(): Promise<{ db: Db; close(): Promise<void> }> {
  const database = databaseKind === 'postgres' ? await createTestDatabase({ migrated: true }) : undefined;
  const pgliteTemplate = database ? undefined : await migratedPgliteTemplate();
  const db = await openDb({ databaseUrl: database?.url, dataDir: 'memory://', pgliteTemplate });
  await migrate(db);
  await seedPlanDatabase(db);
  return {
    db,
    async close() {
      await db.close();
      await database?.drop();
    },
  };
}
