import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import * as queries from './queries.js';

/*
 * The claimer: takes due deliveries from the database under a lease, in batches, and hands leases
 * back. Any number of claimers, in any number of processes, may share one database (docs/architecture.md#what-tessera-is):
 * claims use FOR UPDATE SKIP LOCKED, and a lease keeps a claimed delivery from being claimed again
 * until it runs out. It keeps no state: the scheduler says how much room it has and for which
 * targets.
 */

/**
 * How long a claim holds a delivery: the longest an attempt can take (the timeout) plus a minute for
 * signing and recording (`marginMs`; shorter only in tests). A worker that dies mid-delivery delays
 * that delivery by at most this, and usually far less: once its heartbeat is stale its leases are
 * released (ops/heartbeat.ts).
 */
export function leaseMsFor(timeoutMs: number, marginMs = defaultLeaseMarginMs): number {
  return timeoutMs + marginMs;
}

export const defaultLeaseMarginMs = 60_000;

/** At most this many deliveries in one claim of any due delivery. */
export const claimBatchSize = 100;

/** A claimed delivery and the lease it is held under (its value identifies the lease). */
export interface Leased {
  delivery: queries.ClaimedDelivery;
  leaseUntil: Date;
}

/** What a claim of any due delivery needs to know of this worker's targets. */
export interface AnyDueRequest {
  /** At most this many deliveries (the batch size, or less when the worker is nearly full). */
  limit: number;
  /** At most this many deliveries of one target held by this worker. */
  perTargetLimit: number;
  /** Targets with deliveries held by this worker, and how many each. */
  busyTargets: readonly string[];
  busyCounts: readonly number[];
  /**
   * Targets left out: those already at perTargetLimit, so they do not use up the batch, and those
   * the look has taken from already (their backlogs are refilled target by target).
   */
  saturatedTargets: readonly string[];
}

export interface AnyDueClaim {
  deliveries: queries.ClaimedDelivery[];
  leaseUntil: Date;
  /** Rows chosen to be locked: above zero with nothing claimed, a race with another worker was lost. */
  chosen: number;
  /** Due rows looked at: below `window`, every due row of the targets below their share was seen. */
  examined: number;
  window: number;
}

export interface ClaimerDeps {
  db: Db;
  clock: Clock;
  /** The client's deadline for one attempt: the lease is this plus a margin (leaseMsFor). */
  timeoutMs: number;
  /** This process's heartbeat id, written with each lease (ops/heartbeat.ts). */
  processId: string;
  /** What the lease adds to the timeout (leaseMsFor). */
  leaseMarginMs: number;
}

export function createClaimer({ db, clock, timeoutMs, processId, leaseMarginMs }: ClaimerDeps) {
  const leaseMs = leaseMsFor(timeoutMs, leaseMarginMs);

  function lease(): { now: Date; leaseUntil: Date } {
    const now = clock.now();
    return { now, leaseUntil: new Date(now.getTime() + leaseMs) };
  }

  return {
    /** Whether anything is due at all: most wake-ups are for events nobody subscribed to. */
    anyDue(): Promise<boolean> {
      return queries.anyDeliveryDue(db, clock.now());
    },

    /** Claims due deliveries of every target below its share, the earliest first. */
    async claimAnyDue(request: AnyDueRequest): Promise<AnyDueClaim> {
      const { now, leaseUntil } = lease();
      const claimed = await queries.claimDueDeliveries(db, { now, leaseUntil, ...request, claimedBy: processId });
      return { ...claimed, leaseUntil };
    },

    /** Claims due deliveries of the given targets only, up to `rooms[i]` of `targets[i]` (a refill). */
    async claimDueOf(
      targets: readonly string[],
      rooms: readonly number[],
    ): Promise<{ deliveries: queries.ClaimedDelivery[]; leaseUntil: Date }> {
      const { now, leaseUntil } = lease();
      const deliveries = await queries.claimDueDeliveriesOf(db, {
        now,
        leaseUntil,
        targets,
        rooms,
        claimedBy: processId,
      });
      return { deliveries, leaseUntil };
    },

    /** Hands leased deliveries back, due again at once (unless another worker has taken them over). */
    handBack(leases: readonly Leased[]): Promise<void> {
      return queries.releaseDeliveries(
        db,
        leases.map((leased) => ({ deliveryId: leased.delivery.id, leaseUntil: leased.leaseUntil })),
      );
    },
  };
}

export type Claimer = ReturnType<typeof createClaimer>;
