import type { Queryable } from '../../db/db.js';

/*
 * The statements of recover (issue 20 item 4, docs/decisions/0017 and 0030): the events of a window
 * that an endpoint has not acknowledged, and the chain of deliveries that sends them again, one
 * after another.
 */

export interface UnacknowledgedEvent {
  id: string;
  type: string;
  body: string;
  notify_url: string | null;
  created_at: Date;
  /** Deliveries of this event to this endpoint that are still retrying. */
  pending_deliveries: number | string;
}

/**
 * One page of the window's events, oldest first, that `endpointId` would receive (static: its
 * subscription, `subscribedTo` as jsonb; dynamic: events that name a notifyUrl) and that no
 * delivery to it has succeeded for. Keyset after `after` (a row comparison the events' index
 * serves, so each page starts where the last ended). An event's deliveries are read by its id alone
 * (webhook_deliveries_event) and sorted by endpoint and status in the aggregate's FILTER: with the
 * endpoint among the conditions, a planner without statistics read every delivery of the endpoint
 * for each event, and a recover of 20,000 events took 48 s instead of seconds (docs/performance.md,
 * "Recover of a large window").
 */
export async function selectUnacknowledgedEvents(
  db: Queryable,
  page: {
    merchantId: string;
    mode: string;
    endpointId: string;
    dynamic: boolean;
    subscribedTo: readonly string[];
    since: Date;
    until: Date;
    after: { created: Date; id: string } | null;
    limit: number;
  },
): Promise<UnacknowledgedEvent[]> {
  return db.query<UnacknowledgedEvent>(
    `SELECT ev.id, ev.type, ev.body, ev.notify_url, ev.created_at, sent.pending AS pending_deliveries
     FROM events ev
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE d.endpoint_id = $3 AND d.status = 'pending') AS pending,
                count(*) FILTER (WHERE d.endpoint_id = $3 AND d.status = 'succeeded') AS succeeded
         FROM webhook_deliveries d WHERE d.event_id = ev.id
       ) AS sent
     WHERE ev.merchant_id = $1 AND ev.mode = $2 AND (ev.created_at, ev.id) > ($4, $8) AND ev.created_at <= $5
       AND CASE WHEN $6::boolean
             THEN ev.notify_url IS NOT NULL OR ev.body LIKE '%"notifyUrl":"%'
             ELSE $7::jsonb @> '["*"]'::jsonb OR $7::jsonb @> jsonb_build_array(ev.type) END
       AND sent.succeeded = 0
     ORDER BY ev.created_at, ev.id
     LIMIT ${Math.trunc(page.limit)}`,
    [
      page.merchantId,
      page.mode,
      page.endpointId,
      // The first page starts at since (included: every id sorts after ''), the next after the last.
      page.after?.created ?? page.since,
      page.until,
      page.dynamic,
      JSON.stringify(page.subscribedTo),
      page.after?.id ?? '',
    ],
  );
}

export interface PendingDelivery {
  id: string;
  event_id: string;
  /** Under a lease that has not run out: its attempt is under way. */
  in_flight: boolean;
}

/**
 * The still-retrying deliveries of these events to the endpoint, each event's in the order its
 * deliveries are chained (kind, then id), with whether an attempt of each is under way now. Read by
 * each event (webhook_deliveries_event; `OFFSET 0` keeps the endpoint and status out of the index
 * choice): with them among the conditions, a planner without statistics read every pending delivery
 * of the endpoint for each page, and a second recover of 20,000 events took 17 s
 * (docs/performance.md#recover-of-a-large-window).
 */
export async function selectPendingDeliveries(
  db: Queryable,
  endpointId: string,
  eventIds: readonly string[],
  now: Date,
): Promise<PendingDelivery[]> {
  if (eventIds.length === 0) return [];
  return db.query<PendingDelivery>(
    `SELECT d.id, d.event_id, COALESCE(d.locked_until > $3, false) AS in_flight
     FROM unnest($2::text[]) AS wanted (event_id)
       CROSS JOIN LATERAL (
         SELECT id, event_id, endpoint_id, status, kind, locked_until FROM webhook_deliveries
         WHERE event_id = wanted.event_id OFFSET 0
       ) AS d
     WHERE d.endpoint_id = $1 AND d.status = 'pending'
     ORDER BY d.kind, d.id`,
    [endpointId, eventIds, now],
  );
}

/**
 * Locks, until the recover commits, the deliveries of `ids` that are still pending and not under a
 * lease: claims skip a locked row (FOR UPDATE SKIP LOCKED), so none of them is sent before its place
 * in the chain is written. One whose attempt is under way is left to that attempt: locking it would
 * hold the recorder of its worker until the recover commits. Answers the ids locked.
 */
