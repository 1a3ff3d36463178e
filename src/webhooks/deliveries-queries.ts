import type { Queryable } from '../db/db.js';
import { selectPage, type PageRequest } from '../db/pagination.js';
import type { DeliveryKind, DeliveryStatus } from './deliveries-schemas.js';

export interface DeliveryRow {
  id: string;
  event_id: string;
  /** The code of the event (SPEC §6.2), read from the events table. */
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
  body: string;
  created_at: Date;
}

export interface AttemptRow {
  id: string;
  attempt_number: number;
  attempted_at: Date;
  duration_ms: number;
  http_status: number | null;
  response_excerpt: string | null;
  error: string | null;
  succeeded: boolean;
}

// The body is not among the listed columns: lists and the API never need it, and it can be large.
const columns =
  'id, event_id, (SELECT type FROM events WHERE events.id = webhook_deliveries.event_id) AS event_type, ' +
  'endpoint_id, url, kind, status, attempts, next_attempt_at, last_attempt_at, created_at';

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

export async function selectDelivery(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<DeliveryRow | undefined> {
  const [row] = await db.query<DeliveryRow>(
    `SELECT ${columns} FROM webhook_deliveries WHERE merchant_id = $1 AND mode = $2 AND id = $3`,
    [merchantId, mode, id],
  );
  return row;
}

export async function selectDeliveryPage(
  db: Queryable,
  merchantId: string,
  mode: string,
  filters: { status?: DeliveryStatus; endpointId?: string; eventId?: string },
  page: PageRequest,
) {
  const where = ['merchant_id = $1', 'mode = $2'];
  const params: unknown[] = [merchantId, mode];
  for (const [column, value] of [
    ['status', filters.status],
    ['endpoint_id', filters.endpointId],
    ['event_id', filters.eventId],
  ] as const) {
    if (value === undefined) continue;
    params.push(value);
    where.push(`${column} = $${params.length}`);
  }
  return selectPage<DeliveryRow>(db, { table: 'webhook_deliveries', columns, where, params }, page);
}

/** Every attempt of a delivery, first first (at most 1 + the number of retries). */
export async function selectAttempts(db: Queryable, deliveryId: string): Promise<AttemptRow[]> {
  return db.query<AttemptRow>(
    `SELECT id, attempt_number, attempted_at, duration_ms, http_status, response_excerpt, error, succeeded
     FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt_number`,
    [deliveryId],
  );
}

export interface StoredEvent {
  id: string;
  type: string;
  merchant_id: string;
  mode: string;
  body: string;
}

/** The stored event (the outbox row) with its exact body, for a resend. */
export async function selectStoredEvent(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<StoredEvent | undefined> {
  const [row] = await db.query<StoredEvent>(
    'SELECT id, type, merchant_id, mode, body FROM events WHERE id = $1 AND merchant_id = $2 AND mode = $3',
    [id, merchantId, mode],
  );
  return row;
}

/** A delivery a worker has leased: what it needs to sign and send one attempt. */
export interface ClaimedDelivery {
  id: string;
  merchant_id: string;
  endpoint_id: string;
  kind: DeliveryKind;
  body: string;
  /** Attempts made before this one. */
  attempts: number;
  /** Where to send: a static endpoint's current url (so that a corrected url takes effect), else the planned one. */
  target: string;
  endpoint_state: 'enabled' | 'disabled' | 'deleted';
}

export interface ClaimRequest {
  now: Date;
  /** The lease: the delivery is this worker's until then, and this value identifies the lease. */
  leaseUntil: Date;
  limit: number;
  /** At most this many deliveries of one target in flight in this worker. */
  perTargetLimit: number;
  /** Targets with deliveries in flight in this worker, and how many each. */
  busyTargets: readonly string[];
  busyCounts: readonly number[];
  /** Targets already at perTargetLimit, left out so they do not use up the batch. */
  saturatedTargets: readonly string[];
}

/**
 * Claims due deliveries for one worker (DESIGN §5). FOR UPDATE SKIP LOCKED makes concurrent
 * workers on one PostgreSQL take disjoint rows, and the lease (locked_until) keeps a claimed row
 * from being claimed again until it runs out: each attempt is made once while its worker lives,
 * and again after the lease when the worker died mid-delivery (at-least-once).
 *
 * The deliveries are first chosen without locks, keeping this worker's per-target cap (a slow
 * endpoint never takes every slot); only the chosen rows are then locked, and skipped when another
 * worker is claiming them at this moment. Locking re-checks each row's newest version, so a row
 * another worker has just leased is not taken twice. `chosen` > 0 with nothing claimed means such
 * a race was lost: the caller looks again and finds other rows.
 */
export async function claimDueDeliveries(
  db: Queryable,
  claim: ClaimRequest,
): Promise<{ deliveries: ClaimedDelivery[]; chosen: number }> {
  const rows = await db.query<ClaimedDelivery & { chosen: string | number }>(
    `WITH candidates AS (
       SELECT d.id, COALESCE(e.url, d.url) AS target, d.next_attempt_at,
              CASE WHEN e.deleted_at IS NOT NULL THEN 'deleted' ELSE e.status END AS endpoint_state
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= $1
         AND (d.locked_until IS NULL OR d.locked_until <= $1)
         AND NOT (COALESCE(e.url, d.url) = ANY($3::text[]))
       ORDER BY d.next_attempt_at
       LIMIT $8
     ), ranked AS (
       SELECT id, target, endpoint_state, next_attempt_at,
              row_number() OVER (PARTITION BY target ORDER BY next_attempt_at, id) AS rank
       FROM candidates
     ), chosen AS (
       SELECT ranked.id, ranked.target, ranked.endpoint_state
       FROM ranked LEFT JOIN unnest($5::text[], $6::int[]) AS busy (target, count) ON busy.target = ranked.target
       WHERE ranked.rank <= $7 - COALESCE(busy.count, 0)
       ORDER BY ranked.next_attempt_at
       LIMIT $4
     ), locked AS (
       SELECT d.id, chosen.target, chosen.endpoint_state
       FROM webhook_deliveries d JOIN chosen ON chosen.id = d.id
       WHERE d.status = 'pending' AND d.next_attempt_at <= $1
         AND (d.locked_until IS NULL OR d.locked_until <= $1)
       FOR UPDATE OF d SKIP LOCKED
     ), claimed AS (
       UPDATE webhook_deliveries d SET locked_until = $2
       FROM locked WHERE d.id = locked.id
       RETURNING d.id, d.merchant_id, d.endpoint_id, d.kind, d.body, d.attempts, locked.target, locked.endpoint_state
     )
     SELECT (SELECT count(*) FROM chosen) AS chosen, claimed.*
     FROM (SELECT 1) AS one LEFT JOIN claimed ON true`,
    [
      claim.now,
      claim.leaseUntil,
      claim.saturatedTargets,
      claim.limit,
      claim.busyTargets,
      claim.busyCounts,
      claim.perTargetLimit,
      claim.limit * 4,
    ],
  );
  const chosen = Number(rows[0]?.chosen ?? 0);
  const deliveries = rows.filter((row) => row.id !== null).map(({ chosen: _chosen, ...delivery }) => delivery);
  return { deliveries, chosen };
}

export interface AttemptRecord {
  deliveryId: string;
  /** The lease under which the attempt was made; the record is refused if another worker took over. */
  leaseUntil: Date;
  attemptId: string;
  attemptNumber: number;
  attemptedAt: Date;
  durationMs: number;
  httpStatus: number | null;
  responseExcerpt: string | null;
  error: string | null;
  succeeded: boolean;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  url: string;
  now: Date;
}

/**
 * Writes an attempt and the delivery's new state in one statement (atomic without a transaction).
 * The update is conditional on the lease still being this worker's and on the attempt count it
 * claimed: a worker whose lease ran out and was taken over records nothing (the new owner makes
 * and records the attempt), so the attempt numbers of a delivery stay 1, 2, 3, … False then.
 */
export async function recordAttempt(db: Queryable, record: AttemptRecord): Promise<boolean> {
  const rows = await db.query(
    `WITH updated AS (
       UPDATE webhook_deliveries
       SET attempts = $3, status = $4, next_attempt_at = $5, locked_until = NULL, last_attempt_at = $6,
           url = $7, updated_at = $8
       WHERE id = $1 AND locked_until = $2 AND attempts = $3 - 1 AND status = 'pending'
       RETURNING id
     )
     INSERT INTO webhook_attempts
       (id, delivery_id, attempt_number, attempted_at, duration_ms, http_status, response_excerpt, error, succeeded, created_at)
     SELECT $9, updated.id, $3, $6, $10, $11, $12, $13, $14, $8 FROM updated
     RETURNING id`,
    [
      record.deliveryId,
      record.leaseUntil,
      record.attemptNumber,
      record.status,
      record.nextAttemptAt,
      record.attemptedAt,
      record.url,
      record.now,
      record.attemptId,
      record.durationMs,
      record.httpStatus,
      record.responseExcerpt,
      record.error,
      record.succeeded,
    ],
  );
  return rows.length > 0;
}
