import { Worker } from 'node:worker_threads';
import { abortedCommit } from './errors.js';
import { attribute, countOf, type Batch, type Statement } from './held-statements.js';
import {
  concat,
  readReply,
  rowParsers,
  simpleQuery,
  statementWriter,
  type ArrayType,
  type Reply,
} from './pglite-protocol.js';
import { defaultCheckpointWalMb } from '../config-rules.js';
import type {
  PgliteReply,
  PgliteRequest,
  PgliteThreadStats,
  PgliteWorkerData,
  SerializedError,
} from './pglite-worker.js';

/**
 * The main thread's end of the PGlite worker: one message per call, holding the statements a
 * transaction held back (held-statements.ts) before the call's own statement or its end.
 */
export interface PgliteConnection {
  /**
   * Runs `before` and then `sql` outside any transaction, or in transaction `tx`, which its first
   * call opens; answers the rows of `sql`.
   */
  query<Row>(
    sql: string,
    params: readonly unknown[] | undefined,
    tx?: number,
    before?: readonly Batch[],
  ): Promise<Row[]>;
  /** Runs `before` in transaction `tx` and commits or rolls it back, in one message. */
  finish(tx: number, commit: boolean, before?: readonly Batch[]): Promise<void>;
  /** Runs `statements` as one transaction outside any other, in one message. */
  atomic(statements: readonly Batch[]): Promise<void>;
  /** Calls `notify` with each notification's payload on `channel` (after LISTEN); the answer stops it. */
  onNotification(channel: string, notify: (payload: string) => void): () => void;
  /** The worker thread's heap and checkpoints (/metrics). */
  stats(): Promise<PgliteThreadStats>;
  close(): Promise<void>;
}

// Built, this file is dist/db/pglite-connection.js beside the worker's .js. Run from the sources
// through tsx (the tests), both are .ts; on Node 20 a worker given `--import tsx` still fails on
// its .ts entry (ERR_UNKNOWN_FILE_EXTENSION), so there the worker is a line that registers tsx in
// the worker and then imports the worker's .ts.
const fromSources = import.meta.url.endsWith('.ts');
const workerUrl = new URL(fromSources ? './pglite-worker.ts' : './pglite-worker.js', import.meta.url);
const workerEntry = fromSources
  ? {
      source: `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => {
        register();
        return import(${JSON.stringify(workerUrl.href)});
      });`,
      eval: true,
    }
  : { source: workerUrl, eval: false };

/**
 * The worker's Node options: only the CPU profiler's, so that `--cpu-prof` profiles the database
 * thread too, under the profiler's default file name (the main thread's --cpu-prof-name is left
 * out, or both threads would write one file). The others are the main thread's: a preload
 * (--import) runs in the worker too, and the benchmark's stops the whole process when its
 * standard input ends, which a worker's does at once; Node 24 gives a test file's process every
 * test-runner option, with which the test file's tests were cancelled before the worker answered.
 */
function workerExecArgv(): string[] {
  const options: string[] = [];
  const args = process.execArgv;
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === '--cpu-prof' || /^--cpu-prof-(dir|interval)=/.test(arg)) options.push(arg);
    else if (/^--cpu-prof-(dir|interval)$/.test(arg)) options.push(arg, args[(index += 1)]!);
  }
  return options;
}

/** A worker whose database was put back to its template when its connection closed (tests only). */
interface IdleWorker {
  worker: Worker;
  arrayTypes: ArrayType[];
  /** Takes it out of the idle list if it fails or stops while it waits there. */
  onExit: () => void;
}

/**
 * Tests only: per template, the workers whose database is back at the template's state, for the
 * process's next connection to the same template (pglite-reset.ts). At most two are kept.
 */
const idleWorkers = new Map<string, IdleWorker[]>();
const idleWorkersKept = 2;

/**
 * Starts PGlite on `dataDir` in a worker thread, and answers when it is ready. A new database
 * starts from `template` (a dumpDataDir tar; tests only) when one is given; in memory, it is a
 * worker of an earlier connection to the same template, put back to the template's state, if
 * one is idle.
 */
