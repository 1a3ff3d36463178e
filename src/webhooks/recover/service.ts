import type { Clock } from '../../clock.js';
import type { Db, Queryable } from '../../db/db.js';
import type { MerchantContext } from '../../core/merchant-context.js';
import { DomainError, invalidField } from '../../core/errors.js';
import { newId } from '../../ids.js';
import { isoTimestamp } from '../../time.js';
import { deliveryBodyOf } from '../deliveries/bodies.js';
import type { DeliveryKind } from '../deliveries/schemas.js';
import type { Actor, WebhookEndpointService } from '../endpoints/service.js';
import * as queries from './queries.js';
import type { RecoverBody, Recovery } from './schemas.js';

/*
 * Recover (issue 20 item 4, docs/webhooks.md#recover, docs/decisions/0017): sends an endpoint, oldest first,
 * every event of a window that it has not acknowledged (no delivery of the event to it succeeded):
 * the events it missed while failing, and those made while it was disabled (never planned for it).
 * - Events still being retried to it are not sent twice: their pending deliveries are sent again.
 * - The others get new deliveries of the kinds the endpoint takes now (the endpoint_ kind, and the
 *   legacy kind when legacyNotifications is on).
 * - All of them, in the events' order, form one chain (docs/decisions/0030): the first falls due at
 *   once, and each of the others when the attempt of the one before it has been answered and
 *   recorded (engine/queries.ts recordAttemptGroup), whatever its outcome: one at a time, in order.
 * - A disabled endpoint is refused (endpoint_disabled, 409): it would receive nothing.
 * - The window is bounded by retention (an older event, or its deliveries, may be gone), and starts no
 *   earlier than the endpoint's creation: it cannot have missed what was made before it existed.
 */

const dayMs = 24 * 60 * 60 * 1000;
/** Events read, and deliveries written, per statement (all in the recover's one transaction). */
const pageSize = 500;
/** A chain's delivery is let go by the backstop only once it has waited this long (releaseStranded). */
const strandedAfterMs = 60_000;

export interface RecoveryDeps {
  db: Db;
  clock: Clock;
  webhookEndpoints: Pick<WebhookEndpointService, 'retrieve' | 'recordAudit'>;
  /** Days events are kept (TESSERA_EVENT_RETENTION_DAYS). */
  eventRetentionDays: number;
  /** Days finished deliveries are kept (TESSERA_DELIVERY_RETENTION_DAYS): older acknowledgements are gone. */
  deliveryRetentionDays: number;
  /** Heartbeat.olderProcessesAlive: while true, new deliveries keep their bodies (decision 0035). */
  olderProcessesAlive: () => boolean;
  /** New deliveries were made: wakes the dispatcher. */
  onCreated: () => void;
}

/**
 * A recover's chain (docs/decisions/0030): its deliveries in the events' order, each but the first
 * following the one before it; the first falls due at its event's creation time (before anything
 * planned since, in the dispatcher's earliest-first claim). A delivery whose attempt is under way
 * when the recover is made is left to that attempt; the chain's first delivery follows it when it
 * comes before any other (a second recover while the first one's chain is sending), else it is passed
 * over: it was sent already, and holding the rest for its answer is not needed.
 */
function startChain() {
  let previous: string | null = null;
  let started = false;
  return {
    link(id: string, eventCreated: Date): queries.ChainLink {
      const link = { id, follows: previous, next_attempt_at: previous === null ? eventCreated : null };
      previous = id;
      started = true;
      return link;
    },
    inFlight(id: string): void {
      if (!started) previous = id;
    },
  };
}

/** Where a recover sends: the endpoint, its url (null: the dynamic endpoint, each event's notifyUrl), its kinds. */
interface PageTarget {
  merchant: Pick<MerchantContext, 'merchantId' | 'mode'>;
  endpointId: string;
  url: string | null;
  kinds: readonly DeliveryKind[];
}

/**
 * One page of the window's events, in order, into the chain: an event still being retried to the
 * endpoint by its pending deliveries (those not under a lease, locked until the recover commits),
 * any other by new deliveries of each kind. Answers what it counted and wrote.
 */
async function chainPage(
  tx: Queryable,
  target: PageTarget,
  events: readonly queries.UnacknowledgedEvent[],
  chain: ReturnType<typeof startChain>,
  now: Date,
  /** Keep each new delivery's body in its row, for processes of a version before migration 0180. */
  keepBodies: boolean,
): Promise<{ events: number; created: number; rescheduled: number }> {
  const retrying = events.filter((event) => Number(event.pending_deliveries) > 0);
  const pending = await queries.selectPendingDeliveries(
    tx,
    target.endpointId,
    retrying.map((event) => event.id),
    now,
  );
  const idle = await queries.lockIdleDeliveries(
    tx,
    pending.filter((delivery) => !delivery.in_flight).map((delivery) => delivery.id),
    now,
  );
  const pendingOf = new Map<string, queries.PendingDelivery[]>();
  for (const delivery of pending) {
    pendingOf.set(delivery.event_id, [...(pendingOf.get(delivery.event_id) ?? []), delivery]);
  }
  const links: queries.ChainLink[] = [];
  const rows: queries.RecoveredDelivery[] = [];
  let counted = 0;
  for (const event of events) {
    if (Number(event.pending_deliveries) > 0) {
      // Not sent twice: its pending deliveries take their places in the chain.
      for (const delivery of pendingOf.get(event.id) ?? []) {
        if (idle.has(delivery.id)) links.push(chain.link(delivery.id, event.created_at));
        else if (delivery.in_flight) chain.inFlight(delivery.id);
      }
      counted++;
      continue;
    }
    const url = target.url ?? notifyUrlOf(event);
    if (url === null) continue;
    for (const kind of target.kinds) {
      rows.push({
        ...chain.link(newId('wd'), event.created_at),
        event_id: event.id,
        merchant_id: target.merchant.merchantId,
        mode: target.merchant.mode,
        endpoint_id: target.endpointId,
        url,
        kind,
        body: keepBodies ? deliveryBodyOf(kind, event.body, event.type) : null,
        created_at: now,
      });
    }
    counted++;
  }
  await queries.insertRecoveredDeliveries(tx, rows);
  await queries.chainDeliveries(tx, links, now);
  return { events: counted, created: rows.length, rescheduled: links.length };
}

