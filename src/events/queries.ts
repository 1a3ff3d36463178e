import { selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import { selectPage, type PageRequest } from '../db/pagination.js';

export interface EventRow {
  id: string;
  merchant_id: string;
  mode: string;
  type: string;
  object_id: string | null;
  body: string;
  created_at: Date;
}

const columns = 'id, merchant_id, mode, type, object_id, body, created_at';

/** A new event; `notify_url` only when the event goes to a notifyUrl that is not its object's own. */
export async function insertEvent(db: Queryable, row: EventRow & { notify_url: string | null }): Promise<void> {
  await db.execute(`INSERT INTO events (${columns}, notify_url) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
    row.id,
    row.merchant_id,
    row.mode,
    row.type,
    row.object_id,
    row.body,
    row.created_at,
    row.notify_url,
  ]);
}

export async function selectEvent(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<EventRow | undefined> {
  const [row] = await db.query<EventRow>(selectOwnRowById('events', columns), [id, merchantId, mode]);
  return row;
}

export async function selectEventPage(
  db: Queryable,
  merchantId: string,
  mode: string,
  filters: { type?: string; objectId?: string },
  page: PageRequest,
) {
  const where = ['merchant_id = $1', 'mode = $2'];
  const params: unknown[] = [merchantId, mode];
  if (filters.type !== undefined) {
    params.push(filters.type);
    where.push(`type = $${params.length}`);
  }
  if (filters.objectId !== undefined) {
    params.push(filters.objectId);
    where.push(`object_id = $${params.length}`);
  }
  return selectPage<EventRow>(db, { table: 'events', columns, where, params }, page);
}