export async function lockIdleDeliveries(db: Queryable, ids: readonly string[], now: Date): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM webhook_deliveries
     WHERE id = ANY ($1::text[]) AND status = 'pending' AND (locked_until IS NULL OR locked_until <= $2)
     ORDER BY id
     FOR UPDATE`,
    [ids, now],
  );
  return new Set(rows.map((row) => row.id));
}

/** A place in a recover's chain: the delivery before it, or, for the first, when it falls due. */
export interface ChainLink {
  id: string;
  follows: string | null;
  /** Null unless it is the first: the others fall due when the one they follow is answered. */
  next_attempt_at: Date | null;
}

/**
 * Puts still-retrying deliveries (locked by lockIdleDeliveries) in their places in the chain. A
 * lease that ran out is taken away, as a claim would: its worker's late record is refused.
 */
export async function chainDeliveries(db: Queryable, links: readonly ChainLink[], now: Date): Promise<void> {
  if (links.length === 0) return;
  await db.query(
    `UPDATE webhook_deliveries d
     SET follows = link.follows, next_attempt_at = link.next_attempt_at, locked_until = NULL, updated_at = $4
     FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS link (id, follows, next_attempt_at)
     WHERE d.id = link.id`,
    [links.map((link) => link.id), links.map((link) => link.follows), links.map((link) => link.next_attempt_at), now],
  );
}

export interface RecoveredDelivery {
  id: string;
  event_id: string;
  merchant_id: string;
  mode: string;
  endpoint_id: string;
  url: string;
  kind: string;
  /** NULL: made from the event when sent (decision 0035); kept only while older processes run. */
  body: string | null;
  /** The delivery before it in the chain (ChainLink), and when it falls due (the first only). */
  follows: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

/** New deliveries in their places in a recover's chain, in one statement. */
export async function insertRecoveredDeliveries(db: Queryable, rows: readonly RecoveredDelivery[]): Promise<void> {
  if (rows.length === 0) return;
  const column = <T>(pick: (row: RecoveredDelivery) => T) => rows.map(pick);
  await db.query(
    `INSERT INTO webhook_deliveries
       (id, event_id, merchant_id, mode, endpoint_id, url, kind, body, status, attempts, next_attempt_at, follows,
        created_at, updated_at)
     SELECT r.id, r.event_id, r.merchant_id, r.mode, r.endpoint_id, r.url, r.kind, r.body, 'pending', 0,
            r.next_attempt_at, r.follows, r.created_at, r.created_at
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                 $9::timestamptz[], $10::timestamptz[], $11::text[])
       AS r (id, event_id, merchant_id, mode, endpoint_id, url, kind, body, next_attempt_at, created_at, follows)`,
    [
      column((row) => row.id),
      column((row) => row.event_id),
      column((row) => row.merchant_id),
      column((row) => row.mode),
      column((row) => row.endpoint_id),
      column((row) => row.url),
      column((row) => row.kind),
      column((row) => row.body),
      column((row) => row.next_attempt_at),
      column((row) => row.created_at),
      column((row) => row.follows),
    ],
  );
}

/**
 * The backstop of recover's chains (docs/decisions/0030): a delivery still waiting, chained at least
 * `chainedBefore` ago, whose delivery before it will not be answered (gone, finished without a
 * recorded attempt, or answered and waiting for a retry while the record missed its follower) falls
 * due now. The one before it is still to be answered while it is pending and waiting in turn, due,
 * or under a lease. Read through the partial index of waiting deliveries (empty when no recover is
 * under way): `follows > ''` (every id) makes it a condition on the index's key, since without
 * statistics (PGlite never gathers them) the planner takes `follows IS NOT NULL` for nearly every
 * row and chose the index of all pending deliveries. The age keeps it off chains a recover is
 * writing at this moment: a row this statement waits for is checked again as the recover left it,
 * and recent, it is left alone.
 */
export async function releaseStrandedFollowers(db: Queryable, now: Date, chainedBefore: Date): Promise<number> {
  const rows = await db.query(
    `UPDATE webhook_deliveries n SET next_attempt_at = $1, follows = NULL, updated_at = $1
     WHERE n.follows > '' AND n.status = 'pending' AND n.updated_at < $2
       AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p
                        WHERE p.id = n.follows AND p.status = 'pending'
                          AND (p.follows IS NOT NULL OR p.next_attempt_at <= $1 OR p.locked_until > $1))
     RETURNING n.id`,
    [now, chainedBefore],
  );
  return rows.length;
}
