/**
 * A payment made on a checkout session's hosted page, told to src/checkout/ inside the
 * transaction that records it: state-changes.ts record() calls the listener for every event that
 * says the payment pays (docs/checkout.md: the session becomes complete with the payment, or not at all,
 * so that no crash between the two leaves a paid session open to a second payment).
 */

import type { Queryable } from '../db/db.js';
import { DomainError } from '../core/errors.js';
import type { EventType } from '../events/schemas.js';
import type * as queries from './queries.js';

export interface CheckoutPayment {
  paymentId: string;
  checkoutSessionId: string;
}

/** Runs inside the transaction that records that the session's payment went through. */
export type CheckoutPaymentListener = (tx: Queryable, paid: CheckoutPayment) => Promise<void>;

/**
 * The payment pays its session once authorized: captured, authorized for a later capture
 * (preAuth `y`), or accepted to settle later (its own events tell the outcome).
 */
const paying: ReadonlySet<EventType> = new Set(['payment.succeeded', 'payment.requires_capture', 'payment.processing']);

/** The session this event of the payment pays, if any; called by record(). */
export function checkoutPayment(type: EventType, row: queries.PaymentRow): CheckoutPayment | null {
  if (row.checkout_session_id === null || !paying.has(type)) return null;
  return { paymentId: row.id, checkoutSessionId: row.checkout_session_id };
}

/**
 * docs/checkout.md: of a session's payments, one at most may still go through (the unique index
 * payments_checkout_session); a second is refused when it is written.
 */
export function sessionAlreadyPaying(): DomainError {
  return new DomainError(
    'invalid_state',
    'This checkout session has already been paid, or another payment of it is under way',
    { param: 'checkoutSession' },
  );
}
