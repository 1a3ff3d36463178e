import { ApiError } from '../http/errors.js';
import type { Queryable } from './db.js';

export interface PageRequest {
  limit?: number;
  startingAfter?: string;
  endingBefore?: string;
}

/**
 * Cursor pagination, newest first (DESIGN §2), over any table with `created_at` and `id`:
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
    throw new ApiError('invalid_request', 'Send startingAfter or endingBefore, not both', { param: 'startingAfter' });
  }
  const cursorId = page.startingAfter ?? page.endingBefore;
  const forward = page.endingBefore === undefined;
  if (cursorId !== undefined) {
    const scope = query.where.join(' AND ');
    const [cursor] = await db.query<{ created_at: Date }>(
      `SELECT created_at FROM ${query.table} WHERE ${scope} AND id = $${params.length + 1}`,
      [...params, cursorId],
    );
    const param = forward ? 'startingAfter' : 'endingBefore';
    if (!cursor) throw new ApiError('invalid_request', `${param} names no object of this list`, { param });
    params.push(cursor.created_at, cursorId);
    const comparison = forward ? '<' : '>';
    where.push(`(created_at, id) ${comparison} ($${params.length - 1}, $${params.length})`);
  }
  params.push(limit + 1);
  const order = forward ? 'DESC' : 'ASC';
  const rows = await db.query<Row>(
    `SELECT ${query.columns} FROM ${query.table} WHERE ${where.join(' AND ')}
     ORDER BY created_at ${order}, id ${order} LIMIT $${params.length}`,
    params,
  );
  const hasMore = rows.length > limit;
  const pageRows = rows.slice(0, limit);
  return { rows: forward ? pageRows : pageRows.reverse(), hasMore };
}

/** The creation-time bounds of a list (DESIGN §2 `created[gt|gte|lt|lte]`). */
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
  const filter = {
    where,
    params,
    add(condition: (placeholder: string) => string, value: unknown) {
      if (value === undefined) return filter;
      params.push(value);
      where.push(condition(`$${params.length}`));
      return filter;
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
