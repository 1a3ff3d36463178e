/**
 * A statement's name is used only once its Parse has run (src/db/pglite-protocol.ts). On PGlite
 * an open transaction's requests run before requests of others that were sent earlier, so a text
 * first sent outside the transaction, and then by the transaction itself, used to reach the
 * database as a Bind to a name not yet parsed: "prepared statement s23 does not exist", a 500 seen
 * once in CI under interleaved refunds (test/ledger-invariant.test.ts). On PostgreSQL the two run
 * on connections of their own; the test holds there too.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, type Db } from '../src/db/db.js';
import { createTestDatabase, databaseKind } from './helpers/harness.js';

describe(`prepared statements in the order the database runs them (${databaseKind})`, () => {
  let db: Db;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    const database = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
    drop = database?.drop;
    db = await openDb({ databaseUrl: database?.url, dataDir: 'memory://' });
    await db.execute('CREATE TABLE prepared_order (id int PRIMARY KEY, note text NOT NULL)');
  });
  after(async () => {
    await db.close();
    await drop?.();
  });

  test('a text sent first by another caller while a transaction holds the connection, then by the transaction, runs in both', async () => {
    const insert = 'INSERT INTO prepared_order (id, note) VALUES ($1, $2)';
    const read = 'SELECT note FROM prepared_order WHERE id = $1';
    // A row the read sent outside finds whatever ran before it (on PostgreSQL the two outside
    // calls run on connections of their own, in either order); written by another text.
    await db.execute('INSERT INTO prepared_order VALUES ($1, $2)', [0, 'before']);
    let outside: Promise<unknown> | undefined;
    let outsideRead: Promise<Array<{ note: string }>> | undefined;
    await db.transaction(async (tx) => {
      // The transaction holds PGlite's one connection from its first statement on.
      await tx.query('SELECT 1 AS one WHERE $1::int > 0', [1]);
      // Sent now, these wait for the transaction's end; their texts are new.
      outside = db.query(insert, [1, 'outside']);
      outsideRead = db.query<{ note: string }>(read, [0]);
      // The same texts, sent later by the transaction, run first.
      await tx.query(insert, [2, 'inside']);
      assert.deepEqual(await tx.query(read, [2]), [{ note: 'inside' }]);
    });
    await outside;
    assert.deepEqual(await outsideRead, [{ note: 'before' }]);
    // From now on each text runs by its name, on every path.
    await db.transaction(async (tx) => {
      await tx.query(insert, [3, 'named']);
      assert.deepEqual(await tx.query(read, [3]), [{ note: 'named' }]);
    });
    assert.deepEqual(await db.query(read, [1]), [{ note: 'outside' }]);
  });
});