export async function connectPgliteWorker(
  dataDir: string | undefined,
  {
    template,
    checkpointWalBytes = defaultCheckpointWalMb * 1024 * 1024,
  }: { template?: string; checkpointWalBytes?: number } = {},
): Promise<PgliteConnection> {
  const inMemory = dataDir === undefined || /^memory:\/\//.test(dataDir);
  // Workers kept for reuse are told apart by what they were started with.
  const reusable = inMemory && template !== undefined ? `${checkpointWalBytes} ${template}` : undefined;
  const reused = reusable === undefined ? undefined : idleWorkers.get(reusable)?.pop();
  if (reused) reused.worker.off('exit', reused.onExit).off('error', reused.onExit);
  const worker =
    reused?.worker ??
    new Worker(workerEntry.source, {
      eval: workerEntry.eval,
      workerData: { dataDir, template, checkpointWalBytes } satisfies PgliteWorkerData,
      execArgv: workerExecArgv(),
    });
  const pending = new Map<number, (reply: PgliteReply | Error) => void>();
  let lastId = 0;
  // Set once the worker cannot answer any more: it failed, exited or was closed.
  let ended: Error | undefined;

  const end = (reason: Error) => {
    ended ??= reason;
    for (const settle of pending.values()) settle(ended);
    pending.clear();
  };
  const subscribers = new Map<string, Set<(payload: string) => void>>();
  const onMessage = (reply: PgliteReply) => {
    const settle = pending.get(reply.id);
    pending.delete(reply.id);
    // An idle worker does not keep the process alive, as PGlite in the main thread would not.
    if (pending.size === 0) worker.unref();
    settle?.(reply);
  };
  const onError = (err: Error) => end(new Error(`The PGlite worker failed: ${err.message}`, { cause: err }));
  const onExit = (code: number) => end(new Error(`The PGlite worker stopped (exit code ${code})`));
  worker.on('message', onMessage).on('error', onError).on('exit', onExit);

  const send = (id: number, request: PgliteRequest | undefined): Promise<PgliteReply | Error> => {
    if (ended) return Promise.resolve(ended);
    const replied = new Promise<PgliteReply | Error>((resolve) => pending.set(id, resolve));
    if (pending.size === 1) worker.ref();
    if (request) worker.postMessage(request, 'message' in request ? [request.message.buffer as ArrayBuffer] : []);
    return replied;
  };
  // The error is made here, after the await, so that its stack shows the caller's async frames.
  const call = async (id: number, request: PgliteRequest | undefined): Promise<PgliteReply> => {
    const reply = await send(id, request);
    if (reply instanceof Error) throw new Error(reply.message, { cause: reply });
    if (reply.error) throw databaseError(reply.error);
    return reply;
  };

  let arrayTypes: ArrayType[];
  let resettable = reused !== undefined;
  if (reused) {
    arrayTypes = reused.arrayTypes;
    worker.unref();
  } else {
    try {
      // The worker answers id 0 when PGlite is ready, or with the error that stopped it.
      const ready = await call(0, undefined);
      arrayTypes = ready.arrayTypes ?? [];
      resettable = ready.resettable === true;
    } catch (err) {
      await worker.terminate();
      throw err;
    }
  }
  const parsers = rowParsers(arrayTypes);

  /** Puts the database back to its template and keeps the worker for the next connection, if it can. */
  const keepForReuse = async (): Promise<boolean> => {
    if (reusable === undefined || !resettable) return false;
    const idle = idleWorkers.get(reusable) ?? [];
    if (idle.length >= idleWorkersKept) return false;
    const id = ++lastId;
    const reply = await call(id, { id, reset: true }).catch(() => undefined);
    if (!reply?.reset || ended) return false;
    end(new Error('The database is closed'));
    worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    worker.unref();
    const kept: IdleWorker = {
      worker,
      arrayTypes,
      onExit: () => {
        const index = idle.indexOf(kept);
        if (index >= 0) idle.splice(index, 1);
      },
    };
    worker.once('exit', kept.onExit).once('error', kept.onExit);
    idle.push(kept);
    idleWorkers.set(reusable, idle);
    return true;
  };
  const writer = statementWriter();
  // Transactions whose first statement has been sent (with BEGIN before it).
  const open = new Set<number>();

  /**
   * Sends `statements` as one message, between `begin` and `end` (simple queries) when given, and
   * reads the answer. A database error is thrown with this caller's stack; when a held statement
   * caused it, it is attributed to that statement's execute call. Each new name's Parse is
   * settled from the answer: known to have run, or forgotten so that its text is parsed again.
   */
  const exchange = async (
    statements: readonly (Statement | Batch)[],
    { tx, begin, end }: { tx: number | undefined; begin: boolean; end?: 'COMMIT' | 'ROLLBACK' },
  ): Promise<Reply> => {
    const parts: Uint8Array[] = begin ? [simpleQuery('BEGIN')] : [];
    writer.message();
    const written = statements.map((each) => {
      const statement = writer.statement(each.sql, each.params);
      parts.push(...statement.parts);
      return statement;
    });
    if (end) parts.push(simpleQuery(end));
    const id = ++lastId;
    let data: Uint8Array | undefined;
    try {
      ({ data } = await call(id, { id, message: concat(parts), tx, end: end !== undefined }));
    } catch (err) {
      // No answer to read: whether its Parses ran is unknown, so their texts are parsed again.
      for (const statement of written) if (statement.parsedAs !== undefined) writer.settle(statement.parsedAs, false);
      throw err;
    }
    const reply = readReply(data ?? new Uint8Array(0), parsers);
    // Delivered before the caller reads the answer, each apart from it (as an event would be).
    for (const { channel, payload } of reply.notifications) {
      for (const notify of subscribers.get(channel) ?? []) queueMicrotask(() => notify(payload));
    }
    // The first `reply.parsed` Parses ran (all of them without an error); a later one did not.
    let parsed = reply.error ? reply.parsed : Infinity;
    for (const statement of written) {
      if (!statement.parses) continue;
      const ran = parsed > 0;
      parsed -= 1;
      if (statement.parsedAs !== undefined) writer.settle(statement.parsedAs, ran);
    }
    if (!reply.error) {
      // Each statement's CommandComplete follows BEGIN's, in the order they were written.
      const first = begin ? 1 : 0;
      statements.forEach((each, index) => {
        if ('held' in each) countOf(each, reply.counts[first + index]);
      });
      return reply;
    }
    const err = Object.assign(new Error(reply.error.message), reply.error.fields);
    const failed = statements[reply.error.completedBefore - (begin ? 1 : 0)];
    throw failed && 'held' in failed ? attribute(err, failed.held) : err;
  };

  // Set when close() starts: from then on only the transactions already open may go on (to their
  // end, which the close waits for); new work is refused, so that none reaches the database after
  // it was put back to its template for another connection (keepForReuse) or closed.
  let closing = false;
  const refuseNewWork = () => {
    if (closing) throw new Error('The database is closed');
  };

  const atomic = async (statements: readonly Batch[]) => {
    if (statements.length === 0) return;
    refuseNewWork();
    // One statement is atomic by itself.
    const several = statements.length > 1;
    const reply = await exchange(statements, { tx: undefined, begin: several, ...(several ? { end: 'COMMIT' } : {}) });
    if (several && reply.lastCommand === 'ROLLBACK') throw new Error(abortedCommit);
  };

  return {
    async query<Row>(sql: string, params: readonly unknown[] | undefined, tx?: number, before: readonly Batch[] = []) {
      // A statement outside any transaction, or a transaction's first, is new work.
      const begin = tx !== undefined && !open.has(tx);
      if (tx === undefined || begin) refuseNewWork();
      if (begin) open.add(tx);
      return (await exchange([...before, { sql, params: params ?? [] }], { tx, begin })).rows as Row[];
    },
    async finish(tx, commit, before = []) {
      // Nothing opened it: what it held is a transaction of its own.
      if (!open.delete(tx)) return commit ? atomic(before) : undefined;
      const reply = await exchange(commit ? before : [], { tx, begin: false, end: commit ? 'COMMIT' : 'ROLLBACK' });
      // COMMIT answers ROLLBACK when a statement of the transaction had failed: nothing was written.
      if (commit && reply.lastCommand === 'ROLLBACK') {
        throw new Error(abortedCommit);
      }
    },
    atomic,
    onNotification(channel, notify) {
      let set = subscribers.get(channel);
      if (!set) subscribers.set(channel, (set = new Set()));
      set.add(notify);
      return () => {
        set.delete(notify);
        if (set.size === 0) subscribers.delete(channel);
      };
    },
    async stats() {
      const id = ++lastId;
      const { stats } = await call(id, { id, stats: true });
      if (!stats) throw new Error('The PGlite worker answered no stats');
      return stats;
    },
    async close() {
      if (ended) return;
      closing = true;
      if (await keepForReuse()) return;
      const id = ++lastId;
      await call(id, { id, close: true });
      end(new Error('The database is closed'));
      await worker.terminate();
    },
  };
}

/**
 * The worker's error as thrown in this thread: its message and properties (code, constraint,
 * detail, …) as PGlite gave them, with this thread's stack. An error that is not PostgreSQL's
 * (no code) keeps the worker's stack as its cause, since that is where it happened.
 */
function databaseError(serialized: SerializedError): Error {
  const error = Object.assign(new Error(serialized.message), serialized.properties);
  if (serialized.properties.code === undefined && serialized.stack) {
    error.cause = Object.assign(new Error(serialized.message), { stack: serialized.stack });
  }
  return error;
}