/** docs/webhooks.md#what-is-sent: the notifyUrl an event was sent to (recorded with it, or its payment's own). */
function notifyUrlOf(event: queries.UnacknowledgedEvent): string | null {
  if (event.notify_url) return event.notify_url;
  const data = (JSON.parse(event.body) as { data?: { notifyUrl?: unknown } }).data;
  return typeof data?.notifyUrl === 'string' && data.notifyUrl !== '' ? data.notifyUrl : null;
}

export function createRecoveryService(deps: RecoveryDeps) {
  const { db, clock } = deps;
  const retentionDays = Math.min(deps.eventRetentionDays, deps.deliveryRetentionDays);

  function requestedWindow(input: RecoverBody, now: Date): { since: Date; until: Date } {
    const since = new Date(input.since);
    if (Number.isNaN(since.getTime())) throw invalidField('since', 'since must be an ISO 8601 timestamp', 'format');
    if (since.getTime() > now.getTime()) {
      throw invalidField('since', `since must not be in the future (it is now ${isoTimestamp(now)})`, 'not_in_future');
    }
    const oldest = new Date(now.getTime() - retentionDays * dayMs);
    if (since.getTime() < oldest.getTime()) {
      throw invalidField(
        'since',
        `since must be within the last ${retentionDays} days (the retention of events and deliveries): ` +
          `${isoTimestamp(oldest)} or later`,
        'within_retention',
      );
    }
    let until = now;
    if (input.until !== undefined) {
      until = new Date(input.until);
      if (Number.isNaN(until.getTime())) throw invalidField('until', 'until must be an ISO 8601 timestamp', 'format');
      if (until.getTime() <= since.getTime()) throw invalidField('until', 'until must be after since', 'after_since');
      // Events not yet made cannot be missed: a later bound is now.
      if (until.getTime() > now.getTime()) until = now;
    }
    return { since, until };
  }

  return {
    /** Where a recover starts unless told: when the endpoint began failing, else a day ago. */
    suggestedSince(failingSince: string | null): string {
      return failingSince ?? isoTimestamp(new Date(clock.now().getTime() - dayMs));
    },

    async recover(merchant: MerchantContext, endpointId: string, input: RecoverBody, actor: Actor): Promise<Recovery> {
      const now = clock.now();
      const endpoint = await deps.webhookEndpoints.retrieve(merchant, endpointId);
      if (endpoint.status !== 'enabled') {
        throw new DomainError(
          'endpoint_disabled',
          'The webhook endpoint is disabled: enable it first (POST /webhook_endpoints/{id}/update with status ' +
            '"enabled"), then recover what it missed',
          { param: 'id', status: endpoint.status },
        );
      }
      const window_ = requestedWindow(input, now);
      // An endpoint cannot have missed the events made before it existed.
      const created = new Date(endpoint.created);
      const since = created > window_.since ? created : window_.since;
      const until = window_.until;
      const target: PageTarget = {
        merchant,
        endpointId,
        url: endpoint.kind === 'dynamic' ? null : endpoint.url,
        kinds: endpoint.legacyNotifications ? ['endpoint', 'legacy'] : ['endpoint'],
      };
      // One transaction, so that the chain is whole before any of it is sent: a part written and
      // started while the rest was still being read could run past the next part's first link.
      const result = await db.transaction(async (tx) => {
        const totals = { events: 0, deliveriesCreated: 0, deliveriesRescheduled: 0 };
        const chain = startChain();
        let after: { created: Date; id: string } | null = null;
        // Nothing to look at when the endpoint was created after the window.
        while (since.getTime() <= until.getTime()) {
          const events = await queries.selectUnacknowledgedEvents(tx, {
            merchantId: merchant.merchantId,
            mode: merchant.mode,
            endpointId,
            dynamic: endpoint.kind === 'dynamic',
            subscribedTo: endpoint.enabledEvents,
            since,
            until,
            after,
            limit: pageSize,
          });
          const last = events.at(-1);
          if (!last) break;
          after = { created: last.created_at, id: last.id };
          const written = await chainPage(tx, target, events, chain, now, deps.olderProcessesAlive());
          totals.events += written.events;
          totals.deliveriesCreated += written.created;
          totals.deliveriesRescheduled += written.rescheduled;
          if (events.length < pageSize) break;
        }
        // Audited in the same transaction: no recover without its entry, nor an entry without it.
        await deps.webhookEndpoints.recordAudit(merchant, 'webhook_endpoint.recovered', endpointId, actor, tx);
        return totals;
      });
      if (result.deliveriesCreated + result.deliveriesRescheduled > 0) deps.onCreated();
      return { endpointId, since: isoTimestamp(since), until: isoTimestamp(until), ...result };
    },

    /**
     * The backstop of the chains (every minute, in every process): a delivery whose delivery before
     * it will not be answered (deleted, or ended without a recorded attempt) falls due. How many.
     */
    async releaseStranded(): Promise<number> {
      const now = clock.now();
      const released = await queries.releaseStrandedFollowers(db, now, new Date(now.getTime() - strandedAfterMs));
      if (released > 0) deps.onCreated();
      return released;
    },
  };
}

export type RecoveryService = ReturnType<typeof createRecoveryService>;
