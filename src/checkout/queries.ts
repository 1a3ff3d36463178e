import { ownRowCondition, selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import { listFilter, selectPage, type PageRequest } from '../db/pagination.js';
import type { ShippingOut } from '../core/common-schemas.js';
import type { BillingDetailsOut } from '../payment-methods/schemas.js';
import type { LineItemOut } from '../payments/payment-object.js';
import type { Transition } from '../state-table.js';
import type { CheckoutStatus } from './states.js';

/** The request's fields as the session answers them and as its payment is created from them. */
export interface CheckoutDetails {
  orderNo: string | number | null;
  customerEmail: string | null;
  billingDetails: BillingDetailsOut | null;
  lineItems: LineItemOut[] | null;
  shipping: ShippingOut | null;
  preAuth: 'n' | 'y';
  setupFutureUsage: 'on' | 'off';
  statementDescriptor: string | null;
  website: string | null;
  returnUrl: string;
  cancelUrl: string | null;
  notifyUrl: string | null;
  /** The hosted page's language (a tag of src/shopper/locales.ts); null (or absent, older rows): the browser's. */
  locale?: string | null;
}

export interface CheckoutSessionRow {
  id: string;
  merchant_id: string;
  mode: string;
  status: CheckoutStatus;
  amount_total: string;
  currency: string;
  customer_id: string | null;
  details: CheckoutDetails;
  payment_id: string | null;
  /** The hosted page's attempt under way (hosted-payment.ts); unset on a new session. */
  attempt_until?: Date | null;
  pending_payment_id?: string | null;
  expires_at: Date;
  created_at: Date;
}

const columns =
  'id, merchant_id, mode, status, amount_total::text AS amount_total, currency, customer_id, details, payment_id, attempt_until, pending_payment_id, expires_at, created_at';

export async function insertSession(db: Queryable, row: CheckoutSessionRow): Promise<void> {
  await db.query(
    `INSERT INTO checkout_sessions (id, merchant_id, mode, status, amount_total, currency, customer_id, details,
       payment_id, expires_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.status,
      row.amount_total,
      row.currency,
      row.customer_id,
      JSON.stringify(row.details),
      row.payment_id,
      row.expires_at,
      row.created_at,
    ],
  );
}

export async function selectSession(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<CheckoutSessionRow | undefined> {
  const [row] = await db.query<CheckoutSessionRow>(selectOwnRowById('checkout_sessions', columns), [
    id,
    merchantId,
    mode,
  ]);
  return row;
}

/** For the hosted page and the expiry job, which know only the id. */
export async function selectSessionById(db: Queryable, id: string): Promise<CheckoutSessionRow | undefined> {
  const [row] = await db.query<CheckoutSessionRow>(`SELECT ${columns} FROM checkout_sessions WHERE id = $1`, [id]);
  return row;
}

/** The expiry (docs/checkout.md): only an open session, and by the job only once its time has come. */
export async function expireSession(
  db: Queryable,
  id: string,
  move: Transition<CheckoutStatus>,
  now: Date,
  dueOnly: boolean,
): Promise<CheckoutSessionRow | undefined> {
  const [row] = await db.query<CheckoutSessionRow>(
    `UPDATE checkout_sessions SET status = $3, updated_at = $4
     WHERE id = $1 AND status = ANY($2) AND ($5 = false OR expires_at <= $4)
     RETURNING ${columns}`,
    [id, move.from, move.to, now, dueOnly],
  );
  return row;
}

/** The expiry by a merchant's request: the same update, on its own session only. */
export async function expireOwnSession(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
  move: Transition<CheckoutStatus>,
  now: Date,
): Promise<CheckoutSessionRow | undefined> {
  const [row] = await db.query<CheckoutSessionRow>(
    `UPDATE checkout_sessions SET status = $5, updated_at = $6
     WHERE ${ownRowCondition('checkout_sessions', '$1', '$2', '$3')} AND status = ANY($4)
     RETURNING ${columns}`,
    [id, merchantId, mode, move.from, move.to, now],
  );
  return row;
}

export async function selectSessionPage(
  db: Queryable,
  merchantId: string,
  mode: string,
  status: CheckoutStatus | undefined,
  page: PageRequest,
) {
  const filter = listFilter(merchantId, mode).add((p) => `status = ${p}`, status);
  return selectPage<CheckoutSessionRow>(
    db,
    { table: 'checkout_sessions', columns, where: filter.where, params: filter.params },
    page,
  );
}

/**
 * The hold of one hosted-page attempt (docs/checkout.md: paid at most once): of two form posts at once,
 * only the first finds the session open, unpaid, unexpired and not held, and holds it until `until`.
 * A payment awaiting 3-D Secure (`awaiting`, as the page read it) does not stop a new attempt,
 * which takes its place: the hold clears it, so of two posts only the first still finds it.
 */
export async function holdSession(
  db: Queryable,
  id: string,
  awaiting: string | null,
  now: Date,
  until: Date,
): Promise<CheckoutSessionRow | undefined> {
  const [row] = await db.query<CheckoutSessionRow>(
    `UPDATE checkout_sessions SET attempt_until = $4, pending_payment_id = NULL, updated_at = $3
     WHERE id = $1 AND status = 'open' AND payment_id IS NULL AND expires_at > $3
       AND pending_payment_id IS NOT DISTINCT FROM $2::text
       AND (attempt_until IS NULL OR attempt_until <= $3 OR pending_payment_id IS NOT NULL)
     RETURNING ${columns}`,
    [id, awaiting, now, until],
  );
  return row;
}

/** The attempt's payment awaits 3-D Secure: the session stays held for it until `until`. */
export async function holdForChallenge(db: Queryable, id: string, paymentId: string, until: Date): Promise<void> {
  await db.query(
    `UPDATE checkout_sessions SET pending_payment_id = $2, attempt_until = $3 WHERE id = $1 AND payment_id IS NULL`,
    [id, paymentId, until],
  );
}

/** The attempt ended without paying (a refused card, a decline): the session may be tried again. */
export async function releaseSession(db: Queryable, id: string): Promise<void> {
  await db.query(
    `UPDATE checkout_sessions SET attempt_until = NULL, pending_payment_id = NULL WHERE id = $1 AND payment_id IS NULL`,
    [id],
  );
}

/** The attempt's payment went through: the session is complete, paid by that payment only. */
export async function completeSession(
  db: Queryable,
  id: string,
  paymentId: string,
  move: Transition<CheckoutStatus>,
  now: Date,
): Promise<CheckoutSessionRow | undefined> {
  const [row] = await db.query<CheckoutSessionRow>(
    `UPDATE checkout_sessions SET status = $3, payment_id = $4, attempt_until = NULL, pending_payment_id = NULL,
       updated_at = $5
     WHERE id = $1 AND status = ANY($2) AND payment_id IS NULL RETURNING ${columns}`,
    [id, move.from, move.to, paymentId, now],
  );
  return row;
}
