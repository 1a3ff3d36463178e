import { selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import { listFilter, selectPage, type CreatedRange, type PageRequest } from '../db/pagination.js';
import type { Transition } from '../state-table.js';
import type { PayoutStatus } from './states.js';

export interface PayoutRow {
  id: string;
  merchant_id: string;
  mode: string;
  /** Minor units as text. */
  amount: string;
  currency: string;
  status: PayoutStatus;
  automatic: boolean;
  /** An automatic payout's day, `YYYY-MM-DD` (UTC); null for a manual one. */
  scheduled_for: string | null;
  bank_account_last4: string;
  failure_code: string | null;
  failure_message: string | null;
  arrival_date: Date | null;
  created_at: Date;
  updated_at: Date;
}

const columns =
  "id, merchant_id, mode, amount, currency, status, automatic, to_char(scheduled_for, 'YYYY-MM-DD') AS scheduled_for, " +
  'bank_account_last4, failure_code, failure_message, arrival_date, created_at, updated_at';

/** False when the merchant already has an automatic payout of this day and currency (another process made it). */
export async function insertPayout(db: Queryable, row: PayoutRow): Promise<boolean> {
  const inserted = await db.query<{ id: string }>(
    `INSERT INTO payouts (id, merchant_id, mode, amount, currency, status, automatic, scheduled_for,
       bank_account_last4, failure_code, failure_message, arrival_date, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::date, $9, $10, $11, $12, $13, $14)
     ON CONFLICT DO NOTHING RETURNING id`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.amount,
      row.currency,
      row.status,
      row.automatic,
      row.scheduled_for,
      row.bank_account_last4,
      row.failure_code,
      row.failure_message,
      row.arrival_date,
      row.created_at,
      row.updated_at,
    ],
  );
  return inserted.length === 1;
}

export async function selectPayout(db: Queryable, merchantId: string, mode: string, id: string) {
  const [row] = await db.query<PayoutRow>(selectOwnRowById('payouts', columns), [id, merchantId, mode]);
  return row;
}

export async function selectPayoutById(db: Queryable, id: string): Promise<PayoutRow | undefined> {
  const [row] = await db.query<PayoutRow>(`SELECT ${columns} FROM payouts WHERE id = $1`, [id]);
  return row;
}

