/** The payment follow-ups run by the job runner (jobs.ts) and the times they are due. */

export const jobKinds = {
  settle: 'payment.settle',
  reverse: 'payment.reverse',
  expirePreAuthorization: 'payment.expire_preauth',
  voidAuthorization: 'payment.void_authorization',
  /** A sandbox dispute card's disputes open (src/disputes/ registers it: docs/disputes.md, Sandbox). */
  sandboxDispute: 'payment.sandbox_dispute',
} as const;

/** docs/api.md#states: an uncaptured pre-authorization is canceled this long after it was authorized. */
export const preAuthorizationLifetimeMs = 7 * 24 * 60 * 60 * 1000;

/**
 * A payment claimed for an authorization and still without an answer this long after is taken to
 * be interrupted (its process died): far longer than any processor call may take.
 */
export const interruptedAuthorizationAfterMs = 5 * 60 * 1000;

/** The cancellationReason of a pre-authorization canceled because it was never captured. */
export const expiredCancellationReason = 'automatic';
