import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/db.js';

/**
 * Process heartbeats (docs/decisions/0010-process-heartbeats.md). Each process has a
 * row in tessera_processes that it refreshes every `beatEveryMs`; a claim it makes (a delivery
 * lease, a job lease, an Idempotency-Key) names it. A process whose row has not been refreshed for
 * `staleAfterMs` is taken to be dead: at each beat, every live process releases the claims of the
 * dead ones (deliveries and jobs due again at once, keys free for a retry) and deletes their rows,
 * so that a `kill -9` delays that work by about `staleAfterMs` plus a beat, not by a whole lease.
 *
 * Liveness is measured on the database's clock (now()), not the injected clock: it is about real
 * time elapsed between processes on different hosts, and a test that moves its own clock must not
 * make its neighbours look dead.
 */
export const beatEveryMs = 2_000;
export const staleAfterMs = 8_000;

export interface Heartbeat {
  /** This process's id in tessera_processes, written with its claims. */
  readonly processId: string;
  /** Refreshes this process's row and releases the claims of processes found dead; answers how many died. */
  beat(): Promise<number>;
  start(): void;
  /**
   * Marks whether this process LISTENs for events (src/events/feed.ts): the events_notify trigger
   * sends notifications only while some live process does (migration 0140).
   */
  listensEvents(listening: boolean): Promise<void>;
  /**
   * Whether a process of a version before migration 0180 is still registered (a rolling upgrade
   * under way): it sends only bodies kept in delivery rows, so new deliveries keep theirs meanwhile
   * (docs/decisions/0035). Read at registration and at every beat.
   */
  olderProcessesAlive(): boolean;
  /** Stops beating and deletes the row: what this process still holds is free at once. */
  stop(): Promise<void>;
}

export async function registerProcess({
  db,
  kind,
  logger,
  onReleased,
}: {
  db: Db;
  kind: 'api' | 'worker';
  logger: FastifyBaseLogger;
  /** Called when claims of dead processes were released (the dispatcher claims them at once). */
  onReleased?: () => void;
}): Promise<Heartbeat> {
  const processId = `proc_${randomBytes(10).toString('hex')}`;
  // Read with the registration and with every beat: Heartbeat.olderProcessesAlive.
  const olderProcessRow = 'EXISTS (SELECT 1 FROM tessera_processes WHERE NOT sends_event_bodies) AS older';
  let olderProcesses = true;
  const register = async () => {
    const [row] = await db.query<{ older: boolean }>(
      `INSERT INTO tessera_processes (id, kind, host, pid, sends_event_bodies) VALUES ($1, $2, $3, $4, true)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()
       RETURNING ${olderProcessRow}`,
      [processId, kind, hostname(), process.pid],
    );
    olderProcesses = row?.older !== false;
  };
  await register();
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<number> | undefined;

  async function beatOnce(): Promise<number> {
    const [row] = await db.query<{ alive: string | number; dead: string[] | null; older: boolean }>(
      `WITH beat AS (UPDATE tessera_processes SET heartbeat_at = now() WHERE id = $1 RETURNING id)
       SELECT (SELECT count(*) FROM beat) AS alive,
              ARRAY(SELECT id FROM tessera_processes
                    WHERE id <> $1 AND heartbeat_at < now() - $2 * interval '1 millisecond') AS dead,
              ${olderProcessRow}`,
      [processId, staleAfterMs],
    );
    olderProcesses = row?.older !== false;
    // Taken for dead by another process (a long pause): the row comes back; leases that were
    // released meanwhile are refused when this process records under them.
    if (Number(row?.alive ?? 0) === 0) await register();
    const dead = row?.dead ?? [];
    if (dead.length === 0) return 0;
    await db.transaction(async (tx) => {
      await tx.query(
        `UPDATE webhook_deliveries SET locked_until = NULL
         WHERE locked_by = ANY($1::text[]) AND locked_until IS NOT NULL AND status = 'pending'`,
        [dead],
      );
      await tx.query(
        `UPDATE scheduled_jobs SET locked_until = NULL
         WHERE locked_by = ANY($1::text[]) AND locked_until IS NOT NULL AND done_at IS NULL`,
        [dead],
      );
      await tx.query(
        `UPDATE idempotency_keys SET claimed_until = NULL
         WHERE claimed_by = ANY($1::text[]) AND status_code IS NULL`,
        [dead],
      );
      await tx.query('DELETE FROM tessera_processes WHERE id = ANY($1::text[])', [dead]);
    });
    logger.warn({ processes: dead }, 'processes stopped beating: their claims were released');
    onReleased?.();
    return dead.length;
  }

  function beat(): Promise<number> {
    beating ??= beatOnce().finally(() => {
      beating = undefined;
    });
    return beating;
  }

  return {
    processId,
    beat,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        beat().catch((err: unknown) => logger.warn({ err }, 'heartbeat could not be written'));
      }, beatEveryMs);
      timer.unref();
    },
    olderProcessesAlive: () => olderProcesses,
    async listensEvents(listening) {
      await db.query('UPDATE tessera_processes SET listens_events = $2 WHERE id = $1', [processId, listening]);
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await beating?.catch(() => {});
      await db.query('DELETE FROM tessera_processes WHERE id = $1', [processId]).catch(() => {});
    },
  };
}
