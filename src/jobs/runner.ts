import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import { failureLevel } from '../db/errors.js';

/** Work that falls due later; each kind has one handler, given the id of the object concerned. */
export type JobHandler = (objectId: string) => Promise<void>;

const leaseMs = 60_000;
const batchSize = 50;

/**
 * Runs scheduled jobs (asynchronous settlements, after-the-fact reversals, pre-authorization
 * expiry). A job is claimed with a lease via FOR UPDATE SKIP LOCKED, so any number of processes
 * can share the table and a process that dies mid-job only delays it until the lease ends.
 * Handlers must be idempotent: they re-check the object's state in a conditional update.
 */
export function createJobRunner({
  db,
  clock,
  logger,
  pollIntervalMs,
  processId,
}: {
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  pollIntervalMs: number;
  /** This process's heartbeat id, written with each lease: a dead process's jobs are released at once. */
  processId: string;
}) {
  const handlers = new Map<string, JobHandler>();
  const periodic: Array<{ everyMs: number; nextAt: number; run: () => Promise<unknown> }> = [];
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;

  async function claimDue(): Promise<Array<{ id: string; kind: string; object_id: string }>> {
    const now = clock.now();
    return db.query(
      `UPDATE scheduled_jobs SET locked_until = $2, locked_by = $3, attempts = attempts + 1
       WHERE id IN (
         SELECT id FROM scheduled_jobs
         WHERE done_at IS NULL AND run_at <= $1 AND (locked_until IS NULL OR locked_until <= $1)
         ORDER BY run_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)
       RETURNING id, kind, object_id`,
      [now, new Date(now.getTime() + leaseMs), processId],
    );
  }

  async function runDueOnce(): Promise<number> {
    let done = 0;
    const nowMs = clock.now().getTime();
    for (const task of periodic) {
      if (task.nextAt > nowMs) continue;
      task.nextAt = nowMs + task.everyMs;
      await task.run().catch((err: unknown) => logger[failureLevel(err)]({ err }, 'periodic task failed'));
    }
    for (;;) {
      const jobs = await claimDue();
      for (const job of jobs) {
        const handler = handlers.get(job.kind);
        try {
          if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
          await handler(job.object_id);
          await db.query('UPDATE scheduled_jobs SET done_at = $2, locked_until = NULL WHERE id = $1', [
            job.id,
            clock.now(),
          ]);
          done++;
        } catch (err) {
          // The job stays due; it is tried again once its lease has run out.
          logger[failureLevel(err)]({ err, jobId: job.id, kind: job.kind }, 'scheduled job failed');
          await db.query('UPDATE scheduled_jobs SET last_error = $2 WHERE id = $1', [
            job.id,
            String((err as Error).message).slice(0, 500),
          ]);
        }
      }
      if (jobs.length < batchSize) return done;
    }
  }

  function runDue(): Promise<number> {
    running ??= runDueOnce().finally(() => {
      running = undefined;
    });
    return running;
  }

  function arm(): void {
    timer = setTimeout(() => {
      runDue()
        .catch((err: unknown) => logger[failureLevel(err)]({ err }, 'scheduled jobs could not be run'))
        .finally(() => {
          if (timer) arm();
        });
    }, pollIntervalMs);
    timer.unref();
  }

  return {
    register(kind: string, handler: JobHandler): void {
      handlers.set(kind, handler);
    },

    /** A task run with the jobs about every `everyMs` (housekeeping such as purging old keys). */
    every(everyMs: number, run: () => Promise<unknown>): void {
      periodic.push({ everyMs, nextAt: 0, run });
    },

    /** Schedules a job inside the caller's transaction, so it exists exactly when the change does. */
    async schedule(tx: Queryable, kind: string, objectId: string, runAt: Date): Promise<void> {
      await tx.execute('INSERT INTO scheduled_jobs (kind, object_id, run_at) VALUES ($1, $2, $3)', [
        kind,
        objectId,
        runAt,
      ]);
    },

    /** Runs every job due now; concurrent calls share one run. Returns how many jobs completed. */
    runDue,

    start(): void {
      if (!timer) arm();
    },

    async stop(): Promise<void> {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}

export type JobRunner = ReturnType<typeof createJobRunner>;
