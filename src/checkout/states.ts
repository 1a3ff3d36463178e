/**
 * The life of a checkout session (docs/checkout.md): open until one payment pays it or it expires.
 * Every change is a conditional update whose `from` comes from here, so a payment and an expiry
 * racing on one session cannot both win.
 */
import { defineStateTable } from '../state-table.js';

export const checkoutStatuses = ['open', 'complete', 'expired'] as const;
export type CheckoutStatus = (typeof checkoutStatuses)[number];

export const checkoutStates = defineStateTable({
  name: 'checkout_sessions',
  statuses: checkoutStatuses,
  transitions: { open: ['complete', 'expired'], complete: [], expired: [] },
  operations: {
    /** The hosted page's payment succeeded (or was authorized, for preAuth `y`). */
    complete: { from: ['open'], to: ['complete'] },
    /** By POST …/expire, or by the job at expiresAt. */
    expire: { from: ['open'], to: ['expired'] },
  },
});
