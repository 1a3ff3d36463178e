import type { ProcessedBy } from '../processor/processor.js';
/**
 * The payments side of refunds (docs/api.md#refunds): what a payment received, refunded and has under way.
 * The refunds domain (src/refunds/) keeps the refunds themselves and reaches a payment's refund
 * columns only through this ledger, handed to it by the payment service.
 */

import type { Queryable } from '../db/db.js';
import type { MerchantContext } from '../core/merchant-context.js';
import * as queries from './queries.js';
import { finishRefundAmount, reserveRefundAmount } from './refund-queries.js';
import { paymentStates } from './states.js';

type MerchantScope = Pick<MerchantContext, 'merchantId' | 'mode'>;

/** The payment as its refunds see it. */
export interface PaymentForRefund {
  id: string;
  status: string;
  currency: string;
  amountReceived: bigint;
  amountRefunded: bigint;
  amountRefundPending: bigint;
  /** Held by chargebacks (docs/disputes.md, Money). */
  amountDisputed: bigint;
  /** The processor's reference of the captured payment, which a refund gives back from. */
  processorReference: string | null;
  /** Where the payment was processed: its refunds go the same way. */
  processedBy: ProcessedBy;
  /** docs/webhooks.md#what-is-sent: a refund's events also go to its payment's notifyUrl. */
  notifyUrl: string | null;
}

export interface RefundLedger {
  /** The statuses of a payment that may be refunded, when it received money. */
  readonly refundableStatuses: readonly string[];
  /**
   * Reserves `amount` (null: all that is left) of the merchant's payment for a new refund, in the
   * caller's transaction, by one conditional update; undefined when the payment is not the
   * merchant's, not refundable, or has less left (the caller finds out which).
   */
  reserveRefund(
    tx: Queryable,
    merchant: MerchantScope,
    paymentId: string,
    amount: bigint | null,
    now: Date,
  ): Promise<{ payment: PaymentForRefund; amount: bigint } | undefined>;
  /** The merchant's payment, to say why nothing could be reserved. */
  paymentForRefund(
    source: Queryable,
    merchant: MerchantScope,
    paymentId: string,
  ): Promise<PaymentForRefund | undefined>;
  /** A refund's payment, for jobs that act without a key. */
  paymentOfRefund(source: Queryable, paymentId: string): Promise<PaymentForRefund | undefined>;
  /** In the transaction that ends a refund: its amount is no longer pending and, if it succeeded, refunded. */
  finishRefund(
    tx: Queryable,
    paymentId: string,
    amount: bigint,
    outcome: 'succeeded' | 'failed',
    now: Date,
  ): Promise<void>;
}

/** What is left to refund: received, less what is refunded, under way or held by a chargeback. */
export function refundableAmount(payment: PaymentForRefund): bigint {
  return payment.amountReceived - payment.amountRefunded - payment.amountRefundPending - payment.amountDisputed;
}

function forRefund(row: queries.PaymentRow): PaymentForRefund {
  return {
    id: row.id,
    status: row.status,
    currency: row.currency,
    amountReceived: BigInt(row.amount_received),
    amountRefunded: BigInt(row.amount_refunded),
    amountRefundPending: BigInt(row.amount_refund_pending),
    amountDisputed: BigInt(row.amount_disputed),
    processorReference: row.processor_reference,
    processedBy: { processor_account_id: row.processor_account_id, mode: row.mode },
    notifyUrl: row.details.notifyUrl === '' ? null : row.details.notifyUrl,
  };
}

const refundableStatuses = paymentStates.startsFrom('refund');

export const refundLedger: RefundLedger = {
  refundableStatuses,

  async reserveRefund(tx, merchant, paymentId, amount, now) {
    const row = await reserveRefundAmount(
      tx,
      merchant.merchantId,
      merchant.mode,
      paymentId,
      amount,
      refundableStatuses,
      now,
    );
    return row && { payment: forRefund(row), amount: BigInt(row.reserved) };
  },

  async paymentForRefund(source, merchant, paymentId) {
    const row = await queries.selectPayment(source, merchant.merchantId, merchant.mode, paymentId);
    return row && forRefund(row);
  },

  async paymentOfRefund(source, paymentId) {
    const row = await queries.selectPaymentById(source, paymentId);
    return row && forRefund(row);
  },

  async finishRefund(tx, paymentId, amount, outcome, now) {
    // The amount was reserved when the refund was created; finding less pending is a bug.
    if (!(await finishRefundAmount(tx, paymentId, amount, outcome === 'succeeded', now))) {
      throw new Error(`Payment ${paymentId} has less than ${amount} pending in refunds`);
    }
  },
};
