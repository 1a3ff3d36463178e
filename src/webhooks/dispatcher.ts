import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import { newId } from '../ids.js';
import * as queries from './deliveries-queries.js';
import type { DeliveryStatus } from './deliveries-schemas.js';
import type { WebhookEndpointService } from './endpoints-service.js';
import type { WebhookHttpClient } from './http-client.js';
import { formatRequestTime, signWebhook } from './signature.js';

/*
 * The delivery loop (Svix's worker): claim due deliveries with a lease, sign and POST each, record
 * the attempt, schedule the follow-up or end the delivery. Any number of dispatchers, in any
 * number of processes, may share one database (DESIGN §1): claims use FOR UPDATE SKIP LOCKED.
 */

export interface WebhookDispatcherOptions {
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  webhookEndpoints: Pick<WebhookEndpointService, 'tokenFor' | 'legacyKeyFor'>;
  httpClient: WebhookHttpClient;
  /** SPEC §6.1: the delays of the follow-ups, each after the previous attempt; one attempt more than delays. */
  retryDelaysSeconds: readonly number[];
  /** The client's deadline for one attempt; the lease is this plus a margin. */
  timeoutMs: number;
  /** At most this many deliveries to one target (URL) in flight in this process. */
  concurrencyPerTarget: number;
  /** At most this many deliveries in flight in this process. */
  maxInFlight: number;
  /** How often due deliveries are looked for when nothing woke the dispatcher (retries, lost wake-ups). */
  pollIntervalMs: number;
}

/**
 * How long a claim holds a delivery: the longest an attempt can take (the timeout) plus a minute for
 * signing and recording. A worker that dies mid-delivery delays that delivery by at most this.
 */
export function leaseMsFor(timeoutMs: number): number {
  return timeoutMs + 60_000;
}

const batchSize = 100;
/** At most this many attempts are written in one statement (one commit). */
const recordBatchSize = 500;

type SigningKeyReader = (delivery: queries.ClaimedDelivery) => Promise<string>;

