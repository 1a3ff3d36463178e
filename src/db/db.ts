import { createHash } from 'node:crypto';
import pg from 'pg';
import { ConfigError } from '../config-rules.js';
import { isFolderOnDisk, lockDataDir } from './data-dir-lock.js';
import { abortedCommit, firstLine } from './errors.js';
import { attribute, countOf, heldStatements, type Batch } from './held-statements.js';
import type { PgliteConnection } from './pglite-connection.js';
import type { PgliteThreadStats } from './pglite-worker.js';
import { applySessionSettings } from './postgres-session.js';

/** Anything that runs one parameterized SQL statement: the database itself or an open transaction. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /**
   * A statement whose rows are not needed. Outside a transaction it runs now, like `query`. In a
   * transaction it is held back and sent with the transaction's other held statements at its next
   * `query` or its commit (held-statements.ts): its error (a unique violation) is thrown there,
   * attributed to this call (its stack, and `statement` = this SQL). Statements still run in the
   * order they were given, each seeing what the ones before it wrote, except that a run of plain
   * INSERTs is one statement (none of them may read what another of the run writes).
   * `onRowCount` is told how many rows it wrote once it ran, when that is known (held-statements.ts
   * `countOf`: a held statement that is not the last of a run of inserts is not told).
   */
  execute(sql: string, params?: readonly unknown[], onRowCount?: (count: number) => void): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. A
   * transaction that only `execute`s holds the connection only while its statements run: on PGlite
   * they go as one message (with BEGIN and COMMIT when there are several), on PostgreSQL a run of
   * inserts alone is one statement without BEGIN and COMMIT.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * LISTENs on `channel` (lower-case letters and `_`) in a session of its own, apart from the
   * connections that run statements, and calls `notify` with the payload of each notification.
   * `lost` is called once if that session ends by itself (the database went away): the listener is
   * then dead, and the caller listens again. One listener per channel and process.
   */
  listen(channel: string, handlers: ListenHandlers): Promise<Listener>;
  /** PGlite only: its database thread's heap and checkpoints (/metrics). */
  pgliteStats?(): Promise<PgliteThreadStats>;
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
function channelName(channel: string): string {
  if (!/^[a-z_]+$/.test(channel)) throw new Error(`Not a channel name: ${channel}`);
  return channel;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * Runs one statement; an error the database answered (it has a `code`) is given the caller's
 * stack, since the driver made it while parsing the answer, far from the statement that failed.
 */
async function statement<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof Error && typeof (err as { code?: unknown }).code === 'string') {
      Error.captureStackTrace(err, statement);
    }
    throw err;
  }
}

/**
 * PGlite (embedded, a data folder or memory) when `databaseUrl` is unset, PostgreSQL otherwise.
 * Both return int8 and numeric as strings so that money never passes through a float.
 */
export async function openDb(options: {
  databaseUrl?: string;
  dataDir?: string;
  poolSize?: number;
  /** PostgreSQL: where the LISTEN session connects (TESSERA_LISTEN_DATABASE_URL); `databaseUrl` when unset. */
  listenDatabaseUrl?: string;
  /** Tests only: a PGlite tar (dumpDataDir) a new embedded database starts from (config.testPgliteTemplate). */
  pgliteTemplate?: string;
  /** PGlite: a checkpoint once this much WAL was written since the last (config.pgliteCheckpointWalMb). */
  pgliteCheckpointWalBytes?: number;
}): Promise<Db> {
  if (options.databaseUrl) {
    return openPostgres(options.databaseUrl, options.poolSize ?? 10, options.listenDatabaseUrl ?? options.databaseUrl);
  }
  return openPglite(options.dataDir, {
    template: options.pgliteTemplate,
    checkpointWalBytes: options.pgliteCheckpointWalBytes,
  });
}

/**
 * PGlite in a worker thread of its own (pglite-worker.ts), through its public API only; see
 * docs/decisions/0006-one-database-code-path.md and 0020-pglite-prepared-statements.md: each
 * parameterized statement is parsed once under a name, then bound and executed, the protocol
 * messages written and read on this thread (pglite-protocol.ts). PostgreSQL in WebAssembly runs
 * on the machine's other core while this thread handles HTTP. It is one connection: a transaction
 * holds it until it ends, and statements outside it wait.
 */
