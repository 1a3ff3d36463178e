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
  updated_at: Date | null;
}

/** One of a merchant's bank accounts: one per currency (bank_accounts, migration 0212). */
export interface BankAccountRow {
  merchant_id: string;
  currency: string;
  holder_name: string;
  account_number_encrypted: string;
  account_last4: string;
  routing_number: string | null;
  iban_encrypted: string | null;
  iban_last4: string | null;
}

const columns =
  'merchant_id, fee_percent_basis_points, fee_fixed, availability_days, payout_interval, payout_weekly_anchor, ' +
  'payout_monthly_anchor, updated_at';
const bankColumns =
  'merchant_id, currency, holder_name, account_number_encrypted, account_last4, routing_number, iban_encrypted, iban_last4';

export function defaultFinance(merchantId: string): FinanceRow {
  return {
    merchant_id: merchantId,
    fee_percent_basis_points: 290,
    fee_fixed: {},
    availability_days: 2,
    payout_interval: 'daily',
    payout_weekly_anchor: null,
    payout_monthly_anchor: null,
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
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (merchant_id) DO UPDATE SET
       fee_percent_basis_points = EXCLUDED.fee_percent_basis_points, fee_fixed = EXCLUDED.fee_fixed,
       availability_days = EXCLUDED.availability_days, payout_interval = EXCLUDED.payout_interval,
       payout_weekly_anchor = EXCLUDED.payout_weekly_anchor, payout_monthly_anchor = EXCLUDED.payout_monthly_anchor,
       updated_at = EXCLUDED.updated_at`,
    [
      row.merchant_id,
      row.fee_percent_basis_points,
      JSON.stringify(row.fee_fixed),
      row.availability_days,
      row.payout_interval,
      row.payout_weekly_anchor,
      row.payout_monthly_anchor,
      now,
    ],
  );
}

/** Merchants whose automatic payouts may be due: a schedule other than manual and a bank account. */
export function selectScheduledMerchants(db: Queryable): Promise<FinanceRow[]> {
  return db.query<FinanceRow>(
    `SELECT ${columns} FROM merchant_finance f
     WHERE payout_interval <> 'manual' AND EXISTS (SELECT 1 FROM bank_accounts b WHERE b.merchant_id = f.merchant_id)`,
  );
}

/** The merchant's bank accounts, by currency. */
export function selectBankAccounts(db: Queryable, merchantId: string): Promise<BankAccountRow[]> {
  return db.query<BankAccountRow>(`SELECT ${bankColumns} FROM bank_accounts WHERE merchant_id = $1 ORDER BY currency`, [
    merchantId,
  ]);
}

/** Every merchant's bank accounts (the operator's list of merchants). */
export function selectAllBankAccounts(db: Queryable): Promise<BankAccountRow[]> {
  return db.query<BankAccountRow>(`SELECT ${bankColumns} FROM bank_accounts ORDER BY merchant_id, currency`);
}

/** Adds the account of its currency, or replaces the one the merchant had in that currency. */
export async function saveBankAccount(db: Queryable, row: BankAccountRow, now: Date): Promise<void> {
  await db.execute(
    `INSERT INTO bank_accounts (${bankColumns}, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
     ON CONFLICT (merchant_id, currency) DO UPDATE SET
       holder_name = EXCLUDED.holder_name, account_number_encrypted = EXCLUDED.account_number_encrypted,
       account_last4 = EXCLUDED.account_last4, routing_number = EXCLUDED.routing_number,
       iban_encrypted = EXCLUDED.iban_encrypted, iban_last4 = EXCLUDED.iban_last4, updated_at = EXCLUDED.updated_at`,
    [
      row.merchant_id,
      row.currency,
      row.holder_name,
      row.account_number_encrypted,
      row.account_last4,
      row.routing_number,
      row.iban_encrypted,
      row.iban_last4,
      now,
    ],
  );
}

/** Every merchant's settings row (the operator's list of merchants). */
export function selectAllFinance(db: Queryable): Promise<FinanceRow[]> {
  return db.query<FinanceRow>(`SELECT ${columns} FROM merchant_finance`);
}
