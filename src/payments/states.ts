/**
 * The life of a payment (docs/api.md#states) in one place: its statuses, every allowed change between
 * them, the statuses each operation starts from, and the merchant-facing displayStatus.
 * Every change is made by a conditional update (`… WHERE id = $1 AND status = ANY($2)`) whose
 * $2 and new status come from `paymentStates.transition()`, so two requests racing on one payment
 * cannot both win.
 */

import { defineStateTable } from '../state-table.js';

export const paymentStatuses = [
  'requires_payment_method',
  'requires_confirmation',
  'requires_action',
  'processing',
  'requires_capture',
  'succeeded',
  'failed',
  'canceled',
] as const;
export type PaymentStatus = (typeof paymentStatuses)[number];

/**
 * The one table of allowed transitions. `processing` is also where a payment waits while its
 * authorization or capture is with the processor, so that nothing else can act on it meanwhile;
 * `processing → processing` is an authorization that the processor settles later.
 */
const transitions: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  requires_payment_method: ['requires_confirmation', 'processing', 'canceled'],
  requires_confirmation: ['processing', 'canceled'],
  requires_action: ['processing', 'requires_confirmation', 'canceled'],
  processing: ['processing', 'requires_action', 'requires_capture', 'succeeded', 'failed'],
  requires_capture: ['processing', 'canceled', 'failed'],
  // docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one: the after-the-fact reversal of a succeeded payment.
  succeeded: ['failed'],
  failed: [],
  canceled: [],
};

/**
 * Every payment status change goes through `paymentStates.transition(operation, to)`, which
 * refuses a target the operation does not lead to; a mistake in the table below stops the
 * service at start-up (src/state-table.ts).
 */
export const paymentStates = defineStateTable({
  name: 'payments',
  statuses: paymentStatuses,
  transitions,
  operations: {
    /** Changing the request fields: only before the payment is processed. */
    update: { from: ['requires_payment_method', 'requires_confirmation'], to: [] },
    /** An update that gives a payment its first payment method. */
    provideMethod: { from: ['requires_payment_method'], to: ['requires_confirmation'] },
    /** Confirmation hands the payment to the processor. */
    confirm: { from: ['requires_payment_method', 'requires_confirmation'], to: ['processing'] },
    /** The cardholder finished the hosted 3-D Secure page (manual confirmation waits for /confirm). */
    completeChallenge: { from: ['requires_action'], to: ['processing', 'requires_confirmation'] },
    /** The processor answered an authorization. */
    finishAuthorization: {
      from: ['processing'],
      to: ['processing', 'requires_action', 'requires_capture', 'succeeded', 'failed'],
    },
    /** An authorization that settles later has settled (or not). */
    settle: { from: ['processing'], to: ['requires_capture', 'succeeded', 'failed'] },
    /** Capture holds the payment in processing while the processor captures. */
    capture: { from: ['requires_capture'], to: ['processing'] },
    /** The capture's answer; back to requires_capture when the processor could not be reached. */
    finishCapture: { from: ['processing'], to: ['succeeded', 'failed', 'requires_capture'] },
    /** docs/api.md#states: a payment can be canceled before it is processing or succeeded. */
    cancel: {
      from: ['requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture'],
      to: ['canceled'],
    },
    /** docs/api.md#states: an uncaptured pre-authorization is canceled after 7 days. */
    expirePreAuthorization: { from: ['requires_capture'], to: ['canceled'] },
    /** The processor reversed the payment after the fact (or the issuer the held authorization). */
    reverse: { from: ['succeeded', 'requires_capture'], to: ['failed'] },
    /**
     * docs/api.md#refunds: a refund reserves part of what the payment received (a captured
     * pre-authorization is succeeded too); the payment keeps its status.
     */
    refund: { from: ['succeeded'], to: [] },
  },
});

export const allowedTransitions = paymentStates.transitions;
/** What each operation may start from and where it may lead. */
export const operations = paymentStates.operations;
export type PaymentOperation = keyof typeof operations;

export function startsFrom(operation: PaymentOperation): readonly PaymentStatus[] {
  return paymentStates.startsFrom(operation);
}

export const displayStatuses = [
  'succeeded',
  'incomplete',
  'uncaptured',
  'pending',
  'refunded',
  'refund_pending',
  'partially_refunded',
  'disputed',
  'failed',
  'canceled',
] as const;
export type DisplayStatus = (typeof displayStatuses)[number];

/** What a payment received and gave back, in minor units (docs/api.md#refunds). */
export interface RefundTotals {
  received: bigint;
  /** Succeeded refunds. */
  refunded: bigint;
  /** Refunds under way. */
  pending: bigint;
  /** The payment has had a dispute (docs/disputes.md): it then shows `disputed`. */
  disputed?: boolean;
}

const noRefunds: RefundTotals = { received: 0n, refunded: 0n, pending: 0n };

/**
 * docs/api.md#refunds: the merchant-facing summary of a payment. A succeeded payment shows its refunds:
 * `refund_pending` while one is under way, `refunded` once all it received is refunded,
 * `partially_refunded` before that; once disputed (docs/disputes.md), `disputed` above all, as
 * Stripe's charge keeps `disputed: true`.
 */
export function displayStatusOf(status: PaymentStatus, refunds: RefundTotals = noRefunds): DisplayStatus {
  if (status === 'succeeded') {
    if (refunds.disputed === true) return 'disputed';
    if (refunds.pending > 0n) return 'refund_pending';
    if (refunds.refunded > 0n) return refunds.refunded >= refunds.received ? 'refunded' : 'partially_refunded';
  }
  switch (status) {
    case 'requires_payment_method':
    case 'requires_confirmation':
    case 'requires_action':
      return 'incomplete';
    case 'processing':
      return 'pending';
    case 'requires_capture':
      return 'uncaptured';
    case 'succeeded':
      return 'succeeded';
    case 'failed':
      return 'failed';
    case 'canceled':
      return 'canceled';
  }
}
