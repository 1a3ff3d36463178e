/**
 * What both PostgreSQL drivers and PGlite give the rest of the code (db.ts, postgres-js.ts): the
 * `Db` interface and the few helpers every implementation of it shares.
 */

/** Anything that runs one parameterized SQL statement: the database itself or an open transaction. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /**
   * An INSERT whose rows are not needed. Outside a transaction it runs now, like `query`. In a
   * transaction it is held back and runs with the transaction's other held inserts as one
   * statement, at the transaction's next `query` or its commit (held-inserts.ts): its error (a
   * unique violation) is thrown there, attributed to this call (its stack, and `statement` = this
   * SQL). Statements still run in the order they were given.
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
  /**
   * LISTENs on `channel` (lower-case letters and `_`) in a session of its own, apart from the
   * connections that run statements, and calls `notify` with the payload of each notification.
   * `lost` is called once if that session ends by itself (the database went away): the listener is
   * then dead, and the caller listens again. One listener per channel and process.
   */
  listen(channel: string, handlers: ListenHandlers): Promise<Listener>;
  close(): Promise<void>;
}

export interface ListenHandlers {
  notify(payload: string): void;
  lost(err: Error): void;
}

export interface Listener {
  /** UNLISTENs and ends the session; `lost` is not called. */
  close(): Promise<void>;
}

/** A channel name is written into LISTEN as it is: only a plain identifier. */
export function channelName(channel: string): string {
  if (!/^[a-z_]+$/.test(channel)) throw new Error(`Not a channel name: ${channel}`);
  return channel;
}

export const INT8_OID = 20;
export const NUMERIC_OID = 1700;

/**
 * Runs one statement; an error the database answered (it has a `code`) is given the caller's
 * stack, since the driver made it while parsing the answer, far from the statement that failed.
 */
export async function statement<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof Error && typeof (err as { code?: unknown }).code === 'string') {
      Error.captureStackTrace(err, statement);
    }
    throw err;
  }
}

/** How long a statement waits for a connection (docs/operations.md "Database outages"). */
export const connectTimeoutMs = 5000;

/** The PostgreSQL client library: `pg` (node-postgres) or `postgres` (postgres.js); decision 0027. */
export type DatabaseDriver = 'pg' | 'postgres';
