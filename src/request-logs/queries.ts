import type { Queryable } from '../db/db.js';
import { selectPage, type PageRequest } from '../db/pagination.js';

export interface RequestLogRow {
  id: string;
  merchant_id: string;
  mode: 'test' | 'live';
  method: string;
  route: string;
  status_code: number;
  latency_ms: number;
  trace_id: string;
  key_kind: 'private' | 'public';
  created_at: Date;
}

const columns = [
  'id',
  'merchant_id',
  'mode',
  'method',
  'route',
  'status_code',
  'latency_ms',
  'trace_id',
  'key_kind',
  'created_at',
] as const;

/** Each column's array type, in the order of `columns`. */
const arrayTypes = ['text', 'text', 'text', 'text', 'text', 'int', 'int', 'text', 'text', 'timestamptz'];

/**
 * One INSERT for the whole batch, one array per column: the same text for any number of rows, so
 * it is parsed and planned once (a VALUES list of placeholders was a new statement of up to 5,000
 * parameters for each batch size, planned again each time: about 10 ms of PGlite's one connection).
 */
const insertText = `INSERT INTO api_request_logs (${columns.join(', ')})
  SELECT * FROM unnest(${arrayTypes.map((type, index) => `$${index + 1}::${type}[]`).join(', ')})`;

export async function insertRequestLogs(db: Queryable, rows: readonly RequestLogRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.execute(
    insertText,
    columns.map((column) => rows.map((row) => row[column])),
  );
}

export interface RequestLogFilter {
  merchantId: string;
  mode: string;
  /** 2, 3, 4 or 5: the first digit of the status. */
  statusClass?: number;
  /** Text the route pattern contains. */
  path?: string;
}

export function selectRequestLogPage(
  db: Queryable,
  filter: RequestLogFilter,
  page: PageRequest,
): Promise<{ rows: RequestLogRow[]; hasMore: boolean }> {
  const where = ['merchant_id = $1', 'mode = $2'];
  const params: unknown[] = [filter.merchantId, filter.mode];
  if (filter.statusClass !== undefined) {
    // As api_request_logs_status's expression, so the class is in the index's prefix.
    params.push(filter.statusClass);
    where.push(`status_code / 100 = $${params.length}`);
  }
  if (filter.path) {
    // strpos, not LIKE: the text is matched as typed, with no wildcard to escape.
    params.push(filter.path);
    where.push(`strpos(route, $${params.length}) > 0`);
  }
  return selectPage<RequestLogRow>(db, { table: 'api_request_logs', columns: columns.join(', '), where, params }, page);
}

export async function deleteRequestLogsBefore(db: Queryable, before: Date): Promise<number> {
  const [deleted] = await db.query<{ count: string | number }>(
    'WITH gone AS (DELETE FROM api_request_logs WHERE created_at < $1 RETURNING 1) SELECT count(*) AS count FROM gone',
    [before],
  );
  return Number(deleted?.count ?? 0);
}
