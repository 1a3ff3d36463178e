import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { openDb, type Db, type Queryable } from '../src/db/db.js';
import type { AttributedError } from '../src/db/held-statements.js';
import { isDatabaseUnavailable, isUniqueViolation } from '../src/db/errors.js';
import { createTestDatabase, databaseKind } from './helpers/harness.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

// Both stores are reached through one code path (docs/decisions/0006): PGlite in its worker
// thread behind a socket, and PostgreSQL, through the `pg` driver. What the database says must
// arrive as it was said, at the statement that caused it.
/** What `work` was rejected with; fails the test if it succeeded. */
async function rejectionOf(work: Promise<unknown>): Promise<{ code?: string }> {
  return work.then(
    () => assert.fail('the transaction succeeded'),
    (caught: unknown) => caught as { code?: string },
  );
}

describe(`one database code path (${databaseKind})`, () => {
  let db: Db;
  let drop: (() => Promise<void>) | undefined;

  /** Which of these ids worker_rows holds, in order. */
  async function idsAmong(...ids: number[]): Promise<number[]> {
    const rows = await db.query<{ id: number }>('SELECT id FROM worker_rows WHERE id = ANY($1::int[]) ORDER BY id', [
      ids,
    ]);
    return rows.map((row) => Number(row.id));
  }
  before(async () => {
    const database = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
    drop = database?.drop;
    db = await openDb({ databaseUrl: database?.url, dataDir: 'memory://' });
    await db.execute(`CREATE TABLE worker_rows (
      id int PRIMARY KEY,
      amount int8,
      rate numeric,
      at timestamptz,
      body jsonb,
      bytes bytea,
      flag boolean
    )`);
    await db.execute('CREATE TABLE worker_counter (id int PRIMARY KEY, value int NOT NULL)');
    await db.execute('INSERT INTO worker_counter VALUES (1, 0)');
  });
  after(async () => {
    await db.close();
    await drop?.();
  });

  test('a unique violation keeps its code, constraint and detail, with a stack in the calling code', async () => {
    await db.execute('INSERT INTO worker_rows (id) VALUES ($1)', [1]);
    const err = await db.execute('INSERT INTO worker_rows (id) VALUES ($1)', [1]).then(
      () => assert.fail('the second insert succeeded'),
      (caught: unknown) => caught,
    );
    assert.ok(err instanceof Error);
    assert.ok(isUniqueViolation(err, 'worker_rows_pkey'));
    const fields = err as Error & { code?: string; constraint?: string; detail?: string; table?: string };
    assert.equal(fields.code, '23505');
    assert.equal(fields.constraint, 'worker_rows_pkey');
    assert.equal(fields.detail, 'Key (id)=(1) already exists.');
    assert.equal(fields.table, 'worker_rows');
    assert.match(err.message, /duplicate key value violates unique constraint "worker_rows_pkey"/);
    assert.match(err.stack ?? '', /database\.test\.ts/);
  });

  test('a held insert that fails is attributed to its own execute call: its stack and its SQL', async () => {
    await db.query('INSERT INTO worker_rows (id) VALUES ($1)', [30]);
    const duplicate = 'INSERT INTO worker_rows (id) VALUES ($1)';
    // Id 1 exists (the first test): this insert fails when the held inserts run, at the commit.
    const insertTheDuplicate = (tx: Queryable) => tx.execute(duplicate, [1]);
    const err = (await rejectionOf(
      db.transaction(async (tx) => {
        await tx.query('DELETE FROM worker_rows WHERE id = $1 RETURNING id', [30]);
        await tx.execute('INSERT INTO worker_counter (id, value) VALUES ($1, $2)', [5, 0]);
        await insertTheDuplicate(tx);
      }),
    )) as AttributedError & { code?: string };
    assert.equal(err.code, '23505');
    assert.equal(err.statement, duplicate);
    assert.match(err.stack ?? '', /insertTheDuplicate/);
    assert.match(err.stack ?? '', /^error: duplicate key value violates unique constraint "worker_rows_pkey"/i);
    // Rolled back: the delete before it and the other held insert.
    assert.deepEqual(await idsAmong(30), [30]);
    assert.deepEqual(await db.query('SELECT id FROM worker_counter WHERE id = $1', [5]), []);

    await db.transaction(async (tx) => {
      await tx.query('DELETE FROM worker_rows WHERE id = $1 RETURNING id', [30]);
      await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [32]);
    });
    assert.deepEqual(await idsAmong(30, 32), [32]);
  });

  test('a transaction of inserts only is atomic: the first insert is undone when the second fails', async () => {
    const err = await rejectionOf(
      db.transaction(async (tx) => {
        await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [40]);
        await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [40]);
      }),
    );
    assert.equal(err.code, '23505');
    assert.deepEqual(await idsAmong(40), []);
  });

  test('held statements: inserts and the WITH statement after them are one statement, and a later one sees what they wrote', async () => {
    await db.execute('CREATE TABLE held_counts (id int PRIMARY KEY, total int NOT NULL)');
    const rows = await db.transaction(async (tx) => {
      await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [60]);
      // One statement with the insert before it: it must not read what that insert writes.
      await tx.execute(
        'WITH made AS (INSERT INTO held_counts VALUES ($1, $2) RETURNING id) INSERT INTO worker_rows (id) SELECT id + 2 FROM made',
        [60, 1],
      );
      // Sent after them: it reads the row the statement before it wrote.
      await tx.execute(
        'INSERT INTO worker_rows (id, amount) SELECT id + 1, total FROM held_counts WHERE id = $1',
        [60],
      );
      return tx.query<{ id: number }>('SELECT id FROM worker_rows WHERE id = ANY($1::int[]) ORDER BY id', [
        [60, 61, 62],
      ]);
    });
    assert.deepEqual(
      rows.map((row) => Number(row.id)),
      [60, 61, 62],
    );
    const [written] = await db.query<{ amount: string }>('SELECT amount FROM worker_rows WHERE id = $1', [61]);
    assert.equal(written!.amount, '1');
  });

  test('a statement is told how many rows it wrote: held alone, last of one statement with inserts, before a query, and outside a transaction', async () => {
    const told: Record<string, number> = {};
    const tell = (name: string) => (count: number) => void (told[name] = count);
    const threeRows = 'INSERT INTO worker_rows (id) SELECT n FROM generate_series($1::int, $1::int + 2) AS n';
    await db.transaction(async (tx) => {
      // A run of inserts and the WITH statement after it are one statement: its count is the last part's.
      await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [300], tell('first of the run'));
      await tx.execute(
        'WITH one AS (INSERT INTO worker_rows (id) VALUES ($1)) INSERT INTO worker_rows (id) SELECT n FROM generate_series($2::int, $2::int + 2) AS n',
        [301, 302],
        tell('last'),
      );
      await tx.execute(
        'UPDATE worker_rows SET flag = true WHERE id = ANY($1::int[])',
        [[300, 302, 303]],
        tell('update'),
      );
      await tx.query('SELECT 1');
      // Held until the commit.
      await tx.execute(threeRows, [310], tell('at the commit'));
    });
    await db.transaction(async (tx) => {
      // Nothing else in the transaction: one statement without BEGIN and COMMIT on PostgreSQL.
      await tx.execute('DELETE FROM worker_rows WHERE id BETWEEN $1 AND $2', [310, 311], tell('alone'));
    });
    await db.execute('UPDATE worker_rows SET flag = false WHERE id BETWEEN $1 AND $2', [300, 312], tell('outside'));
    await db.execute(
      'INSERT INTO worker_rows (id) SELECT n FROM generate_series($1::int, $2::int) AS n WHERE false',
      [320, 321],
      tell('nothing'),
    );
    assert.deepEqual(told, {
      last: 3,
      update: 3,
      'at the commit': 3,
      alone: 2,
      outside: 6,
      nothing: 0,
    });
  });

  test('a held statement that fails among others is attributed to its own call, and nothing is written', async () => {
    // held_counts has id 60 (the test before).
    const failing = 'WITH given AS (SELECT $1::int AS id) INSERT INTO held_counts (id, total) SELECT id, 0 FROM given';
    const insertTheDuplicate = (tx: Queryable) => tx.execute(failing, [60]);
    const err = (await rejectionOf(
      db.transaction(async (tx) => {
        await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [70]);
        await insertTheDuplicate(tx);
        await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [71]);
      }),
    )) as AttributedError & { code?: string };
    assert.equal(err.code, '23505');
    assert.equal(err.statement, failing);
    assert.match(err.stack ?? '', /insertTheDuplicate/);
    assert.deepEqual(await idsAmong(70, 71), []);
    // The statements of the failed message are prepared again when they next run.
    await db.transaction(async (tx) => {
      await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [72]);
      await tx.execute(failing, [73]);
      await tx.execute('INSERT INTO worker_rows (id) SELECT id FROM held_counts WHERE id = $1', [73]);
    });
    assert.deepEqual(await idsAmong(72, 73), [72, 73]);
  });

  test('rows keep their types: int8 and numeric as strings, timestamps as Date, jsonb parsed, bytea as bytes', async () => {
    const at = new Date('2026-06-15T12:00:00.123Z');
    const [row] = await db.query<Record<string, unknown>>(
      'INSERT INTO worker_rows VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *',
      [3, '9007199254740993', '12.345', at, { nested: [1, 'two'] }, Buffer.from([0, 1, 255]), true],
    );
    assert.equal(row!.amount, '9007199254740993');
    assert.equal(row!.rate, '12.345');
    assert.ok(row!.at instanceof Date);
    assert.equal((row!.at as Date).toISOString(), at.toISOString());
    assert.deepEqual(row!.body, { nested: [1, 'two'] });
    assert.deepEqual([...(row!.bytes as Uint8Array)], [0, 1, 255]);
    assert.equal(row!.flag, true);
  });

  test('parameters arrive byte for byte: characters of two, three and four UTF-8 bytes, and values far larger than one message buffer', async () => {
    // Each parameter's length is written before it in UTF-8 bytes, not characters: a miscount
    // shifts every later parameter of the message (PGlite's messages are written on this thread).
    const text = 'é ✓ 𝄞 😀 — plain';
    const large = `${'ü'.repeat(70_000)}${'x'.repeat(70_000)}`;
    const bytes = Buffer.alloc(300_000, 7);
    bytes[0] = 0;
    const [row] = await db.query<Record<string, unknown>>(
      `INSERT INTO worker_rows (id, body, bytes, rate) VALUES ($1, $2, $3, $4)
       RETURNING body, octet_length(bytes) AS length, get_byte(bytes, 0) AS first, rate`,
      [4, { text, large }, bytes, '1.5'],
    );
    assert.deepEqual(row!.body, { text, large });
    assert.equal(Number(row!.length), 300_000);
    assert.equal(Number(row!.first), 0);
    assert.equal(row!.rate, '1.5');
    const [again] = await db.query<{ same: boolean }>('SELECT body->>$2 = $3 AS same FROM worker_rows WHERE id = $1', [
      4,
      'text',
      text,
    ]);
    assert.equal(again!.same, true);
  });

  test('concurrent transactions that lock a row each see the other’s committed increment', async () => {
    const increment = () =>
      db.transaction(async (tx) => {
        const [row] = await tx.query<{ value: number }>(
          'SELECT value FROM worker_counter WHERE id = $1 FOR UPDATE',
          [1],
        );
        // A transaction not held off now would read the same value and one increment would be lost.
        await new Promise((resolve) => setTimeout(resolve, 20));
        await tx.query('UPDATE worker_counter SET value = $1 WHERE id = $2', [row!.value + 1, 1]);
      });
    await Promise.all([increment(), increment(), increment(), db.query('SELECT 1 AS one WHERE $1::int > 0', [1])]);
    const [row] = await db.query<{ value: number }>('SELECT value FROM worker_counter WHERE id = $1', [1]);
    assert.equal(row!.value, 3);
  });

  test('a statement that failed to prepare is prepared again: it runs once its table exists', async () => {
    const read = 'SELECT id FROM worker_later WHERE id = $1';
    const missing = await db.query(read, [1]).then(
      () => assert.fail('read a table that does not exist'),
      (caught: unknown) => caught as { code?: string },
    );
    assert.equal(missing.code, '42P01');
    await db.execute('CREATE TABLE worker_later (id int PRIMARY KEY)');
    await db.execute('INSERT INTO worker_later VALUES ($1)', [1]);
    assert.deepEqual(await db.query(read, [1]), [{ id: 1 }]);
  });

  test('a transaction whose failed statement was caught is not reported as committed', async () => {
    const counter = async () =>
      (await db.query<{ value: number }>('SELECT value FROM worker_counter WHERE id = $1', [1]))[0]!.value;
    const before = await counter();
    const err = await rejectionOf(
      db.transaction(async (tx) => {
        await tx.query('UPDATE worker_counter SET value = $1 WHERE id = $2', [50, 1]);
        await tx.query('SELECT 1 / $1::int AS never', [0]).catch(() => undefined);
      }),
    );
    assert.match(String((err as Error).message), /rolled back/);
    assert.equal(await counter(), before);
  });

  test('array parameters and array columns cross in both directions, with quotes and nulls', async () => {
    const [row] = await db.query<{ words: unknown; counts: unknown }>(
      'SELECT $1::text[] AS words, ARRAY[1, NULL, 3]::int8[] AS counts',
      [['a "quoted", word', 'plain', null]],
    );
    assert.deepEqual(row!.words, ['a "quoted", word', 'plain', null]);
    assert.deepEqual(row!.counts, ['1', null, '3']);
  });

  test('a transaction that throws is rolled back and the error is the one thrown', async () => {
    const thrown = new Error('changed my mind');
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('UPDATE worker_counter SET value = $1 WHERE id = $2', [100, 1]);
        throw thrown;
      }),
      (err) => err === thrown,
    );
    const [row] = await db.query<{ value: number }>('SELECT value FROM worker_counter WHERE id = $1', [1]);
    assert.equal(row!.value, 3);
  });
});

