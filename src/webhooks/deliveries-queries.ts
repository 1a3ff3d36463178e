import { ownRowAlias, selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import { listFilter, selectPage, type PageRequest } from '../db/pagination.js';
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
  eventId: string;
  eventType: string;
  merchantId: string;
  mode: string;
  endpointBody: string;
  legacyBody: string;
  /** The payment's notifyUrl, sent through the merchant's dynamic endpoint (which must exist). */
  notifyUrl: string | null;
  /** Delivery ids are `wd_` and 19 digits counted on from this random number in [0, 9·10^18). */
  idBase: bigint;
  now: Date;
}

/**
 * DESIGN §5 planning in one statement: a delivery per target and kind, for the merchant's
 * enabled static endpoints subscribed to the event type (oldest first) and then the notifyUrl
 * through the dynamic endpoint if that is enabled; `legacy` only where legacyNotifications is
 * on.
 */
export async function insertPlannedDeliveries(db: Queryable, plan: DeliveryPlan): Promise<void> {
  await db.execute(
    `INSERT INTO webhook_deliveries
       (id, event_id, merchant_id, mode, endpoint_id, url, kind, body, status, attempts, next_attempt_at, created_at, updated_at)
     SELECT 'wd_' || (1000000000000000000 + ($1::numeric + target.ordinal) % 9000000000000000000)::text,
            $2, $3, $4, target.endpoint_id, target.url, target.kind,
            CASE target.kind WHEN 'legacy' THEN $6 ELSE $5 END, 'pending', 0, $9, $9, $9
     FROM (
       SELECT endpoint.id AS endpoint_id, endpoint.url, kinds.kind,
              row_number() OVER (ORDER BY endpoint.position, endpoint.created_at, endpoint.id, kinds.kind) AS ordinal
       FROM (
         SELECT 0 AS position, id, url, created_at, legacy_notifications FROM webhook_endpoints
         WHERE merchant_id = $3 AND mode = $4 AND deleted_at IS NULL AND kind = 'static' AND status = 'enabled'
           AND url IS NOT NULL AND (enabled_events @> '["*"]'::jsonb OR enabled_events @> $7::jsonb)
         UNION ALL
         SELECT 1, id, $8::text, created_at, legacy_notifications FROM webhook_endpoints
         WHERE $8::text IS NOT NULL AND merchant_id = $3 AND mode = $4 AND deleted_at IS NULL AND kind = 'dynamic'
           AND status = 'enabled'
       ) AS endpoint
       CROSS JOIN (VALUES ('endpoint'), ('legacy')) AS kinds (kind)
       WHERE kinds.kind = 'endpoint' OR endpoint.legacy_notifications
     ) AS target`,
    [
      plan.idBase.toString(),
      plan.eventId,
      plan.merchantId,
      plan.mode,
      plan.endpointBody,
      plan.legacyBody,
      JSON.stringify([plan.eventType]),
      plan.notifyUrl,
      plan.now,
    ],
  );
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

/** What sending a delivery again needs: its exact body and where it went. */
export type DeliveryToResend = Pick<DeliveryRow, 'id' | 'event_id' | 'event_type' | 'endpoint_id' | 'url' | 'kind'> & {
  body: string;
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

/** A delivery a worker has leased: what it needs to sign and send one attempt. */
export interface ClaimedDelivery {
  id: string;
  merchant_id: string;
  endpoint_id: string;
  kind: DeliveryKind;
  body: string;
  /** Attempts made before this one. */
  attempts: number;
  /** The delivery's url: the key of the per-target concurrency cap. */
  target: string;
  /** Where to send: a static endpoint's current url (so that a corrected url takes effect), else the target. */
  send_url: string;
  endpoint_state: 'enabled' | 'disabled' | 'deleted';
  /**
   * The endpoint's token as stored (encrypted), read in the claim: a worker that keeps decrypted
   * tokens compares it to tell a rolled token without another statement.
   */
  token_ciphertext: string;
  /** The endpoint's hex letter case for the Signature header (DESIGN §5), read with each claim. */
  signature_case: 'upper' | 'lower';
  /** Test-mode fast-forward: each wait of the retry schedule is divided by this (1: as SPEC §6.1). */
  time_factor: number;
}

// What a claim answers about each claimed row, joined once the rows are leased.
const claimedColumns = `claimed.id, claimed.merchant_id, claimed.endpoint_id, claimed.kind, claimed.body, claimed.attempts,
  claimed.url AS target, COALESCE(e.url, claimed.url) AS send_url,
  CASE WHEN e.deleted_at IS NOT NULL THEN 'deleted' ELSE e.status END AS endpoint_state,
  e.token_encrypted AS token_ciphertext, e.signature_case, claimed.time_factor`;

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

/** How many due rows a claim looks at for each row it may take, so that capped targets do not fill the batch. */
const examineFactor = 4;

/** Whether any pending delivery is due and not leased: a probe on the due index before a claim. */
export async function anyDeliveryDue(db: Queryable, now: Date): Promise<boolean> {
  const [row] = await db.query<{ due: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM webhook_deliveries
       WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until <= $1)) AS due`,
    [now],
  );
  return row?.due === true;
}

/**
 * Claims due deliveries of any target for one worker (DESIGN §5). FOR UPDATE SKIP LOCKED makes
 * concurrent workers on one PostgreSQL take disjoint rows, and the lease (locked_until) keeps a
 * claimed row from being claimed again until it runs out: each attempt is made once while its
 * worker lives, and again after the lease when the worker died mid-delivery (at-least-once).
 *
 * The earliest due rows are chosen first without locks, keeping this worker's per-target cap (a
 * slow endpoint never takes every slot); only the chosen rows are then locked, and skipped when
 * another worker is claiming them at this moment. Locking re-checks each row's newest version, so
 * a row another worker has just leased is not taken twice. `chosen` > 0 with nothing claimed means
 * such a race was lost; `examined` below `limit × 4` means every due row of the targets not at
 * their cap was looked at.
 */
export async function claimDueDeliveries(
  db: Queryable,
  claim: ClaimRequest,
): Promise<{ deliveries: ClaimedDelivery[]; chosen: number; examined: number; window: number }> {
  const window = claim.limit * examineFactor;
  const rows = await db.query<ClaimedDelivery & { chosen: string | number; examined: string | number }>(
    `WITH candidates AS (
       SELECT id, url AS target, next_attempt_at
       FROM webhook_deliveries
       WHERE status = 'pending' AND next_attempt_at <= $1
         AND (locked_until IS NULL OR locked_until <= $1)
         AND NOT (url = ANY($3::text[]))
       ORDER BY next_attempt_at
       LIMIT $8
     ), ranked AS (
       SELECT id, target, next_attempt_at,
              row_number() OVER (PARTITION BY target ORDER BY next_attempt_at, id) AS rank
       FROM candidates
     ), chosen AS (
       SELECT ranked.id
       FROM ranked LEFT JOIN unnest($5::text[], $6::int[]) AS busy (target, count) ON busy.target = ranked.target
       WHERE ranked.rank <= $7 - COALESCE(busy.count, 0)
       ORDER BY ranked.next_attempt_at
       LIMIT $4
     ), locked AS (
       SELECT d.id
       FROM webhook_deliveries d JOIN chosen ON chosen.id = d.id
       WHERE d.status = 'pending' AND d.next_attempt_at <= $1
         AND (d.locked_until IS NULL OR d.locked_until <= $1)
       FOR UPDATE OF d SKIP LOCKED
     ), claimed AS (
       UPDATE webhook_deliveries d SET locked_until = $2
       FROM locked WHERE d.id = locked.id
       RETURNING d.*
     )
     SELECT (SELECT count(*) FROM chosen) AS chosen, (SELECT count(*) FROM candidates) AS examined, ${claimedColumns}
     FROM (SELECT 1) AS one
       LEFT JOIN (claimed JOIN webhook_endpoints e ON e.id = claimed.endpoint_id) ON true`,
    [
      claim.now,
      claim.leaseUntil,
      claim.saturatedTargets,
      claim.limit,
      claim.busyTargets,
      claim.busyCounts,
      claim.perTargetLimit,
      window,
    ],
  );
  const chosen = Number(rows[0]?.chosen ?? 0);
  const examined = Number(rows[0]?.examined ?? 0);
  const deliveries = rows
    .filter((row) => row.id !== null)
    .map(({ chosen: _chosen, examined: _examined, ...delivery }) => delivery);
  return { deliveries, chosen, examined, window };
}

/**
 * Claims due deliveries of the given targets only, up to `rooms[i]` of `targets[i]`: how a worker
 * refills the slots of a capped target as its attempts end. The (url, next_attempt_at) index
 * makes this cheap however large other targets' backlogs are. Same leases and locking as above.
 */
export async function claimDueDeliveriesOf(
  db: Queryable,
  claim: { now: Date; leaseUntil: Date; targets: readonly string[]; rooms: readonly number[] },
): Promise<ClaimedDelivery[]> {
  return db.query<ClaimedDelivery>(
    `WITH picked AS (
       SELECT next.id
       FROM unnest($3::text[], $4::int[]) AS wanted (target, room)
       CROSS JOIN LATERAL (
         SELECT d.id FROM webhook_deliveries d
         WHERE d.status = 'pending' AND d.url = wanted.target AND d.next_attempt_at <= $1
           AND (d.locked_until IS NULL OR d.locked_until <= $1)
         ORDER BY d.next_attempt_at
         LIMIT wanted.room
         FOR UPDATE SKIP LOCKED
       ) AS next
     ), claimed AS (
       UPDATE webhook_deliveries d SET locked_until = $2
       FROM picked WHERE d.id = picked.id
       RETURNING d.*
     )
     SELECT ${claimedColumns} FROM claimed JOIN webhook_endpoints e ON e.id = claimed.endpoint_id`,
    [claim.now, claim.leaseUntil, claim.targets, claim.rooms],
  );
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
 * Writes attempts and their deliveries' new states, any number in one statement (atomic without
 * a transaction; one commit for a whole batch). Each update is conditional on the lease still
 * being this worker's and on the attempt count it claimed: a worker whose lease ran out and was
 * taken over records nothing (the new owner makes and records the attempt), so the attempt
 * numbers of a delivery stay 1, 2, 3, … Answers the ids of the deliveries whose attempt was recorded.
 */
export async function recordAttempts(db: Queryable, records: readonly AttemptRecord[]): Promise<Set<string>> {
  if (records.length === 0) return new Set();
  const column = <T>(pick: (record: AttemptRecord) => T) => records.map(pick);
  const rows = await db.query<{ delivery_id: string }>(
    `WITH input AS (
       SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[], $4::text[], $5::timestamptz[],
                            $6::timestamptz[], $7::text[], $8::timestamptz[], $9::text[], $10::int[],
                            $11::int[], $12::text[], $13::text[], $14::boolean[])
         AS i (delivery_id, lease_until, attempt_number, status, next_attempt_at, attempted_at, url, now,
               attempt_id, duration_ms, http_status, response_excerpt, error, succeeded)
     ), updated AS (
       UPDATE webhook_deliveries d
       SET attempts = i.attempt_number, status = i.status, next_attempt_at = i.next_attempt_at,
           locked_until = NULL, last_attempt_at = i.attempted_at, url = i.url, updated_at = i.now
       FROM input i
       WHERE d.id = i.delivery_id AND d.locked_until = i.lease_until AND d.attempts = i.attempt_number - 1
         AND d.status = 'pending'
       RETURNING d.id
     )
     INSERT INTO webhook_attempts
       (id, delivery_id, attempt_number, attempted_at, duration_ms, http_status, response_excerpt, error, succeeded, created_at)
     SELECT i.attempt_id, i.delivery_id, i.attempt_number, i.attempted_at, i.duration_ms, i.http_status,
            i.response_excerpt, i.error, i.succeeded, i.now
     FROM input i JOIN updated ON updated.id = i.delivery_id
     RETURNING delivery_id`,
    [
      column((record) => record.deliveryId),
      column((record) => record.leaseUntil),
      column((record) => record.attemptNumber),
      column((record) => record.status),
      column((record) => record.nextAttemptAt),
      column((record) => record.attemptedAt),
      column((record) => record.url),
      column((record) => record.now),
      column((record) => record.attemptId),
      column((record) => record.durationMs),
      column((record) => record.httpStatus),
      column((record) => record.responseExcerpt),
      column((record) => record.error),
      column((record) => record.succeeded),
    ],
  );
  return new Set(rows.map((row) => row.delivery_id));
}

/**
 * Hands leased deliveries back before their lease runs out (a worker that stops, or that could
 * not start them in time): each becomes due again at once, unless it is no longer this lease's.
 */
export async function releaseDeliveries(
  db: Queryable,
  leases: ReadonlyArray<{ deliveryId: string; leaseUntil: Date }>,
): Promise<void> {
  if (leases.length === 0) return;
  await db.query(
    `UPDATE webhook_deliveries d SET locked_until = NULL
     FROM unnest($1::text[], $2::timestamptz[]) AS released (id, lease_until)
     WHERE d.id = released.id AND d.locked_until = released.lease_until AND d.status = 'pending'`,
    [leases.map((lease) => lease.deliveryId), leases.map((lease) => lease.leaseUntil)],
  );
}

/** One attempt: see recordAttempts. False when the lease was lost. */
export async function recordAttempt(db: Queryable, record: AttemptRecord): Promise<boolean> {
  return (await recordAttempts(db, [record])).has(record.deliveryId);
}
