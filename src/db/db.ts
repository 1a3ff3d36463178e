import { createHash } from 'node:crypto';
import { connectPgliteWorker } from './pglite-connection.js';
import { lockDataDir } from './data-dir-lock.js';
import pg from 'pg';

/** Anything that runs one parameterized SQL statement: the database itself or an open transaction. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /**
   * An INSERT whose result is not needed. In a transaction it may be held back and sent later
   * with the transaction's other such inserts as one statement (see combineInserts), so its
   * errors (a unique violation) surface when the transaction ends, not here. Any `query` sends
   * what is held back first, so statements still run in the order they were given.
   */
  execute(sql: string, params?: readonly unknown[]): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. A
   * transaction that only `execute`s sends its inserts as one statement, which is atomic by
   * itself, without BEGIN and COMMIT: one round trip.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

interface Statement {
  sql: string;
  params: readonly unknown[];
}

/**
 * Several INSERTs as one statement: all but the last become data-modifying WITH queries, which
 * PostgreSQL runs exactly once each, to completion, whether or not anything reads them. Their
 * placeholders are renumbered so that the parameters follow one another. The inserts all see the
 * database as it was before the statement, so none may read (INSERT … SELECT) a table that another
 * of them writes; foreign keys between them are checked at the end of the statement and hold.
 */
export function combineInserts(statements: readonly Statement[]): Statement {
  if (statements.length === 1) return statements[0]!;
  const params = statements.flatMap((statement) => statement.params);
  // The same few sequences of statements recur (a payment, its event, its deliveries): their
  // combined text is built once, and is then the same string, whose prepared name is known.
  let node = combinedTexts;
  for (const statement of statements) {
    let next = node.next.get(statement.sql);
    if (!next) {
      if (combinedCount >= maxCombinedTexts) return { sql: combinedText(statements), params };
      next = { next: new Map() };
      node.next.set(statement.sql, next);
      combinedCount += 1;
    }
    node = next;
  }
  const widths = statements.map((statement) => statement.params.length).join(',');
  if (node.sql === undefined || node.widths !== widths) {
    node.sql = combinedText(statements);
    node.widths = widths;
  }
  return { sql: node.sql, params };
}

interface CombinedText {
  next: Map<string, CombinedText>;
  sql?: string;
  /** The parameter count of each statement the text was built for. */
  widths?: string;
}

const combinedTexts: CombinedText = { next: new Map() };
let combinedCount = 0;
const maxCombinedTexts = 1000;

function combinedText(statements: readonly Statement[]): string {
  let offset = 0;
  const parts = statements.map((statement) => {
    const shift = offset;
    offset += statement.params.length;
    return statement.sql.replace(/\$(\d+)/g, (_, index: string) => `$${Number(index) + shift}`);
  });
  const last = parts.pop()!;
  return `WITH ${parts.map((part, index) => `i${index} AS (${part})`).join(', ')} ${last}`;
}

/** The INSERTs a transaction holds back until it must send them. */
function heldInserts() {
  const held: Statement[] = [];
  return {
    hold(sql: string, params: readonly unknown[] = []): void {
      if (!/^\s*INSERT\s/i.test(sql)) throw new Error('Only INSERT statements can be held back in a transaction');
      held.push({ sql, params });
    },
    /** What is held, as one statement, and nothing held any more. */
    take(): Statement | undefined {
      return held.length === 0 ? undefined : combineInserts(held.splice(0));
    },
  };
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * PGlite (embedded, a data folder or memory) when `databaseUrl` is unset, PostgreSQL otherwise.
 * Both return int8 and numeric as strings so that money never passes through a float.
 */
export async function openDb(options: {
  databaseUrl?: string;
  dataDir?: string;
  poolSize?: number;
  /** Tests only: a PGlite tar (dumpDataDir) a new embedded database starts from (config.testPgliteTemplate). */
  pgliteTemplate?: string;
}): Promise<Db> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openPglite(options.dataDir, options.pgliteTemplate);
}