async function openPglite(
  dataDir: string | undefined,
  options: { template?: string; checkpointWalBytes?: number },
): Promise<Db> {
  // A folder on disk is locked first, so that a second process is refused before it opens it.
  const unlock = isFolderOnDisk(dataDir) ? await lockDataDir(dataDir) : () => {};
  let lite: PgliteConnection;
  try {
    // Loaded here, not with this module: PGlite's row parsers come with it, and a process on
    // PostgreSQL does not load PGlite (docs/performance.md#test-suite-time).
    const { connectPgliteWorker } = await import('./pglite-connection.js');
    lite = await connectPgliteWorker(dataDir, options);
  } catch (err) {
    unlock();
    throw err;
  }
  let lastTransaction = 0;
  /** LISTENs open in PGlite's one session. */
  let listeners = 0;
  return {
    kind: 'pglite',
    pgliteStats: () => lite.stats(),
    query: (sql, params) => lite.query(sql, params),
    execute: async (sql, params, onRowCount) => {
      if (!onRowCount) {
        await lite.query(sql, params);
        return;
      }
      const held = heldStatements();
      held.hold(sql, params, onRowCount);
      await lite.atomic(held.take());
    },
    async transaction(fn) {
      // The worker opens the transaction at its first statement, if any.
      const tx = ++lastTransaction;
      let open = false;
      const held = heldStatements();
      try {
        const result = await fn({
          // What the transaction held goes in the same message as its next statement or its end.
          query<Row>(sql: string, params?: readonly unknown[]) {
            open = true;
            return lite.query<Row>(sql, params, tx, held.take());
          },
          execute: async (sql, params, onRowCount) => held.hold(sql, params, onRowCount),
        });
        if (open) await lite.finish(tx, true, held.take());
        else await lite.atomic(held.take());
        return result;
      } catch (err) {
        // Nothing, if the commit ended the transaction already.
        if (open) await lite.finish(tx, false).catch(() => {});
        throw err;
      }
    },
    async listen(channel, { notify }) {
      // PGlite is one session: the worker passes on what its LISTEN receives (pglite-worker.ts).
      // Notifications come when the transaction that sent them commits, in this same session.
      const name = channelName(channel);
      const stop = lite.onNotification(name, notify);
      listeners += 1;
      try {
        // The session's setting says whether it listens (the worker starts it at off): the events
        // trigger looks for listeners only while it does (migration 0175). Sent at once, in order.
        await Promise.all([
          lite.query(`SET tessera.listening = on`, undefined),
          lite.query(`LISTEN ${name}`, undefined),
        ]);
      } catch (err) {
        // The setting stays on: the trigger then looks for nothing, which is only slower.
        stop();
        listeners -= 1;
        throw err;
      }
      return {
        close: async () => {
          stop();
          listeners -= 1;
          const unlisten = lite.query(`UNLISTEN ${name}`, undefined);
          const off = listeners === 0 ? lite.query(`SET tessera.listening = off`, undefined) : undefined;
          await Promise.all([unlisten, off]).catch(() => {});
        },
      };
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

/** How long a statement waits for a connection (docs/operations.md#health, "Database outage"). */
const connectTimeoutMs = 5000;

const ignoreError = () => {};

async function openPostgres(databaseUrl: string, poolSize: number, listenUrl: string): Promise<Db> {
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID || oid === NUMERIC_OID ? (value: string) => value : pg.types.getTypeParser(oid, format),
  };
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: poolSize,
    types: types as pg.CustomTypesConfig,
    // An outage must fail a request (503, src/db/errors.ts) rather than hold it for ever: a new
    // connection, or a free one from a full pool, is waited for this long. The pool makes new
    // connections as they are needed, so the process reconnects by itself when the database is back.
    connectionTimeoutMillis: connectTimeoutMs,
    // A database host that vanishes without closing its sockets is noticed by TCP keep-alive.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    onConnect: applySessionSettings,
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // A database that cannot be reached at start is said in one line naming the setting, as for the LISTEN URL.
  const client = await pool.connect().catch(async (err: unknown) => {
    await pool.end().catch(() => {});
    throw new ConfigError(`DATABASE_URL cannot be connected to: ${firstLine(err)}`);
  });
  client.release();
  if (listenUrl !== databaseUrl)
    await checkListenUrl(listenUrl).catch(async (err: unknown) => {
      await pool.end();
      throw err;
    });
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
  const send = (target: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) =>
    statement(() =>
      params && params.length > 0
        ? target.query({ name: nameOf(sql), text: sql, values: params as unknown[] })
        : target.query(sql),
    );
  const run = async <Row>(target: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) =>
    (await send(target, sql, params)).rows as Row[];
  /** A count the driver did not read from the command tag (a statement without one) is not told. */
  const rowCount = (result: pg.QueryResult) => (result.rowCount === null ? undefined : result.rowCount);
  let closed = false;
  const refuseClosed = () => {
    if (closed) throw new Error('The database is closed');
  };
  return {
    kind: 'postgres',
    query: async (sql, params) => {
      refuseClosed();
      return run(pool, sql, params);
    },
    execute: async (sql, params, onRowCount) => {
      refuseClosed();
      const count = rowCount(await send(pool, sql, params));
      if (count !== undefined) onRowCount?.(count);
    },
    async transaction(fn) {
      refuseClosed();
      // A connection and BEGIN only at the transaction's first statement, if any.
      let open: Promise<pg.PoolClient> | undefined;
      const begin = async () => {
        const connection = await pool.connect();
        // The connection lost between two statements (nothing under way) is an 'error' event: without
        // a listener the process would end. Its next statement fails, and the pool drops it.
        connection.on('error', ignoreError);
        try {
          await connection.query('BEGIN');
        } catch (err) {
          connection.release(err instanceof Error ? err : true);
          throw err;
        }
        return connection;
      };
      const held = heldStatements();
      const sendHeld = async (target: pg.Pool | pg.PoolClient, batches: readonly Batch[]) => {
        for (const batch of batches) {
          let count: number | undefined;
          try {
            count = rowCount(await send(target, batch.sql, batch.params));
          } catch (err) {
            throw attribute(err, batch.held);
          }
          countOf(batch, count);
        }
      };
      try {
        const result = await fn({
          async query<Row>(sql: string, params?: readonly unknown[]) {
            const connection = await (open ??= begin());
            await sendHeld(connection, held.take());
            return run<Row>(connection, sql, params);
          },
          execute: async (sql, params, onRowCount) => held.hold(sql, params, onRowCount),
        });
        const batches = held.take();
        // Held statements alone that make one statement: atomic by itself, without BEGIN and COMMIT.
        if (!open && batches.length <= 1) {
          await sendHeld(pool, batches);
          return result;
        }
        const connection = await (open ??= begin());
        await sendHeld(connection, batches);
        // COMMIT answers ROLLBACK when a statement of the transaction had failed (and its error
        // was caught): nothing was written, which the caller must learn, as on PGlite.
        if ((await connection.query('COMMIT')).command === 'ROLLBACK') throw new Error(abortedCommit);
        return result;
      } catch (err) {
        const connection = await open?.catch(() => undefined);
        await connection?.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        const connection = await open?.catch(() => undefined);
        connection?.off('error', ignoreError);
        connection?.release();
      }
    },
    async listen(channel, { notify, lost }) {
      refuseClosed();
      const name = channelName(channel);
      // Not from the pool: LISTEN holds its session for as long as the listener lives.
      const client = new pg.Client({
        connectionString: listenUrl,
        connectionTimeoutMillis: connectTimeoutMs,
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
      });
      let closing = false;
      let ended = false;
      const end = (err: Error) => {
        if (closing || ended) return;
        ended = true;
        client.end().catch(() => {});
        lost(err);
      };
      client.on('error', end);
      client.on('end', () => end(new Error('The LISTEN connection ended')));
      client.on('notification', (message) => {
        if (message.channel === name) notify(message.payload ?? '');
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${name}`);
      } catch (err) {
        closing = true;
        await client.end().catch(() => {});
        throw err;
      }
      return {
        close: async () => {
          closing = true;
          await client.end().catch(() => {});
        },
      };
    },
    close: async () => {
      closed = true;
      await pool.end();
    },
  };
}

/** A LISTEN URL of its own must reach PostgreSQL at start: refused in one line naming the setting. */
async function checkListenUrl(listenUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: listenUrl, connectionTimeoutMillis: connectTimeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    throw new ConfigError(`TESSERA_LISTEN_DATABASE_URL cannot be connected to: ${firstLine(err)}`);
  } finally {
    await client.end().catch(() => {});
  }
}
