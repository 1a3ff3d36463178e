import type { Queryable } from '../../db/db.js';
import { deliveryBodyOf } from '../deliveries/bodies.js';
import type { DeliveryKind, DeliveryStatus } from '../deliveries/schemas.js';
import type { WebhookFormat } from '../signature.js';

/*
 * The engine's statements on webhook_deliveries and webhook_attempts (docs/webhooks.md#acknowledgement-and-retries): claim due
 * deliveries under a lease, record attempts, hand leases back. The delivery log's own statements
 * (planning, lists, resend) are in ../deliveries/queries.ts.
 */

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
  /** The endpoint's hex letter case for the Signature header (docs/webhooks.md#acknowledgement-and-retries), read with each claim. */
  signature_case: 'upper' | 'lower';
  /** The event's id: Standard Webhooks' `webhook-id` (docs/webhooks.md#standard-webhooks-format). */
  event_id: string;
  /** The endpoint's format (docs/webhooks.md#standard-webhooks-format), read with each claim. */
  format: WebhookFormat;
  /** During a roll's grace period (standard format): the replaced token, as stored, and its expiry. */
  previous_token_ciphertext: string | null;
  previous_token_expires_at: Date | null;
  /** Test-mode fast-forward: each wait of the retry schedule is divided by this (1: as docs/webhooks.md#acknowledgement-and-retries). */
  time_factor: number;
}

// What a claim answers about each claimed row, joined once the rows are leased: its endpoint (`e`)
// and its event (`ev`), whose stored body the delivery's is made from when it keeps none (sendable).
const claimedColumns = `claimed.id, claimed.merchant_id, claimed.endpoint_id, claimed.kind,
  COALESCE(claimed.body, ev.body) AS body, claimed.body IS NULL AS body_from_event, ev.type AS event_type, claimed.attempts,
  claimed.url AS target, COALESCE(e.url, claimed.url) AS send_url,
  CASE WHEN e.deleted_at IS NOT NULL THEN 'deleted' ELSE e.status END AS endpoint_state,
  e.token_encrypted AS token_ciphertext, e.signature_case, claimed.time_factor, claimed.event_id, e.format,
  e.previous_token_encrypted AS previous_token_ciphertext, e.previous_token_expires_at`;
const claimedJoins = `claimed JOIN webhook_endpoints e ON e.id = claimed.endpoint_id JOIN events ev ON ev.id = claimed.event_id`;

/** A claimed row as the claim answers it: the body still to be made when the delivery keeps none. */
type ClaimedRow = ClaimedDelivery & { body_from_event: boolean; event_type: string };

/** The claimed rows with the bytes each attempt sends (bodies.ts). */
function sendable(rows: readonly ClaimedRow[]): ClaimedDelivery[] {
  return rows.map(({ body_from_event: fromEvent, event_type: eventType, ...delivery }) =>
    fromEvent ? { ...delivery, body: deliveryBodyOf(delivery.kind, delivery.body, eventType) } : delivery,
  );
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
  /** The claiming process (its heartbeat row): its leases are released at once if it dies (ops/heartbeat.ts). */
  claimedBy: string;
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
 * Claims due deliveries of any target for one worker (docs/webhooks.md#acknowledgement-and-retries). FOR UPDATE SKIP LOCKED makes
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
  const rows = await db.query<ClaimedRow & { chosen: string | number; examined: string | number }>(
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
       UPDATE webhook_deliveries d SET locked_until = $2, locked_by = $9
       FROM locked WHERE d.id = locked.id
       RETURNING d.*
     )
     SELECT (SELECT count(*) FROM chosen) AS chosen, (SELECT count(*) FROM candidates) AS examined, ${claimedColumns}
     FROM (SELECT 1) AS one
       LEFT JOIN (${claimedJoins}) ON true`,
    [
      claim.now,
      claim.leaseUntil,
      claim.saturatedTargets,
      claim.limit,
      claim.busyTargets,
      claim.busyCounts,
      claim.perTargetLimit,
      window,
      claim.claimedBy,
    ],
  );
  const chosen = Number(rows[0]?.chosen ?? 0);
  const examined = Number(rows[0]?.examined ?? 0);
  const deliveries = sendable(
    rows.filter((row) => row.id !== null).map(({ chosen: _chosen, examined: _examined, ...delivery }) => delivery),
  );
  return { deliveries, chosen, examined, window };
}

/**
 * Claims due deliveries of the given targets only, up to `rooms[i]` of `targets[i]`: how a worker
 * refills the slots of a capped target as its attempts end. The (url, next_attempt_at) index
 * makes this cheap however large other targets' backlogs are. Same leases and locking as above.
 */
export async function claimDueDeliveriesOf(
  db: Queryable,
  claim: { now: Date; leaseUntil: Date; targets: readonly string[]; rooms: readonly number[]; claimedBy: string },
): Promise<ClaimedDelivery[]> {
  const rows = await db.query<ClaimedRow>(
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
       -- By primary key (= ANY of an array): joined to the CTE, the planner chose a hash join over
       -- a sequential scan of the whole table, at every refill (docs/performance.md, issue 19).
       UPDATE webhook_deliveries d SET locked_until = $2, locked_by = $5
       WHERE d.id = ANY (ARRAY(SELECT id FROM picked))
       RETURNING d.*
     )
     SELECT ${claimedColumns} FROM ${claimedJoins}`,
    [claim.now, claim.leaseUntil, claim.targets, claim.rooms, claim.claimedBy],
  );
  return sendable(rows);
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
  /** The endpoint whose token signs the delivery: the one whose health the attempt tells of. */
  endpointId: string;
  /**
   * Whether the attempt reached out to the receiver (sent, or failed to connect): an attempt not
   * made because the endpoint was disabled, or the signing key could not be read, says nothing of
   * the receiver's health.
   */
  countsForHealth: boolean;
}

