import { invalidField } from '../core/errors.js';
import type { Queryable } from './db.js';

/*
 * A page request the list cannot answer (both cursors, or a cursor naming no object of the list)
 * is the caller's mistake: a domain error naming the cursor (src/core/errors.ts), which the edge
 * answers as 400 invalid_request.
 */

export interface PageRequest {
  limit?: number;
  startingAfter?: string;
  endingBefore?: string;
}

/**
 * Cursor pagination, newest first (docs/api.md#lists), over any table with `created_at` and `id`:
 * ordering by both is total, so a page boundary never skips or repeats a row.
 * `table`, `columns` and `where` come from code, never from a request; values go in `params`.
 */
export async function selectPage<Row extends { id: string }>(
  db: Queryable,
  query: { table: string; columns: string; where: string[]; params: unknown[] },
  page: PageRequest,
): Promise<{ rows: Row[]; hasMore: boolean }> {
  const limit = page.limit ?? 10;
  const params = [...query.params];
  const where = [...query.where];
  if (page.startingAfter !== undefined && page.endingBefore !== undefined) {
    throw invalidField('startingAfter', 'Send startingAfter or endingBefore, not both');
  }
  const cursorId = page.startingAfter ?? page.endingBefore;
  const forward = page.endingBefore === undefined;
  if (cursorId !== undefined) {
    // The cursor row is found by its primary key alone (as selectOwnRowById does): without
    // statistics the planner would otherwise walk the list index comparing ids.
    const scope = query.where.join(' AND ');
    const [cursor] = await db.query<{ created_at: Date }>(
      `SELECT created_at FROM (SELECT * FROM ${query.table} WHERE id = $${params.length + 1} OFFSET 0) AS cursor_row
       WHERE ${scope}`,
      [...params, cursorId],
    );
    const param = forward ? 'startingAfter' : 'endingBefore';
    if (!cursor) throw invalidField(param, `${param} names no object of this list`);
    params.push(cursor.created_at, cursorId);
    // (created_at, id) < (a, b), written so that created_at has a bound of its own: a row
    // comparison's selectivity is guessed so small without statistics that the planner expects
    // to read every row anyway, and then prefers any index and a sort to the list's own order.
    const [time, id] = [`$${params.length - 1}`, `$${params.length}`];
    const [comparison, orEqual] = forward ? ['<', '<='] : ['>', '>='];
    where.push(`created_at ${orEqual} ${time} AND (created_at ${comparison} ${time} OR id ${comparison} ${id})`);
  }
  const order = forward ? 'DESC' : 'ASC';
  // The limit is written into the statement, not passed: a cached generic plan cannot see a
  // parameter's value and plans for a tenth of the rows, which can favour reading every row of the
  // merchant and sorting them over walking the list index for a page.
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`invalid page limit ${limit}`);
  const rows = await db.query<Row>(
    `SELECT ${query.columns} FROM ${query.table} WHERE ${where.join(' AND ')}
     ORDER BY created_at ${order}, id ${order} LIMIT ${limit + 1}`,
    params,
  );
  const hasMore = rows.length > limit;
  const pageRows = rows.slice(0, limit);
  return { rows: forward ? pageRows : pageRows.reverse(), hasMore };
}

/** The creation-time bounds of a list (docs/api.md#lists `created[gt|gte|lt|lte]`). */
export interface CreatedRange {
  createdGt?: Date;
  createdGte?: Date;
  createdLt?: Date;
  createdLte?: Date;
}

/**
 * The WHERE of one merchant's list in one mode, for selectPage: `$1` is the merchant and `$2` the
 * mode; each filter given a value gets the next placeholder, and one not given adds nothing.
 * Conditions come from code, never from a request; the values go in `params`.
 */
