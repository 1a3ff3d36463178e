import { readFile } from 'node:fs/promises';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

/**
 * The thread that owns PGlite (see pglite-connection.ts, its other end). PostgreSQL in
 * WebAssembly and PGlite's protocol code run here, on their own core, while the main thread
 * handles HTTP; each statement is one message each way. Only PGlite's public API is used:
 * query(), transaction() and close() (docs/decisions/0006-one-database-code-path.md).
 */

/**
 * What the main thread asks: one statement (in transaction `tx`, which its first statement
 * opens), the end of a transaction, or closing.
 */
export type PgliteRequest =
  | { id: number; sql: string; params: readonly unknown[] | undefined; tx: number | undefined }
  | { id: number; finish: number; commit: boolean }
  | { id: number; close: true };

/** The answer to request `id`; id 0 answers the start. */
export type PgliteReply = { id: number; rows?: unknown[]; error?: SerializedError };

/** An error as it crosses the thread, with its own properties (PostgreSQL's code, constraint, detail, …). */
export interface SerializedError {
  message: string;
  stack: string | undefined;
  properties: Record<string, string | number | boolean | null | undefined>;
}

export interface PgliteWorkerData {
  dataDir: string | undefined;
  /** Tests only: a dumpDataDir tar that a database in memory is loaded from instead of initdb. */
  template: string | undefined;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

if (parentPort) await serve(parentPort, workerData as PgliteWorkerData);

async function serve(port: MessagePort, { dataDir, template }: PgliteWorkerData): Promise<void> {
  let lite: PGlite;
  try {
    const identity = (value: string) => value;
    // int8 and numeric as strings, as on PostgreSQL, so that money never passes through a float.
    const parsers = { [INT8_OID]: identity, [NUMERIC_OID]: identity };
    // The options object form: with the two-argument form an undefined dataDir drops the options.
    lite = new PGlite({ dataDir, parsers, loadDataDir: await templateFor(dataDir, template) });
    await lite.waitReady;
  } catch (err) {
    // The main thread ends this thread when it reads the error.
    port.postMessage({ id: 0, error: serializeError(err) } satisfies PgliteReply);
    return;
  }

  const run = async (target: Pick<PGlite, 'query'>, sql: string, params: readonly unknown[] | undefined) =>
    (await target.query(sql, params as unknown[] | undefined)).rows;

  // PGlite is one connection: its transaction() holds that connection exclusively until done;
  // statements outside it wait for it.
  const transactions = new Map<number, Promise<LiteTransaction>>();

  const answer = async (request: PgliteRequest): Promise<PgliteReply> => {
    try {
      if ('finish' in request) {
        const open = transactions.get(request.finish);
        transactions.delete(request.finish);
        // A transaction that failed to open has already answered its statement with the error.
        const transaction = await open?.catch(() => undefined);
        await transaction?.finish(request.commit);
        return { id: request.id };
      }
      if ('sql' in request) {
        if (request.tx === undefined) return { id: request.id, rows: await run(lite, request.sql, request.params) };
        let open = transactions.get(request.tx);
        if (!open) {
          open = openLiteTransaction(lite);
          transactions.set(request.tx, open);
        }
        const { tx } = await open;
        return { id: request.id, rows: await run(tx, request.sql, request.params) };
      }
      await lite.close();
      return { id: request.id };
    } catch (err) {
      return { id: request.id, error: serializeError(err) };
    }
  };

  port.on('message', (request: PgliteRequest) => {
    void answer(request).then((reply) => {
      try {
        port.postMessage(reply);
      } catch (err) {
        // Rows that cannot be cloned (none of PostgreSQL's types today) fail their statement only.
        port.postMessage({ id: request.id, error: serializeError(err) } satisfies PgliteReply);
      }
    });
  });
  port.postMessage({ id: 0 } satisfies PgliteReply);
}

/** The template's tar for a database in memory (which always starts empty); a folder on disk never uses it. */
async function templateFor(dataDir: string | undefined, template: string | undefined): Promise<Blob | undefined> {
  const onDisk = dataDir !== undefined && !/^[a-z]+:\/\//.test(dataDir);
  if (template === undefined || onDisk) return undefined;
  return new Blob([await readFile(template)]);
}

interface LiteTransaction {
  tx: Pick<PGlite, 'query'>;
  /** Commits (true) or rolls back (false), and waits for PGlite to finish either. */
  finish(commit: boolean): Promise<void>;
}

/** Opens a PGlite transaction that stays open until finish() is called. */
function openLiteTransaction(lite: PGlite): Promise<LiteTransaction> {
  const rollback = new Error('rollback');
  let settle!: (commit: boolean) => void;
  const decided = new Promise<boolean>((resolve) => (settle = resolve));
  return new Promise<LiteTransaction>((resolveOpen, rejectOpen) => {
    const done = lite
      .transaction(async (tx) => {
        resolveOpen({
          tx,
          async finish(commit) {
            settle(commit);
            await done.catch((err: unknown) => {
              if (err !== rollback) throw err;
            });
          },
        });
        if (!(await decided)) throw rollback;
      })
      .catch((err: unknown) => {
        rejectOpen(err);
        throw err;
      });
    done.catch(() => {});
  });
}

/**
 * Keeps the message and every own property with a plain value (PostgreSQL's code, constraint,
 * detail, table, …); values that cannot cross the thread (PGlite's copy of the query's params)
 * are left out.
 */
function serializeError(err: unknown): SerializedError {
  if (!(err instanceof Error)) return { message: String(err), stack: undefined, properties: {} };
  const properties: SerializedError['properties'] = {};
  for (const [key, value] of Object.entries(err)) {
    if (value === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof value)) {
      properties[key] = value as SerializedError['properties'][string];
    }
  }
  if (err.name !== 'Error') properties.name = err.name;
  return { message: err.message, stack: err.stack, properties };
}
