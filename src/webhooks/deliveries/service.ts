import type { Clock } from '../../clock.js';
import type { Db, Queryable } from '../../db/db.js';
import type { Statement } from '../../db/held-statements.js';
import type { RecordedEvent } from '../../events/service.js';
import type { MerchantContext } from '../../core/merchant-context.js';
import type { Page } from '../../core/page.js';
import { DomainError, invalidField, notFound } from '../../core/errors.js';
import { newId, randomBelow9e18 } from '../../ids.js';
import { isoTimestamp } from '../../time.js';
import * as queries from './queries.js';
import { deliveryBodyOf } from './bodies.js';
import { withEndpointType } from '../../events/endpoint-body.js';
import type {
  DeliveryKind,
  ListDeliveriesQuery,
  ListEventDeliveriesQuery,
  ResendEventBody,
  WebhookAttempt,
  WebhookDelivery,
} from './schemas.js';
import type { WebhookEndpointService } from '../endpoints/service.js';
import { endpointEventType } from '../../events/event-types.js';

/*
 * The planning half of the webhook engine (docs/webhooks.md, docs/webhooks.md#what-is-sent) and the delivery log API.
 * For each stored event: one delivery per target (subscribed enabled endpoints, plus the payment's
 * notifyUrl signed by the dynamic endpoint) and kind (`endpoint`, and `legacy` unless the endpoint
 * switched it off), written in the event's own transaction, so a crash between commit and
 * dispatch loses nothing: the rows are there and polling finds them. The dispatcher sends them.
 */

type MerchantScope = Pick<MerchantContext, 'merchantId' | 'mode'>;

/** Where an event goes: the endpoint whose token signs it, the url, and whether legacy is sent too. */
interface Target {
  endpointId: string;
  url: string;
  legacyNotifications: boolean;
}

/** The event as stored: the exact body the legacy kind sends, and what the endpoint kind is made of. */
interface StoredEvent {
  id: string;
  type: string;
  merchantId: string;
  mode: string;
  body: string;
  /** The notifyUrl it was recorded for (RecordedEvent.notifyUrl), when not its object's own. */
  notifyUrl: string | null;
}

export interface WebhookDeliveryServiceDeps {
  db: Db;
  clock: Clock;
  webhookEndpoints: Pick<WebhookEndpointService, 'targetsFor' | 'ensureDynamicEndpoint' | 'retrieve'>;
  /** Called when deliveries were created outside an event's transaction (resend): wakes the dispatcher. */
  onCreated?: () => void;
  /**
   * Heartbeat.olderProcessesAlive: while true, new deliveries keep their bodies in their rows, for
   * the processes of a version before migration 0180 (decision 0035).
   */
  olderProcessesAlive: () => boolean;
}

/** The head of the endpoint kind's body (bodies.ts) of an event recorded now. */
function endpointHeadOf(event: RecordedEvent): string {
  const head = withEndpointType(event.bodyHead, event.type);
  if (head === undefined) throw new Error(`The event ${event.id} has no type member to rename`);
  return head;
}

/** GET /events/{id}/attempts answers at most this many (13 per delivery; more only after many resends). */
const maxEventAttempts = 1000;

