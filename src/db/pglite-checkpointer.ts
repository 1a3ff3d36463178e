import type { PGlite } from '@electric-sql/pglite';

/*
 * PGlite runs PostgreSQL as a single-user backend, which has no checkpointer: PostgreSQL's own
 * checkpoints (after checkpoint_timeout, or as the WAL nears max_wal_size) are requested of a
 * process that is not there. Without one, the data folder's WAL (pg_wal) grows with every change
 * for as long as the process runs, a crash replays all of it at the next start, and every 16 MB
 * segment is a new file. This is that checkpointer, run by the database thread between two
 * requests: once this much WAL was written since the last checkpoint, it takes one, after which
 * PostgreSQL recycles the segments the checkpoint made unneeded (docs/decisions/0031).
 */

export interface CheckpointStats {
  /** Checkpoints this thread took, and those that failed. */
  checkpoints: number;
  checkpointFailures: number;
  /** Time spent in them (the database answers nothing else meanwhile). */
  checkpointSeconds: number;
  /** WAL written since the last checkpoint's redo point. */
  walBytesSinceCheckpoint: number;
}

/** The default of TESSERA_PGLITE_CHECKPOINT_WAL_MB: a checkpoint once 64 MB of WAL were written since the last. */
export const defaultCheckpointWalMb = 64;

/** How often, at most, the WAL written is looked at (one small query). */
const checkEveryMs = 1000;

export function createCheckpointer(lite: PGlite, walBytes: number) {
  let nextCheckAt = 0;
  const stats = { checkpoints: 0, checkpointFailures: 0, checkpointSeconds: 0 };

  async function walSinceCheckpoint(): Promise<number> {
    const { rows } = await lite.query<{ since: number }>(
      `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 AS since FROM pg_control_checkpoint()`,
    );
    return rows[0]?.since ?? 0;
  }

  return {
    /**
     * Takes a checkpoint if enough WAL was written since the last one. Called with no transaction
     * open and no request running; looks at most once a second.
     */
    async runIfDue(): Promise<void> {
      const now = Date.now();
      if (now < nextCheckAt) return;
      nextCheckAt = now + checkEveryMs;
      // A database that cannot answer this fails the requests themselves, which say why.
      if ((await walSinceCheckpoint().catch(() => 0)) < walBytes) return;
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
    },

    async stats(): Promise<CheckpointStats> {
      return { ...stats, walBytesSinceCheckpoint: await walSinceCheckpoint() };
    },
  };
}
