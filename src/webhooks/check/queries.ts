import type { Queryable } from '../../db/db.js';
import { selectPage, type PageRequest } from '../../db/pagination.js';

export interface CheckRow {
  id: string;
  endpoint_id: string;
  url: string;
  passed: boolean;
  cases: unknown;
  created_at: Date;
}

export interface NewCheck extends CheckRow {
  merchant_id: string;
  mode: string;
}

export async function insertCheck(db: Queryable, row: NewCheck): Promise<void> {
  await db.query(
    `INSERT INTO webhook_checks (id, merchant_id, mode, endpoint_id, url, passed, cases, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.endpoint_id,
      row.url,
      row.passed,
      JSON.stringify(row.cases),
      row.created_at,
    ],
  );
}

export function selectCheckPage(
  db: Queryable,
  scope: { merchantId: string; mode: string; endpointId: string },
  page: PageRequest,
): Promise<{ rows: CheckRow[]; hasMore: boolean }> {
  return selectPage<CheckRow>(
    db,
    {
      table: 'webhook_checks',
      columns: 'id, endpoint_id, url, passed, cases, created_at',
      where: ['merchant_id = $1', 'mode = $2', 'endpoint_id = $3'],
      params: [scope.merchantId, scope.mode, scope.endpointId],
    },
    page,
  );
}

/** Every endpoint of the merchant in this mode that is not deleted, with its stored token (the doctor). */
export function selectEndpointTokens(
  db: Queryable,
  merchantId: string,
  mode: string,
): Promise<Array<{ id: string; token_encrypted: string }>> {
  return db.query(
    `SELECT id, token_encrypted FROM webhook_endpoints
     WHERE merchant_id = $1 AND mode = $2 AND deleted_at IS NULL ORDER BY created_at, id`,
    [merchantId, mode],
  );
}

/** The stored body of an event of this merchant and mode, if `id` names one (the doctor). */
export async function selectEventBody(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<{ type: string; body: string } | undefined> {
  const [row] = await db.query<{ type: string; body: string }>(
    'SELECT type, body FROM events WHERE id = $1 AND merchant_id = $2 AND mode = $3',
    [id, merchantId, mode],
  );
  return row;
}
