import { ownRowCondition, selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import type { MerchantContext } from '../http/auth.js';

/*
 * The refund columns of a payment (DESIGN §4): amount_refunded (succeeded refunds) and
 * amount_refund_pending (refunds under way). Their sum never exceeds amount_received: the claim
 * is one conditional UPDATE, and a CHECK constraint backs it up.
 */

/** The payment as its refunds see it (kept by the payments domain). */
export interface PaymentForRefund {
  id: string;
  status: string;
  currency: string;
  amountReceived: bigint;
  amountRefunded: bigint;
  amountRefundPending: bigint;
  processorReference: string | null;
  /** DESIGN §5: a refund's events also go to its payment's notifyUrl. */
  notifyUrl: string | null;
}

/** What refunds need of the payments domain: the refund columns of a payment. */
export interface RefundLedger {
  /** The statuses of a payment that may be refunded (when it received money). */
  readonly refundableStatuses: readonly string[];
  /**
   * Reserves `amount` (null: all that is left) of the merchant's payment for a new refund in one
   * conditional update; undefined when the payment is missing, not refundable, or too small.
   */
  reserveRefund(
    tx: Queryable,
    merchant: MerchantScope,
    paymentId: string,
    amount: bigint | null,
    now: Date,
  ): Promise<{ payment: PaymentForRefund; amount: bigint } | undefined>;
  /** The merchant's payment (to say why a reservation was refused). */
  selectPaymentForRefund(
    source: Queryable,
    merchant: MerchantScope,
    paymentId: string,
  ): Promise<PaymentForRefund | undefined>;
  /** A refund's payment, for jobs that act without a key. */
  selectPaymentOfRefund(source: Queryable, paymentId: string): Promise<PaymentForRefund | undefined>;
  /** The refund's amount is no longer pending and, if it succeeded, is refunded. */
  finishRefund(
    tx: Queryable,
    paymentId: string,
    amount: bigint,
    outcome: 'succeeded' | 'failed',
    now: Date,
  ): Promise<void>;
}

type MerchantScope = Pick<MerchantContext, 'merchantId' | 'mode'>;

/** What is left to refund: received, less what is refunded or under way. */
export function refundableAmount(payment: PaymentForRefund): bigint {
  return payment.amountReceived - payment.amountRefunded - payment.amountRefundPending;
}

/** A payment with money received is refundable (a captured pre-authorization is succeeded too). */
export const refundableStatuses = ['succeeded'] as const;

interface Row {
  id: string;
  status: string;
  currency: string;
  amount_received: string;
  amount_refunded: string;
  amount_refund_pending: string;
  processor_reference: string | null;
  notify_url: string | null;
}

const columns =
  "id, status, currency, amount_received, amount_refunded, amount_refund_pending, processor_reference, details->>'notifyUrl' AS notify_url";

/** The same columns, named through the table (the claim joins it with what it read). */
const qualifiedColumns = columns
  .split(', ')
  .map((column) => `payments.${column}`)
  .join(', ');

function toPayment(row: Row): PaymentForRefund {
  return {
    id: row.id,
    status: row.status,
    currency: row.currency,
    amountReceived: BigInt(row.amount_received),
    amountRefunded: BigInt(row.amount_refunded),
    amountRefundPending: BigInt(row.amount_refund_pending),
    processorReference: row.processor_reference,
    notifyUrl: row.notify_url === '' ? null : row.notify_url,
  };
}

/** The statement of reserveRefund (exported for the query plan test). */
export const reserveRefundSql = `WITH wanted AS MATERIALIZED (
       SELECT id, COALESCE($4::bigint, amount_received - amount_refunded - amount_refund_pending) AS amount
       FROM payments WHERE ${ownRowCondition('payments', '$1', '$2', '$3')} FOR UPDATE
     )
     UPDATE payments SET amount_refund_pending = payments.amount_refund_pending + wanted.amount, updated_at = $5
     FROM wanted
     WHERE payments.id = wanted.id AND payments.status = ANY($6::text[]) AND payments.amount_received > 0
       AND wanted.amount > 0
       AND payments.amount_refunded + payments.amount_refund_pending + wanted.amount <= payments.amount_received
     RETURNING ${qualifiedColumns}, wanted.amount AS reserved`;

/**
 * Reserves `amount` (null: all that is left) of the merchant's payment for a new refund, in the
 * caller's transaction. One statement: the payment row is locked and read (so that "all that is
 * left" is counted after any refund that committed meanwhile), and then changed only if it is
 * refundable and the amount fits. Undefined when nothing was reserved; the caller finds out why.
 */
export async function reserveRefund(
  tx: Queryable,
  merchant: MerchantScope,
  paymentId: string,
  amount: bigint | null,
  now: Date,
): Promise<{ payment: PaymentForRefund; amount: bigint } | undefined> {
  const [row] = await tx.query<Row & { reserved: string }>(reserveRefundSql, [
    paymentId,
    merchant.merchantId,
    merchant.mode,
    amount?.toString() ?? null,
    now,
    [...refundableStatuses],
  ]);
  return row ? { payment: toPayment(row), amount: BigInt(row.reserved) } : undefined;
}

/** The merchant's payment, to say why a reservation was refused. */
export async function selectPaymentForRefund(
  db: Queryable,
  merchant: MerchantScope,
  paymentId: string,
): Promise<PaymentForRefund | undefined> {
  const [row] = await db.query<Row>(selectOwnRowById('payments', columns), [
    paymentId,
    merchant.merchantId,
    merchant.mode,
  ]);
  return row && toPayment(row);
}

/** A refund's payment, for the jobs that settle refunds without a key. */
export async function selectPaymentOfRefund(db: Queryable, paymentId: string): Promise<PaymentForRefund | undefined> {
  const [row] = await db.query<Row>(`SELECT ${columns} FROM payments WHERE id = $1`, [paymentId]);
  return row && toPayment(row);
}

/**
 * A refund reached its end: its amount is no longer pending and, if it succeeded, is refunded.
 * In the transaction that records the refund's final status.
 */
export async function finishRefund(
  tx: Queryable,
  paymentId: string,
  amount: bigint,
  outcome: 'succeeded' | 'failed',
  now: Date,
): Promise<void> {
  const rows = await tx.query(
    `UPDATE payments SET amount_refund_pending = amount_refund_pending - $2::bigint,
       amount_refunded = amount_refunded + (CASE WHEN $3 THEN $2::bigint ELSE 0 END), updated_at = $4
     WHERE id = $1 AND amount_refund_pending >= $2::bigint RETURNING id`,
    [paymentId, amount.toString(), outcome === 'succeeded', now],
  );
  // The amount was reserved when the refund was created; finding less pending is a bug.
  if (rows.length === 0) throw new Error(`Payment ${paymentId} has less than ${amount} pending in refunds`);
}

/** The payments side of refunds, as the refund service uses it. */
export const paymentLedger: RefundLedger = {
  refundableStatuses,
  reserveRefund,
  selectPaymentForRefund,
  selectPaymentOfRefund,
  finishRefund,
};
