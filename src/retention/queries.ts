import type { Queryable } from '../db/db.js';

/**
 * Up to `limit` finished deliveries (succeeded, or failed for good) created before `before`,
 * oldest first, locked (a worker holding one is skipped): the next batch to prune. A pending
 * delivery, first try or retry, is never chosen; a finished one never becomes pending again (a
 * resend makes new deliveries). Read through webhook_deliveries_finished.
 */
export async function lockFinishedDeliveries(db: Queryable, before: Date, limit: number): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM webhook_deliveries
      WHERE status <> 'pending' AND created_at < $1
      ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [before, limit],
  );
  return rows.map((row) => row.id);
}

/**
 * Up to `limit` events created before `before`, oldest first, locked, none of whose deliveries
 * is still pending. Read through events_created; the pending check through webhook_deliveries_event,
 * one probe per event read. The OFFSET 0 keeps the check a probe: as an anti join the planner could
 * choose to hash every pending delivery and read all of events (it did without statistics once
 * webhook_deliveries' pages were left 30 % free, migration 0150).
 */
export async function lockOldEvents(db: Queryable, before: Date, limit: number): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM events
      WHERE created_at < $1
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                        WHERE d.event_id = events.id AND d.status = 'pending' OFFSET 0)
      ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [before, limit],
  );
  return rows.map((row) => row.id);
}

/** Deletes these deliveries that are not pending (now), with their attempts; how many went. */
export async function deleteDeliveries(db: Queryable, ids: readonly string[]): Promise<number> {
  await db.query(
    `DELETE FROM webhook_attempts WHERE delivery_id IN
       (SELECT id FROM webhook_deliveries WHERE id = ANY($1) AND status <> 'pending')`,
    [ids],
  );
  const deleted = await db.query(
    "DELETE FROM webhook_deliveries WHERE id = ANY($1) AND status <> 'pending' RETURNING id",
    [ids],
  );
  return deleted.length;
}

/**
 * Deletes these events with their finished deliveries and those deliveries' attempts; an event
 * that has gained a pending delivery meanwhile (a resend) is kept with it. How many events went.
 */
export async function deleteEvents(db: Queryable, ids: readonly string[]): Promise<number> {
  const deliveries = await db.query<{ id: string }>(
    "SELECT id FROM webhook_deliveries WHERE event_id = ANY($1) AND status <> 'pending' FOR UPDATE",
    [ids],
  );
  if (deliveries.length > 0)
    await deleteDeliveries(
      db,
      deliveries.map((row) => row.id),
    );
  const deleted = await db.query(
    `DELETE FROM events WHERE id = ANY($1)
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id)
      RETURNING id`,
    [ids],
  );
  return deleted.length;
}
