import { ownRowAlias, selectOwnRowById } from '../../db/by-id.js';
import type { Queryable } from '../../db/db.js';
import type { Statement } from '../../db/held-statements.js';
import { listFilter, selectPage, type PageRequest } from '../../db/pagination.js';
import type { DeliveryKind, DeliveryStatus } from './schemas.js';

export interface DeliveryRow {
  id: string;
  event_id: string;
  /** The code of the event (docs/webhooks.md#event-codes), read from the events table. */
  event_type: string;
  endpoint_id: string;
  url: string;
  kind: DeliveryKind;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  created_at: Date;
}

export interface NewDelivery {
  id: string;
  event_id: string;
  merchant_id: string;
  mode: string;
  endpoint_id: string;
  url: string;
  kind: DeliveryKind;
  /** NULL: made from the event's stored body when sent (bodies.ts); else the bytes to send. */
  body: string | null;
  created_at: Date;
}

export interface AttemptRow {
  id: string;
  delivery_id: string;
  attempt_number: number;
  attempted_at: Date;
  duration_ms: number;
  http_status: number | null;
  response_excerpt: string | null;
  error: string | null;
  succeeded: boolean;
}

// The body is not among the listed columns: lists and the API never need it, and it can be large.
/** The answered columns of a delivery, read from `source` (the table, or an alias of it). */
const columnsFrom = (source: string) =>
  `id, event_id, (SELECT type FROM events WHERE events.id = ${source}.event_id) AS event_type, ` +
  'endpoint_id, url, kind, status, attempts, next_attempt_at, last_attempt_at, created_at';
const columns = columnsFrom('webhook_deliveries');

/**
 * New deliveries, due at once, in one statement: inside the event's transaction (planning), so
 * they exist exactly when the event does, or on their own (resend), all or none.
 */
export async function insertDeliveries(db: Queryable, rows: readonly NewDelivery[]): Promise<void> {
  if (rows.length === 0) return;
  const params: unknown[] = [];
  const values = rows.map((row) => {
    params.push(row.id, row.event_id, row.merchant_id, row.mode, row.endpoint_id, row.url, row.kind, row.body);
    params.push(row.created_at);
    const at = params.length;
    const first = at - 8;
    const list = Array.from({ length: 8 }, (_, index) => `$${first + index}`).join(', ');
    return `(${list}, 'pending', 0, $${at}, $${at}, $${at})`;
  });
  await db.query(
    `INSERT INTO webhook_deliveries
       (id, event_id, merchant_id, mode, endpoint_id, url, kind, body, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES ${values.join(', ')}`,
    params,
  );
}

/** What planning an event's deliveries needs; the targets are found by the statement itself. */
export interface DeliveryPlan {
  eventType: string;
  merchantId: string;
  mode: string;
  /**
   * Only while a process of a version before migration 0180 is alive (Heartbeat.olderProcessesAlive):
   * the endpoint kind's body around the event's sequence (its head with the `endpoint_` type, and the
   * stored body's tail), so that the bodies are kept in the rows as before (the legacy kind's is the
   * event's stored body). Otherwise the rows keep none.
   */
  bodies?: { endpointHead: string; bodyTail: string };
  /** The payment's notifyUrl, sent through the merchant's dynamic endpoint (which must exist). */
  notifyUrl: string | null;
  /** Delivery ids are `wd_` and 19 digits counted on from this random number in [0, 9·10^18). */
  idBase: bigint;
  now: Date;
}

/**
 * docs/webhooks.md#what-is-sent planning in one statement: a delivery per target and kind, for the merchant's
 * enabled static endpoints subscribed to the event type (oldest first) and then the notifyUrl
 * through the dynamic endpoint if that is enabled; `legacy` only where legacyNotifications is
 * on. It runs as part of the event's own insert (events/queries.ts insertEvent), reading the new
 * event's row from `recorded_event`. A delivery keeps no body of its own: each attempt sends the one
 * made from the event's stored body (bodies.ts), so the event's body is written once, not once more
 * per delivery, and a delivery's row stays small through its lease and its record (docs/performance.md)
 * — unless `plan.bodies` asks for the bodies in the rows, for older processes.
 */
