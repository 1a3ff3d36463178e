import type { Queryable } from '../db/db.js';
import type { ProcessorName } from './schemas.js';

export interface ProcessorAccountRow {
  id: string;
  merchant_id: string;
  processor: ProcessorName;
  mode: 'test' | 'live';
  status: 'enabled' | 'disabled';
  credentials_encrypted: string;
  credentials_hint: string;
  base_url: string | null;
  /** Adyen's Disputes API root when not the mode's default (docs/processors-adyen.md, Disputes). */
  disputes_base_url: string | null;
  last_notification_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const columns =
  'id, merchant_id, processor, mode, status, credentials_encrypted, credentials_hint, base_url, last_notification_at, ' +
  'created_at, updated_at, disputes_base_url';

export async function insertAccount(db: Queryable, row: ProcessorAccountRow): Promise<void> {
  await db.execute(
    `INSERT INTO processor_accounts (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      row.id,
      row.merchant_id,
      row.processor,
      row.mode,
      row.status,
      row.credentials_encrypted,
      row.credentials_hint,
      row.base_url,
      row.last_notification_at,
      row.created_at,
      row.updated_at,
      row.disputes_base_url,
    ],
  );
}

export async function selectAccount(db: Queryable, id: string): Promise<ProcessorAccountRow | undefined> {
  const [row] = await db.query<ProcessorAccountRow>(`SELECT ${columns} FROM processor_accounts WHERE id = $1`, [id]);
  return row;
}

/** What a payment needs to know of its account each time: whether it may be used, and its version. */
export type AccountVersionRow = Pick<ProcessorAccountRow, 'id' | 'mode' | 'status' | 'updated_at'>;

export async function selectAccountVersion(db: Queryable, id: string): Promise<AccountVersionRow | undefined> {
  const [row] = await db.query<AccountVersionRow>(
    'SELECT id, mode, status, updated_at FROM processor_accounts WHERE id = $1',
    [id],
  );
  return row;
}

export async function selectAccountsOfMerchant(db: Queryable, merchantId: string): Promise<ProcessorAccountRow[]> {
  return db.query<ProcessorAccountRow>(
    `SELECT ${columns} FROM processor_accounts WHERE merchant_id = $1 ORDER BY created_at, id`,
    [merchantId],
  );
}

export async function selectEnabledAccount(
  db: Queryable,
  merchantId: string,
  mode: 'test' | 'live',
): Promise<ProcessorAccountRow | undefined> {
  const [row] = await db.query<ProcessorAccountRow>(
    `SELECT ${columns} FROM processor_accounts WHERE merchant_id = $1 AND mode = $2 AND status = 'enabled'`,
    [merchantId, mode],
  );
  return row;
}

export async function updateAccount(
  db: Queryable,
  id: string,
  changes: {
    credentialsEncrypted?: string;
    credentialsHint?: string;
    baseUrl?: string | null;
    disputesBaseUrl?: string;
    status?: string;
  },
  now: Date,
): Promise<ProcessorAccountRow | undefined> {
  const [row] = await db.query<ProcessorAccountRow>(
    `UPDATE processor_accounts SET
       credentials_encrypted = COALESCE($2, credentials_encrypted),
       credentials_hint = COALESCE($3, credentials_hint),
       base_url = CASE WHEN $4::boolean THEN $5 ELSE base_url END,
       status = COALESCE($6, status),
       updated_at = $7,
       disputes_base_url = COALESCE($8, disputes_base_url)
     WHERE id = $1 RETURNING ${columns}`,
    [
      id,
      changes.credentialsEncrypted ?? null,
      changes.credentialsHint ?? null,
      changes.baseUrl !== undefined,
      changes.baseUrl ?? null,
      changes.status ?? null,
      now,
      changes.disputesBaseUrl ?? null,
    ],
  );
  return row;
}

/**
 * Records a notification as applied; false when it was already (the processor sent it again).
 * Run in the transaction that applies it, so that it is marked exactly when its effect commits.
 */
export async function claimNotification(
  db: Queryable,
  accountId: string,
  notificationId: string,
  kind: string,
  now: Date,
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO processor_notifications (account_id, notification_id, kind, received_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING notification_id`,
    [accountId, notificationId, kind, now],
  );
  return rows.length === 1;
}

export async function markNotified(db: Queryable, id: string, now: Date): Promise<void> {
  await db.execute('UPDATE processor_accounts SET last_notification_at = $2 WHERE id = $1', [id, now]);
}
