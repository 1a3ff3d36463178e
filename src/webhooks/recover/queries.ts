import type { Queryable } from '../../db/db.js';

/*
 * The statements of recover (issue 20 item 4, docs/decisions/0017): the events of a window that an
 * endpoint has not acknowledged, and the deliveries that send them again.
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
 * delivery to it has succeeded for. Keyset after (`afterCreated`, `afterId`).
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
    `SELECT ev.id, ev.type, ev.body, ev.notify_url, ev.created_at,
            (SELECT count(*) FROM webhook_deliveries d
              WHERE d.event_id = ev.id AND d.endpoint_id = $3 AND d.status = 'pending') AS pending_deliveries
     FROM events ev
     WHERE ev.merchant_id = $1 AND ev.mode = $2 AND ev.created_at >= $4 AND ev.created_at <= $5
       AND ($8::timestamptz IS NULL OR ev.created_at > $8 OR (ev.created_at = $8 AND ev.id > $9))
       AND CASE WHEN $6::boolean
             THEN ev.notify_url IS NOT NULL OR ev.body LIKE '%"notifyUrl":"%'
             ELSE $7::jsonb @> '["*"]'::jsonb OR $7::jsonb @> jsonb_build_array(ev.type) END
       AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                        WHERE d.event_id = ev.id AND d.endpoint_id = $3 AND d.status = 'succeeded')
     ORDER BY ev.created_at, ev.id
     LIMIT ${Math.trunc(page.limit)}`,
    [
      page.merchantId,
      page.mode,
      page.endpointId,
      page.since,
      page.until,
      page.dynamic,
      JSON.stringify(page.subscribedTo),
      page.after?.created ?? null,
      page.after?.id ?? null,
    ],
  );
}

/**
 * Makes the still-retrying deliveries of these events to the endpoint due now: they are the
 * event's sending, so the event is not sent twice. `dueAt[i]` keeps the events in order.
 */
export async function rescheduleDeliveries(
  db: Queryable,
  endpointId: string,
  eventIds: readonly string[],
  dueAt: readonly Date[],
  now: Date,
): Promise<number> {
  if (eventIds.length === 0) return 0;
  const rows = await db.query(
    `UPDATE webhook_deliveries d SET next_attempt_at = LEAST(d.next_attempt_at, due.at), updated_at = $4
     FROM unnest($2::text[], $3::timestamptz[]) AS due (event_id, at)
     WHERE d.event_id = due.event_id AND d.endpoint_id = $1 AND d.status = 'pending'
     RETURNING d.id`,
    [endpointId, eventIds, dueAt, now],
  );
  return rows.length;
}

export interface RecoveredDelivery {
  id: string;
  event_id: string;
  merchant_id: string;
  mode: string;
  endpoint_id: string;
  url: string;
  kind: string;
  body: string;
  next_attempt_at: Date;
  created_at: Date;
}

/** New deliveries, each due at its own `next_attempt_at` (in the events' order), in one statement. */
export async function insertRecoveredDeliveries(db: Queryable, rows: readonly RecoveredDelivery[]): Promise<void> {
  if (rows.length === 0) return;
  const column = <T>(pick: (row: RecoveredDelivery) => T) => rows.map(pick);
  await db.query(
    `INSERT INTO webhook_deliveries
       (id, event_id, merchant_id, mode, endpoint_id, url, kind, body, status, attempts, next_attempt_at, created_at,
        updated_at)
     SELECT r.id, r.event_id, r.merchant_id, r.mode, r.endpoint_id, r.url, r.kind, r.body, 'pending', 0,
            r.next_attempt_at, r.created_at, r.created_at
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                 $9::timestamptz[], $10::timestamptz[])
       AS r (id, event_id, merchant_id, mode, endpoint_id, url, kind, body, next_attempt_at, created_at)`,
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
    ],
  );
}