describe(`the database’s life (${databaseKind})`, () => {
  test('closing the database lets the process exit by itself, and later calls are refused', async () => {
    const databaseUrl = process.env.TESSERA_TEST_DATABASE_URL;
    const script = `
      import { openDb } from ${JSON.stringify(new URL('../src/db/db.ts', import.meta.url).href)};
      const db = await openDb({ databaseUrl: ${JSON.stringify(databaseUrl)}, dataDir: 'memory://' });
      await db.query('SELECT 1 AS one');
      await db.close();
      await db.query('SELECT 1 AS one').then(
        () => console.log('answered after close'),
        (err) => console.log('refused after close: ' + err.message),
      );
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timeout = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
    );
    clearTimeout(timeout);
    assert.equal(signal, null, 'the process was still running after 120 s');
    assert.equal(code, 0);
    assert.match(output, /refused after close: The database is closed/);
  });
});

describe(
  `a database that goes away (${databaseKind})`,
  { skip: databaseKind !== 'postgres' && 'PostgreSQL only' },
  () => {
    test('statements and transactions fail at once as unavailable, a listener is told, and all works again after', async () => {
      const database = await createTestDatabase();
      const target = new URL(database.url);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const viaProxy = new URL(database.url);
      viaProxy.port = String(proxy.port);
      const db = await openDb({ databaseUrl: viaProxy.toString() });
      try {
        await db.execute('CREATE TABLE outage_rows (id int PRIMARY KEY)');
        const lost: Error[] = [];
        const listener = await db.listen('outage_events', { notify: () => {}, lost: (err) => lost.push(err) });
        // A transaction under way when the database goes: its next statement fails, nothing is kept.
        let cut!: () => void;
        const cutDone = new Promise<void>((resolve) => (cut = resolve));
        const inFlight = db.transaction(async (tx) => {
          await tx.query('INSERT INTO outage_rows VALUES ($1) RETURNING id', [1]);
          await cutDone;
          await tx.query('INSERT INTO outage_rows VALUES ($1) RETURNING id', [2]);
        });
        await new Promise((resolve) => setTimeout(resolve, 100));
        await proxy.cut();
        cut();
        const failed = await inFlight.then(
          () => assert.fail('the transaction committed'),
          (err: unknown) => err,
        );
        assert.ok(isDatabaseUnavailable(failed), String(failed));

        const started = Date.now();
        const refused = await db.query('SELECT id FROM outage_rows WHERE id = $1', [1]).then(
          () => assert.fail('answered without a database'),
          (err: unknown) => err,
        );
        assert.ok(isDatabaseUnavailable(refused), String(refused));
        assert.ok(Date.now() - started < 6000, 'failed within the 5 s a statement waits for a connection');
        for (let tries = 0; lost.length === 0; tries++) {
          assert.ok(tries < 100, 'the listener was told its session ended');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.equal(lost.length, 1);

        await proxy.restore();
        for (let tries = 0; ; tries++) {
          const answer = await db.query('SELECT count(*)::int AS n FROM outage_rows').catch(() => undefined);
          if (answer) {
            assert.deepEqual(answer, [{ n: 0 }], 'nothing of the interrupted transaction was kept');
            break;
          }
          assert.ok(tries < 100, 'statements work again once the database is back');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        await db.transaction(async (tx) => {
          await tx.query('INSERT INTO outage_rows VALUES ($1) RETURNING id', [3]);
        });
        assert.deepEqual(await db.query('SELECT id FROM outage_rows ORDER BY id'), [{ id: 3 }]);
        await listener.close();
      } finally {
        await db.close().catch(() => {});
        await proxy.close();
        await database.drop();
      }
    });
  },
);
