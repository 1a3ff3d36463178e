import { selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import {
  countByStatus,
  listFilter,
  selectPage,
  type PageRequest,
  type CreatedRange,
  type StatusCounts,
} from '../db/pagination.js';
import type { Metadata } from '../core/common-schemas.js';
import type { Transition } from '../state-table.js';
import type { RefundReason } from './schemas.js';
import type { RefundStatus } from './states.js';

export interface RefundRow {
  id: string;
  merchant_id: string;
  mode: string;
  payment_id: string;
  /** bigint arrives as text from both drivers, so money never passes through a float. */
  amount: string;
  currency: string;
  reason: RefundReason | null;
  note: string | null;
  description: string | null;
  metadata: Metadata | null;
  status: RefundStatus;
  failure_reason: string | null;
  processor_reference: string | null;
  created_at: Date;
  updated_at: Date;
}

const columns =
  'id, merchant_id, mode, payment_id, amount, currency, reason, note, description, metadata, status, ' +
  'failure_reason, processor_reference, created_at, updated_at';

/** Inside the transaction that reserves the amount on the payment. */
export async function insertRefund(db: Queryable, row: RefundRow): Promise<void> {
  await db.execute(
    `INSERT INTO refunds (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.payment_id,
      row.amount,
      row.currency,
      row.reason,
      row.note,
      row.description,
      row.metadata === null ? null : JSON.stringify(row.metadata),
      row.status,
      row.failure_reason,
      row.processor_reference,
      row.created_at,
      row.updated_at,
    ],
  );
}

export async function selectRefund(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<RefundRow | undefined> {
  const [row] = await db.query<RefundRow>(selectOwnRowById('refunds', columns), [id, merchantId, mode]);
  return row;
}

/** For scheduled jobs, which act on a refund id without a key. */
export async function selectRefundById(db: Queryable, id: string): Promise<RefundRow | undefined> {
  const [row] = await db.query<RefundRow>(`SELECT ${columns} FROM refunds WHERE id = $1`, [id]);
  return row;
}

/** Columns a change may write besides the status, which only a Transition writes. */
export type RefundChanges = Partial<Pick<RefundRow, 'failure_reason' | 'processor_reference'>>;

/**
 * The one way a refund changes: only while its status is one of `move.from`, writing `move.to`
 * (refundStates.transition in states.ts), and, with `unanswered`, only while no processor answer is recorded (so that the request and the resume
 * job, which may both have asked the processor, record one answer). Zero rows means another
 * process got there first; the caller keeps what it finds.
 */
export async function changeRefund(
  db: Queryable,
  id: string,
  move: Transition<RefundStatus>,
  changes: RefundChanges,
  now: Date,
  { unanswered = false }: { unanswered?: boolean } = {},
): Promise<RefundRow | undefined> {
  const [row] = await db.query<RefundRow>(
    `UPDATE refunds SET
       status = COALESCE($4, status),
       failure_reason = COALESCE($5, failure_reason),
       processor_reference = COALESCE($6, processor_reference),
       updated_at = $3
     WHERE id = $1 AND status = ANY($2::text[])${unanswered ? ' AND processor_reference IS NULL' : ''}
     RETURNING ${columns}`,
    [id, [...move.from], now, move.to ?? null, changes.failure_reason ?? null, changes.processor_reference ?? null],
  );
  return row;
}

export interface RefundFilters extends CreatedRange {
  paymentId?: string;
  status?: RefundStatus;
  /** The dashboard's amount filter (minor units) and currency; not filters of the API's list. */
  amountGte?: bigint;
  amountLte?: bigint;
  currency?: string;
}

export async function selectRefundPage(
  db: Queryable,
  merchantId: string,
  mode: string,
  filters: RefundFilters,
  page: PageRequest,
) {
  const filter = listFilter(merchantId, mode)
    .add((p) => `payment_id = ${p}`, filters.paymentId)
    .add((p) => `status = ${p}`, filters.status)
    .add((p) => `amount >= ${p}`, filters.amountGte?.toString())
    .add((p) => `amount <= ${p}`, filters.amountLte?.toString())
    .add((p) => `currency = ${p}`, filters.currency)
    .created(filters);
  return selectPage<RefundRow>(db, { table: 'refunds', columns, where: filter.where, params: filter.params }, page);
}

/** Refunds of each status, for the dashboard's status tabs (countByStatus, docs/decisions/0022). */
export function countRefundsByStatus(
  db: Queryable,
  merchantId: string,
  mode: string,
  statuses: readonly string[],
  range: { createdGte?: Date; createdLte?: Date },
  cap: number,
): Promise<StatusCounts> {
  return countByStatus(db, 'refunds', merchantId, mode, statuses, range, cap);
}
