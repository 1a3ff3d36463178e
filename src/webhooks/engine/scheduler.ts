import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import { newId } from '../../ids.js';
import type { WebhookHttpClient } from '../http-client.js';
import { attemptDelivery } from './attempt.js';
import { claimBatchSize, createClaimer, defaultLeaseMarginMs, type Leased } from './claimer.js';
import type { ClaimedDelivery } from './queries.js';
import { createRecorder, recordOf } from './recorder.js';
import { createSlots } from './slots.js';
import { createTokenCache, type TokenSource } from './token-cache.js';
import type { PreviousToken } from '../endpoints/service.js';
import { failureLevel } from '../../db/errors.js';

/*
 * The delivery loop (Svix's worker): the claimer leases due deliveries, the attempt signs and POSTs
 * each and classifies the answer, the recorder writes the attempt and schedules the follow-up or
 * ends the delivery. This scheduler holds what changes while it runs: the slots per target, the
 * token cache, the claims wanted and the timers.
 */

export interface DeliverySchedulerOptions {
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  webhookEndpoints: TokenSource;
  httpClient: WebhookHttpClient;
  /** docs/webhooks.md#acknowledgement-and-retries: the delays of the follow-ups, each after the previous attempt; one attempt more than delays. */
  retryDelaysSeconds: readonly number[];
  /** The client's deadline for one attempt; the lease is this plus a margin. */
  timeoutMs: number;
  /** At most this many deliveries to one target (URL) in flight in this process. */
  concurrencyPerTarget: number;
  /** At most this many deliveries in flight in this process. */
  maxInFlight: number;
  /** How often due deliveries are looked for when nothing woke the scheduler (retries, lost wake-ups). */
  pollIntervalMs: number;
  /** Told of each attempt's outcome (metrics); must not throw. */
  onAttempt?: (outcome: 'succeeded' | 'failed' | 'skipped') => void;
  /** An attempt was answered HTTP 410 Gone: endpoint health disables the endpoint (docs/decisions/0016). */
  onEndpointGone?: (endpointId: string) => Promise<void>;
  /** This process's heartbeat id, written with each lease (ops/heartbeat.ts). */
  processId: string;
  /** Tests only: what a lease adds to the timeout (a minute when unset; claimer.ts, leaseMsFor). */
  leaseMarginMs?: number;
}

/**
 * A prefetched delivery is sent only while its lease has at least the timeout and this margin left,
 * so that its attempt is answered and recorded before the lease can run out (and another worker
 * takes it over). The lease is the timeout plus a minute, so a delivery may wait half a minute (half
 * the lease's margin) in this process's queue (it waits for at most two attempts of its target);
 * one that waited longer is handed back.
 */
const recordShareOfMargin = 0.5;
/** A claim that chose rows another worker locked first is tried again this many times at most. */
const maxRacesLost = 3;

