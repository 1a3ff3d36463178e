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

export function createWebhookDispatcher(options: WebhookDispatcherOptions) {
  const { db, clock, logger, webhookEndpoints, httpClient, retryDelaysSeconds, timeoutMs } = options;
  const leaseMs = leaseMsFor(timeoutMs);
  const inFlightByTarget = new Map<string, number>();
  const sends = new Set<Promise<void>>();
  let pumping: Promise<void> | undefined;
  let pumpAgain = false;
  let started = false;
  /** runOnce calls in progress: like a started dispatcher, they claim again as slots free up. */
  let draining = 0;
  let timer: NodeJS.Timeout | undefined;
  let attemptsRecorded = 0;

  /** The attempt that follows attempt `attemptNumber` when it failed: a time, or null to give up. */
  function nextAttemptAfter(attemptNumber: number, attemptedAt: Date): Date | null {
    const delaySeconds = retryDelaysSeconds[attemptNumber - 1];
    return delaySeconds === undefined ? null : new Date(attemptedAt.getTime() + delaySeconds * 1000);
  }

  async function attempt(delivery: queries.ClaimedDelivery, leaseUntil: Date): Promise<void> {
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
        // Read afresh for every attempt, so that a rolled token signs the very next retry (SPEC §5.3).
        signingKey =
          delivery.kind === 'endpoint'
            ? await webhookEndpoints.tokenFor(delivery.endpoint_id)
            : await webhookEndpoints.legacyKeyFor(delivery.merchant_id);
      } catch (err) {
        logger.error({ err, deliveryId: delivery.id }, 'webhook signing key could not be read');
        error = 'Not sent: Tessera could not read the signing key (internal error)';
      }
      if (signingKey !== undefined) {
        // SPEC §6.3 with DESIGN §5's capitalisations, which PHP verifiers read case-sensitively.
        const requestTime = formatRequestTime(attemptedAt);
        const sentAt = performance.now();
        const outcome = await httpClient.post(
          delivery.target,
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
    const recorded = await queries.recordAttempt(db, {
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
      url: delivery.target,
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

  function startAttempt(delivery: queries.ClaimedDelivery, leaseUntil: Date): void {
    const target = delivery.target;
    inFlightByTarget.set(target, (inFlightByTarget.get(target) ?? 0) + 1);
    const send: Promise<void> = attempt(delivery, leaseUntil)
      .catch((err: unknown) => {
        // The delivery stays leased and is tried again when the lease runs out.
        logger.error({ err, deliveryId: delivery.id }, 'webhook attempt could not be recorded');
      })
      .finally(() => {
        const count = inFlightByTarget.get(target) ?? 1;
        if (count <= 1) inFlightByTarget.delete(target);
        else inFlightByTarget.set(target, count - 1);
        const wasFull = count >= options.concurrencyPerTarget || sends.size >= options.maxInFlight;
        sends.delete(send);
        // Deliveries held back by a cap may be waiting for this slot.
        if (wasFull) wake();
      });
    sends.add(send);
  }

  /** Claims and starts due deliveries until none is due or this process is at its caps. */
  async function claimAndStart(): Promise<void> {
    let racesLost = 0;
    for (;;) {
      const room = options.maxInFlight - sends.size;
      if (room <= 0) return;
      const busyTargets: string[] = [];
      const busyCounts: number[] = [];
      const saturatedTargets: string[] = [];
      for (const [target, count] of inFlightByTarget) {
        busyTargets.push(target);
        busyCounts.push(count);
        if (count >= options.concurrencyPerTarget) saturatedTargets.push(target);
      }
      const now = clock.now();
      const leaseUntil = new Date(now.getTime() + leaseMs);
      const { deliveries, chosen } = await queries.claimDueDeliveries(db, {
        now,
        leaseUntil,
        limit: Math.min(batchSize, room),
        perTargetLimit: options.concurrencyPerTarget,
        busyTargets,
        busyCounts,
        saturatedTargets,
      });
      for (const delivery of deliveries) startAttempt(delivery, leaseUntil);
      if (chosen === 0) return;
      // Another worker was claiming the same rows at this moment: look again, a few times at most.
      if (deliveries.length === 0 && ++racesLost > 3) return;
    }
  }

  /** One claiming loop at a time; a wake-up during it runs it once more. */
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

  /** Called right after an event's transaction commits (events.onPublished): low latency. */
  function wake(): void {
    if (started || draining > 0) void pump();
  }

  function arm(): void {
    const current = setTimeout(() => {
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
