import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { openDb, type Db } from '../src/db/db.js';
import { isUniqueViolation } from '../src/db/errors.js';

// PGlite runs in a worker thread: what crosses the thread must arrive as it was given.
/** What `work` was rejected with; fails the test if it succeeded. */
async function rejectionOf(work: Promise<unknown>): Promise<{ code?: string }> {
  return work.then(
    () => assert.fail('the transaction succeeded'),
    (caught: unknown) => caught as { code?: string },
  );
}

describe('PGlite in a worker thread', () => {
  let db: Db;

  /** Which of these ids worker_rows holds, in order. */
  async function idsAmong(...ids: number[]): Promise<number[]> {
    const rows = await db.query<{ id: number }>('SELECT id FROM worker_rows WHERE id = ANY($1::int[]) ORDER BY id', [
      ids,
    ]);
    return rows.map((row) => Number(row.id));
  }
  before(async () => {
    db = await openDb({ dataDir: 'memory://' });
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
  after(() => db.close());

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
    assert.match(err.stack ?? '', /pglite-worker\.test\.ts/);
  });

  test('a held insert that fails in a transaction rejects the transaction with its code', async () => {
    const err = await rejectionOf(
      db.transaction(async (tx) => {
        await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [2]);
        await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [2]);
      }),
    );
    assert.equal(err.code, '23505');
    assert.deepEqual(await db.query('SELECT id FROM worker_rows WHERE id = $1', [2]), []);
  });

  test('held inserts sent with the commit of an open transaction: a failure rolls back the statements before it', async () => {
    await db.query('INSERT INTO worker_rows (id) VALUES ($1)', [30]);
    const err = await rejectionOf(
      db.transaction(async (tx) => {
        // A statement whose answer is needed opens the transaction; the inserts are held to its end.
        await tx.query('DELETE FROM worker_rows WHERE id = $1 RETURNING id', [30]);
        await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [31]);
        await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [31]);
      }),
    );
    assert.equal(err.code, '23505');
    assert.deepEqual(await idsAmong(30, 31), [30]);

    await db.transaction(async (tx) => {
      await tx.query('DELETE FROM worker_rows WHERE id = $1 RETURNING id', [30]);
      await tx.execute('INSERT INTO worker_rows (id) VALUES ($1)', [32]);
    });
    assert.deepEqual(await idsAmong(30, 32), [32]);
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

  test('concurrent transactions stay exclusive: each sees the other’s committed increment', async () => {
    const increment = () =>
      db.transaction(async (tx) => {
        const [row] = await tx.query<{ value: number }>('SELECT value FROM worker_counter WHERE id = $1', [1]);
        // Another transaction running now would read the same value and one increment would be lost.
        await new Promise((resolve) => setTimeout(resolve, 20));
        await tx.query('UPDATE worker_counter SET value = $1 WHERE id = $2', [row!.value + 1, 1]);
      });
    await Promise.all([increment(), increment(), increment(), db.query('SELECT 1 AS one WHERE $1::int > 0', [1])]);
    const [row] = await db.query<{ value: number }>('SELECT value FROM worker_counter WHERE id = $1', [1]);
    assert.equal(row!.value, 3);
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

describe('the PGlite worker’s life', () => {
  test('closing the database ends the worker, so that the process exits by itself', async () => {
    const script = `
      import { openDb } from ${JSON.stringify(new URL('../src/db/db.ts', import.meta.url).href)};
      const db = await openDb({ dataDir: 'memory://' });
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
