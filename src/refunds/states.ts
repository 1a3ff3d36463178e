/**
 * The life of a refund (docs/api.md#refunds) in one place: its statuses, every allowed change between them
 * and the statuses each operation starts from. Every change is a conditional update whose guard
 * and new status come from `refundStates.transition()` (src/state-table.ts), so a settlement job
 * and a late processor answer racing on one refund cannot both win.
 */

import { defineStateTable } from '../state-table.js';

export const refundStatuses = ['pending', 'succeeded', 'failed'] as const;
export type RefundStatus = (typeof refundStatuses)[number];

export const refundStates = defineStateTable({
  name: 'refunds',
  statuses: refundStatuses,
  transitions: { pending: ['succeeded', 'failed'], succeeded: [], failed: [] },
  operations: {
    /** The processor accepted the refund and settles it later: it gains the processor's reference. */
    accept: { from: ['pending'], to: [] },
    /** The processor's final answer: at once, or when the refund settled. */
    settle: { from: ['pending'], to: ['succeeded', 'failed'] },
  },
});
export type RefundOperation = keyof typeof refundStates.operations;
