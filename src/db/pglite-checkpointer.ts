import type { PGlite } from '@electric-sql/pglite';

/*
 * PGlite runs PostgreSQL as a single-user backend, which has no checkpointer: PostgreSQL's own
 * checkpoints (after checkpoint_timeout, or as the WAL nears max_wal_size) are requested of a
 * process that is not there. Without one, the data folder's WAL (pg_wal) grows with every change
 * for as long as the process runs, a crash replays all of it at the next start, and every 16 MB
 * segment is a new file. This is that checkpointer, run by the database thread between two
 * requests: once this much WAL was written since the last checkpoint, it takes one, after which
 * PostgreSQL recycles the segments the checkpoint made unneeded (docs/decisions/0031).
 *
 * A checkpoint writes every buffer changed since the last, and the one connection answers nothing
 * meanwhile (54–78 ms per 64 MB of WAL, the largest pause of a busy PGlite). PostgreSQL's
 * checkpointer spreads those writes over the interval (checkpoint_completion_target); this one
 * writes them ahead in slices: from half the interval on it lists the buffers that are dirty
 * (pg_buffercache) and writes a slice of them between two requests every few milliseconds
 * (pg_buffercache_evict writes a dirty buffer and frees it; a page used again is read back from
 * the operating system's cache), so the checkpoint itself finds few left (docs/decisions/0034).
 */

export interface CheckpointStats {
  /** Checkpoints this thread took, and those that failed. */
  checkpoints: number;
  checkpointFailures: number;
  /** Time spent in them (the database answers nothing else meanwhile). */
  checkpointSeconds: number;
  /** WAL written since the last checkpoint's redo point. */
  walBytesSinceCheckpoint: number;
  /** Steps of writing ahead (a list of dirty buffers, or a slice of them written) done and failed. */
  writeAheadSteps: number;
  writeAheadFailures: number;
  /** Dirty buffers written ahead of a checkpoint, and the time spent listing and writing them. */
  buffersWrittenAhead: number;
  writeAheadSeconds: number;
}

/** How often, at most, the WAL written is looked at (one small query). */
const checkEveryMs = 1000;
/** Buffers written ahead at a time (a few milliseconds), and how often. */
const sliceBuffers = 128;
const sliceEveryMs = 50;

/** Where pg_buffercache's functions live in PGlite's database: apart from Tessera's tables. */
const upkeepSchema = 'tessera_upkeep';

export function createCheckpointer(lite: PGlite, walBytes: number) {
  let nextCheckAt = 0;
  let nextSliceAt = 0;
  /** Buffers listed as dirty and not yet written ahead. */
  let dirty: number[] = [];
  /** WAL since the checkpoint at which the next list is taken: half the interval, then each quarter. */
  let listAt = walBytes / 2;
  /**
   * The last checkpoint's redo point at the last look: another one now means a checkpoint was
   * taken elsewhere (a CHECKPOINT statement), however much WAL followed it before this look.
   */
  let lastRedo = '';
  let extensionReady = false;
  const stats = {
    checkpoints: 0,
    checkpointFailures: 0,
    checkpointSeconds: 0,
    writeAheadSteps: 0,
    writeAheadFailures: 0,
    buffersWrittenAhead: 0,
    writeAheadSeconds: 0,
  };

  async function walSinceCheckpoint(): Promise<{ since: number; redo: string }> {
    const { rows } = await lite.query<{ since: number; redo: string }>(
      `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 AS since, redo_lsn::text AS redo
         FROM pg_control_checkpoint()`,
    );
    return rows[0] ?? { since: 0, redo: '' };
  }

  async function listDirty(): Promise<number[]> {
    if (!extensionReady) {
      await lite.exec(
        `CREATE SCHEMA IF NOT EXISTS ${upkeepSchema}; CREATE EXTENSION IF NOT EXISTS pg_buffercache SCHEMA ${upkeepSchema}`,
      );
      extensionReady = true;
    }
    const { rows } = await lite.query<{ bufferid: number }>(
      `SELECT bufferid FROM ${upkeepSchema}.pg_buffercache WHERE isdirty ORDER BY bufferid`,
    );
    return rows.map((row) => row.bufferid);
  }

  async function writeSlice(): Promise<void> {
    const slice = dirty.slice(0, sliceBuffers);
    dirty = dirty.slice(sliceBuffers);
    const { rows } = await lite.query<{ written: number }>(
      `SELECT count(*) FILTER (WHERE e.buffer_flushed)::int AS written
         FROM unnest($1::int[]) AS b (id), ${upkeepSchema}.pg_buffercache_evict(b.id) AS e`,
      [slice],
    );
    stats.buffersWrittenAhead += rows[0]?.written ?? 0;
  }

  /** Times one step of writing ahead; a failed step leaves the rest to the checkpoint, as before. */
  async function writingAhead(step: () => Promise<void>): Promise<void> {
    const started = performance.now();
    try {
      await step();
      stats.writeAheadSteps += 1;
    } catch {
      stats.writeAheadFailures += 1;
      // Tried again from the next list (a quarter on); the checkpoint writes what is left. The
      // schema may be gone (a database put back to its template, or dropped): made again then.
      dirty = [];
      extensionReady = false;
    } finally {
      stats.writeAheadSeconds += (performance.now() - started) / 1000;
    }
  }

  /** A new interval: nothing listed, the first list at its half. */
  function intervalStarts(): void {
    dirty = [];
    listAt = walBytes / 2;
  }

  async function checkpoint(): Promise<void> {
    intervalStarts();
    const started = performance.now();
    try {
      await lite.exec('CHECKPOINT');
      stats.checkpoints += 1;
    } catch {
      // Tried again at the next look; failures are counted on /metrics.
      stats.checkpointFailures += 1;
    } finally {
      stats.checkpointSeconds += (performance.now() - started) / 1000;
    }
  }

  return {
    /**
     * Takes a checkpoint if enough WAL was written since the last one, or writes ahead a slice of
     * the buffers it will write. Called with no transaction open and no request running; looks at
     * the WAL at most once a second.
     */
    async runIfDue(): Promise<void> {
      const now = Date.now();
      if (dirty.length > 0 && now >= nextSliceAt) {
        await writingAhead(writeSlice);
        nextSliceAt = Date.now() + sliceEveryMs;
        return;
      }
      if (now < nextCheckAt) return;
      nextCheckAt = now + checkEveryMs;
      // A database that cannot answer this fails the requests themselves, which say why.
      const { since, redo } = await walSinceCheckpoint().catch(() => ({ since: 0, redo: '' }));
      // Someone else's CHECKPOINT (or a failed look) starts the interval again. Told by the redo
      // point, not by less WAL since: a CHECKPOINT followed by more WAL than the last look saw,
      // within a second, once left the next list a quarter past where the new interval wanted it.
      if (redo !== lastRedo) intervalStarts();
      lastRedo = redo;
      if (since >= walBytes) return checkpoint();
      if (since >= listAt && dirty.length === 0) {
        listAt = since + walBytes / 4;
        await writingAhead(async () => {
          dirty = await listDirty();
        });
      }
    },

    async stats(): Promise<CheckpointStats> {
      return { ...stats, walBytesSinceCheckpoint: (await walSinceCheckpoint()).since };
    },
  };
}
