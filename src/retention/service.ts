import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import * as queries from './queries.js';

const dayMs = 24 * 60 * 60 * 1000;
/** Rows locked and deleted per transaction: each batch is short, so no lock is held for long. */
const batchSize = 500;

export interface RetentionDeps {
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  /** Finished webhook deliveries and their attempts are kept this many days (docs/webhooks.md). */
  deliveryRetentionDays: number;
  /** Events are kept this many days, unless a delivery of theirs is still pending. */
  eventRetentionDays: number;
}

/**
 * Retention (issue 13): events, deliveries and attempts would otherwise grow without bound. Run
 * by the job runner every hour; each batch is its own transaction.
 */
export function createRetention({ db, clock, logger, deliveryRetentionDays, eventRetentionDays }: RetentionDeps) {
  async function inBatches(
    lock: (tx: Queryable, before: Date, limit: number) => Promise<string[]>,
    remove: (tx: Queryable, ids: readonly string[]) => Promise<number>,
    before: Date,
  ): Promise<number> {
    let total = 0;
    for (;;) {
      const { found, removed } = await db.transaction(async (tx) => {
        const ids = await lock(tx, before, batchSize);
        return { found: ids.length, removed: ids.length > 0 ? await remove(tx, ids) : 0 };
      });
      total += removed;
      // A short batch was the last one; a batch that removed nothing (all kept) would repeat.
      if (found < batchSize || removed === 0) return total;
    }
  }

  return {
    /** Prunes what has outlived its retention; returns how many deliveries and events went. */
    async prune(): Promise<{ deliveries: number; events: number }> {
      const now = clock.now().getTime();
      const deliveries = await inBatches(
        queries.lockFinishedDeliveries,
        queries.deleteDeliveries,
        new Date(now - deliveryRetentionDays * dayMs),
      );
      const events = await inBatches(
        queries.lockOldEvents,
        queries.deleteEvents,
        new Date(now - eventRetentionDays * dayMs),
      );
      if (deliveries > 0 || events > 0) logger.info({ deliveries, events }, 'retention pruned old webhook data');
      return { deliveries, events };
    },
  };
}

export type Retention = ReturnType<typeof createRetention>;
