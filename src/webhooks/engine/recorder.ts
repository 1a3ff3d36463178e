import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/db.js';
import type { DeliveryStatus } from '../deliveries/schemas.js';
import type { AttemptResult } from './attempt.js';
import type { Leased } from './claimer.js';
import * as queries from './queries.js';

/*
 * The recorder: turns an attempt's result into its row and the delivery's next state (the retry schedule of
 * docs/webhooks.md#acknowledgement-and-retries), and writes them under the attempt's lease, many attempts in one statement
 * (group commit).
 */

/** At most this many attempts are written in one statement (one commit). */
const recordBatchSize = 500;
/** While this many attempts wait to be written, nothing more is claimed: the database sets the pace. */
const maxUnrecorded = 2 * recordBatchSize;

/**
 * The attempt that follows attempt `attemptNumber` when it failed: a time, or null to give up. docs/webhooks.md#acknowledgement-and-retries: each delay of `retryDelaysSeconds` counts from the previous attempt, and there is one
 * attempt more than delays. A fast-forwarded test delivery (timeFactor > 1) waits each delay
 * divided by its factor.
 */
export function nextAttemptAfter(
  retryDelaysSeconds: readonly number[],
  attemptNumber: number,
  attemptedAt: Date,
  timeFactor: number,
): Date | null {
  const delaySeconds = retryDelaysSeconds[attemptNumber - 1];
  if (delaySeconds === undefined) return null;
  return new Date(attemptedAt.getTime() + Math.ceil((delaySeconds * 1000) / Math.max(1, timeFactor)));
}

export interface AttemptOutcome {
  leased: Leased;
  attemptedAt: Date;
  result: AttemptResult;
  /** The new attempt row's id. */
  attemptId: string;
  now: Date;
}

/** The attempt's row and its delivery's next state: succeeded, pending (a retry is due) or failed. */
export function recordOf(retryDelaysSeconds: readonly number[], outcome: AttemptOutcome): queries.AttemptRecord {
  const { leased, attemptedAt, result } = outcome;
  const { delivery, leaseUntil } = leased;
  const attemptNumber = Number(delivery.attempts) + 1;
  const nextAttemptAt =
    result.succeeded || result.giveUp
      ? null
      : nextAttemptAfter(retryDelaysSeconds, attemptNumber, attemptedAt, Number(delivery.time_factor ?? 1));
  const status: DeliveryStatus = result.succeeded ? 'succeeded' : nextAttemptAt === null ? 'failed' : 'pending';
  return {
    deliveryId: delivery.id,
    leaseUntil,
    attemptId: outcome.attemptId,
    attemptNumber,
    attemptedAt,
    durationMs: result.durationMs,
    httpStatus: result.httpStatus,
    responseExcerpt: result.responseExcerpt,
    error: result.error,
    succeeded: result.succeeded,
    status,
    nextAttemptAt,
    url: delivery.send_url,
    now: outcome.now,
    endpointId: delivery.endpoint_id,
    countsForHealth: !result.giveUp && result.keyError === undefined,
  };
}

interface Unwritten {
  record: queries.AttemptRecord;
  written: (recorded: boolean) => void;
  failed: (err: unknown) => void;
}

export interface RecorderDeps {
  db: Db;
  logger: FastifyBaseLogger;
  /** Called after each group is written: claims held back while too many waited may go on. */
  onGroupWritten: () => void;
  /** Deliveries of a recover's chain fell due as the ones before them were recorded: claim them. */
  onFollowersReleased: () => void;
  /** A recorded attempt was answered HTTP 410 Gone (endpoint health disables the endpoint). */
  onGone?: (endpointId: string) => Promise<void>;
}

/** HTTP 410: the receiver says the endpoint is gone for good (Standard Webhooks: stop sending). */
const goneStatus = 410;

export function createRecorder({ db, logger, onGroupWritten, onFollowersReleased, onGone }: RecorderDeps) {
  // Attempts are written in groups: the ones that end while a write is under way go together in
  // the next (group commit), so a busy worker commits once per group instead of once per attempt.
  const unwritten: Unwritten[] = [];
  let unrecorded = 0;
  let writing = false;

  function write(record: queries.AttemptRecord): Promise<boolean> {
    unrecorded++;
    return new Promise((written, failed) => {
      unwritten.push({ record, written, failed });
      if (writing) return;
      writing = true;
      // Started after the other attempts that end in this turn of the event loop have joined.
      setImmediate(() => void writeUnwritten());
    });
  }

  async function writeUnwritten(): Promise<void> {
    try {
      while (unwritten.length > 0) {
        const group = unwritten.splice(0, recordBatchSize);
        try {
          await writeGroup(group);
        } finally {
          unrecorded -= group.length;
        }
        onGroupWritten();
      }
    } finally {
      // Set in the same turn as the last check of `unwritten`, so no attempt is left waiting.
      writing = false;
    }
  }

  /** Writes the records in one statement: answers the ids recorded; a recover's next deliveries are claimed. */
  async function writeRecords(items: readonly Unwritten[]): Promise<Set<string>> {
    const { recorded, followersReleased } = await queries.recordAttemptGroup(
      db,
      items.map((item) => item.record),
    );
    if (followersReleased > 0) onFollowersReleased();
    return recorded;
  }

  async function writeGroup(group: readonly Unwritten[]): Promise<void> {
    try {
      const recorded = await writeRecords(group);
      for (const item of group) item.written(recorded.has(item.record.deliveryId));
    } catch (err) {
      if (group.length === 1) {
        group[0]?.failed(err);
        return;
      }
      // One bad row must not cost the others their record: each is written on its own.
      for (const item of group) {
        await writeRecords([item]).then((recorded) => item.written(recorded.has(item.record.deliveryId)), item.failed);
      }
    }
  }

  return {
    /**
     * Writes the attempt with the next group and logs it. False when the lease ran out during the
     * attempt and another worker took the delivery over: that worker makes and records the attempt
     * again (at-least-once; merchants deduplicate by event id).
     */
    async record(record: queries.AttemptRecord): Promise<boolean> {
      const recorded = await write(record);
      const { deliveryId, attemptNumber, httpStatus, durationMs, status, error } = record;
      if (recorded) {
        const level = record.succeeded ? 'debug' : 'info';
        logger[level]({ deliveryId, attemptNumber, httpStatus, durationMs, status, error }, 'webhook attempt');
        if (httpStatus === goneStatus && record.countsForHealth && onGone) {
          await onGone(record.endpointId).catch((err: unknown) =>
            logger.error({ err, endpointId: record.endpointId }, 'webhook endpoint could not be disabled'),
          );
        }
      } else {
        logger.warn({ deliveryId, attemptNumber }, 'webhook attempt not recorded: the lease was lost');
      }
      return recorded;
    },

    /** So many attempts wait to be written that nothing more should be claimed. */
    isBehind(): boolean {
      return unrecorded >= maxUnrecorded;
    },
  };
}

export type Recorder = ReturnType<typeof createRecorder>;