/**
 * Endpoint health (docs/decisions/0016), kept in the same statement as the attempts of a group, so
 * that it costs no round trip and no commit of its own. Per endpoint of the group: healthy when its
 * newest counted attempt succeeded, failing otherwise. An endpoint row is written only when that
 * changes something a reader sees (failing_since, last_error), or at most about once a minute to
 * move last_success_at on: a healthy busy endpoint is not rewritten by every group, so workers do
 * not queue on its row lock.
 *
 * Several workers record attempts of one endpoint at once, out of order by at most a lease. Each
 * write is conditional on the row's newest version (READ COMMITTED re-checks the WHERE of a locked
 * row): a failure older than the last success recorded does not mark the endpoint failing, and a
 * success older than the failure that began failing_since does not clear it. The rows are locked in
 * id order, so two groups touching the same endpoints never deadlock.
 */
const healthSql = `health AS (
       SELECT i.endpoint_id,
              max(i.attempted_at) FILTER (WHERE i.succeeded) AS last_success,
              max(i.attempted_at) FILTER (WHERE NOT i.succeeded) AS last_failure,
              (array_agg(i.error ORDER BY i.attempted_at DESC) FILTER (WHERE NOT i.succeeded))[1] AS last_error
       FROM input i JOIN updated ON updated.id = i.delivery_id
       WHERE i.counts_for_health
       GROUP BY i.endpoint_id
     ), verdict AS (
       SELECT h.*, (h.last_success IS NOT NULL AND (h.last_failure IS NULL OR h.last_failure < h.last_success)) AS healthy,
              (SELECT min(i.attempted_at) FROM input i
                WHERE i.endpoint_id = h.endpoint_id AND i.counts_for_health AND NOT i.succeeded
                  AND (h.last_success IS NULL OR i.attempted_at > h.last_success)) AS first_failure
       FROM health h
     ), changing AS (
       SELECT e.id, v.healthy, v.last_success, v.first_failure, v.last_error
       FROM webhook_endpoints e JOIN verdict v ON v.endpoint_id = e.id
       WHERE CASE WHEN v.healthy
         THEN (e.failing_since IS NOT NULL AND e.failing_since <= v.last_success)
           OR (e.failing_since IS NULL AND (e.last_success_at IS NULL OR e.last_success_at < v.last_success - interval '60 seconds'))
         ELSE (e.last_success_at IS NULL OR e.last_success_at < v.last_failure)
           AND (e.failing_since IS NULL OR e.failing_since < v.last_success OR e.last_error IS DISTINCT FROM v.last_error)
         END
       ORDER BY e.id
       FOR UPDATE OF e
     ), endpoint_health AS (
       UPDATE webhook_endpoints e
       SET failing_since = CASE WHEN c.healthy THEN NULL
                                WHEN e.failing_since IS NULL OR e.failing_since < c.last_success THEN c.first_failure
                                ELSE e.failing_since END,
           last_error = CASE WHEN c.healthy THEN NULL ELSE c.last_error END,
           alerted_at = CASE WHEN c.healthy THEN NULL ELSE e.alerted_at END,
           last_success_at = GREATEST(e.last_success_at, c.last_success)
       FROM changing c WHERE e.id = c.id
       RETURNING e.id
     )`;

