import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { openDb } from '../src/db/db.js';
import { createTestDatabase, databaseKind } from './helpers/harness.js';

/*
 * Decision 0036: each pooled connection to PostgreSQL asks for its writes to reach the disk as it
 * goes (backend_flush_after = 256kB), unless the operator set a value of their own.
 */
describe(
  `the settings of Tessera's PostgreSQL sessions (${databaseKind})`,
  { skip: databaseKind !== 'postgres' && 'PostgreSQL only' },
  () => {
    test('every connection of the pool writes back every 256 kB, inside a transaction as outside', async () => {
      const database = await createTestDatabase();
      const db = await openDb({ databaseUrl: database.url, poolSize: 3 });
      try {
        assert.deepEqual(await db.query('SHOW backend_flush_after'), [{ backend_flush_after: '256kB' }]);
        // Three transactions at once hold three connections, two of them opened for them: each
        // keeps its connection until all three have read their setting.
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let read = 0;
        const rows = await Promise.all(
          [1, 2, 3].map(() =>
            db.transaction(async (tx) => {
              const [row] = await tx.query<{ backend_flush_after: string; pid: number }>(
                'SELECT current_setting($1) AS backend_flush_after, pg_backend_pid() AS pid',
                ['backend_flush_after'],
              );
              if (++read === 3) release();
              await held;
              return row!;
            }),
          ),
        );
        assert.equal(new Set(rows.map((row) => row.pid)).size, 3, 'three connections');
        assert.deepEqual(
          rows.map((row) => row.backend_flush_after),
          ['256kB', '256kB', '256kB'],
        );
      } finally {
        await db.close();
        await database.drop();
      }
    });

    test("an operator's own value for the database is kept, even 0 (PostgreSQL's default)", async () => {
      const database = await createTestDatabase();
      const name = new URL(database.url).pathname.slice(1);
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      await admin.query(`ALTER DATABASE ${name} SET backend_flush_after = 0`);
      await admin.end();
      const db = await openDb({ databaseUrl: database.url });
      try {
        assert.deepEqual(await db.query('SHOW backend_flush_after'), [{ backend_flush_after: '0' }]);
      } finally {
        await db.close();
        await database.drop();
      }
    });
  },
);