async function openPglite(dataDir: string | undefined, template: string | undefined): Promise<Db> {
  // PGlite (PostgreSQL in WebAssembly and its protocol code) runs in a worker thread, on the
  // machine's other core, while this thread handles HTTP; see docs/performance.md.
  // A folder on disk is locked first, so that a second process is refused before it opens it.
  const onDisk = dataDir !== undefined && !/^[a-z]+:\/\//.test(dataDir);
  const unlock = onDisk ? lockDataDir(dataDir) : () => {};
  let lite: Awaited<ReturnType<typeof connectPgliteWorker>>;
  try {
    lite = await connectPgliteWorker(dataDir, template);
  } catch (err) {
    unlock();
    throw err;
  }
  let lastTransaction = 0;
  return {
    kind: 'pglite',
    query: (sql, params) => lite.query(sql, params),
    execute: async (sql, params) => {
      await lite.query(sql, params);
    },
    async transaction(fn) {
      // PGlite is one connection: its transaction holds that connection exclusively until done.
      // It is opened, in the worker, by the first statement that cannot wait, if any.
      const tx = ++lastTransaction;
      let open = false;
      const held = heldInserts();
      const sendHeld = async (inTransaction: number | undefined) => {
        const statement = held.take();
        if (statement) await lite.query(statement.sql, statement.params, inTransaction);
      };
      try {
        const result = await fn({
          async query<Row>(sql: string, params?: readonly unknown[]) {
            open = true;
            await sendHeld(tx);
            return lite.query<Row>(sql, params, tx);
          },
          execute: async (sql, params) => held.hold(sql, params),
        });
        if (open) {
          await lite.finish(tx, true, held.take());
        } else {
          // Only held inserts: one statement, atomic by itself.
          await sendHeld(undefined);
        }
        return result;
      } catch (err) {
        if (open) await lite.finish(tx, false);
        throw err;
      }
    },
    close: async () => {
      try {
        await lite.close();
      } finally {
        unlock();
      }
    },
  };
}

async function openPostgres(databaseUrl: string, poolSize: number): Promise<Db> {
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID || oid === NUMERIC_OID ? (value: string) => value : pg.types.getTypeParser(oid, format),
  };
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, types: types as pg.CustomTypesConfig });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const client = await pool.connect();
  client.release();
  // Every statement is prepared once per connection under a name derived from its text, so that
  // PostgreSQL parses and plans it once rather than on every call (the hot paths repeat a few
  // dozen statements). Statements without parameters (BEGIN, COMMIT, DDL) run as they are.
  const statementNames = new Map<string, string>();
  const nameOf = (sql: string) => {
    let name = statementNames.get(sql);
    if (!name) {
      name = `t${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
      statementNames.set(sql, name);
    }
    return name;
  };
  const run = async <Row>(target: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) =>
    (
      await (params && params.length > 0
        ? target.query({ name: nameOf(sql), text: sql, values: params as unknown[] })
        : target.query(sql))
    ).rows as Row[];
  return {
    kind: 'postgres',
    query: (sql, params) => run(pool, sql, params),
    execute: async (sql, params) => {
      await run(pool, sql, params);
    },
    async transaction(fn) {
      // A connection and BEGIN only at the first statement that cannot wait, if any.
      let open: Promise<pg.PoolClient> | undefined;
      const begin = async () => {
        const connection = await pool.connect();
        try {
          await connection.query('BEGIN');
        } catch (err) {
          connection.release(err instanceof Error ? err : true);
          throw err;
        }
        return connection;
      };
      const held = heldInserts();
      const sendHeld = async (target: pg.Pool | pg.PoolClient) => {
        const statement = held.take();
        if (statement) await run(target, statement.sql, statement.params);
      };
      try {
        const result = await fn({
          async query(sql, params) {
            const connection = await (open ??= begin());
            await sendHeld(connection);
            return run(connection, sql, params);
          },
          execute: async (sql, params) => held.hold(sql, params),
        });
        if (open) {
          const connection = await open;
          await sendHeld(connection);
          await connection.query('COMMIT');
        } else {
          // Only held inserts: one statement, atomic by itself.
          await sendHeld(pool);
        }
        return result;
      } catch (err) {
        const connection = await open?.catch(() => undefined);
        await connection?.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        (await open?.catch(() => undefined))?.release();
      }
    },
    close: () => pool.end(),
  };
}
