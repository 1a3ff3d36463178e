import { createRequire } from 'node:module';
import pg from 'pg';
import postgres from 'postgres';
import { abortedCommit, isDatabaseUnavailable } from './errors.js';
import { heldInserts } from './held-inserts.js';
import {
  channelName,
  connectTimeoutMs,
  INT8_OID,
  NUMERIC_OID,
  statement,
  type Db,
  type Queryable,
} from './contract.js';

/**
 * PostgreSQL through postgres.js (the `postgres` package), selected by TESSERA_DATABASE_DRIVER=postgres
 * (docs/decisions/0027-postgres-driver.md), with the semantics of the `pg` driver in db.ts: the same
 * parameters, rows, errors, outage behaviour and transactions, so that nothing else can tell them apart.
 */

// Parameters are turned into text exactly as node-postgres does it (its prepareValue: dates,
// arrays, objects as JSON), and bytes into bytea's hex form.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue(value: unknown): string | Buffer | null;
};
const textOf = (value: unknown): string | null => {
  const prepared = prepareValue(value);
  return Buffer.isBuffer(prepared) ? `\\x${prepared.toString('hex')}` : prepared;
};

// Column values are parsed by node-postgres's own parsers too, int8 and numeric kept as strings.
const asText = (value: string) => value;
const parsers = new Map<number, (value: string) => unknown>();
const parserOf = (oid: number) => {
  let parse = parsers.get(oid);
  if (!parse) {
    parse = oid === INT8_OID || oid === NUMERIC_OID ? asText : (pg.types.getTypeParser(oid, 'text') as typeof asText);
    parsers.set(oid, parse);
  }
  return parse;
};

type PostgresErrorFields = Record<string, unknown> & { message: string; code?: unknown };

/**
 * postgres.js's errors as node-postgres gives them. A database error becomes pg's DatabaseError
 * (`constraint` rather than `constraint_name`, and so on: src/db/errors.ts and held-inserts.ts
 * read them); a connection error keeps its code (CONNECTION_CLOSED, CONNECT_TIMEOUT, a socket's
 * ECONNREFUSED) and message. Either is a new object: postgres.js fixes the stack of its own, and
 * `statement` and held-inserts.ts give an error the stack of the code that caused it.
 */
function normalized(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const fields = err as unknown as PostgresErrorFields;
  if (err instanceof postgres.PostgresError) {
    const copy = new pg.DatabaseError(err.message, 0, 'error');
    Object.assign(copy, {
      severity: fields.severity,
      code: fields.code,
      detail: fields.detail,
      hint: fields.hint,
      position: fields.position,
      internalPosition: fields.internal_position,
      internalQuery: fields.internal_query,
      where: fields.where,
      schema: fields.schema_name,
      table: fields.table_name,
      column: fields.column_name,
      dataType: fields['data type_name'],
      constraint: fields.constraint_name,
      file: fields.file,
      line: fields.line,
      routine: fields.routine,
    });
    return copy;
  }
  const copy = new Error(err.message, { cause: err });
  if (typeof fields.code === 'string') Object.assign(copy, { code: fields.code });
  return copy;
}

/**
 * A statement waiting for a connection gives up after connectTimeoutMs, as `pg`'s pool does
 * (connectionTimeoutMillis): an outage, or a pool held by long transactions, is answered 503
 * (errors.ts). postgres.js has no such limit, so unsent statements are swept once a second and
 * cancelled, which takes them out of its queue: they never run.
 */
interface Pending {
  cancel(): unknown;
}
interface Waiting {
  query: Pending;
  since: number;
}
const timeoutMessage = 'timeout exceeded when trying to connect';

