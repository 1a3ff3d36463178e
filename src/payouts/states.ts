/**
 * The life of a payout (docs/balances.md, Payouts): its statuses and the allowed changes. Every
 * change is a conditional update whose guard and new status come from `payoutStates.transition()`
 * (src/state-table.ts), so two workers settling one payout cannot both win.
 */

import { defineStateTable } from '../state-table.js';

export const payoutStatuses = ['pending', 'in_transit', 'paid', 'failed', 'canceled'] as const;
export type PayoutStatus = (typeof payoutStatuses)[number];

export const payoutStates = defineStateTable({
  name: 'payouts',
  statuses: payoutStatuses,
  transitions: {
    pending: ['in_transit', 'canceled', 'failed'],
    in_transit: ['paid', 'failed'],
    paid: [],
    failed: [],
    canceled: [],
  },
  operations: {
    /** The bank rail took the payout (the sandbox's at once). */
    send: { from: ['pending'], to: ['in_transit'] },
    /** The bank's answer: the money arrived, or it came back. */
    settle: { from: ['in_transit'], to: ['paid', 'failed'] },
    /** A payout not yet sent may be canceled. */
    cancel: { from: ['pending'], to: ['canceled'] },
  },
});
export type PayoutOperation = keyof typeof payoutStates.operations;
