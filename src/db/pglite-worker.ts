import { readFile } from 'node:fs/promises';
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_buffercache } from '@electric-sql/pglite/contrib/pg_buffercache';
import { createCheckpointer, type CheckpointStats } from './pglite-checkpointer.js';
import { isFolderOnDisk } from './data-dir-lock.js';
import { PgliteDiskFs } from './pglite-disk.js';
import { concat, type ArrayType } from './pglite-protocol.js';
import { createVacuumer, type VacuumStats } from './pglite-vacuum.js';
import { resetToTemplate, templateFingerprint } from './pglite-reset.js';

/**
 * The thread that owns PGlite (see pglite-connection.ts, its other end). PostgreSQL in
 * WebAssembly runs here, on its own core, while the main thread handles HTTP. Each request is one
 * buffer of PostgreSQL protocol messages that the main thread wrote (pglite-protocol.ts); it goes
 * to PGlite's public `execProtocolRawStream` inside its public `runExclusive`, and PGlite's answer goes
 * back as one transferred buffer, parsed on the main thread
 * (docs/decisions/0020-pglite-prepared-statements.md).
 */

/**
 * What the main thread asks: one buffer of messages, outside any transaction or in transaction
 * `tx` (whose first request begins it: from then on the connection is that transaction's until a
 * request with `end` commits or rolls it back), or closing.
 */
export type PgliteRequest =
  | { id: number; message: Uint8Array; tx: number | undefined; end: boolean }
  | { id: number; close: true }
  | { id: number; reset: true }
  | { id: number; stats: true };

/**
 * The answer to request `id`: PGlite's raw answer; id 0 answers the start with the array types and
 * whether the database can be reset to its template (tests only); a reset answers whether it was.
 */
export type PgliteReply = {
  id: number;
  data?: Uint8Array;
  arrayTypes?: ArrayType[];
  resettable?: boolean;
  reset?: boolean;
  /** The answer to `stats`. */
  stats?: PgliteThreadStats;
  error?: SerializedError;
};

/** What the database thread tells of itself: /metrics shows all but missingNames. */
export interface PgliteThreadStats extends CheckpointStats, VacuumStats {
  /** Bytes of JavaScript heap in use in this thread (its WebAssembly memory not counted). */
  heapUsedBytes: number;
  /** Names PostgreSQL looked for in the data folder that did not exist (pglite-disk.ts). */
  missingNames: number;
}

/** An error as it crosses the thread, with its own properties. */
export interface SerializedError {
  message: string;
  stack: string | undefined;
  properties: Record<string, string | number | boolean | null | undefined>;
}

export interface PgliteWorkerData {
  dataDir: string | undefined;
  /** Tests only: a dumpDataDir tar that a database in memory is loaded from instead of initdb. */
  template: string | undefined;
  /** A checkpoint is taken once this much WAL was written since the last (pglite-checkpointer.ts). */
  checkpointWalBytes: number;
}

if (parentPort) await serve(parentPort, workerData as PgliteWorkerData);