function waitingLimit() {
  const waiting = new Set<Waiting>();
  const timedOut = new WeakSet<object>();
  let sweeper: NodeJS.Timeout | undefined;
  const sweep = () => {
    const now = Date.now();
    for (const entry of waiting) {
      // `state` is set when postgres.js writes the statement to a connection.
      if ((entry.query as unknown as { state: unknown }).state) waiting.delete(entry);
      else if (now - entry.since >= connectTimeoutMs) {
        waiting.delete(entry);
        timedOut.add(entry.query);
        void entry.query.cancel();
      }
    }
    if (waiting.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };
  return {
    watch(query: Pending) {
      if ((query as unknown as { state: unknown }).state) return;
      waiting.add({ query, since: Date.now() });
      sweeper ??= setInterval(sweep, 1000).unref();
    },
    timedOut: (query: object) => timedOut.has(query),
  };
}

/** What `begin` gives: the transaction's connection, held until `end`. */
interface Scope {
  tx: postgres.TransactionSql;
  /** COMMIT (postgres.js's begin sends it) or ROLLBACK; resolves when it was answered. */
  end(commit: boolean, err?: unknown): Promise<void>;
  /** Set when the connection was lost: nothing more may be sent on it. */
  lost: Error | undefined;
}

export async function openPostgresJs(databaseUrl: string, poolSize: number): Promise<Db> {
  const settings = {
    connect_timeout: connectTimeoutMs / 1000,
    // A database host that vanishes without closing its sockets is noticed by TCP keep-alive.
    keep_alive: 10,
    // As `pg`'s pool: an idle connection is closed after 10 s, none is closed for its age, and a
    // lost one is made again at once when a statement needs it (an outage fails each at once).
    idle_timeout: 10,
    max_lifetime: null,
    backoff: () => 0,
    // Parameters are sent as text and rows parsed here (above); postgres.js's array types are not needed.
    fetch_types: false,
    onnotice: () => {},
  };
  const sql = postgres(databaseUrl, {
    ...settings,
    max: poolSize,
    transform: {
      undefined: null,
      value: { from: (value: unknown, column) => (value === null ? null : parserOf(column.type)(value as string)) },
    },
  });
  // postgres.js's own serializers and parsers would apply to the text already prepared (a JSON
  // string serialized again, 'true' sent as 'f' to a boolean): none are used.
  const options = sql.options as unknown as Record<'serializers' | 'parsers', Record<string, unknown>>;
  for (const table of [options.serializers, options.parsers]) for (const key of Object.keys(table)) delete table[key];

  // As with `pg`, a database that cannot be reached fails the opening (one statement, then idle).
  try {
    await sql.unsafe('SELECT 1');
  } catch (err) {
    await sql.end({ timeout: 0 });
    throw normalized(err);
  }

  const limit = waitingLimit();
  /** Runs one statement: prepared once per connection when it has parameters, as in db.ts. */
  const run = <Row>(target: postgres.Sql | postgres.TransactionSql, text: string, params?: readonly unknown[]) =>
    statement(async () => {
      const withParams = params !== undefined && params.length > 0;
      const query = target.unsafe(text, withParams ? params.map(textOf) : [], { prepare: withParams });
      if (target === sql) limit.watch(query.execute());
      try {
        return (await query).slice() as Row[];
      } catch (err) {
        throw limit.timedOut(query) ? new Error(timeoutMessage) : normalized(err);
      }
    });

  /**
   * A transaction's connection, through postgres.js's `begin`, the one API that learns when its
   * connection is lost (`reserve` does not, and a statement sent on a lost reserved connection
   * throws in a timer: the process ends). The scope stays open until `end`.
   */
  const begin = () =>
    new Promise<Scope>((resolve, reject) => {
      let abandoned = false;
      let decide: { commit(): void; rollback(err: unknown): void } | undefined;
      const scope: Scope = {
        tx: undefined as unknown as postgres.TransactionSql,
        lost: undefined,
        async end(commit, err) {
          // A lost connection is left alone: ROLLBACK on it would throw in a timer.
          if (scope.lost || !decide) return;
          if (commit) decide.commit();
          else decide.rollback(err);
          await finished;
        },
      };
      const finished = sql.begin(
        (tx) =>
          new Promise<void>((commit, rollback) => {
            if (abandoned) return rollback(new Error(timeoutMessage));
            clearTimeout(timer);
            decide = { commit: () => commit(), rollback };
            scope.tx = tx;
            resolve(scope);
          }),
      );
      // The outcome of COMMIT is read by `end`'s caller; here a lost connection is noted.
      finished.catch((err: unknown) => {
        clearTimeout(timer);
        if (!decide) reject(normalized(err));
        else if (isDatabaseUnavailable(err)) scope.lost ??= normalized(err) as Error;
      });
      const timer = setTimeout(() => {
        abandoned = true;
        reject(new Error(timeoutMessage));
      }, connectTimeoutMs);
    });

  let closed = false;
  const refuseClosed = () => {
    if (closed) throw new Error('The database is closed');
  };
  return {
    kind: 'postgres',
    query: async (text, params) => {
      refuseClosed();
      return run(sql, text, params);
    },
    execute: async (text, params) => {
      refuseClosed();
      await run(sql, text, params);
    },
    async transaction(fn) {
      refuseClosed();
      // A connection and BEGIN only at the transaction's first statement, if any.
      let open: Promise<Scope> | undefined;
      // The first statement of it that failed: postgres.js's COMMIT then rolls back and throws it.
      let failed: unknown;
      const inScope = async <Row>(scope: Scope, text: string, params?: readonly unknown[]) => {
        if (scope.lost) throw scope.lost;
        try {
          return await run<Row>(scope.tx, text, params);
        } catch (err) {
          failed ??= err;
          // The session is gone (its close may be learnt a moment later): nothing more is sent on it.
          if (isDatabaseUnavailable(err)) scope.lost ??= err as Error;
          throw err;
        }
      };
      const held = heldInserts();
      try {
        const result = await fn({
          async query<Row>(text: string, params?: readonly unknown[]) {
            const scope = await (open ??= begin());
            await held.send((each) => inScope(scope, each.sql, each.params));
            return inScope<Row>(scope, text, params);
          },
          execute: async (text, params) => held.hold(text, params),
        } satisfies Queryable);
        if (open) {
          const scope = await open;
          await held.send((each) => inScope(scope, each.sql, each.params));
          if (scope.lost) throw scope.lost;
          try {
            await scope.end(true);
          } catch (err) {
            // COMMIT answers ROLLBACK when a statement of the transaction had failed (and its error
            // was caught): nothing was written, which the caller must learn, as on PGlite.
            if (failed !== undefined) throw new Error(abortedCommit, { cause: err });
            throw normalized(err);
          }
        } else {
          // Only held inserts: one statement, atomic by itself.
          await held.send((each) => run(sql, each.sql, each.params));
        }
        return result;
      } catch (err) {
        const scope = await open?.catch(() => undefined);
        await scope?.end(false, err).catch(() => {});
        throw err;
      }
    },
    async listen(channel, { notify, lost }) {
      refuseClosed();
      const name = channelName(channel);
      // A session of its own, not the pool's: LISTEN holds it for as long as the listener lives.
      // postgres.js's own `listen` would LISTEN again by itself on a new connection, missing what
      // was sent meanwhile without telling; here the caller learns it (`lost`) and catches up.
      let listening = false;
      let closing = false;
      const sessionOptions = {
        ...settings,
        max: 1,
        idle_timeout: 0,
        // Not in postgres.js's types, though its own `listen` uses it: each NOTIFY received.
        onnotify: (from: string, payload: string) => {
          if (from === name) notify(payload);
        },
        onclose: () => {
          if (!listening || closing) return;
          closing = true;
          void session.end({ timeout: 0 }).catch(() => {});
          lost(new Error('The LISTEN connection ended'));
        },
      };
      const session = postgres(databaseUrl, sessionOptions);
      try {
        await session.unsafe(`LISTEN ${name}`);
        listening = true;
      } catch (err) {
        closing = true;
        await session.end({ timeout: 0 }).catch(() => {});
        throw normalized(err);
      }
      return {
        close: async () => {
          closing = true;
          await session.end({ timeout: 0 }).catch(() => {});
        },
      };
    },
    close: async () => {
      closed = true;
      // Statements under way are waited for, 5 s at most: a connection lost while a statement ran
      // keeps it as under way (postgres.js forgets it only on its next connect), which would hold
      // `end` for ever.
      await sql.end({ timeout: 5 });
    },
  };
}