export function plannedDeliveries(plan: DeliveryPlan): Statement {
  const [bodyColumn, bodyValue] = plan.bodies
    ? [', body', ", CASE target.kind WHEN 'legacy' THEN event.body ELSE $7 || event.sequence::text || $8 END"]
    : ['', ''];
  return {
    sql: `INSERT INTO webhook_deliveries
       (id, event_id, merchant_id, mode, endpoint_id, url, kind, status, attempts, next_attempt_at, created_at, updated_at${bodyColumn})
     SELECT 'wd_' || (1000000000000000000 + ($1::numeric + target.ordinal) % 9000000000000000000)::text,
            event.id, $2, $3, target.endpoint_id, target.url, target.kind, 'pending', 0, $6, $6, $6${bodyValue}
     FROM recorded_event AS event
     CROSS JOIN (
       SELECT endpoint.id AS endpoint_id, endpoint.url, kinds.kind,
              row_number() OVER (ORDER BY endpoint.position, endpoint.created_at, endpoint.id, kinds.kind) AS ordinal
       FROM (
         SELECT 0 AS position, id, url, created_at, legacy_notifications FROM webhook_endpoints
         WHERE merchant_id = $2 AND mode = $3 AND deleted_at IS NULL AND kind = 'static' AND status = 'enabled'
           AND url IS NOT NULL AND (enabled_events @> '["*"]'::jsonb OR enabled_events @> $4::jsonb)
         UNION ALL
         SELECT 1, id, $5::text, created_at, legacy_notifications FROM webhook_endpoints
         WHERE $5::text IS NOT NULL AND merchant_id = $2 AND mode = $3 AND deleted_at IS NULL AND kind = 'dynamic'
           AND status = 'enabled'
       ) AS endpoint
       CROSS JOIN (VALUES ('endpoint'), ('legacy')) AS kinds (kind)
       WHERE kinds.kind = 'endpoint' OR endpoint.legacy_notifications
     ) AS target`,
    params: [
      plan.idBase.toString(),
      plan.merchantId,
      plan.mode,
      JSON.stringify([plan.eventType]),
      plan.notifyUrl,
      plan.now,
      ...(plan.bodies ? [plan.bodies.endpointHead, plan.bodies.bodyTail] : []),
    ],
  };
}

export async function selectDelivery(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<DeliveryRow | undefined> {
  const [row] = await db.query<DeliveryRow>(selectOwnRowById('webhook_deliveries', columnsFrom(ownRowAlias)), [
    id,
    merchantId,
    mode,
  ]);
  return row;
}

export async function selectDeliveryPage(
  db: Queryable,
  merchantId: string,
  mode: string,
  filters: { status?: DeliveryStatus; endpointId?: string; eventId?: string },
  page: PageRequest,
) {
  const filter = listFilter(merchantId, mode)
    .add((p) => `status = ${p}`, filters.status)
    .add((p) => `endpoint_id = ${p}`, filters.endpointId)
    // An event has a few deliveries: found through webhook_deliveries_event, then filtered.
    .narrow((p) => `event_id = ${p}`, filters.eventId);
  return selectPage<DeliveryRow>(
    db,
    { table: filter.source('webhook_deliveries'), columns, where: filter.where, params: filter.params },
    page,
  );
}

const attemptColumns =
  'a.id, a.delivery_id, a.attempt_number, a.attempted_at, a.duration_ms, a.http_status, a.response_excerpt, a.error, a.succeeded';

/** Every attempt of a delivery, first first (at most 1 + the number of retries). */
export async function selectAttempts(db: Queryable, deliveryId: string): Promise<AttemptRow[]> {
  return db.query<AttemptRow>(
    `SELECT ${attemptColumns} FROM webhook_attempts a WHERE a.delivery_id = $1 ORDER BY a.attempt_number`,
    [deliveryId],
  );
}

/**
 * The attempts of every delivery of an event, first first, at most `limit` + 1 of them (so the
 * caller can tell whether there are more). The event must be the merchant's: checked by the caller.
 */
export async function selectEventAttempts(
  db: Queryable,
  merchantId: string,
  mode: string,
  eventId: string,
  limit: number,
): Promise<AttemptRow[]> {
  return db.query<AttemptRow>(
    `SELECT ${attemptColumns}
     FROM (SELECT * FROM webhook_deliveries WHERE event_id = $1 OFFSET 0) d JOIN webhook_attempts a ON a.delivery_id = d.id
     WHERE d.merchant_id = $2 AND d.mode = $3
     ORDER BY a.attempted_at, a.delivery_id, a.attempt_number
     LIMIT $4`,
    [eventId, merchantId, mode, limit + 1],
  );
}

/** What sending a delivery again needs: its exact body (NULL: made from its event) and where it went. */
export type DeliveryToResend = Pick<DeliveryRow, 'id' | 'event_id' | 'event_type' | 'endpoint_id' | 'url' | 'kind'> & {
  body: string | null;
};

export async function selectDeliveryToResend(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<DeliveryToResend | undefined> {
  const [row] = await db.query<DeliveryToResend>(
    selectOwnRowById(
      'webhook_deliveries',
      `id, event_id, (SELECT type FROM events WHERE events.id = ${ownRowAlias}.event_id) AS event_type, ` +
        'endpoint_id, url, kind, body',
    ),
    [id, merchantId, mode],
  );
  return row;
}

export interface StoredEvent {
  id: string;
  type: string;
  merchant_id: string;
  mode: string;
  body: string;
  /** The notifyUrl the event was recorded for, when it is not its object's own. */
  notify_url: string | null;
}

/** The stored event (the outbox row) with its exact body, for a resend. */
export async function selectStoredEvent(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<StoredEvent | undefined> {
  const [row] = await db.query<StoredEvent>(
    selectOwnRowById('events', 'id, type, merchant_id, mode, body, notify_url'),
    [id, merchantId, mode],
  );
  return row;
}
