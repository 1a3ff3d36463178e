import type { Queryable } from '../db/db.js';

export const payoutIntervals = ['daily', 'weekly', 'monthly', 'manual'] as const;
export type PayoutInterval = (typeof payoutIntervals)[number];

/** A merchant's money settings (merchant_finance); a merchant without a row has the defaults. */
export interface FinanceRow {
  merchant_id: string;
  fee_percent_basis_points: number;
  fee_fixed: Record<string, number>;
  availability_days: number;
  payout_interval: PayoutInterval;
  payout_weekly_anchor: string | null;
  payout_monthly_anchor: number | null;
  bank_holder_name: string | null;
  bank_account_number_encrypted: string | null;
  bank_account_last4: string | null;
  bank_routing_number: string | null;
  bank_iban_encrypted: string | null;
  bank_iban_last4: string | null;
  bank_currency: string | null;
  updated_at: Date | null;
}

const columns =
  'merchant_id, fee_percent_basis_points, fee_fixed, availability_days, payout_interval, payout_weekly_anchor, ' +
  'payout_monthly_anchor, bank_holder_name, bank_account_number_encrypted, bank_account_last4, ' +
  'bank_routing_number, bank_iban_encrypted, bank_iban_last4, bank_currency, updated_at';

export function defaultFinance(merchantId: string): FinanceRow {
  return {
    merchant_id: merchantId,
    fee_percent_basis_points: 290,
    fee_fixed: {},
    availability_days: 2,
    payout_interval: 'daily',
    payout_weekly_anchor: null,
    payout_monthly_anchor: null,
    bank_holder_name: null,
    bank_account_number_encrypted: null,
    bank_account_last4: null,
    bank_routing_number: null,
    bank_iban_encrypted: null,
    bank_iban_last4: null,
    bank_currency: null,
    updated_at: null,
  };
}

export async function selectFinance(db: Queryable, merchantId: string): Promise<FinanceRow> {
  const [row] = await db.query<FinanceRow>(`SELECT ${columns} FROM merchant_finance WHERE merchant_id = $1`, [
    merchantId,
  ]);
  return row ?? defaultFinance(merchantId);
}

/**
 * The merchant's settings row, locked until the transaction ends: payouts of one merchant are
 * made one at a time, so two processes never spend the same available balance. Made with the
 * defaults when missing.
 */
export async function lockFinance(db: Queryable, merchantId: string, now: Date): Promise<FinanceRow> {
  await db.execute(
    `INSERT INTO merchant_finance (merchant_id, updated_at) VALUES ($1, $2) ON CONFLICT (merchant_id) DO NOTHING`,
    [merchantId, now],
  );
  const [row] = await db.query<FinanceRow>(
    `SELECT ${columns} FROM merchant_finance WHERE merchant_id = $1 FOR UPDATE`,
    [merchantId],
  );
  if (!row) throw new Error(`merchant_finance row of ${merchantId} vanished`);
  return row;
}

export async function saveFinance(db: Queryable, row: FinanceRow, now: Date): Promise<void> {
  await db.execute(
    `INSERT INTO merchant_finance (${columns})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
     ON CONFLICT (merchant_id) DO UPDATE SET
       fee_percent_basis_points = EXCLUDED.fee_percent_basis_points, fee_fixed = EXCLUDED.fee_fixed,
       availability_days = EXCLUDED.availability_days, payout_interval = EXCLUDED.payout_interval,
       payout_weekly_anchor = EXCLUDED.payout_weekly_anchor, payout_monthly_anchor = EXCLUDED.payout_monthly_anchor,
       bank_holder_name = EXCLUDED.bank_holder_name,
       bank_account_number_encrypted = EXCLUDED.bank_account_number_encrypted,
       bank_account_last4 = EXCLUDED.bank_account_last4, bank_routing_number = EXCLUDED.bank_routing_number,
       bank_iban_encrypted = EXCLUDED.bank_iban_encrypted, bank_iban_last4 = EXCLUDED.bank_iban_last4,
       bank_currency = EXCLUDED.bank_currency, updated_at = EXCLUDED.updated_at`,
    [
      row.merchant_id,
      row.fee_percent_basis_points,
      JSON.stringify(row.fee_fixed),
      row.availability_days,
      row.payout_interval,
      row.payout_weekly_anchor,
      row.payout_monthly_anchor,
      row.bank_holder_name,
      row.bank_account_number_encrypted,
      row.bank_account_last4,
      row.bank_routing_number,
      row.bank_iban_encrypted,
      row.bank_iban_last4,
      row.bank_currency,
      now,
    ],
  );
}

/** Merchants whose automatic payouts may be due: a schedule other than manual and a bank account. */
export function selectScheduledMerchants(db: Queryable): Promise<FinanceRow[]> {
  return db.query<FinanceRow>(
    `SELECT ${columns} FROM merchant_finance
     WHERE payout_interval <> 'manual' AND bank_account_last4 IS NOT NULL`,
  );
}

/** Every merchant's settings row (the operator's list of merchants). */
export function selectAllFinance(db: Queryable): Promise<FinanceRow[]> {
  return db.query<FinanceRow>(`SELECT ${columns} FROM merchant_finance`);
}