export function createWebhookDispatcher(options: WebhookDispatcherOptions) {
  const { db, clock, logger, webhookEndpoints, httpClient, retryDelaysSeconds, timeoutMs, concurrencyPerTarget } =
    options;
  const leaseMs = leaseMsFor(timeoutMs);

  const sends = new Set<Promise<void>>();
  const inFlightByTarget = new Map<string, number>();
  /*
   * A target that got every slot it asked for may have more due deliveries (a backlog). Its slots
   * are refilled by a cheap claim of that target alone once half of them are free again, rather
   * than by a claim of every target after each attempt.
   */
  const backloggedTargets = new Set<string>();
  const freedTargets = new Set<string>();
  const refillAtOrBelow = concurrencyPerTarget - Math.max(1, Math.floor(concurrencyPerTarget / 2));
  let anyDueWanted = false;

  let pumping: Promise<void> | undefined;
  let pumpAgain = false;
  let started = false;
  /** runOnce calls in progress: like a started dispatcher, they claim again as slots free up. */
  let draining = 0;
  let timer: NodeJS.Timeout | undefined;
  let attemptsRecorded = 0;

  // Attempts are written in groups: the ones that end while a write is under way go together in
  // the next (group commit), so a busy worker commits once per group instead of once per attempt.
  const unwritten: Array<{
    record: queries.AttemptRecord;
    written: (recorded: boolean) => void;
    failed: (err: unknown) => void;
  }> = [];
  let writing = false;

  function writeAttempt(record: queries.AttemptRecord): Promise<boolean> {
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
          const recorded = await queries.recordAttempts(
            db,
            group.map((item) => item.record),
          );
          for (const item of group) item.written(recorded.has(item.record.deliveryId));
        } catch (err) {
          if (group.length === 1) {
            group[0]?.failed(err);
            continue;
          }
          // One bad row must not cost the others their record: each is written on its own.
          for (const item of group) {
            await queries.recordAttempt(db, item.record).then(item.written, item.failed);
          }
        }
      }
    } finally {
      // Set in the same turn as the last check of `unwritten`, so no attempt is left waiting.
      writing = false;
    }
  }

  /** The attempt that follows attempt `attemptNumber` when it failed: a time, or null to give up. */
  function nextAttemptAfter(attemptNumber: number, attemptedAt: Date): Date | null {
    const delaySeconds = retryDelaysSeconds[attemptNumber - 1];
    return delaySeconds === undefined ? null : new Date(attemptedAt.getTime() + delaySeconds * 1000);
  }

  async function attempt(
    delivery: queries.ClaimedDelivery,
    leaseUntil: Date,
    signingKeyOf: SigningKeyReader,
  ): Promise<void> {
    const attemptNumber = Number(delivery.attempts) + 1;
    const attemptedAt = clock.now();
    let durationMs = 0;
    let httpStatus: number | null = null;
    let excerpt: string | null = null;
    let error: string | null = null;
    let succeeded = false;
    // A delivery planned before its endpoint was disabled or deleted is ended, not sent.
    let giveUp = false;

    if (delivery.endpoint_state !== 'enabled') {
      error = `Not sent: the webhook endpoint was ${delivery.endpoint_state}`;
      giveUp = true;
    } else {
      let signingKey: string | undefined;
      try {
        signingKey = await signingKeyOf(delivery);
      } catch (err) {
        logger.error({ err, deliveryId: delivery.id }, 'webhook signing key could not be read');
        error = 'Not sent: Tessera could not read the signing key (internal error)';
      }
      if (signingKey !== undefined) {
        // SPEC §6.3 with DESIGN §5's capitalisations, which PHP verifiers read case-sensitively.
        const requestTime = formatRequestTime(attemptedAt);
        const sentAt = performance.now();
        const outcome = await httpClient.post(
          delivery.send_url,
          {
            'Content-Type': 'application/json',
            'Request-Time': requestTime,
            Signature: signWebhook(signingKey, requestTime, delivery.body),
          },
          delivery.body,
        );
        durationMs = Math.round(performance.now() - sentAt);
        if (outcome.ok) {
          httpStatus = outcome.status;
          excerpt = outcome.excerpt;
          // SPEC §6.1.2 / DESIGN §5: delivered only when a 2xx answer says `success`.
          const is2xx = outcome.status >= 200 && outcome.status < 300;
          succeeded = is2xx && outcome.body.trim() === 'success';
          if (!succeeded) {
            error = is2xx
              ? 'The response body is not "success"'
              : `The endpoint answered HTTP ${outcome.status}, not 2xx`;
          }
        } else {
          error = outcome.error;
        }
      }
    }

    const nextAttemptAt = succeeded || giveUp ? null : nextAttemptAfter(attemptNumber, attemptedAt);
    const status: DeliveryStatus = succeeded ? 'succeeded' : nextAttemptAt === null ? 'failed' : 'pending';
    const recorded = await writeAttempt({
      deliveryId: delivery.id,
      leaseUntil,
      attemptId: newId('wa'),
      attemptNumber,
      attemptedAt,
      durationMs,
      httpStatus,
      responseExcerpt: excerpt,
      error,
      succeeded,
      status,
      nextAttemptAt,
      url: delivery.send_url,
      now: clock.now(),
    });
    if (recorded) {
      attemptsRecorded++;
      const level = succeeded ? 'debug' : 'info';
      logger[level](
        { deliveryId: delivery.id, attemptNumber, httpStatus, durationMs, status, error },
        'webhook attempt',
      );
    } else {
      // The lease ran out during the attempt and another worker took the delivery over: it makes
      // and records the attempt again (at-least-once; merchants deduplicate by event id).
      logger.warn({ deliveryId: delivery.id, attemptNumber }, 'webhook attempt not recorded: the lease was lost');
    }
  }

  /**
   * Reads each signing key once per claimed batch, afresh for every batch: a rolled token signs
   * every attempt claimed after the roll, including the very next retry (SPEC §5.3).
   */
  function signingKeys(): SigningKeyReader {
    const read = new Map<string, Promise<string>>();
    return (delivery) => {
      const name = delivery.kind === 'endpoint' ? `endpoint:${delivery.endpoint_id}` : `legacy:${delivery.merchant_id}`;
      let key = read.get(name);
      if (!key) {
        key =
          delivery.kind === 'endpoint'
            ? webhookEndpoints.tokenFor(delivery.endpoint_id)
            : webhookEndpoints.legacyKeyFor(delivery.merchant_id);
        read.set(name, key);
      }
      return key;
    };
  }

  function inFlightOf(target: string): number {
    return inFlightByTarget.get(target) ?? 0;
  }

  /** A target that got all the slots a claim offered it may have more due: refill it as slots free up. */
  function markBacklogged(target: string): void {
    if (inFlightOf(target) <= refillAtOrBelow) {
      // Its attempts ended while it was being claimed.
      freedTargets.add(target);
      requestPump(false);
    } else {
      backloggedTargets.add(target);
    }
  }

  function startAttempts(deliveries: readonly queries.ClaimedDelivery[], leaseUntil: Date): Map<string, number> {
    const keys = signingKeys();
    const startedByTarget = new Map<string, number>();
    for (const delivery of deliveries) {
      const target = delivery.target;
      startedByTarget.set(target, (startedByTarget.get(target) ?? 0) + 1);
      inFlightByTarget.set(target, inFlightOf(target) + 1);
      const send: Promise<void> = attempt(delivery, leaseUntil, keys)
        .catch((err: unknown) => {
          // The delivery stays leased and is tried again when the lease runs out.
          logger.error({ err, deliveryId: delivery.id }, 'webhook attempt could not be recorded');
        })
        .finally(() => {
          const left = inFlightOf(target) - 1;
          if (left <= 0) inFlightByTarget.delete(target);
          else inFlightByTarget.set(target, left);
          const wasAtLimit = sends.size >= options.maxInFlight;
          sends.delete(send);
          if (backloggedTargets.has(target) && left <= refillAtOrBelow) {
            backloggedTargets.delete(target);
            freedTargets.add(target);
            requestPump(false);
          }
          // Deliveries held back by the process-wide limit may be waiting for this slot.
          if (wasAtLimit) requestPump(true);
        });
      sends.add(send);
    }
    return startedByTarget;
  }

  /** Refills the slots of backlogged targets whose attempts ended: one cheap indexed claim. */
  async function refillFreedTargets(): Promise<void> {
    let room = options.maxInFlight - sends.size;
    const targets: string[] = [];
    const rooms: number[] = [];
    for (const target of freedTargets) {
      const free = Math.min(concurrencyPerTarget - inFlightOf(target), room);
      if (free <= 0) continue;
      targets.push(target);
      rooms.push(free);
      room -= free;
    }
    // Targets left out for want of room are found by the claim of any due delivery that the end
    // of an attempt at the process-wide limit asks for.
    if (freedTargets.size > targets.length) anyDueWanted = true;
    freedTargets.clear();
    if (targets.length === 0) return;
    const now = clock.now();
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const deliveries = await queries.claimDueDeliveriesOf(db, { now, leaseUntil, targets, rooms });
    const startedByTarget = startAttempts(deliveries, leaseUntil);
    targets.forEach((target, index) => {
      if ((startedByTarget.get(target) ?? 0) >= (rooms[index] ?? 0)) markBacklogged(target);
    });
  }

  /**
   * Claims due deliveries of every target below its cap, the earliest first, until none is left
   * or this process is at its limit. Run when new events are committed, on each poll, and when
   * the process-wide limit frees up; not on every end of an attempt, since with a capped
   * target's backlog at the head of the queue it has to look past that backlog.
   */
  async function claimAnyDue(): Promise<void> {
    // Most wake-ups are for events nobody subscribed to: a cheap look first, the claim only if
    // something is due at all.
    if (!(await queries.anyDeliveryDue(db, clock.now()))) return;
    let racesLost = 0;
    for (;;) {
      const room = options.maxInFlight - sends.size;
      // At the process-wide limit: the end of an attempt asks for this claim again.
      if (room <= 0) return;
      const busyTargets: string[] = [];
      const busyCounts: number[] = [];
      const saturatedTargets: string[] = [];
      for (const [target, count] of inFlightByTarget) {
        busyTargets.push(target);
        busyCounts.push(count);
        if (count >= concurrencyPerTarget) saturatedTargets.push(target);
      }
      const now = clock.now();
      const leaseUntil = new Date(now.getTime() + leaseMs);
      const limit = Math.min(batchSize, room);
      const { deliveries, chosen, examined, window } = await queries.claimDueDeliveries(db, {
        now,
        leaseUntil,
        limit,
        perTargetLimit: concurrencyPerTarget,
        busyTargets,
        busyCounts,
        saturatedTargets,
      });
      const startedByTarget = startAttempts(deliveries, leaseUntil);
      for (const [target, count] of startedByTarget) {
        const offered = concurrencyPerTarget - (busyCounts[busyTargets.indexOf(target)] ?? 0);
        if (count >= offered) markBacklogged(target);
      }
      if (chosen === 0) return;
      if (deliveries.length === 0) {
        // Another worker was claiming the same rows at this moment: look again, a few times at most.
        if (++racesLost > 3) return;
        continue;
      }
      // Every due row of the targets below their cap was looked at, and all that fit were taken.
      if (examined < window && chosen < limit) return;
    }
  }

  async function claimAndStart(): Promise<void> {
    if (freedTargets.size > 0) await refillFreedTargets();
    if (anyDueWanted) {
      anyDueWanted = false;
      await claimAnyDue();
    }
  }

  /** One claiming loop at a time; a request during it runs it once more. */
  function pump(): Promise<void> {
    if (pumping) {
      pumpAgain = true;
      return pumping;
    }
    pumping = (async () => {
      do {
        pumpAgain = false;
        await claimAndStart();
      } while (pumpAgain && (started || draining > 0));
    })()
      .catch((err: unknown) => logger.error({ err }, 'webhook deliveries could not be claimed'))
      .finally(() => {
        pumping = undefined;
      });
    return pumping;
  }

  function requestPump(anyDue: boolean): void {
    if (anyDue) anyDueWanted = true;
    if (started || draining > 0) void pump();
  }

  /** Called right after an event's transaction commits (events.onPublished): low latency. */
  function wake(): void {
    requestPump(true);
  }

  function arm(): void {
    const current = setTimeout(() => {
      anyDueWanted = true;
      void pump().finally(() => {
        // Only the timer of the current start re-arms (a stop and start in between made a new one).
        if (started && timer === current) arm();
      });
    }, options.pollIntervalMs);
    current.unref();
    timer = current;
  }

  return {
    wake,

    /**
     * Claims and sends everything due at the clock's current time, waiting for every attempt to
     * be recorded (tests, and draining). Returns how many attempts were recorded.
     */
    async runOnce(): Promise<number> {
      const before = attemptsRecorded;
      draining++;
      try {
        for (;;) {
          anyDueWanted = true;
          await pump();
          if (sends.size === 0 && !pumping) break;
          // Attempts that end free slots and claim more (wake), until nothing is in flight.
          while (sends.size > 0 || pumping) await Promise.all([...sends, pumping]);
        }
      } finally {
        draining--;
      }
      return attemptsRecorded - before;
    },

    /** Deliveries in flight in this process. */
    inFlight(): number {
      return sends.size;
    },

    start(): void {
      if (started) return;
      started = true;
      arm();
      wake();
    },

    /** Stops claiming in the background and waits for the attempts in flight to be recorded. */
    async stop(): Promise<void> {
      started = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await pumping;
      while (sends.size > 0) await Promise.all([...sends]);
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
