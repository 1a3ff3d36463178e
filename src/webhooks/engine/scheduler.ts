import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import { newId } from '../../ids.js';
import * as queries from '../deliveries/queries.js';
import type { DeliveryStatus } from '../deliveries/schemas.js';
import type { WebhookEndpointService } from '../endpoints/service.js';
import type { WebhookHttpClient } from '../http-client.js';
import { formatRequestTime, signWebhook } from '../signature.js';

/*
 * The delivery loop (Svix's worker): claim due deliveries with a lease, sign and POST each, record
 * the attempt, schedule the follow-up or end the delivery. Any number of dispatchers, in any
 * number of processes, may share one database (DESIGN §1): claims use FOR UPDATE SKIP LOCKED.
 */

export interface WebhookDispatcherOptions {
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  webhookEndpoints: Pick<WebhookEndpointService, 'decryptToken' | 'tokenCiphertexts' | 'legacyKeyFor'>;
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

/** At most this many deliveries in one claim of any due delivery. */
const claimBatchSize = 100;
/** At most this many attempts are written in one statement (one commit). */
const recordBatchSize = 500;
/** While this many attempts wait to be written, nothing more is claimed: the database sets the pace. */
const maxUnrecorded = 2 * recordBatchSize;
/**
 * A prefetched delivery is sent only while its lease has at least the timeout and this margin left,
 * so that its attempt is answered and recorded before the lease can run out (and another worker
 * takes it over). The lease is the timeout plus a minute, so a delivery may wait half a minute in
 * this process's queue (it waits for at most two attempts of its target); one that waited longer
 * is handed back.
 */
const recordMarginMs = 30_000;

interface Leased {
  delivery: queries.ClaimedDelivery;
  leaseUntil: Date;
}

/** One target (URL) in this process: its deliveries being sent and those claimed ahead. */
interface TargetState {
  /** HTTP exchanges under way: at most concurrencyPerTarget. */
  inFlight: number;
  /** Claimed and leased, not yet sent, in the order claimed. */
  queue: Leased[];
  /** Its last claim got all it asked for, so more may be due: claim again as room frees up. */
  backlogged: boolean;
}

export function createWebhookDispatcher(options: WebhookDispatcherOptions) {
  const { db, clock, logger, webhookEndpoints, httpClient, retryDelaysSeconds, timeoutMs, concurrencyPerTarget } =
    options;
  const leaseMs = leaseMsFor(timeoutMs);
  const leaseLeftToStartMs = timeoutMs + recordMarginMs;
  /*
   * A delivery's slot is free again when the answer arrives, before its attempt is written (the
   * record is bound to the lease, so at-least-once holds). To refill the slot without waiting for
   * a claim, each target keeps up to this many deliveries leased: a cap in flight and two queued.
   */
  const heldPerTarget = 3 * concurrencyPerTarget;
  /**
   * A backlogged target is claimed for again once it has room for this many (so a slot's worth is
   * still queued while the claim runs), and with it every backlogged target that has room for at
   * least refillJoin: one claim for many targets rather than one per target.
   */
  const refillStep = concurrencyPerTarget;
  const refillJoin = Math.max(1, Math.ceil(concurrencyPerTarget / 2));
  /** Deliveries leased by this process at most (in flight and queued). */
  const maxHeld = 2 * options.maxInFlight;

  const targets = new Map<string, TargetState>();
  let httpInFlight = 0;
  /** Leased deliveries not yet answered: queued and in flight. */
  let held = 0;
  /** Work that runOnce and stop wait for: attempts (until recorded) and hand-backs. */
  const tasks = new Set<Promise<void>>();
  /** Targets with queued deliveries that wait for the process-wide limit. */
  const waitingForRoom = new Set<string>();
  /** A backlogged target has room: claim for the backlogged targets (a cheap claim of those alone). */
  let refillWanted = false;
  let anyDueWanted = false;
  /** A claim was skipped because too many attempts wait to be written. */
  let claimsHeldBack = false;

  let pumping: Promise<void> | undefined;
  let pumpAgain = false;
  let started = false;
  /** runOnce calls in progress: like a started dispatcher, they claim again as slots free up. */
  let draining = 0;
  let timer: NodeJS.Timeout | undefined;
  let attemptsRecorded = 0;

  function track(task: Promise<void>): void {
    const tracked = task.finally(() => tasks.delete(tracked));
    tasks.add(tracked);
  }

  // Attempts are written in groups: the ones that end while a write is under way go together in
  // the next (group commit), so a busy worker commits once per group instead of once per attempt.
  const unwritten: Array<{
    record: queries.AttemptRecord;
    written: (recorded: boolean) => void;
    failed: (err: unknown) => void;
  }> = [];
  let unrecorded = 0;
  let writing = false;

  function writeAttempt(record: queries.AttemptRecord): Promise<boolean> {
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
          const recorded = await queries.recordAttempts(
            db,
            group.map((item) => item.record),
          );
          for (const item of group) item.written(recorded.has(item.record.deliveryId));
        } catch (err) {
          if (group.length === 1) {
            group[0]?.failed(err);
          } else {
            // One bad row must not cost the others their record: each is written on its own.
            for (const item of group) {
              await queries.recordAttempt(db, item.record).then(item.written, item.failed);
            }
          }
        } finally {
          unrecorded -= group.length;
        }
        if (claimsHeldBack && unrecorded < maxUnrecorded) {
          claimsHeldBack = false;
          requestPump(true);
        }
      }
    } finally {
      // Set in the same turn as the last check of `unwritten`, so no attempt is left waiting.
      writing = false;
    }
  }

  /**
   * The attempt that follows attempt `attemptNumber` when it failed: a time, or null to give up. A
   * fast-forwarded test delivery (timeFactor > 1) waits each delay divided by its factor.
   */
  function nextAttemptAfter(attemptNumber: number, attemptedAt: Date, timeFactor: number): Date | null {
    const delaySeconds = retryDelaysSeconds[attemptNumber - 1];
    if (delaySeconds === undefined) return null;
    return new Date(attemptedAt.getTime() + Math.ceil((delaySeconds * 1000) / Math.max(1, timeFactor)));
  }

  /**
   * Makes one attempt and records it. `answered` is called once the HTTP exchange is over (or was
   * never started), before the record is written: it frees the target's slot.
   */
  async function attempt({ delivery, leaseUntil }: Leased, answered: () => void): Promise<void> {
    const attemptNumber = Number(delivery.attempts) + 1;
    const attemptedAt = clock.now();
    let durationMs = 0;
    let httpStatus: number | null = null;
    let excerpt: string | null = null;
    let error: string | null = null;
    let succeeded = false;
    // A delivery planned before its endpoint was disabled or deleted is ended, not sent.
    let giveUp = false;

    try {
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
              Signature: signWebhook(signingKey, requestTime, delivery.body, delivery.signature_case),
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
    } finally {
      answered();
    }

    const nextAttemptAt =
      succeeded || giveUp ? null : nextAttemptAfter(attemptNumber, attemptedAt, Number(delivery.time_factor ?? 1));
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

  /*
   * The newest stored (encrypted) token known for each endpoint, and when it was learnt. Every
   * claim reads the current one with its deliveries; a roll in this process is told at once
   * (tokenRolled); the tokens of endpoints with claimed deliveries still waiting to be sent are
   * read again on each poll (a roll in another process). An attempt is signed with the newest, not
   * with the one its delivery was claimed with, so a rolled token also signs the notifications
   * claimed before the roll (DESIGN §5: the old token stops working at once).
   *
   * `learnt` orders what is known: a number taken when a claim or read starts, or when a roll is
   * told. A read that started before a roll was told may have seen the old token, so it does not
   * replace what the roll told.
   */
  const latestTokens = new Map<string, { ciphertext: string; learnt: number }>();
  let learning = 0;
  const maxTokens = 10_000;

  function learnToken(endpointId: string, ciphertext: string, learnt: number): void {
    const known = latestTokens.get(endpointId);
    if (known && known.learnt > learnt) return;
    if (!known && latestTokens.size >= maxTokens) latestTokens.clear();
    latestTokens.set(endpointId, { ciphertext, learnt });
  }

  /** Decrypted tokens by ciphertext: decrypted once, whichever deliveries they sign. */
  const decrypted = new Map<string, Promise<string>>();

  function signingKeyOf(delivery: queries.ClaimedDelivery): Promise<string> {
    if (delivery.kind === 'legacy') return webhookEndpoints.legacyKeyFor(delivery.merchant_id);
    const ciphertext = latestTokens.get(delivery.endpoint_id)?.ciphertext ?? delivery.token_ciphertext;
    const known = decrypted.get(ciphertext);
    if (known) return known;
    const token = webhookEndpoints.decryptToken(delivery.endpoint_id, ciphertext);
    if (decrypted.size >= maxTokens) decrypted.clear();
    decrypted.set(ciphertext, token);
    // A failed decryption is not kept: the next attempt tries again.
    token.catch(() => {
      if (decrypted.get(ciphertext) === token) decrypted.delete(ciphertext);
    });
    return token;
  }

  /** Reads again the tokens of endpoints whose claimed deliveries wait to be sent. */
  async function refreshQueuedTokens(): Promise<void> {
    const endpointIds = new Set<string>();
    for (const state of targets.values()) {
      for (const { delivery } of state.queue) if (delivery.kind !== 'legacy') endpointIds.add(delivery.endpoint_id);
    }
    if (endpointIds.size === 0) return;
    const learnt = ++learning;
    const ciphertexts = await webhookEndpoints.tokenCiphertexts([...endpointIds]);
    for (const [endpointId, ciphertext] of ciphertexts) learnToken(endpointId, ciphertext, learnt);
  }

  function stateOf(target: string): TargetState {
    let state = targets.get(target);
    if (!state) {
      state = { inFlight: 0, queue: [], backlogged: false };
      targets.set(target, state);
    }
    return state;
  }

  /**
   * Claimed deliveries join their targets' queues and are sent as slots allow. `learnt` was taken
   * when the claim started (learnToken).
   */
  function enqueue(
    deliveries: readonly queries.ClaimedDelivery[],
    leaseUntil: Date,
    learnt: number,
  ): Map<string, number> {
    const claimedByTarget = new Map<string, number>();
    for (const delivery of deliveries) {
      learnToken(delivery.endpoint_id, delivery.token_ciphertext, learnt);
      claimedByTarget.set(delivery.target, (claimedByTarget.get(delivery.target) ?? 0) + 1);
      stateOf(delivery.target).queue.push({ delivery, leaseUntil });
      held++;
    }
    for (const target of claimedByTarget.keys()) startQueued(target);
    return claimedByTarget;
  }

  function startQueued(target: string): void {
    const state = targets.get(target);
    if (!state) return;
    const late: Leased[] = [];
    while (state.queue.length > 0 && state.inFlight < concurrencyPerTarget) {
      if (httpInFlight >= options.maxInFlight) {
        waitingForRoom.add(target);
        break;
      }
      const leased = state.queue.shift()!;
      if (leased.leaseUntil.getTime() - clock.now().getTime() < leaseLeftToStartMs) {
        held--;
        late.push(leased);
        continue;
      }
      state.inFlight++;
      httpInFlight++;
      let answered = false;
      track(
        attempt(leased, () => {
          if (answered) return;
          answered = true;
          onAnswered(target);
        }).catch((err: unknown) => {
          // The delivery stays leased and is tried again when the lease runs out.
          logger.error({ err, deliveryId: leased.delivery.id }, 'webhook attempt could not be recorded');
        }),
      );
    }
    if (late.length > 0) {
      // Too little of their lease is left to send them safely: handed back, another claim takes them.
      handBack(late, () => requestPump(true));
    }
    forgetIfIdle(target, state);
  }

  function onAnswered(target: string): void {
    const state = targets.get(target);
    if (!state) return;
    const wasAtLimit = httpInFlight >= options.maxInFlight || held >= maxHeld;
    state.inFlight--;
    httpInFlight--;
    held--;
    startQueued(target);
    // Deliveries held back by the process-wide limit may be waiting for this slot.
    for (const waiting of [...waitingForRoom]) {
      if (httpInFlight >= options.maxInFlight) break;
      waitingForRoom.delete(waiting);
      startQueued(waiting);
    }
    refillIfRoom(state);
    if (wasAtLimit) requestPump(true);
    forgetIfIdle(target, state);
  }

  function forgetIfIdle(target: string, state: TargetState): void {
    if (state.inFlight === 0 && state.queue.length === 0 && !state.backlogged && targets.get(target) === state) {
      targets.delete(target);
    }
  }

  function roomOf(state: TargetState): number {
    return heldPerTarget - state.inFlight - state.queue.length;
  }

  /** A backlogged target with room for refillStep more asks for a refill claim. */
  function refillIfRoom(state: TargetState): void {
    if (!state.backlogged || refillWanted || roomOf(state) < refillStep) return;
    refillWanted = true;
    requestPump(false);
  }

  /** A target that got all a claim offered it may have more due: claim again as room frees up. */
  function markBacklogged(target: string): void {
    const state = stateOf(target);
    state.backlogged = true;
    refillIfRoom(state);
  }

  function handBack(leases: readonly Leased[], then?: () => void): void {
    track(
      queries
        .releaseDeliveries(
          db,
          leases.map((leased) => ({ deliveryId: leased.delivery.id, leaseUntil: leased.leaseUntil })),
        )
        .then(then)
        .catch((err: unknown) => {
          // They are claimed again when their leases run out.
          logger.error({ err }, 'webhook deliveries could not be handed back');
        }),
    );
  }

  /** Refills backlogged targets that have room: one cheap indexed claim for all of them. */
  async function refillBacklogged(): Promise<void> {
    refillWanted = false;
    let room = maxHeld - held;
    const wanted: string[] = [];
    const rooms: number[] = [];
    for (const [target, state] of targets) {
      if (!state.backlogged) continue;
      const free = Math.min(roomOf(state), room);
      // Left out for want of room in this process: its next answer asks again.
      if (free < refillJoin) continue;
      wanted.push(target);
      rooms.push(free);
      room -= free;
    }
    if (wanted.length === 0) return;
    const now = clock.now();
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const learnt = ++learning;
    const deliveries = await queries.claimDueDeliveriesOf(db, { now, leaseUntil, targets: wanted, rooms });
    const claimedByTarget = enqueue(deliveries, leaseUntil, learnt);
    wanted.forEach((target, index) => {
      const state = targets.get(target);
      if (!state) return;
      if ((claimedByTarget.get(target) ?? 0) < (rooms[index] ?? 0)) {
        // Every due delivery of the target is taken: new ones come with a wake-up or a poll.
        state.backlogged = false;
        forgetIfIdle(target, state);
      } else {
        refillIfRoom(state);
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
    // Most wake-ups are for events nobody subscribed to: a cheap look first, the claim only if
    // something is due at all.
    if (!(await queries.anyDeliveryDue(db, clock.now()))) return;
    let racesLost = 0;
    for (;;) {
      const room = maxHeld - held;
      // At the process-wide limit: the end of an attempt asks for this claim again.
      if (room <= 0) return;
      const busyTargets: string[] = [];
      const busyCounts: number[] = [];
      const saturatedTargets: string[] = [];
      for (const [target, state] of targets) {
        const count = state.inFlight + state.queue.length;
        if (count === 0) continue;
        busyTargets.push(target);
        busyCounts.push(count);
        if (count >= heldPerTarget) saturatedTargets.push(target);
      }
      const now = clock.now();
      const leaseUntil = new Date(now.getTime() + leaseMs);
      const limit = Math.min(claimBatchSize, room);
      const learnt = ++learning;
      const { deliveries, chosen, examined, window } = await queries.claimDueDeliveries(db, {
        now,
        leaseUntil,
        limit,
        perTargetLimit: heldPerTarget,
        busyTargets,
        busyCounts,
        saturatedTargets,
      });
      const claimedByTarget = enqueue(deliveries, leaseUntil, learnt);
      for (const [target, count] of claimedByTarget) {
        const offered = heldPerTarget - (busyCounts[busyTargets.indexOf(target)] ?? 0);
        if (count >= offered) markBacklogged(target);
      }
      if (chosen === 0) return;
      if (deliveries.length === 0) {
        // Another worker was claiming the same rows at this moment: look again, a few times at most.
        if (++racesLost > 3) return;
        continue;
      }
      // Every due row of the targets below their share was looked at, and all that fit were taken.
      if (examined < window && chosen < limit) return;
    }
  }

  async function claimAndStart(): Promise<void> {
    if (unrecorded >= maxUnrecorded) {
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
      void refreshQueuedTokens().catch((err: unknown) =>
        logger.error({ err }, 'webhook endpoint tokens could not be read again'),
      );
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
    tokenRolled(endpointId: string, ciphertext: string): void {
      learnToken(endpointId, ciphertext, ++learning);
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
      return httpInFlight;
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
      const queued: Leased[] = [];
      for (const [target, state] of targets) {
        queued.push(...state.queue);
        held -= state.queue.length;
        state.queue = [];
        state.backlogged = false;
        forgetIfIdle(target, state);
      }
      waitingForRoom.clear();
      refillWanted = false;
      if (queued.length > 0) handBack(queued);
      await settle();
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