export function createDeliveryScheduler(options: DeliverySchedulerOptions) {
  const { db, clock, logger, httpClient, retryDelaysSeconds, timeoutMs } = options;
  const leaseMarginMs = options.leaseMarginMs ?? defaultLeaseMarginMs;
  const leaseLeftToStartMs = timeoutMs + leaseMarginMs * recordShareOfMargin;
  const claimer = createClaimer({ db, clock, timeoutMs, processId: options.processId, leaseMarginMs });
  const recorder = createRecorder({
    db,
    logger,
    onGroupWritten,
    // A recover's next delivery is due now: claimed at once, not at the next poll (docs/decisions/0030).
    onFollowersReleased: () => requestPump(true),
    onGone: options.onEndpointGone,
  });
  const slots = createSlots(options);
  // PGlite's database belongs to this process: every roll is told (tokenRolled), none to read.
  const tokens = createTokenCache(options.webhookEndpoints, { readBeforeEachAttempt: db.kind === 'postgres' });

  /** Work that runOnce and stop wait for: attempts (until recorded) and hand-backs. */
  const tasks = new Set<Promise<void>>();
  /** A backlogged target has room: claim for the backlogged targets (a cheap claim of those alone). */
  let refillWanted = false;
  let anyDueWanted = false;
  /** Deliveries were committed since the last claim began: the next claim need not look first (anyDue). */
  let dueKnown = false;
  /** A claim was skipped because too many attempts wait to be written. */
  let claimsHeldBack = false;
  let pumping: Promise<void> | undefined;
  let pumpAgain = false;
  let started = false;
  /** runOnce calls in progress: like a started scheduler, they claim again as slots free up. */
  let draining = 0;
  let timer: NodeJS.Timeout | undefined;
  let attemptsRecorded = 0;

  function track(task: Promise<void>): void {
    const tracked = task.finally(() => tasks.delete(tracked));
    tasks.add(tracked);
  }

  function onGroupWritten(): void {
    if (!claimsHeldBack || recorder.isBehind()) return;
    claimsHeldBack = false;
    requestPump(true);
  }

  /**
   * Makes one attempt and records it. `answered` is called once the HTTP exchange is over (or was
   * never started), before the record is written: it frees the target's slot.
   */
  async function send(leased: Leased, answered: () => void): Promise<void> {
    const { delivery } = leased;
    const attemptedAt = clock.now();
    const result = await attemptDelivery(httpClient, {
      endpointState: delivery.endpoint_state,
      url: delivery.send_url,
      body: delivery.body,
      signatureCase: delivery.signature_case,
      attemptedAt,
      signingKey: () => tokens.signingKeyOf(delivery),
      // docs/decisions/0014-legacy-opt-in-and-sequence.md: the legacy kind is always sent as docs/webhooks.md#what-is-sent writes, whatever the endpoint's format.
      format: delivery.kind === 'legacy' ? 'moneycollect' : delivery.format,
      eventId: delivery.event_id,
      previousSigningKey: () => tokens.previousKeyOf(delivery, attemptedAt),
    }).finally(answered);
    if (result.keyError !== undefined) {
      logger.error({ err: result.keyError, deliveryId: delivery.id }, 'webhook signing key could not be read');
    }
    options.onAttempt?.(result.succeeded ? 'succeeded' : result.giveUp ? 'skipped' : 'failed');
    const outcome = { leased, attemptedAt, result, attemptId: newId('wa'), now: clock.now() };
    if (await recorder.record(recordOf(retryDelaysSeconds, outcome))) attemptsRecorded++;
  }

  /** Claimed deliveries join their targets' queues and are sent as slots allow. */
  function enqueue(deliveries: readonly ClaimedDelivery[], leaseUntil: Date, learnt: number): Map<string, number> {
    for (const delivery of deliveries) tokens.learnClaimed(delivery, learnt);
    const claimedByTarget = slots.enqueue(deliveries, leaseUntil);
    for (const target of claimedByTarget.keys()) startQueued(target);
    return claimedByTarget;
  }

  function isLate(leased: Leased): boolean {
    return leased.leaseUntil.getTime() - clock.now().getTime() < leaseLeftToStartMs;
  }

  function startQueued(target: string): void {
    const taken = slots.take(target, isLate);
    for (const leased of taken.send) {
      let answered = false;
      const onAnswer = () => {
        if (answered) return;
        answered = true;
        onAnswered(target);
      };
      track(
        send(leased, onAnswer).catch((err: unknown) => {
          // The delivery stays leased and is tried again when the lease runs out.
          logger[failureLevel(err)]({ err, deliveryId: leased.delivery.id }, 'webhook attempt could not be recorded');
        }),
      );
    }
    // Too little of their lease is left to send them safely: handed back, another claim takes them.
    if (taken.late.length > 0) handBack(taken.late, () => requestPump(true));
    slots.forgetIfIdle(target);
  }

  function onAnswered(target: string): void {
    const wasAtLimit = slots.answered(target);
    if (wasAtLimit === undefined) return;
    startQueued(target);
    // Deliveries held back by the process-wide limit may be waiting for this slot.
    for (const waiting of slots.waitingTargets()) {
      if (!slots.hasRoomInFlight()) break;
      slots.stopWaiting(waiting);
      startQueued(waiting);
    }
    refillIfRoom(target);
    if (wasAtLimit) requestPump(true);
    slots.forgetIfIdle(target);
  }

  /** A backlogged target with room for a refill's worth asks for a refill claim. */
  function refillIfRoom(target: string): void {
    if (refillWanted || !slots.wantsRefill(target)) return;
    refillWanted = true;
    requestPump(false);
  }

  function handBack(leases: readonly Leased[], then?: () => void): void {
    track(
      claimer
        .handBack(leases)
        .then(then)
        .catch((err: unknown) => {
          // They are claimed again when their leases run out.
          logger[failureLevel(err)]({ err }, 'webhook deliveries could not be handed back');
        }),
    );
  }

  /** Refills backlogged targets that have room: one cheap indexed claim for all of them. */
  async function refillBacklogged(): Promise<void> {
    refillWanted = false;
    const { targets, rooms } = slots.refillRequest();
    if (targets.length === 0) return;
    const learnt = tokens.startLearning();
    const { deliveries, leaseUntil } = await claimer.claimDueOf(targets, rooms);
    const claimedByTarget = enqueue(deliveries, leaseUntil, learnt);
    targets.forEach((target, index) => {
      if ((claimedByTarget.get(target) ?? 0) < (rooms[index] ?? 0)) {
        slots.clearBacklog(target);
        slots.forgetIfIdle(target);
      } else {
        refillIfRoom(target);
      }
    });
  }

  /**
   * Claims due deliveries of every target below its share, the earliest first, until none is left
   * or this process holds all it may. Run when new events are committed, on each poll, and when
   * the process-wide limit frees up; not on every end of an attempt, since with a capped
   * target's backlog at the head of the queue it has to look past that backlog.
   */
  async function claimAnyDue(): Promise<void> {
    const known = dueKnown;
    dueKnown = false;
    if (!known && !(await claimer.anyDue())) return;
    let racesLost = 0;
    // The targets this look has taken from: each further claim of the look looks past their rows, so
    // that it finds other targets or ends (their own backlogs are refilled by the cheap claim of
    // refillBacklogged). Without it, a look behind a few targets' large backlogs claimed again and
    // again what those targets' slots had freed, each time past the same rows.
    const taken = new Set<string>();
    for (;;) {
      const room = slots.room();
      // At the process-wide limit: the end of an attempt asks for this claim again.
      if (room <= 0) return;
      const busy = slots.busy();
      const saturatedTargets = [...new Set([...busy.saturatedTargets, ...taken])];
      const limit = Math.min(claimBatchSize, room);
      const learnt = tokens.startLearning();
      const claim = await claimer.claimAnyDue({
        limit,
        perTargetLimit: slots.heldPerTarget,
        ...busy,
        saturatedTargets,
      });
      const claimedByTarget = enqueue(claim.deliveries, claim.leaseUntil, learnt);
      // A full window may hide more of a target's rows beyond it: backlogged, so that a refill looks.
      const windowFull = claim.examined >= claim.window;
      for (const [target, count] of claimedByTarget) {
        taken.add(target);
        const offered = slots.heldPerTarget - (busy.busyCounts[busy.busyTargets.indexOf(target)] ?? 0);
        if (count >= offered || windowFull) markBacklogged(target);
      }
      if (claim.chosen === 0) return;
      if (claim.deliveries.length === 0) {
        // Another worker was claiming the same rows at this moment: look again, a few times at most.
        if (++racesLost > maxRacesLost) return;
        continue;
      }
      // Every due row of the targets below their share was looked at, and all that fit were taken.
      if (claim.examined < claim.window && claim.chosen < limit) return;
    }
  }

  function markBacklogged(target: string): void {
    slots.markBacklogged(target);
    refillIfRoom(target);
  }

  async function claimAndStart(): Promise<void> {
    if (recorder.isBehind()) {
      // The end of the next write asks for a claim again.
      claimsHeldBack = true;
      anyDueWanted = true;
      return;
    }
    if (refillWanted) await refillBacklogged();
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
      .catch((err: unknown) => logger[failureLevel(err)]({ err }, 'webhook deliveries could not be claimed'))
      .finally(() => {
        pumping = undefined;
      });
    return pumping;
  }

  function requestPump(anyDue: boolean): void {
    if (anyDue) anyDueWanted = true;
    if (started || draining > 0) void pump();
  }

  /**
   * Called right after a transaction that wrote deliveries commits (events.onPublished, a resend):
   * low latency. `planned`: deliveries are known to have been written (the claim goes ahead without
   * first looking whether any is due); otherwise it looks first.
   */
  function wake(planned = false): void {
    if (planned) dueKnown = true;
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

  /** Waits until no attempt, record or hand-back is under way and no claim is running. */
  async function settle(): Promise<void> {
    while (tasks.size > 0 || pumping) await Promise.all([...tasks, pumping]);
  }

  return {
    wake,

    /** A roll of an endpoint's token has committed in this process: attempts from now on use it. */
    tokenRolled(endpointId: string, ciphertext: string, previous: PreviousToken | null = null): void {
      tokens.rolled(endpointId, ciphertext, previous);
    },

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
          if (tasks.size === 0 && !pumping) break;
          // Attempts that end free slots and claim more, until nothing is under way.
          await settle();
        }
      } finally {
        draining--;
      }
      return attemptsRecorded - before;
    },

    /** HTTP exchanges under way in this process. */
    inFlight(): number {
      return slots.inFlight();
    },

    start(): void {
      if (started) return;
      started = true;
      arm();
      wake();
    },

    /**
     * Stops claiming in the background, hands back the deliveries claimed ahead and not yet sent
     * (so that another worker sends them at once), and waits for the attempts under way to be
     * recorded.
     */
    async stop(): Promise<void> {
      started = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await pumping;
      const queued = slots.releaseQueued();
      refillWanted = false;
      if (queued.length > 0) handBack(queued);
      await settle();
    },
  };
}

export type DeliveryScheduler = ReturnType<typeof createDeliveryScheduler>;
