/**
 * The refund ledger on the payment row (docs/api.md#refunds): what refunds reserve out of the amount
 * received, and what they give back or release when they end. Apart from queries.ts, which reads
 * and changes the payment itself.
 */
import { ownRowCondition } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import { columns, type PaymentRow } from './queries.js';
import type { PaymentStatus } from './states.js';

/** The same columns, named through the table (the refund claim joins it with what it read). */
const qualifiedColumns = columns
  .split(', ')
  .map((column) => `payments.${column}`)
  .join(', ');

/**
 * The refund claim (docs/api.md#refunds) in one statement: the merchant's payment $1 is locked and read,
 * so that "all that is left" ($4 null) is counted after any refund that committed meanwhile, and
 * amount_refund_pending grows only while its status is one of $6 and the refunds and what
 * chargebacks hold (docs/disputes.md, Money) stay within amount_received (which a CHECK constraint backs up). Exported for the query plan test.
 */
export const reserveRefundSql = `WITH wanted AS MATERIALIZED (
    SELECT id, COALESCE($4::bigint, amount_received - amount_refunded - amount_refund_pending - amount_disputed) AS amount
    FROM payments WHERE ${ownRowCondition('payments', '$1', '$2', '$3')} FOR UPDATE
  )
  UPDATE payments SET amount_refund_pending = payments.amount_refund_pending + wanted.amount, updated_at = $5
  FROM wanted
  WHERE payments.id = wanted.id AND payments.status = ANY($6::text[]) AND payments.amount_received > 0
    AND wanted.amount > 0
    AND payments.amount_refunded + payments.amount_refund_pending + payments.amount_disputed + wanted.amount
      <= payments.amount_received
  RETURNING ${qualifiedColumns}, wanted.amount AS reserved`;

/** The payment with `reserved` added to its pending refunds, or undefined when nothing was reserved. */
export async function reserveRefundAmount(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
  amount: bigint | null,
  from: readonly PaymentStatus[],
  now: Date,
): Promise<(PaymentRow & { reserved: string }) | undefined> {
  const [row] = await db.query<PaymentRow & { reserved: string }>(reserveRefundSql, [
    id,
    merchantId,
    mode,
    amount?.toString() ?? null,
    now,
    [...from],
  ]);
  return row;
}

/** A refund ended: `amount` is no longer pending and, if `refunded`, counts as refunded. */
export async function finishRefundAmount(
  db: Queryable,
  id: string,
  amount: bigint,
  refunded: boolean,
  now: Date,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE payments SET amount_refund_pending = amount_refund_pending - $2::bigint,
       amount_refunded = amount_refunded + (CASE WHEN $3 THEN $2::bigint ELSE 0 END), updated_at = $4
     WHERE id = $1 AND amount_refund_pending >= $2::bigint RETURNING id`,
    [id, amount.toString(), refunded, now],
  );
  return rows.length > 0;
}
