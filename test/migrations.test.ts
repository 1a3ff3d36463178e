/**
 * Migrations run statement by statement: a semicolon inside a function body, a literal or a
 * comment does not end a statement (a `$$` body split at its first `;` would not run).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDb, type Db } from '../src/db/db.js';
import { migrate } from '../src/db/migrate.js';
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
