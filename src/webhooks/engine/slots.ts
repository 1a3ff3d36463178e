import type { Leased } from './claimer.js';
import type { ClaimedDelivery } from './queries.js';

/*
 * The scheduler's slot accounting, in memory and synchronous: per target (URL), the deliveries
 * being sent and those claimed ahead; process-wide, the HTTP exchanges under way and the
 * deliveries held (leased and not yet answered). It decides nothing about time or the database:
 * the scheduler asks it what may start, what to claim, and tells it what was claimed and answered.
 */

export interface SlotLimits {
  /** At most this many deliveries to one target (URL) in flight in this process. */
  concurrencyPerTarget: number;
  /** At most this many deliveries in flight in this process. */
  maxInFlight: number;
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

/** This process's targets as a claim of any due delivery needs them. */
export interface BusyTargets {
  busyTargets: string[];
  busyCounts: number[];
  /** Targets holding heldPerTarget deliveries already. */
  saturatedTargets: string[];
}

export function createSlots({ concurrencyPerTarget, maxInFlight }: SlotLimits) {
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
  const maxHeld = 2 * maxInFlight;

  const targets = new Map<string, TargetState>();
  let httpInFlight = 0;
  /** Leased deliveries not yet answered: queued and in flight. */
  let held = 0;
  /** Targets with queued deliveries that wait for the process-wide limit. */
  const waitingForRoom = new Set<string>();

  function stateOf(target: string): TargetState {
    let state = targets.get(target);
    if (!state) {
      state = { inFlight: 0, queue: [], backlogged: false };
      targets.set(target, state);
    }
    return state;
  }

  function roomOf(state: TargetState): number {
    return heldPerTarget - state.inFlight - state.queue.length;
  }

  function forgetIfIdle(target: string): void {
    const state = targets.get(target);
    if (state && state.inFlight === 0 && state.queue.length === 0 && !state.backlogged) targets.delete(target);
  }

  return {
    heldPerTarget,
    forgetIfIdle,

    /** Claimed deliveries join their targets' queues. Answers how many each target got. */
    enqueue(deliveries: readonly ClaimedDelivery[], leaseUntil: Date): Map<string, number> {
      const claimedByTarget = new Map<string, number>();
      for (const delivery of deliveries) {
        claimedByTarget.set(delivery.target, (claimedByTarget.get(delivery.target) ?? 0) + 1);
        stateOf(delivery.target).queue.push({ delivery, leaseUntil });
        held++;
      }
      return claimedByTarget;
    },

    /**
     * Takes the target's queued deliveries that may be sent now (each counted in flight), and those
     * too `late` to be sent safely (no longer held: to be handed back). A target stopped by the
     * process-wide limit waits for room.
     */
    take(target: string, late: (leased: Leased) => boolean): { send: Leased[]; late: Leased[] } {
      const taken = { send: [] as Leased[], late: [] as Leased[] };
      const state = targets.get(target);
      if (!state) return taken;
      while (state.queue.length > 0 && state.inFlight < concurrencyPerTarget) {
        if (httpInFlight >= maxInFlight) {
          waitingForRoom.add(target);
          break;
        }
        const leased = state.queue.shift()!;
        if (late(leased)) {
          held--;
          taken.late.push(leased);
          continue;
        }
        state.inFlight++;
        httpInFlight++;
        taken.send.push(leased);
      }
      return taken;
    },

    /**
     * An HTTP exchange of the target is over: its slot is free. Answers whether the process was at
     * one of its limits before (a claim of any due delivery may have been skipped for want of room).
     */
    answered(target: string): boolean | undefined {
      const state = targets.get(target);
      if (!state) return undefined;
      const wasAtLimit = httpInFlight >= maxInFlight || held >= maxHeld;
      state.inFlight--;
      httpInFlight--;
      held--;
      return wasAtLimit;
    },

    /** The targets waiting for the process-wide limit, as they are now. */
    waitingTargets(): string[] {
      return [...waitingForRoom];
    },

    stopWaiting(target: string): void {
      waitingForRoom.delete(target);
    },

    /** Below the process-wide limit of HTTP exchanges. */
    hasRoomInFlight(): boolean {
      return httpInFlight < maxInFlight;
    },

    /** Deliveries this process may still lease. */
    room(): number {
      return maxHeld - held;
    },

    /** The target is backlogged and has room for a refill's worth. */
    wantsRefill(target: string): boolean {
      const state = targets.get(target);
      return state !== undefined && state.backlogged && roomOf(state) >= refillStep;
    },

    /** A target that got all a claim offered it may have more due: claim again as room frees up. */
    markBacklogged(target: string): void {
      stateOf(target).backlogged = true;
    },

    /** Every due delivery of the target is taken: new ones come with a wake-up or a poll. */
    clearBacklog(target: string): void {
      const state = targets.get(target);
      if (state) state.backlogged = false;
    },

    /**
     * The backlogged targets to refill and how many each may take, within the room of the process;
     * a target with room for fewer than refillJoin is left out (its next answer asks again).
     */
    refillRequest(): { targets: string[]; rooms: number[] } {
      let room = maxHeld - held;
      const wanted: string[] = [];
      const rooms: number[] = [];
      for (const [target, state] of targets) {
        if (!state.backlogged) continue;
        const free = Math.min(roomOf(state), room);
        if (free < refillJoin) continue;
        wanted.push(target);
        rooms.push(free);
        room -= free;
      }
      return { targets: wanted, rooms };
    },

    /** The targets holding deliveries, how many each, and those at their share. */
    busy(): BusyTargets {
      const busy: BusyTargets = { busyTargets: [], busyCounts: [], saturatedTargets: [] };
      for (const [target, state] of targets) {
        const count = state.inFlight + state.queue.length;
        if (count === 0) continue;
        busy.busyTargets.push(target);
        busy.busyCounts.push(count);
        if (count >= heldPerTarget) busy.saturatedTargets.push(target);
      }
      return busy;
    },

    /** Empties every queue and forgets every backlog (a stop): answers what was queued, no longer held. */
    releaseQueued(): Leased[] {
      const queued: Leased[] = [];
      for (const [target, state] of targets) {
        queued.push(...state.queue);
        held -= state.queue.length;
        state.queue = [];
        state.backlogged = false;
        forgetIfIdle(target);
      }
      waitingForRoom.clear();
      return queued;
    },

    /** HTTP exchanges under way. */
    inFlight(): number {
      return httpInFlight;
    },

    /** Leased deliveries not yet answered (queued and in flight). */
    held(): number {
      return held;
    },
  };
}

export type Slots = ReturnType<typeof createSlots>;
