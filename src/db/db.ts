import { createHash } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** Anything that runs one parameterized SQL statement: the database itself or an open transaction. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * PGlite (embedded, a data folder or memory) when `databaseUrl` is unset, PostgreSQL otherwise.
 * Both return int8 and numeric as strings so that money never passes through a float.
 */
export async function openDb(options: { databaseUrl?: string; dataDir?: string; poolSize?: number }): Promise<Db> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openPglite(options.dataDir);
}

async function openPglite(dataDir: string | undefined): Promise<Db> {
  const identity = (value: string) => value;
  // The options object form: with the two-argument form an undefined dataDir drops the options.
  const lite = new PGlite({ dataDir, parsers: { [INT8_OID]: identity, [NUMERIC_OID]: identity } });
  await lite.waitReady;
  const run = async <Row>(target: Pick<PGlite, 'query'>, sql: string, params?: readonly unknown[]) =>
    (await target.query<Row>(sql, params as unknown[] | undefined)).rows;
  return {
    kind: 'pglite',
    query: (sql, params) => run(lite, sql, params),
    // PGlite is one connection: its transaction() holds that connection exclusively until done.
    transaction: (fn) => lite.transaction((tx) => fn({ query: (sql, params) => run(tx, sql, params) })),
    close: () => lite.close(),
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
    async transaction(fn) {
      const connection = await pool.connect();
      try {
        await connection.query('BEGIN');
        const result = await fn({ query: (sql, params) => run(connection, sql, params) });
        await connection.query('COMMIT');
        return result;
      } catch (err) {
        await connection.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        connection.release();
      }
    },
    close: () => pool.end(),
  };
}
