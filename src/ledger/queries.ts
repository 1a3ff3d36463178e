import { selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import { listFilter, selectPage, type CreatedRange, type PageRequest } from '../db/pagination.js';

export const balanceTransactionTypes = [
  'payment',
  'refund',
  'refund_failure',
  'dispute',
  'dispute_reversal',
  'payout',
  'payout_failure',
  'payout_cancel',
  'adjustment',
] as const;
export type BalanceTransactionType = (typeof balanceTransactionTypes)[number];

export interface FeeDetailRow {
  type: string;
  /** Minor units as text, as every amount of the ledger. */
  amount: string;
  description: string;
}

export interface BalanceTransactionRow {
  id: string;
  merchant_id: string;
  mode: string;
  type: BalanceTransactionType;
  source: string;
  /** bigint arrives as text from both drivers, so money never passes through a float. */
  amount: string;
  fee: string;
  fee_details: FeeDetailRow[];
  net: string;
  currency: string;
  available_on: Date;
  payout_id: string | null;
  reporting_category: string;
  created_at: Date;
}

export const columns =
  'id, merchant_id, mode, type, source, amount, fee, fee_details, net, currency, available_on, payout_id, ' +
  'reporting_category, created_at';

/**
 * In the transaction of the change that moves the money. A second row of the same type for the
 * same object is refused by the unique index and written nothing (false): the change that
 * caused it is made once, by a conditional update, so this is only the backstop.
 */
export async function insertBalanceTransaction(db: Queryable, row: BalanceTransactionRow): Promise<boolean> {
  const inserted = await db.query<{ id: string }>(
    `INSERT INTO balance_transactions (${columns})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     ON CONFLICT (source, type) DO NOTHING RETURNING id`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.type,
      row.source,
      row.amount,
      row.fee,
      JSON.stringify(row.fee_details),
      row.net,
      row.currency,
      row.available_on,
      row.payout_id,
      row.reporting_category,
      row.created_at,
    ],
  );
  return inserted.length === 1;
}

export async function selectBySourceAndType(
  db: Queryable,
  source: string,
  type: BalanceTransactionType,
): Promise<BalanceTransactionRow | undefined> {
  const [row] = await db.query<BalanceTransactionRow>(
    `SELECT ${columns} FROM balance_transactions WHERE source = $1 AND type = $2`,
    [source, type],
  );
  return row;
}

export async function selectBalanceTransaction(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<BalanceTransactionRow | undefined> {
  const [row] = await db.query<BalanceTransactionRow>(selectOwnRowById('balance_transactions', columns), [
    id,
    merchantId,
    mode,
  ]);
  return row;
}

export interface BalanceTransactionFilters extends CreatedRange {
  type?: string;
  source?: string;
  payoutId?: string;
  availableOnGt?: Date;
  availableOnGte?: Date;
  availableOnLt?: Date;
  availableOnLte?: Date;
}

export function selectBalanceTransactionPage(
  db: Queryable,
  merchantId: string,
  mode: string,
  filters: BalanceTransactionFilters,
  page: PageRequest,
) {
  const filter = listFilter(merchantId, mode)
    .add((p) => `type = ${p}`, filters.type)
    .add((p) => `source = ${p}`, filters.source)
    .add((p) => `payout_id = ${p}`, filters.payoutId)
    .add((p) => `available_on > ${p}`, filters.availableOnGt)
    .add((p) => `available_on >= ${p}`, filters.availableOnGte)
    .add((p) => `available_on < ${p}`, filters.availableOnLt)
    .add((p) => `available_on <= ${p}`, filters.availableOnLte)
    .created(filters);
  return selectPage<BalanceTransactionRow>(
    db,
    { table: 'balance_transactions', columns, where: filter.where, params: filter.params },
    page,
  );
}

export interface BalanceSums {
  currency: string;
  /** Σ net of rows available by `now` (minor units, text). */
  available: string;
  /** Σ net of rows not yet available. */
  pending: string;
}

/** The balance is the sum of nets, per currency, split by availability at `now`. */
export function selectBalanceSums(db: Queryable, merchantId: string, mode: string, now: Date): Promise<BalanceSums[]> {
  return db.query<BalanceSums>(
    `SELECT currency,
            COALESCE(SUM(net) FILTER (WHERE available_on <= $3), 0)::text AS available,
            COALESCE(SUM(net) FILTER (WHERE available_on > $3), 0)::text AS pending
     FROM balance_transactions WHERE merchant_id = $1 AND mode = $2
     GROUP BY currency ORDER BY currency`,
    [merchantId, mode, now],
  );
}

/** Σ net of the rows created before `before` per currency (a period's opening balance). */
export function selectNetsBefore(
  db: Queryable,
  merchantId: string,
  mode: string,
  before: Date,
): Promise<Array<{ currency: string; net: string }>> {
  return db.query(
    `SELECT currency, SUM(net)::text AS net FROM balance_transactions
     WHERE merchant_id = $1 AND mode = $2 AND created_at < $3 GROUP BY currency`,
    [merchantId, mode, before],
  );
}

/** Σ of the rows created in [from, to) per currency and reporting category (a period's activity). */
export function selectActivity(
  db: Queryable,
  merchantId: string,
  mode: string,
  from: Date,
  to: Date,
): Promise<
  Array<{ currency: string; reporting_category: string; count: string; gross: string; fee: string; net: string }>
> {
  return db.query(
    `SELECT currency, reporting_category, COUNT(*)::text AS count, SUM(amount)::text AS gross,
            SUM(fee)::text AS fee, SUM(net)::text AS net
     FROM balance_transactions
     WHERE merchant_id = $1 AND mode = $2 AND created_at >= $3 AND created_at < $4
     GROUP BY currency, reporting_category ORDER BY currency, reporting_category`,
    [merchantId, mode, from, to],
  );
}
