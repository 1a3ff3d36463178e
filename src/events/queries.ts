import { selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import { asWithQueries, type Statement } from '../db/held-statements.js';
import { selectPage, type PageRequest } from '../db/pagination.js';

export interface EventRow {
  id: string;
  merchant_id: string;
  mode: string;
  type: string;
  object_id: string | null;
  body: string;
  created_at: Date;
  /** docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one: the event's place among the events of its object; null only for an event without an object. */
  sequence: string | number | null;
}

const columns = 'id, merchant_id, mode, type, object_id, body, created_at, sequence';

/**
 * A new event with the next `sequence` of its object (docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one), in one statement: the object's
 * counter row is bumped (INSERT … ON CONFLICT DO UPDATE, which locks it until the transaction
 * commits, so concurrent changes of one object are numbered in commit order) and the event row is
 * written with its body completed by that number: `bodyHead` + sequence + `bodyTail`. Held in a
 * transaction (Queryable.execute): the number is never needed before the commit. `then` are
 * statements that run as part of it and read the new row as `recorded_event` (id, body, sequence):
 * the webhook deliveries planned from it (decision 0029); the last of them is told how many rows it
 * wrote (Statement.onRowCount), the others are not. `notify_url` only when the event goes to
 * a notifyUrl that is not its object's own.
 */
export async function insertEvent(
  db: Queryable,
  row: Omit<EventRow, 'body' | 'sequence' | 'object_id'> & {
    object_id: string;
    bodyHead: string;
    bodyTail: string;
    notify_url: string | null;
  },
  then: readonly Statement[] = [],
): Promise<void> {
  const params = [
    row.id,
    row.merchant_id,
    row.mode,
    row.type,
    row.object_id,
    row.bodyHead,
    row.bodyTail,
    row.created_at,
    row.notify_url,
  ];
  // The statement's count is its last part's: the last of `then` is told how many rows it wrote.
  await db.execute(
    eventInsertText(then),
    [...params, ...then.flatMap((statement) => statement.params)],
    then[then.length - 1]?.onRowCount,
  );
}

const eventInsert = `WITH counter AS (
       INSERT INTO event_sequences (merchant_id, mode, object_id, last_value) VALUES ($2, $3, $5, 1)
       ON CONFLICT (merchant_id, mode, object_id) DO UPDATE SET last_value = event_sequences.last_value + 1
       RETURNING last_value
     )`;
const eventRow = `INSERT INTO events (${columns}, notify_url)
     SELECT $1, $2, $3, $4, $5, $6 || counter.last_value::text || $7, $8, counter.last_value, $9 FROM counter`;
const eventParams = 9;
/** The texts made for each list of `then` texts: the same few recur, as the same strings. */
const eventTexts = new Map<string, string>();

function eventInsertText(then: readonly Statement[]): string {
  if (then.length === 0) return `${eventInsert}\n     ${eventRow}`;
  const key = then.map((statement) => `${statement.params.length}:${statement.sql}`).join('\0');
  let text = eventTexts.get(key);
  if (text === undefined) {
    const { queries, last } = asWithQueries(then, 'then', eventParams);
    const before = queries.map((query) => `, ${query}`).join('');
    text = `${eventInsert}, recorded_event AS (${eventRow} RETURNING id, body, sequence)${before}\n     ${last}`;
    if (eventTexts.size < 100) eventTexts.set(key, text);
  }
  return text;
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

/** Events by id, of any merchant (the event stream's feed, feed.ts): what a notification named. */
export async function selectEventsByIds(
  db: Queryable,
  ids: readonly string[],
): Promise<Array<Pick<EventRow, 'id' | 'merchant_id' | 'mode' | 'type' | 'body'> & { notify_url: string | null }>> {
  return db.query(`SELECT id, merchant_id, mode, type, body, notify_url FROM events WHERE id = ANY($1::text[])`, [ids]);
}