async function serve(port: MessagePort, { dataDir, template, checkpointWalBytes }: PgliteWorkerData): Promise<void> {
  let lite: PGlite;
  let disk: PgliteDiskFs | undefined;
  let arrayTypes: ArrayType[];
  // Tests only: the template's fingerprint, for a database in memory loaded from it (pglite-reset.ts).
  let templateState: string | undefined;
  try {
    // The options object form: with the two-argument form an undefined dataDir drops the options.
    const loadDataDir = await templateFor(dataDir, template);
    disk = isFolderOnDisk(dataDir) ? new PgliteDiskFs(dataDir) : undefined;
    lite = new PGlite({
      dataDir,
      ...(disk ? { fs: disk } : {}),
      loadDataDir,
      // The checkpointer writes dirty buffers ahead of a checkpoint with it (pglite-checkpointer.ts).
      extensions: { pg_buffercache },
      // A new WAL segment is not filled with zeros first (16 MB written while every request waits):
      // PGlite runs without fsync, for which the zeros reserve the disk space (decision 0031).
      startParams: [...PGlite.defaultStartParams, '-c', 'wal_init_zero=off'],
    });
    await lite.waitReady;
    // This session listens on nothing yet: the events trigger need not look for listeners (migration 0175, db.ts).
    await lite.exec('SET tessera.listening = off');
    if (loadDataDir && template) templateState = await templateFingerprint(lite, template);
    // The array types PGlite's own query() would parse (its _initArrayTypes reads the same list).
    arrayTypes = (
      await lite.query<ArrayType>(
        `SELECT b.oid, b.typarray FROM pg_catalog.pg_type a
           JOIN pg_catalog.pg_type b ON b.oid = a.typelem
          WHERE a.typcategory = 'A' GROUP BY b.oid, b.typarray ORDER BY b.oid`,
      )
    ).rows;
  } catch (err) {
    // The main thread ends this thread when it reads the error.
    port.postMessage({ id: 0, error: serializeError(err) } satisfies PgliteReply);
    return;
  }

  // PGlite is one connection. While a transaction holds it, only that transaction's requests
  // run; the others wait in arrival order.
  const waiting: PgliteRequest[] = [];
  let holder: number | undefined;
  let busy = false;
  let closed = false;
  const checkpointer = createCheckpointer(lite, checkpointWalBytes);
  const vacuumer = createVacuumer(lite);

  const answer = async (request: PgliteRequest): Promise<PgliteReply> => {
    try {
      if ('close' in request) {
        closed = true;
        clearInterval(idleCheck);
        await lite.close();
        return { id: request.id };
      }
      if ('stats' in request) {
        const stats = {
          heapUsedBytes: getHeapStatistics().used_heap_size,
          missingNames: disk?.missingNames ?? 0,
          ...(await checkpointer.stats()),
          ...vacuumer.stats(),
        };
        return { id: request.id, stats };
      }
      if ('reset' in request) {
        // A transaction left open is not put back: the database is not used again.
        const reset =
          holder === undefined && templateState !== undefined && (await resetToTemplate(lite, templateState));
        return { id: request.id, reset };
      }
      if (request.tx !== undefined) holder = request.end ? undefined : request.tx;
      // Inside a transaction nothing is written to the data folder until it ends, as PGlite's
      // own query() does. The answer is taken as it comes (execProtocolRawStream): execProtocolRaw
      // also parses every message of it, decoding each row's fields into strings, for its own
      // listeners — work the main thread does, notifications included (pglite-protocol.ts).
      const chunks: Uint8Array[] = [];
      await lite.runExclusive(() =>
        lite.execProtocolRawStream(request.message, {
          syncToFs: holder === undefined,
          // A view of PGlite's memory, which its next output overwrites: copied.
          onRawData: (chunk) => chunks.push(chunk.slice()),
        }),
      );
      return { id: request.id, data: chunks.length === 1 ? chunks[0]! : concat(chunks) };
    } catch (err) {
      return { id: request.id, error: serializeError(err) };
    }
  };

  const next = (): PgliteRequest | undefined => {
    const index = holder === undefined ? 0 : waiting.findIndex((each) => 'tx' in each && each.tx === holder);
    return index < 0 ? undefined : waiting.splice(index, 1)[0];
  };

  /** Between two requests, outside any transaction: PostgreSQL's upkeep that is due, if any. */
  const upkeepIfDue = async () => {
    if (holder !== undefined || closed) return;
    await vacuumer.runIfDue();
    await checkpointer.runIfDue();
  };

  const pump = async () => {
    if (busy) return;
    busy = true;
    try {
      await upkeepIfDue();
      for (let request = next(); request; request = next()) {
        const reply = await answer(request);
        port.postMessage(reply, reply.data ? [reply.data.buffer as ArrayBuffer] : []);
        await upkeepIfDue();
      }
    } finally {
      busy = false;
    }
  };
  // Upkeep also falls due while no request comes (an idle thread looks once a second).
  const idleCheck = setInterval(() => void pump(), 1000);
  idleCheck.unref();

  port.on('message', (request: PgliteRequest) => {
    waiting.push(request);
    void pump();
  });
  port.postMessage({ id: 0, arrayTypes, resettable: templateState !== undefined } satisfies PgliteReply);
}

/** The template's tar for a database in memory (which always starts empty); a folder on disk never uses it. */
async function templateFor(dataDir: string | undefined, template: string | undefined): Promise<Blob | undefined> {
  if (template === undefined || isFolderOnDisk(dataDir)) return undefined;
  return new Blob([await readFile(template)]);
}

/** Keeps the message and every own property with a plain value. */
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
