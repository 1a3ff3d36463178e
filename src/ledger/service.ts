/**
 * The ledger (docs/balances.md): immutable balance transactions, each written in the transaction
 * of the change that moves the money, and what is read from them. A balance is always the sum of
 * nets; nothing else is kept.
 */

import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { DomainError, notFound } from '../core/errors.js';
import type { Page } from '../core/page.js';
import { newId } from '../ids.js';
import { isoTimestamp } from '../time.js';
import { scheduledFee, type FeeLine } from './fees.js';
import * as finance from './finance-queries.js';
import * as queries from './queries.js';
import type { Balance, BalanceSummary, BalanceTransaction } from './schemas.js';

type MerchantScope = Pick<MerchantContext, 'merchantId' | 'mode'>;

const dayMs = 24 * 60 * 60 * 1000;

/** What the ledger reads of a payment (payments/queries.ts PaymentRow has these columns). */
export interface PaymentMoney {
  id: string;
  merchant_id: string;
  mode: string;
  currency: string;
  amount_received: string;
  /**
   * The fee the processor reported for a live payment (minor units), when a connector records
   * one; the merchant's schedule applies otherwise (docs/decisions/0043-ledger.md).
   */
  processor_fee?: string | null;
}

/** What the ledger reads of a refund (refunds/queries.ts RefundRow has these columns). */
export interface RefundMoney {
  id: string;
  merchant_id: string;
  mode: string;
  amount: string;
  currency: string;
}

export interface LedgerEntry {
  merchantId: string;
  mode: string;
  type: queries.BalanceTransactionType;
  source: string;
  /** Signed minor units. */
  amount: bigint;
  fees: FeeLine[];
  currency: string;
  availableOn: Date;
  reportingCategory: string;
  payoutId?: string | null;
  created: Date;
}

export function toBalanceTransaction(row: queries.BalanceTransactionRow, now: Date): BalanceTransaction {
  return {
    id: row.id,
    type: row.type,
    source: row.source,
    amount: BigInt(row.amount).toString(),
    fee: BigInt(row.fee).toString(),
    feeDetails: row.fee_details.map((line) => ({ ...line, amount: BigInt(line.amount).toString() })),
    net: BigInt(row.net).toString(),
    currency: row.currency,
    // Derived, never stored: a row is available from its availableOn (docs/decisions/0043-ledger.md).
    status: row.available_on.getTime() <= now.getTime() ? 'available' : 'pending',
    availableOn: isoTimestamp(row.available_on),
    payoutId: row.payout_id,
    reportingCategory: row.reporting_category,
    created: isoTimestamp(row.created_at),
  };
}

/** Writes one balance transaction; false when the object already has one of this type. */
export async function writeEntry(
  tx: Queryable,
  entry: LedgerEntry,
): Promise<queries.BalanceTransactionRow | undefined> {
  const fee = entry.fees.reduce((sum, line) => sum + line.amount, 0n);
  const row: queries.BalanceTransactionRow = {
    id: newId('txn'),
    merchant_id: entry.merchantId,
    mode: entry.mode,
    type: entry.type,
    source: entry.source,
    amount: entry.amount.toString(),
    fee: fee.toString(),
    fee_details: entry.fees.map((line) => ({ ...line, amount: line.amount.toString() })),
    net: (entry.amount - fee).toString(),
    currency: entry.currency,
    available_on: entry.availableOn,
    payout_id: entry.payoutId ?? null,
    reporting_category: entry.reportingCategory,
    created_at: entry.created,
  };
  return (await queries.insertBalanceTransaction(tx, row)) ? row : undefined;
}