/** A payment's `notifyUrl` (docs/webhooks.md#what-is-sent), when the object has one. */
function notifyUrlOf(object: Record<string, unknown> | undefined): string | null {
  const value = object?.notifyUrl;
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * docs/webhooks.md#what-is-sent: the notifyUrl an event goes to: the one it was recorded for (a refund's events, to
 * its payment's), else its object's own (a payment's events).
 */
function eventNotifyUrl(recordedFor: string | null, object: Record<string, unknown> | undefined): string | null {
  return recordedFor ?? notifyUrlOf(object);
}

/** The object (`data`) of a stored event body. */
function dataOf(event: StoredEvent): Record<string, unknown> | undefined {
  return (JSON.parse(event.body) as { data?: Record<string, unknown> }).data;
}

export function toWebhookDelivery(row: queries.DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    url: row.url,
    kind: row.kind,
    type: row.kind === 'endpoint' ? endpointEventType(row.event_type) : row.event_type,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at ? isoTimestamp(row.next_attempt_at) : null,
    lastAttemptAt: row.last_attempt_at ? isoTimestamp(row.last_attempt_at) : null,
    created: isoTimestamp(row.created_at),
  };
}

function toWebhookAttempt(row: queries.AttemptRow): WebhookAttempt {
  return {
    id: row.id,
    deliveryId: row.delivery_id,
    attemptNumber: Number(row.attempt_number),
    attemptedAt: isoTimestamp(row.attempted_at),
    durationMs: Number(row.duration_ms),
    httpStatus: row.http_status === null ? null : Number(row.http_status),
    responseExcerpt: row.response_excerpt,
    error: row.error,
    succeeded: row.succeeded,
  };
}

export function createWebhookDeliveryService({
  db,
  clock,
  webhookEndpoints,
  onCreated,
  olderProcessesAlive,
}: WebhookDeliveryServiceDeps) {
  /**
   * Merchant scopes whose dynamic endpoint is known to exist. It is created on first use and can
   * never be deleted, so once seen it need not be looked up again before planning.
   */
  const dynamicEndpointExists = new Set<string>();

  /** docs/webhooks.md#what-is-sent targets: subscribed enabled static endpoints, then the notifyUrl if any. */
  async function currentTargets(
    source: Queryable,
    merchant: MerchantScope,
    eventType: string,
    notifyUrl: string | null,
  ): Promise<Target[]> {
    const targets: Target[] = (await webhookEndpoints.targetsFor(source, merchant, eventType)).map((endpoint) => ({
      endpointId: endpoint.id,
      url: endpoint.url,
      legacyNotifications: endpoint.legacyNotifications,
    }));
    if (notifyUrl !== null) {
      const dynamic = await webhookEndpoints.ensureDynamicEndpoint(source, merchant);
      // A merchant that disabled its dynamic endpoint receives nothing at notifyUrl until it enables it.
      if (dynamic.enabled) {
        targets.push({ endpointId: dynamic.id, url: notifyUrl, legacyNotifications: dynamic.legacyNotifications });
      }
    }
    return targets;
  }

  function deliveriesFor(event: StoredEvent, targets: readonly Target[]): queries.NewDelivery[] {
    if (targets.length === 0) return [];
    const now = clock.now();
    // Made from the event when sent (bodies.ts): the bytes its first deliveries were sent with. Kept
    // in the rows, each kind's made once, only while an older process runs (decision 0035).
    const bodies: Record<DeliveryKind, string | null> = olderProcessesAlive()
      ? {
          endpoint: deliveryBodyOf('endpoint', event.body, event.type),
          legacy: deliveryBodyOf('legacy', event.body, event.type),
        }
      : { endpoint: null, legacy: null };
    const rows: queries.NewDelivery[] = [];
    for (const target of targets) {
      const kinds: DeliveryKind[] = target.legacyNotifications ? ['endpoint', 'legacy'] : ['endpoint'];
      for (const kind of kinds) {
        rows.push({
          id: newId('wd'),
          event_id: event.id,
          merchant_id: event.merchantId,
          mode: event.mode,
          endpoint_id: target.endpointId,
          url: target.url,
          kind,
          body: bodies[kind],
          created_at: now,
        });
      }
    }
    return rows;
  }

  async function loadEvent(merchant: MerchantScope, id: string): Promise<StoredEvent> {
    const row = await queries.selectStoredEvent(db, merchant.merchantId, merchant.mode, id);
    if (!row) throw notFound('event', id);
    return {
      id: row.id,
      type: row.type,
      merchantId: row.merchant_id,
      mode: row.mode,
      body: row.body,
      notifyUrl: row.notify_url,
    };
  }

  async function requireDelivery(merchant: MerchantScope, id: string): Promise<queries.DeliveryRow> {
    const row = await queries.selectDelivery(db, merchant.merchantId, merchant.mode, id);
    if (!row) throw notFound('webhook delivery', id);
    return row;
  }

  /** The one target of a resend to `endpointId`, sent whether or not it is subscribed to the event type. */
  async function targetOf(merchant: MerchantContext, event: StoredEvent, endpointId: string): Promise<Target> {
    const endpoint = await webhookEndpoints.retrieve(merchant, endpointId).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === 'resource_missing') {
        throw new DomainError('resource_missing', err.message, { param: 'endpointId' });
      }
      throw err;
    });
    if (endpoint.status !== 'enabled') {
      throw new DomainError('invalid_state', 'The webhook endpoint is disabled; enable it before resending to it', {
        param: 'endpointId',
      });
    }
    if (endpoint.kind === 'dynamic') {
      const notifyUrl = eventNotifyUrl(event.notifyUrl, dataOf(event));
      if (notifyUrl === null) {
        throw invalidField('endpointId', "The event's object has no notifyUrl to resend to", 'no_notify_url');
      }
      return { endpointId: endpoint.id, url: notifyUrl, legacyNotifications: endpoint.legacyNotifications };
    }
    return { endpointId: endpoint.id, url: endpoint.url ?? '', legacyNotifications: endpoint.legacyNotifications };
  }

  return {
    /**
     * events.onRecorded: plans the deliveries of an event inside the transaction that records it
     * (docs/architecture.md#the-request-path outbox), so they exist exactly when the event does: the answer is the statement
     * that writes them, run as part of the event's own insert.
     */
    async plan(tx: Queryable, event: RecordedEvent): Promise<Statement> {
      const notifyUrl = eventNotifyUrl(event.notifyUrl, event.data);
      const scope = `${event.merchantId}:${event.mode}`;
      if (notifyUrl !== null && !dynamicEndpointExists.has(scope)) {
        await webhookEndpoints.ensureDynamicEndpoint(tx, {
          merchantId: event.merchantId,
          mode: event.mode as MerchantContext['mode'],
        });
        dynamicEndpointExists.add(scope);
      }
      const planned = queries.plannedDeliveries({
        eventType: event.type,
        merchantId: event.merchantId,
        mode: event.mode,
        ...(olderProcessesAlive() && { bodies: { endpointHead: endpointHeadOf(event), bodyTail: event.bodyTail } }),
        notifyUrl,
        idBase: randomBelow9e18(),
        now: clock.now(),
      });
      return {
        ...planned,
        onRowCount: (count) => {
          event.deliveriesPlanned = count;
        },
      };
    },

    /**
     * Sends an event again (docs/webhooks.md#what-is-sent "resent by hand"): new deliveries with the same bodies, to
     * every current target of the event, or to one endpoint. Earlier deliveries keep their log.
     */
    async resend(merchant: MerchantContext, eventId: string, input: ResendEventBody): Promise<Page<WebhookDelivery>> {
      const event = await loadEvent(merchant, eventId);
      const targets =
        input.endpointId !== undefined
          ? [await targetOf(merchant, event, input.endpointId)]
          : await currentTargets(db, merchant, event.type, eventNotifyUrl(event.notifyUrl, dataOf(event)));
      const rows = deliveriesFor(event, targets);
      await queries.insertDeliveries(db, rows);
      if (rows.length > 0) onCreated?.();
      return {
        data: rows.map((row) =>
          toWebhookDelivery({
            ...row,
            event_type: event.type,
            status: 'pending',
            attempts: 0,
            next_attempt_at: row.created_at,
            last_attempt_at: null,
          }),
        ),
        hasMore: false,
      };
    },

    async listForEvent(
      merchant: MerchantContext,
      eventId: string,
      query: ListEventDeliveriesQuery,
    ): Promise<Page<WebhookDelivery>> {
      await loadEvent(merchant, eventId);
      const { rows, hasMore } = await queries.selectDeliveryPage(
        db,
        merchant.merchantId,
        merchant.mode,
        { eventId, status: query.status, endpointId: query.endpointId },
        query,
      );
      return { data: rows.map(toWebhookDelivery), hasMore };
    },

    /** Every attempt of every delivery of the event, first first (docs/api.md#requests: events with their attempts). */
    async listEventAttempts(merchant: MerchantContext, eventId: string): Promise<Page<WebhookAttempt>> {
      await loadEvent(merchant, eventId);
      const rows = await queries.selectEventAttempts(db, merchant.merchantId, merchant.mode, eventId, maxEventAttempts);
      return { data: rows.slice(0, maxEventAttempts).map(toWebhookAttempt), hasMore: rows.length > maxEventAttempts };
    },

    /**
     * Sends one delivery again by hand (docs/webhooks.md#what-is-sent: a given-up delivery "can be resent by hand"): a
     * new delivery of the same kind with the same body, signed with the endpoint's current token,
     * to the endpoint's current url (a notifyUrl delivery to the same notifyUrl).
     */
    async resendDelivery(merchant: MerchantContext, id: string): Promise<WebhookDelivery> {
      const original = await queries.selectDeliveryToResend(db, merchant.merchantId, merchant.mode, id);
      if (!original) throw notFound('webhook delivery', id);
      const endpoint = await webhookEndpoints.retrieve(merchant, original.endpoint_id).catch((err: unknown) => {
        if (err instanceof DomainError && err.code === 'resource_missing') {
          throw new DomainError('invalid_state', 'The webhook endpoint of this delivery was deleted', { param: 'id' });
        }
        throw err;
      });
      if (endpoint.status !== 'enabled') {
        throw new DomainError('invalid_state', 'The webhook endpoint is disabled; enable it before resending to it', {
          param: 'id',
        });
      }
      const row: queries.NewDelivery = {
        id: newId('wd'),
        event_id: original.event_id,
        merchant_id: merchant.merchantId,
        mode: merchant.mode,
        endpoint_id: original.endpoint_id,
        url: endpoint.kind === 'static' && endpoint.url !== null ? endpoint.url : original.url,
        kind: original.kind,
        // Its bytes, or NULL as it has none: a delivery without a body of its own was planned after every
        // older process had gone, and none can start again once migration 0180 is applied (decision 0035).
        body: original.body,
        created_at: clock.now(),
      };
      await queries.insertDeliveries(db, [row]);
      onCreated?.();
      return toWebhookDelivery({
        ...row,
        event_type: original.event_type,
        status: 'pending',
        attempts: 0,
        next_attempt_at: row.created_at,
        last_attempt_at: null,
      });
    },

    async list(merchant: MerchantContext, query: ListDeliveriesQuery): Promise<Page<WebhookDelivery>> {
      const { rows, hasMore } = await queries.selectDeliveryPage(
        db,
        merchant.merchantId,
        merchant.mode,
        { status: query.status, endpointId: query.endpointId },
        query,
      );
      return { data: rows.map(toWebhookDelivery), hasMore };
    },

    async retrieve(merchant: MerchantContext, id: string): Promise<WebhookDelivery> {
      return toWebhookDelivery(await requireDelivery(merchant, id));
    },

    /** Every attempt of the delivery, first first (docs/webhooks.md#acknowledgement-and-retries: each attempt is a row to read back). */
    async listAttempts(merchant: MerchantContext, id: string): Promise<Page<WebhookAttempt>> {
      const delivery = await requireDelivery(merchant, id);
      const rows = await queries.selectAttempts(db, delivery.id);
      return { data: rows.map(toWebhookAttempt), hasMore: false };
    },
  };
}

export type WebhookDeliveryService = ReturnType<typeof createWebhookDeliveryService>;
