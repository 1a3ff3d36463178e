import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import type { MerchantContext } from '../../http/auth.js';
import { ApiError, invalidField } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { isoTimestamp } from '../../time.js';
import { endpointBodyOf } from '../deliveries/service.js';
import type { Actor, WebhookEndpointService } from '../endpoints/service.js';
import * as queries from './queries.js';
import type { RecoverBody, Recovery } from './schemas.js';

/*
 * Recover (issue 20 item 4, DESIGN §12, docs/decisions/0017): sends an endpoint, oldest first,
 * every event of a window that it has not acknowledged (no delivery of the event to it succeeded):
 * the events it missed while failing, and those made while it was disabled (never planned for it).
 * - Events still being retried to it are not sent twice: their pending deliveries fall due now.
 * - The others get new deliveries of the kinds the endpoint takes now (the endpoint_ kind, and the
 *   legacy kind when legacyNotifications is on), due at the event's creation time, so that the
 *   dispatcher's earliest-first claim sends them in the events' order.
 * - A disabled endpoint is refused (endpoint_disabled, 409): it would receive nothing.
 * - The window is bounded by retention (an older event, or its deliveries, may be gone), and starts no
 *   earlier than the endpoint's creation: it cannot have missed what was made before it existed.
 */

const dayMs = 24 * 60 * 60 * 1000;
/** Events read, and deliveries written, per transaction. */
const pageSize = 500;

export interface RecoveryDeps {
  db: Db;
  clock: Clock;
  webhookEndpoints: Pick<WebhookEndpointService, 'retrieve' | 'recordAudit'>;
  /** Days events are kept (TESSERA_EVENT_RETENTION_DAYS). */
  eventRetentionDays: number;
  /** Days finished deliveries are kept (TESSERA_DELIVERY_RETENTION_DAYS): older acknowledgements are gone. */
  deliveryRetentionDays: number;
  /** New deliveries were made: wakes the dispatcher. */
  onCreated: () => void;
}

/** DESIGN §5: the notifyUrl an event was sent to (recorded with it, or its payment's own). */
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
        throw new ApiError(
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
      const kinds = endpoint.legacyNotifications ? (['endpoint', 'legacy'] as const) : (['endpoint'] as const);
      const result = { events: 0, deliveriesCreated: 0, deliveriesRescheduled: 0 };
      let after: { created: Date; id: string } | null = null;
      // Nothing to look at when the endpoint was created after the window.
      while (since.getTime() <= until.getTime()) {
        const events = await queries.selectUnacknowledgedEvents(db, {
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
        const retrying = events.filter((event) => Number(event.pending_deliveries) > 0);
        const rows: queries.RecoveredDelivery[] = [];
        for (const event of events) {
          if (Number(event.pending_deliveries) > 0) continue;
          const url = endpoint.kind === 'dynamic' ? notifyUrlOf(event) : endpoint.url;
          if (url === null) continue;
          for (const kind of kinds) {
            rows.push({
              id: newId('wd'),
              event_id: event.id,
              merchant_id: merchant.merchantId,
              mode: merchant.mode,
              endpoint_id: endpointId,
              url,
              kind,
              body: kind === 'endpoint' ? endpointBodyOf(event.body, event.type) : event.body,
              next_attempt_at: event.created_at,
              created_at: now,
            });
          }
        }
        const rescheduled = await db.transaction(async (tx) => {
          await queries.insertRecoveredDeliveries(tx, rows);
          return queries.rescheduleDeliveries(
            tx,
            endpointId,
            retrying.map((event) => event.id),
            retrying.map((event) => event.created_at),
            now,
          );
        });
        result.events += retrying.length + new Set(rows.map((row) => row.event_id)).size;
        result.deliveriesCreated += rows.length;
        result.deliveriesRescheduled += rescheduled;
        if (events.length < pageSize) break;
      }
      await deps.webhookEndpoints.recordAudit(merchant, 'webhook_endpoint.recovered', endpointId, actor);
      if (result.deliveriesCreated + result.deliveriesRescheduled > 0) deps.onCreated();
      return { endpointId, since: isoTimestamp(since), until: isoTimestamp(until), ...result };
    },
  };
}

export type RecoveryService = ReturnType<typeof createRecoveryService>;