export function listFilter(merchantId: string, mode: string, ...fixed: string[]) {
  const where = ['merchant_id = $1', 'mode = $2', ...fixed];
  const params: unknown[] = [merchantId, mode];
  const narrowing: string[] = [];
  const filter = {
    where,
    params,
    add(condition: (placeholder: string) => string, value: unknown) {
      if (value === undefined) return filter;
      params.push(value);
      where.push(condition(`$${params.length}`));
      return filter;
    },
    /**
     * A filter that names a small set of rows on its own (an event's deliveries, payments by id):
     * the rows are found by `condition` alone, then the other filters and the order apply to them.
     */
    narrow(condition: (placeholder: string) => string, value: unknown) {
      if (value === undefined) return filter;
      params.push(value);
      narrowing.push(condition(`$${params.length}`));
      return filter;
    },
    /** What selectPage reads: the table, or, given a narrowing filter, its rows that meet it. */
    source(table: string): string {
      return narrowed(table, narrowing);
    },
    created(range: CreatedRange) {
      return filter
        .add((p) => `created_at > ${p}`, range.createdGt)
        .add((p) => `created_at >= ${p}`, range.createdGte)
        .add((p) => `created_at < ${p}`, range.createdLt)
        .add((p) => `created_at <= ${p}`, range.createdLte);
    },
  };
  return filter;
}

/**
 * `table`'s rows that meet `conditions`, under the table's own name. Without statistics the
 * planner believes a filter keeps many rows and walks the list index, which gives the order and
 * needs no sort, filtering the merchant's rows one by one until the page is full; OFFSET 0 fences
 * the conditions, so the rows are found through their own index and only they are sorted.
 */
export function narrowed(table: string, conditions: readonly string[]): string {
  if (conditions.length === 0) return table;
  return `(SELECT * FROM ${table} WHERE ${conditions.join(' AND ')} OFFSET 0) AS ${table}`;
}

/** The tables whose lists have status tabs; each has a (status, merchant_id, mode, created_at DESC, id DESC) index. */
export type StatusCountedTable = 'payments' | 'refunds' | 'invoices';

export interface StatusCounts {
  total: number;
  byStatus: Record<string, number>;
}

/**
 * How many of a merchant's rows of `table` in one mode have each status, each count read through
 * the table's status index (status, merchant, mode, created_at) and stopped at `cap` rows, so the
 * dashboard's status tabs cost at most `cap` index entries a status whatever the table holds
 * (docs/decisions/0022). `total` is counted the same way through the table's list index.
 */
export async function countByStatus(
  db: Queryable,
  table: StatusCountedTable,
  merchantId: string,
  mode: string,
  statuses: readonly string[],
  range: { createdGte?: Date; createdLte?: Date },
  cap: number,
): Promise<StatusCounts> {
  const params: unknown[] = [merchantId, mode, cap, statuses];
  // The range's bounds are written only when given, so each is an index condition, not a filter.
  let rangeSql = '';
  if (range.createdGte) rangeSql += ` AND created_at >= $${params.push(range.createdGte)}`;
  if (range.createdLte) rangeSql += ` AND created_at <= $${params.push(range.createdLte)}`;
  const rows = await db.query<{ status: string | null; count: string | number }>(
    // The ORDER BY is the indexes' own: without it, and without statistics, the planner takes a
    // LIMIT for a reason to scan the table in any order, which reads every row of a status that
    // has none (measured: 9× slower at 100,000 payments).
    `SELECT s.status, (SELECT count(*) FROM (SELECT 1 FROM ${table}
              WHERE status = s.status AND merchant_id = $1 AND mode = $2${rangeSql}
              ORDER BY created_at DESC, id DESC LIMIT $3) AS capped) AS count
       FROM unnest($4::text[]) AS s(status)
     UNION ALL
     SELECT NULL, (SELECT count(*) FROM (SELECT 1 FROM ${table}
              WHERE merchant_id = $1 AND mode = $2${rangeSql}
              ORDER BY created_at DESC, id DESC LIMIT $3) AS capped)`,
    params,
  );
  const byStatus: Record<string, number> = {};
  let total = 0;
  for (const row of rows) {
    if (row.status === null) total = Number(row.count);
    else byStatus[row.status] = Number(row.count);
  }
  return { total, byStatus };
}
