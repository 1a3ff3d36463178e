import { selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import { listFilter, selectPage, type CreatedRange, type PageRequest } from '../db/pagination.js';
import { columns as ledgerColumns, type BalanceTransactionRow } from '../ledger/queries.js';
import type { Transition } from '../state-table.js';

export type BalanceTransactionRowOf = BalanceTransactionRow;
import type { Evidence } from './schemas.js';
import type { DisputeReason, DisputeStage, DisputeStatus } from './states.js';

export interface DisputeRow {
  id: string;
  merchant_id: string;
  mode: string;
  payment_id: string;
  /** Minor units as text. */
  amount: string;
  currency: string;
  reason: DisputeReason;
  network_reason_code: string | null;
  stage: DisputeStage;
  status: DisputeStatus;
  evidence: Evidence;
  due_by: Date;
  submission_count: number;
  amount_held: string;
  processor_account_id: string | null;
  processor_reference: string | null;
  /** The dispute's reference at the processor's dispute API, when not processor_reference (Adyen's chargeback pspReference). */
  processor_response_reference: string | null;
  /** A live response written before the processor is called, until its outcome is (docs/decisions/0044-disputes.md). */
  response_sending: 'submit' | 'accept' | null;
  created_at: Date;
  updated_at: Date;
}

const columns =
  'id, merchant_id, mode, payment_id, amount, currency, reason, network_reason_code, stage, status, evidence, ' +
  'due_by, submission_count, amount_held, processor_account_id, processor_reference, created_at, updated_at, ' +
  'processor_response_reference, response_sending';

export async function insertDispute(db: Queryable, row: DisputeRow): Promise<void> {
  await db.query(
    `INSERT INTO disputes (${columns})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.payment_id,
      row.amount,
      row.currency,
      row.reason,
      row.network_reason_code,
      row.stage,
      row.status,
      JSON.stringify(row.evidence),
      row.due_by,
      row.submission_count,
      row.amount_held,
      row.processor_account_id,
      row.processor_reference,
      row.created_at,
      row.updated_at,
      row.processor_response_reference,
      row.response_sending,
    ],
  );
}

export async function selectDispute(db: Queryable, merchantId: string, mode: string, id: string) {
  const [row] = await db.query<DisputeRow>(selectOwnRowById('disputes', columns), [id, merchantId, mode]);
  return row;
}

export async function selectDisputeById(db: Queryable, id: string): Promise<DisputeRow | undefined> {
  const [row] = await db.query<DisputeRow>(`SELECT ${columns} FROM disputes WHERE id = $1`, [id]);
  return row;
}

export async function selectDisputeByReference(
  db: Queryable,
  accountId: string,
  reference: string,
): Promise<DisputeRow | undefined> {
  const [row] = await db.query<DisputeRow>(
    `SELECT ${columns} FROM disputes WHERE processor_account_id = $1 AND processor_reference = $2`,
    [accountId, reference],
  );
  return row;
}

/**
 * Marks a live response as being sent, with the evidence it sends, while the dispute's status is
 * one of `from` and no other response is being sent. Zero rows: someone else changed it.
 */
export async function markSending(
  db: Queryable,
  id: string,
  kind: 'submit' | 'accept',
  evidence: Evidence,
  from: readonly DisputeStatus[],
  now: Date,
): Promise<DisputeRow | undefined> {
  const [row] = await db.query<DisputeRow>(
    `UPDATE disputes SET response_sending = $2, evidence = $3::jsonb, updated_at = $5
     WHERE id = $1 AND status = ANY($4::text[]) AND (response_sending IS NULL OR response_sending = $2)
     RETURNING ${columns}`,
    [id, kind, JSON.stringify(evidence), [...from], now],
  );
  return row;
}

/**
 * The end of a live response: the mark cleared, and a submission counted when `submitted` (the
 * processor took it even though a notification moved the dispute first).
 */
export async function finishSending(db: Queryable, id: string, submitted: boolean): Promise<DisputeRow | undefined> {
  const [row] = await db.query<DisputeRow>(
    `UPDATE disputes SET response_sending = NULL,
       submission_count = submission_count + (CASE WHEN $2 THEN 1 ELSE 0 END)
     WHERE id = $1 RETURNING ${columns}`,
    [id, submitted],
  );
  return row;
}

/** Keeps the processor's own reference for its dispute API, once a notification gives it. */
export async function setResponseReference(db: Queryable, id: string, reference: string): Promise<void> {
  await db.execute(
    'UPDATE disputes SET processor_response_reference = $2 WHERE id = $1 AND processor_response_reference IS NULL',
    [id, reference],
  );
}

/** The evidence files' bytes, to send them to the processor. */
export function selectEvidenceFiles(
  db: Queryable,
  ids: readonly string[],
): Promise<Array<{ id: string; filename: string; type: 'pdf' | 'png' | 'jpg'; contents: Uint8Array }>> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.query(`SELECT id, filename, type, contents FROM files WHERE id = ANY($1::text[])`, [[...ids]]);
}

/** The one way a dispute changes: only while its status is one of `move.from`. Zero rows: someone else did. */
export async function changeDispute(
  db: Queryable,
  id: string,
  move: Transition<DisputeStatus>,
  changes: {
    evidence?: Evidence;
    submitted?: boolean;
    stage?: DisputeStage;
    amount_held?: bigint;
    due_by?: Date;
  },
  now: Date,
): Promise<DisputeRow | undefined> {
  const [row] = await db.query<DisputeRow>(
    `UPDATE disputes SET status = COALESCE($3, status), evidence = COALESCE($4::jsonb, evidence),
       submission_count = submission_count + (CASE WHEN $5 THEN 1 ELSE 0 END),
       stage = COALESCE($6, stage), amount_held = COALESCE($7::bigint, amount_held),
       due_by = COALESCE($8, due_by), updated_at = $9
     WHERE id = $1 AND status = ANY($2::text[]) RETURNING ${columns}`,
    [
      id,
      [...move.from],
      move.to ?? null,
      changes.evidence === undefined ? null : JSON.stringify(changes.evidence),
      changes.submitted === true,
      changes.stage ?? null,
      changes.amount_held?.toString() ?? null,
      changes.due_by ?? null,
      now,
    ],
  );
  return row;
}

export interface DisputeFilters extends CreatedRange {
  paymentId?: string;
  status?: DisputeStatus;
}

export function selectDisputePage(
  db: Queryable,
  merchantId: string,
  mode: string,
  filters: DisputeFilters,
  page: PageRequest,
) {
  const filter = listFilter(merchantId, mode)
    .add((p) => `payment_id = ${p}`, filters.paymentId)
    .add((p) => `status = ${p}`, filters.status)
    .created(filters);
  return selectPage<DisputeRow>(db, { table: 'disputes', columns, where: filter.where, params: filter.params }, page);
}

/** The dashboard's list (docs/disputes.md#dashboard): soonest dueBy first, one more than `limit` (is there more). */
export function selectDisputesByDueBy(
  db: Queryable,
  merchantId: string,
  mode: string,
  status: DisputeStatus | undefined,
  limit: number,
): Promise<DisputeRow[]> {
  return db.query<DisputeRow>(
    `SELECT ${columns} FROM disputes WHERE merchant_id = $1 AND mode = $2${status ? ' AND status = $4' : ''}
     ORDER BY due_by, id LIMIT $3`,
    status ? [merchantId, mode, limit + 1, status] : [merchantId, mode, limit + 1],
  );
}

/** The disputes' balance transactions, oldest first. */
export function selectEntriesOf(db: Queryable, ids: readonly string[]): Promise<BalanceTransactionRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.query<BalanceTransactionRow>(
    `SELECT ${ledgerColumns} FROM balance_transactions WHERE source = ANY($1::text[]) ORDER BY created_at, id`,
    [[...ids]],
  );
}

/** Which of `ids` are files of the merchant in the mode (evidence may name only those). */
export async function selectOwnFileIds(
  db: Queryable,
  merchantId: string,
  mode: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM files WHERE id = ANY($1::text[]) AND merchant_id = $2 AND mode = $3 AND purpose = 'dispute_evidence'`,
    [[...ids], merchantId, mode],
  );
  return new Set(rows.map((row) => row.id));
}
