/**
 * The life of a dispute (docs/disputes.md, Statuses): an inquiry's `warning_*` statuses and a
 * chargeback's. Every change is a conditional update whose guard and new status come from
 * `disputeStates.transition()` (src/state-table.ts).
 */
import { defineStateTable } from '../state-table.js';

export const disputeStatuses = [
  'warning_needs_response',
  'warning_under_review',
  'warning_closed',
  'needs_response',
  'under_review',
  'won',
  'lost',
  'accepted',
] as const;
export type DisputeStatus = (typeof disputeStatuses)[number];

export const disputeStages = ['inquiry', 'chargeback', 'pre_arbitration'] as const;
export type DisputeStage = (typeof disputeStages)[number];

export const disputeReasons = [
  'fraudulent',
  'product_not_received',
  'product_unacceptable',
  'duplicate',
  'subscription_canceled',
  'credit_not_processed',
  'general',
] as const;
export type DisputeReason = (typeof disputeReasons)[number];

export const disputeStates = defineStateTable({
  name: 'disputes',
  statuses: disputeStatuses,
  transitions: {
    warning_needs_response: ['warning_under_review', 'warning_closed', 'needs_response', 'under_review'],
    warning_under_review: ['warning_closed', 'needs_response', 'under_review'],
    warning_closed: [],
    needs_response: ['under_review', 'accepted', 'won', 'lost'],
    under_review: ['needs_response', 'won', 'lost'],
    won: [],
    lost: [],
    accepted: [],
  },
  operations: {
    /** Evidence staged without sending it: the status stays. */
    stage: { from: ['warning_needs_response', 'needs_response'], to: [] },
    /** An inquiry's evidence sent. */
    submitInquiry: { from: ['warning_needs_response'], to: ['warning_under_review'] },
    /** A chargeback's evidence sent: the issuer reviews it. */
    submit: { from: ['needs_response'], to: ['under_review'] },
    /** The merchant accepts a chargeback: its money stays withdrawn. */
    accept: { from: ['needs_response'], to: ['accepted'] },
    /** An inquiry ends (the merchant closed it, the issuer dropped it, or the sandbox's outcome). */
    closeInquiry: { from: ['warning_needs_response', 'warning_under_review'], to: ['warning_closed'] },
    /** A chargeback's outcome: the sandbox's after submission, or a processor's. */
    decide: { from: ['needs_response', 'under_review'], to: ['won', 'lost'] },
    /** A processor turned an inquiry into a chargeback. */
    escalate: { from: ['warning_needs_response', 'warning_under_review'], to: ['needs_response', 'under_review'] },
    /** A processor asks for a response again (a new cycle of the chargeback). */
    reopen: { from: ['under_review'], to: ['needs_response'] },
  },
});
export type DisputeOperation = keyof typeof disputeStates.operations;

/** Closed disputes take no evidence and change no more. */
export function isClosed(status: DisputeStatus): boolean {
  return disputeStates.transitions[status].length === 0;
}