export function createLedgerService({ db, clock }: { db: Db; clock: Clock }) {
  /** The payment's money arrived (succeeded, or a pre-authorization captured): gross less its fee. */
  async function paymentCaptured(tx: Queryable, payment: PaymentMoney, now: Date): Promise<void> {
    const gross = BigInt(payment.amount_received);
    // A zero-amount authorization moves no money.
    if (gross === 0n) return;
    const settings = await finance.selectFinance(tx, payment.merchant_id);
    const fee: FeeLine =
      payment.processor_fee !== undefined && payment.processor_fee !== null
        ? { type: 'processor_fee', amount: BigInt(payment.processor_fee), description: 'Fee reported by the processor' }
        : scheduledFee(
            { percentBasisPoints: settings.fee_percent_basis_points, fixed: settings.fee_fixed },
            gross,
            payment.currency,
          );
    await writeEntry(tx, {
      merchantId: payment.merchant_id,
      mode: payment.mode,
      type: 'payment',
      source: payment.id,
      amount: gross,
      fees: [fee],
      currency: payment.currency,
      availableOn: new Date(now.getTime() + settings.availability_days * dayMs),
      reportingCategory: 'charge',
      created: now,
    });
  }

  /**
   * A succeeded payment reversed after the fact: what it received and its refunds do not cover
   * leaves the balance at once, as an `adjustment`; the fee stays charged, as on a refund
   * (docs/decisions/0043-ledger.md).
   */
  async function paymentReversed(tx: Queryable, payment: PaymentMoney, now: Date): Promise<void> {
    const captured = await queries.selectBySourceAndType(tx, payment.id, 'payment');
    if (!captured) return;
    const withdrawn = BigInt(captured.amount) - BigInt(payment.amount_received);
    if (withdrawn <= 0n) return;
    await writeEntry(tx, {
      merchantId: payment.merchant_id,
      mode: payment.mode,
      type: 'adjustment',
      source: payment.id,
      amount: -withdrawn,
      fees: [],
      currency: payment.currency,
      availableOn: now,
      reportingCategory: 'charge_failure',
      created: now,
    });
  }

  return {
    /**
     * Told of every payment event in the transaction that records it (payments/state-changes.ts
     * record), whichever processor answered: payment.succeeded writes the payment's entry, a
     * payment.failed of a payment that had one is a reversal.
     */
    async paymentRecorded(tx: Queryable, type: string, payment: PaymentMoney): Promise<void> {
      const now = clock.now();
      if (type === 'payment.succeeded') await paymentCaptured(tx, payment, now);
      else if (type === 'payment.failed') await paymentReversed(tx, payment, now);
    },

    /**
     * Told of every refund event in its transaction. As at Stripe, a refund leaves the balance
     * when it is created (refund.pending) and comes back as a `refund_failure` if it fails;
     * refund.succeeded moves nothing more. A refund's fee is 0: fees are not returned.
     */
    async refundRecorded(tx: Queryable, type: string, refund: RefundMoney): Promise<void> {
      const now = clock.now();
      const amount = BigInt(refund.amount);
      const entry = { merchantId: refund.merchant_id, mode: refund.mode, source: refund.id, fees: [] };
      if (type === 'refund.pending') {
        await writeEntry(tx, {
          ...entry,
          type: 'refund',
          amount: -amount,
          currency: refund.currency,
          availableOn: now,
          reportingCategory: 'refund',
          created: now,
        });
      } else if (type === 'refund.failed') {
        await writeEntry(tx, {
          ...entry,
          type: 'refund_failure',
          amount,
          currency: refund.currency,
          availableOn: now,
          reportingCategory: 'refund_failure',
          created: now,
        });
      }
    },

    async retrieve(merchant: MerchantScope, id: string): Promise<BalanceTransaction> {
      const row = await queries.selectBalanceTransaction(db, merchant.merchantId, merchant.mode, id);
      if (!row) throw notFound('balance transaction', id);
      return toBalanceTransaction(row, clock.now());
    },

    async list(
      merchant: MerchantScope,
      filters: queries.BalanceTransactionFilters,
      page: { limit?: number; startingAfter?: string; endingBefore?: string },
    ): Promise<Page<BalanceTransaction>> {
      const { rows, hasMore } = await queries.selectBalanceTransactionPage(
        db,
        merchant.merchantId,
        merchant.mode,
        filters,
        page,
      );
      const now = clock.now();
      return { data: rows.map((row) => toBalanceTransaction(row, now)), hasMore };
    },

    /** Available and pending per currency: sums of nets, split at now. */
    async balance(merchant: MerchantScope): Promise<Balance> {
      const sums = await queries.selectBalanceSums(db, merchant.merchantId, merchant.mode, clock.now());
      return {
        available: sums.map((sum) => ({ amount: BigInt(sum.available).toString(), currency: sum.currency })),
        pending: sums.map((sum) => ({ amount: BigInt(sum.pending).toString(), currency: sum.currency })),
      };
    },

    /** A period [from, to): opening balance + activity by reporting category = closing balance. */
    async summary(merchant: MerchantScope, from: Date, to: Date): Promise<BalanceSummary> {
      if (to.getTime() <= from.getTime()) {
        throw new DomainError('invalid_request', 'to must be later than from', { param: 'to', rule: 'after_from' });
      }
      const opening = await queries.selectNetsBefore(db, merchant.merchantId, merchant.mode, from);
      const activity = await queries.selectActivity(db, merchant.merchantId, merchant.mode, from, to);
      const currencies = [...new Set([...opening, ...activity].map((row) => row.currency))].sort();
      return {
        from: isoTimestamp(from),
        to: isoTimestamp(to),
        currencies: currencies.map((currency) => {
          const openingBalance = BigInt(opening.find((row) => row.currency === currency)?.net ?? '0');
          const lines = activity.filter((row) => row.currency === currency);
          // Rows are never changed or deleted, so what was there before `to` is exactly this.
          const closingBalance = lines.reduce((sum, row) => sum + BigInt(row.net), openingBalance);
          return {
            currency,
            openingBalance: openingBalance.toString(),
            activity: lines.map((row) => ({
              reportingCategory: row.reporting_category,
              count: Number(row.count),
              gross: BigInt(row.gross).toString(),
              fee: BigInt(row.fee).toString(),
              net: BigInt(row.net).toString(),
            })),
            closingBalance: closingBalance.toString(),
          };
        }),
      };
    },
  };
}

export type LedgerService = ReturnType<typeof createLedgerService>;
