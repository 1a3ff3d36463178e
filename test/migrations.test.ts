/**
 * Migrations run statement by statement: a semicolon inside a function body, a literal or a
 * comment does not end a statement (a `$$` body split at its first `;` would not run). No migration
 * blocks the writes of a large table while an index builds (docs/decisions/0011-shared-rate-limits.md), and a database migrated by
 * the files as they were before their indexes moved to 0155 ends with the same indexes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDb, type Db } from '../src/db/db.js';
import { migrate, splitStatements } from '../src/db/migrate.js';
import { loadConfig } from '../src/config.js';
import { createTestDatabase, databaseKind } from './helpers/harness.js';
import { migratedPgliteTemplate } from './helpers/templates.js';

const migration = `-- A function whose body holds semicolons; so does this comment.
CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL);

CREATE FUNCTION note_count(prefix text) RETURNS bigint AS $$
DECLARE
  total bigint;
BEGIN
  SELECT count(*) INTO total FROM notes WHERE body LIKE prefix || '%';
  RETURN total;
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION shout(word text) RETURNS text AS $body$ SELECT upper(word) || ';' $body$ LANGUAGE sql;

/* a block comment; with a semicolon */
INSERT INTO notes (body) VALUES ('a;b'), ('a''s; quoted'), (E'escaped \\'; quote'), ('other');
`;

describe(`migrations (${databaseKind})`, () => {
  let db: Db;
  let dir: string;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tessera-migrations-'));
    writeFileSync(path.join(dir, '0001_functions.sql'), migration);
    if (databaseKind === 'postgres') {
      const database = await createTestDatabase();
      drop = database.drop;
      db = await openDb({ databaseUrl: database.url, poolSize: 2 });
    } else {
      db = await openDb({ dataDir: 'memory://' });
    }
  });
  after(async () => {
    await db.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a migration with $$ function bodies and semicolons in literals and comments runs whole, once', async () => {
    assert.deepEqual(await migrate(db, dir), ['0001_functions.sql']);
    const [count] = await db.query<{ n: string }>("SELECT note_count('a')::text AS n");
    assert.equal(count?.n, '2');
    const [shouted] = await db.query<{ s: string }>("SELECT shout('hi') AS s");
    assert.equal(shouted?.s, 'HI;');
    const bodies = (await db.query<{ body: string }>('SELECT body FROM notes ORDER BY id')).map((row) => row.body);
    assert.deepEqual(bodies, ['a;b', "a's; quoted", "escaped '; quote", 'other']);
    assert.deepEqual(await migrate(db, dir), []);
  });
});

describe('the migrated PGlite template of the tests (TESSERA_TEST_PGLITE_TEMPLATE)', () => {
  test('production refuses it; PGlite in memory loaded from it has every migration and nothing else', async () => {
    assert.throws(
      () =>
        loadConfig({ NODE_ENV: 'production', TESSERA_MASTER_KEY: 'ab'.repeat(32), TESSERA_TEST_PGLITE_TEMPLATE: 'x' }),
      /TESSERA_TEST_PGLITE_TEMPLATE is for tests/,
    );
    const db = await openDb({ dataDir: 'memory://', pgliteTemplate: await migratedPgliteTemplate() });
    try {
      const files = readdirSync('src/migrations').filter((name) => name.endsWith('.sql'));
      const applied = await db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
      assert.deepEqual(
        applied.map((row) => row.version),
        files.sort(),
      );
      assert.deepEqual(await migrate(db), []);
      const [merchants] = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM merchants');
      assert.equal(merchants?.n, '0');
    } finally {
      await db.close();
    }
  });
});

/** The tables that grow with traffic: a plain CREATE INDEX on one blocks its writes while it builds. */
const largeTables = [
  'payments',
  'refunds',
  'events',
  'webhook_deliveries',
  'webhook_attempts',
  'idempotency_keys',
  'scheduled_jobs',
];

describe('migrations on large tables', () => {
  test('no migration builds an index on a large table without CONCURRENTLY, except on a table it creates', () => {
    const files = readdirSync('src/migrations').filter((name) => name.endsWith('.sql'));
    const tables = new Set<string>();
    const plain: string[] = [];
    for (const file of files.sort()) {
      const statements = splitStatements(readFileSync(path.join('src/migrations', file), 'utf8')).map((statement) =>
        statement
          .replace(/--[^\n]*/g, '')
          .replace(/\s+/g, ' ')
          .trim(),
      );
      const created = new Set(
        statements.flatMap((statement) => /^CREATE TABLE (?:IF NOT EXISTS )?(\w+)/i.exec(statement)?.[1] ?? []),
      );
      for (const table of created) tables.add(table);
      for (const statement of statements) {
        const index = /^CREATE (?:UNIQUE )?INDEX (?!CONCURRENTLY)(?:IF NOT EXISTS )?(\w+) ON (?:ONLY )?(\w+)/i.exec(
          statement,
        );
        if (index && largeTables.includes(index[2]!) && !created.has(index[2]!)) plain.push(`${file}: ${index[1]}`);
      }
    }
    // The names are tables of the schema (a renamed table would make this check pass for nothing).
    for (const table of largeTables) assert.ok(tables.has(table), `${table} is created by a migration`);
    assert.deepEqual(plain, [], 'use CREATE INDEX CONCURRENTLY IF NOT EXISTS in a -- tessera:no-transaction file');
  });
});

describe(`an install migrated before 0155 (${databaseKind})`, () => {
  test('0155 on a database that has its indexes already (built by the files as they were) adds and changes none', async () => {
    const database = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
    const db = await openDb(database ? { databaseUrl: database.url, poolSize: 2 } : { dataDir: 'memory://' });
    const indexes = async () =>
      (
        await db.query<{ name: string; definition: string }>(
          `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
           WHERE schemaname = current_schema() AND tablename = ANY ($1) ORDER BY indexname`,
          [largeTables],
        )
      ).map((row) => `${row.name}: ${row.definition}`);
    try {
      await migrate(db);
      const built = await indexes();
      for (const name of ['scheduled_jobs_locked_by', 'webhook_deliveries_endpoint_due', 'payments_checkout_session'])
        assert.ok(
          built.some((line) => line.startsWith(`${name}: `)),
          name,
        );
      // 0150 dropped the delivery lease index (a lease is written without touching an index); 0155,
      // after it, does not build it again.
      assert.ok(!built.some((line) => line.startsWith('webhook_deliveries_locked_by: ')));
      // As an install that applied the old 0100 and 0115 (indexes in place) then upgrades: 0155 runs, no error.
      await db.query("DELETE FROM schema_migrations WHERE version = '0155_large_table_indexes.sql'");
      assert.deepEqual(await migrate(db), ['0155_large_table_indexes.sql']);
      assert.deepEqual(await indexes(), built);
      const [invalid] = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM pg_index WHERE NOT indisvalid');
      assert.equal(invalid?.n, '0');
    } finally {
      await db.close();
      await database?.drop();
    }
  });
});

describe(`the backfills of 0110 and 0120 on an install with data (${databaseKind})`, () => {
  test('number every event of an object and give every payment with a method its card, in batches', async () => {
    const database = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
    const db = await openDb(database ? { databaseUrl: database.url, poolSize: 2 } : { dataDir: 'memory://' });
    const before = mkdtempSync(path.join(tmpdir(), 'tessera-migrations-before-'));
    try {
      for (const file of readdirSync('src/migrations').filter((name) => name.endsWith('.sql') && name < '0110'))
        copyFileSync(path.join('src/migrations', file), path.join(before, file));
      await migrate(db, before);
      const at = "'2026-01-01T00:00:00Z'";
      await db.query(`INSERT INTO merchants (id, name, created_at, updated_at) VALUES ('m_1', 'Shop', ${at}, ${at})`);
      await db.query(
        `INSERT INTO payment_methods (id, merchant_id, mode, type, card_brand, card_country, card_exp_month,
           card_exp_year, card_last4, card_fingerprint, card_number_encrypted, created_at, updated_at)
         VALUES ('pm_1', 'm_1', 'test', 'card', 'visa', 'NL', '12', '2030', '4242', 'fp', 'k:iv:tag:x', ${at}, ${at})`,
      );
      // 2,500 payments: three batches of the fill, every other one with a payment method.
      await db.query(
        `INSERT INTO payments (id, merchant_id, mode, amount, currency, status, confirmation_method, pre_auth,
           setup_future_usage, details, payment_method_id, created_at, updated_at)
         SELECT 'pt_' || lpad(n::text, 5, '0'), 'm_1', 'test', 100, 'EUR', 'succeeded', 'automatic', 'N', 'none',
           '{}'::jsonb, CASE WHEN n % 2 = 0 THEN 'pm_1' END, ${at}, ${at}
         FROM generate_series(1, 2500) AS n`,
      );
      await db.query(
        `INSERT INTO events (id, merchant_id, mode, type, object_id, body, created_at)
         SELECT 'evt_' || lpad(n::text, 3, '0'), 'm_1', 'test', 'payment.succeeded', 'pt_0000' || (n % 2 + 1), '{}',
           timestamptz ${at} + n * interval '1 second'
         FROM generate_series(1, 10) AS n`,
      );
      await migrate(db);
      const [filled] = await db.query<{ with_card: string; without: string }>(
        `SELECT count(*) FILTER (WHERE details -> 'paymentMethodDetails' -> 'card' ->> 'last4' = '4242')::text AS with_card,
                count(*) FILTER (WHERE NOT (details ? 'paymentMethodDetails'))::text AS without
         FROM payments`,
      );
      assert.deepEqual({ ...filled }, { with_card: '1250', without: '1250' });
      const numbered = await db.query<{ object_id: string; sequences: string }>(
        `SELECT object_id, string_agg(sequence::text, ',' ORDER BY created_at) AS sequences FROM events
         GROUP BY object_id ORDER BY object_id`,
      );
      assert.deepEqual(
        numbered.map((row) => ({ ...row })),
        [
          { object_id: 'pt_00001', sequences: '1,2,3,4,5' },
          { object_id: 'pt_00002', sequences: '1,2,3,4,5' },
        ],
      );
      const counters = await db.query<{ last_value: string }>(
        'SELECT last_value::text AS last_value FROM event_sequences ORDER BY object_id',
      );
      assert.deepEqual(
        counters.map((row) => row.last_value),
        ['5', '5'],
      );
    } finally {
      await db.close();
      await database?.drop();
      rmSync(before, { recursive: true, force: true });
    }
  });
});