/**
 * A recover's chain (docs/decisions/0030): a delivery that follows one whose attempt is recorded
 * falls due when that record is written, whatever its outcome, in the same statement, so that the
 * worker that claims it next sees the attempt before it answered. Looked up through the partial
 * index of waiting deliveries (migration 0165): when no recover is under way it holds no row, and
 * this costs one empty index probe per record. By the array of recorded ids, so that the planner
 * probes the index rather than hashing the group.
 */
const releaseFollowersSql = `released AS (
       UPDATE webhook_deliveries n SET next_attempt_at = $17, follows = NULL, updated_at = $17
       WHERE n.follows = ANY (ARRAY(SELECT id FROM updated)) AND n.follows IS NOT NULL AND n.status = 'pending'
       RETURNING n.id
     )`;

export interface RecordedGroup {
  /** The deliveries whose attempt was recorded (the others' leases were lost). */
  recorded: Set<string>;
  /** Deliveries of a recover's chain that fell due because the one before them was answered. */
  followersReleased: number;
}

/**
 * Writes attempts and their deliveries' new states, any number in one statement (atomic without
 * a transaction; one commit for a whole batch). Each update is conditional on the lease still
 * being this worker's and on the attempt count it claimed: a worker whose lease ran out and was
 * taken over records nothing (the new owner makes and records the attempt), so the attempt
 * numbers of a delivery stay 1, 2, 3, … The deliveries of a recover's chain that follow the
 * recorded ones fall due (releaseFollowersSql).
 */
export async function recordAttemptGroup(db: Queryable, records: readonly AttemptRecord[]): Promise<RecordedGroup> {
  if (records.length === 0) return { recorded: new Set(), followersReleased: 0 };
  const column = <T>(pick: (record: AttemptRecord) => T) => records.map(pick);
  // The followers fall due when the group is written: at the latest of its records' times.
  const writtenAt = new Date(Math.max(...records.map((record) => record.now.getTime())));
  const rows = await db.query<{ delivery_id: string; released: string | number }>(
    `WITH input AS (
       SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[], $4::text[], $5::timestamptz[],
                            $6::timestamptz[], $7::text[], $8::timestamptz[], $9::text[], $10::int[],
                            $11::int[], $12::text[], $13::text[], $14::boolean[], $15::text[], $16::boolean[])
         AS i (delivery_id, lease_until, attempt_number, status, next_attempt_at, attempted_at, url, now,
               attempt_id, duration_ms, http_status, response_excerpt, error, succeeded, endpoint_id,
               counts_for_health)
     ), updated AS (
       UPDATE webhook_deliveries d
       SET attempts = i.attempt_number, status = i.status, next_attempt_at = i.next_attempt_at,
           locked_until = NULL, last_attempt_at = i.attempted_at, url = i.url, updated_at = i.now
       FROM input i
       WHERE d.id = i.delivery_id AND d.locked_until = i.lease_until AND d.attempts = i.attempt_number - 1
         AND d.status = 'pending'
       RETURNING d.id
     ), ${releaseFollowersSql}, ${healthSql}
     INSERT INTO webhook_attempts
       (id, delivery_id, attempt_number, attempted_at, duration_ms, http_status, response_excerpt, error, succeeded, created_at)
     SELECT i.attempt_id, i.delivery_id, i.attempt_number, i.attempted_at, i.duration_ms, i.http_status,
            i.response_excerpt, i.error, i.succeeded, i.now
     FROM input i JOIN updated ON updated.id = i.delivery_id
     RETURNING delivery_id, (SELECT count(*) FROM released) AS released`,
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
      column((record) => record.endpointId),
      column((record) => record.countsForHealth),
      writtenAt,
    ],
  );
  return {
    recorded: new Set(rows.map((row) => row.delivery_id)),
    followersReleased: Number(rows[0]?.released ?? 0),
  };
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
