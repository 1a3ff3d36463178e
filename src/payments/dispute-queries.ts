/**
 * What disputes hold of a payment (docs/disputes.md, Money), on the payment row as refunds do
 * (refund-queries.ts): a chargeback holds its amount in amount_disputed, which refunds cannot
 * reserve, and lists itself in dispute_ids. Both go through the payment's row lock, so a refund
 * and a dispute racing on one payment never together exceed what it received.
 */
import type { Queryable } from '../db/db.js';
import { columns, type PaymentRow } from './queries.js';

const qualifiedColumns = columns
  .split(', ')
  .map((column) => `payments.${column}`)
  .join(', ');

/**
 * Locks payment $1, counts what is left (received less refunded, pending and held), takes the
 * dispute's amount as $2 capped at that (null: all of it), holds it when $4, and lists dispute $3.
 */
const holdSql = `WITH wanted AS MATERIALIZED (
    SELECT id, GREATEST(0, LEAST(COALESCE($2::bigint, amount_received),
      amount_received - amount_refunded - amount_refund_pending - amount_disputed)) AS amount
    FROM payments WHERE id = $1 FOR UPDATE
  )
  UPDATE payments SET amount_disputed = payments.amount_disputed + (CASE WHEN $4 THEN wanted.amount ELSE 0 END),
    dispute_ids = CASE WHEN $3 = ANY(payments.dispute_ids) THEN payments.dispute_ids
                       ELSE array_append(payments.dispute_ids, $3::text) END,
    updated_at = $5
  FROM wanted WHERE payments.id = wanted.id
  RETURNING ${qualifiedColumns}, wanted.amount AS disputed`;

/** The payment with the dispute's amount (`disputed`, capped at what is left), or undefined without the payment. */
export async function disputePayment(
  tx: Queryable,
  paymentId: string,
  amount: bigint | null,
  disputeId: string,
  hold: boolean,
  now: Date,
): Promise<(PaymentRow & { disputed: string }) | undefined> {
  const [row] = await tx.query<PaymentRow & { disputed: string }>(holdSql, [
    paymentId,
    amount?.toString() ?? null,
    disputeId,
    hold,
    now,
  ]);
  return row;
}

/** Holds `amount` more (an inquiry became a chargeback), capped at what is left; the amount held. */
export async function holdDisputed(tx: Queryable, paymentId: string, amount: bigint, now: Date): Promise<bigint> {
  const [row] = await tx.query<{ held: string }>(
    `WITH wanted AS MATERIALIZED (
       SELECT id, GREATEST(0, LEAST($2::bigint,
         amount_received - amount_refunded - amount_refund_pending - amount_disputed)) AS amount
       FROM payments WHERE id = $1 FOR UPDATE
     )
     UPDATE payments SET amount_disputed = payments.amount_disputed + wanted.amount, updated_at = $3
     FROM wanted WHERE payments.id = wanted.id RETURNING wanted.amount AS held`,
    [paymentId, amount.toString(), now],
  );
  return BigInt(row?.held ?? '0');
}

/** A won dispute gives back what it held. */
export async function releaseDisputed(tx: Queryable, paymentId: string, amount: bigint, now: Date): Promise<void> {
  const rows = await tx.query(
    `UPDATE payments SET amount_disputed = amount_disputed - $2::bigint, updated_at = $3
     WHERE id = $1 AND amount_disputed >= $2::bigint RETURNING id`,
    [paymentId, amount.toString(), now],
  );
  if (rows.length === 0) throw new Error(`Payment ${paymentId} holds less than ${amount} for disputes`);
}

export async function selectPaymentByProcessorReference(
  db: Queryable,
  accountId: string,
  reference: string,
): Promise<PaymentRow | undefined> {
  const [row] = await db.query<PaymentRow>(
    `SELECT ${columns} FROM payments WHERE processor_reference = $1 AND processor_account_id = $2`,
    [reference, accountId],
  );
  return row;
}