export async function automaticPayoutOf(
  db: Queryable,
  merchantId: string,
  mode: string,
  currency: string,
  day: string,
): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM payouts WHERE merchant_id = $1 AND mode = $2 AND currency = $3 AND scheduled_for = $4::date`,
    [merchantId, mode, currency, day],
  );
  return rows.length > 0;
}

/** The one way a payout changes: only while its status is one of `move.from`. Zero rows: someone else did. */
export async function changePayout(
  db: Queryable,
  id: string,
  move: Transition<PayoutStatus>,
  changes: { failure_code?: string | null; failure_message?: string | null },
  now: Date,
): Promise<PayoutRow | undefined> {
  const [row] = await db.query<PayoutRow>(
    `UPDATE payouts SET status = COALESCE($3, status), failure_code = COALESCE($4, failure_code),
       failure_message = COALESCE($5, failure_message), updated_at = $6
     WHERE id = $1 AND status = ANY($2::text[]) RETURNING ${columns}`,
    [id, [...move.from], move.to ?? null, changes.failure_code ?? null, changes.failure_message ?? null, now],
  );
  return row;
}

export interface PayoutFilters extends CreatedRange {
  status?: PayoutStatus;
}

export function selectPayoutPage(
  db: Queryable,
  merchantId: string,
  mode: string,
  filters: PayoutFilters,
  page: PageRequest,
) {
  const filter = listFilter(merchantId, mode)
    .add((p) => `status = ${p}`, filters.status)
    .created(filters);
  return selectPage<PayoutRow>(db, { table: 'payouts', columns, where: filter.where, params: filter.params }, page);
}

/**
 * Σ net of the merchant's entries in `currency` available by `now` (all of them: each automatic
 * payout's settled group sums to zero with its own entry), with how many there are.
 */
export async function selectAvailable(
  db: Queryable,
  merchantId: string,
  mode: string,
  currency: string,
  now: Date,
): Promise<{ available: bigint; entries: number }> {
  const [row] = await db.query<{ available: string; entries: string }>(
    `SELECT COALESCE(SUM(net) FILTER (WHERE available_on <= $4), 0)::text AS available, COUNT(*)::text AS entries
     FROM balance_transactions WHERE merchant_id = $1 AND mode = $2 AND currency = $3`,
    [merchantId, mode, currency, now],
  );
  return { available: BigInt(row?.available ?? '0'), entries: Number(row?.entries ?? '0') };
}

/**
 * Marks every available entry that no payout settled yet as settled by `payoutId`, and answers
 * their nets. Called under the merchant's finance lock, so two processes cannot claim at once.
 */
export async function claimUnsettled(
  db: Queryable,
  merchantId: string,
  mode: string,
  currency: string,
  payoutId: string,
  now: Date,
): Promise<bigint[]> {
  const rows = await db.query<{ net: string }>(
    `UPDATE balance_transactions SET payout_id = $4
     WHERE merchant_id = $1 AND mode = $2 AND currency = $3 AND payout_id IS NULL AND available_on <= $5
     RETURNING net`,
    [merchantId, mode, currency, payoutId, now],
  );
  return rows.map((row) => BigInt(row.net));
}

/** A canceled automatic payout's entries wait for the next one; its own entries stay its own. */
export async function releaseClaims(db: Queryable, payoutId: string): Promise<void> {
  await db.execute('UPDATE balance_transactions SET payout_id = NULL WHERE payout_id = $1 AND source <> $1', [
    payoutId,
  ]);
}

/** A timestamp as the API writes it (docs/api.md#responses: ISO 8601 UTC with milliseconds and Z). */
const isoFormat = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** One reconciliation row: a settled entry with what its payment says (orderNo, card). */
export interface ReconciliationRow {
  id: string;
  type: string;
  source: string;
  amount: string;
  fee: string;
  net: string;
  currency: string;
  /** ISO 8601 with milliseconds and Z, written by the database (the report's form). */
  available_on: string;
  created_at: string;
  /** The cursor: created_at as the database keeps it. */
  created_at_cursor: Date;
  order_no: string | null;
  card_brand: string | null;
  last4: string | null;
}

/**
 * The entries a payout settled, in (created, id) order, `batchSize` after the cursor: read batch
 * by batch, so a payout of any size is exported in constant memory. The payout's own entries (its
 * `payout`, and a `payout_cancel`) are not among them. A refund's entry shows its payment's order number and card.
 */
export function selectReconciliationBatch(
  db: Queryable,
  payoutId: string,
  after: { created: Date; id: string } | undefined,
  batchSize: number,
): Promise<ReconciliationRow[]> {
  // created_at has a bound of its own, so that each batch is a range of the payout's index, not
  // every row of the payout sorted again (src/db/pagination.ts explains the same for lists).
  const cursor = after ? 'AND t.created_at >= $2 AND (t.created_at > $2 OR t.id > $3)' : '';
  // Each entry's payment is found by its primary key (LATERAL), whether the entry is the payment's
  // or one of its refunds'. OFFSET 0 keeps the planner from turning them into joins on an
  // expression, which read every payment (and refund) for each batch.
  // The batch of entries is read first, on its own (the payout's index, in order); only its rows
  // then find their payment by primary key (LATERAL), whether the entry is the payment's or one of
  // its refunds'. OFFSET 0 keeps the planner from merging these steps.
  return db.query<ReconciliationRow>(
    `SELECT t.id, t.type, t.source, t.amount::text, t.fee::text, t.net::text, t.currency,
            to_char(t.available_on AT TIME ZONE 'UTC', ${isoFormat}) AS available_on,
            to_char(t.created_at AT TIME ZONE 'UTC', ${isoFormat}) AS created_at, t.created_at AS created_at_cursor,
            p.order_no, p.card->>'brand' AS card_brand, p.card->>'last4' AS last4
     FROM (
       SELECT * FROM balance_transactions t
       WHERE t.payout_id = $1 AND t.source <> $1 ${cursor}
       ORDER BY t.created_at, t.id LIMIT ${batchSize} OFFSET 0) t
     LEFT JOIN LATERAL (
       SELECT payment_id FROM refunds WHERE t.type IN ('refund', 'refund_failure') AND id = t.source OFFSET 0) r ON true
     LEFT JOIN LATERAL (
       SELECT order_no, details->'paymentMethodDetails'->'card' AS card FROM payments
       WHERE id = COALESCE(r.payment_id, t.source) OFFSET 0) p ON true
     ORDER BY t.created_at, t.id`,
    after ? [payoutId, after.created, after.id] : [payoutId],
  );
}
