/**
 * Disputes from a live processor's notifications (docs/disputes.md, Live): Adyen's
 * NOTIFICATION_OF_CHARGEBACK, CHARGEBACK and CHARGEBACK_REVERSED, Stripe's charge.dispute.*.
 * Each notice is applied in one transaction with its balance transactions and events; applied
 * again it changes nothing (the dispute is unique per account and reference, each entry per
 * dispute and type, each move conditional on the status it leaves).
 */
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/db.js';
import type { RecordedEvent } from '../events/service.js';
import { selectPaymentByProcessorReference } from '../payments/dispute-queries.js';
import { selectPaymentById, type PaymentRow } from '../payments/queries.js';
import type { ProcessorNotification } from '../processor/processor.js';
import type { DisputeLifecycle } from './lifecycle.js';
import * as queries from './queries.js';
import { disputeReasons, disputeStates, type DisputeReason, type DisputeStatus } from './states.js';

export type DisputeNotice = Extract<ProcessorNotification, { kind: 'dispute' }>;
type Applied = 'applied' | 'ignored';

const openStatuses = new Set<string>([
  'warning_needs_response',
  'warning_under_review',
  'needs_response',
  'under_review',
]);

function reasonOf(code: string | null): DisputeReason {
  return (disputeReasons as readonly string[]).includes(code ?? '') ? (code as DisputeReason) : 'general';
}

/** What a notice asks of the dispute, whichever processor sent it. */
interface Step {
  open: boolean;
  stage: 'inquiry' | 'chargeback';
  status: DisputeStatus | null;
  withdraw: boolean;
  reinstate: boolean;
}

function stepOf(notice: DisputeNotice): Step | null {
  const status = notice.processorStatus as DisputeStatus | null;
  const stage = status?.startsWith('warning_') ? 'inquiry' : 'chargeback';
  const none = { open: false, stage, status: null, withdraw: false, reinstate: false } as const;
  switch (notice.step) {
    case 'NOTIFICATION_OF_CHARGEBACK':
      return { ...none, open: true, stage: 'chargeback' };
    case 'CHARGEBACK':
      return { ...none, open: true, stage: 'chargeback', withdraw: true };
    case 'CHARGEBACK_REVERSED':
      return { ...none, status: 'won', reinstate: true };
    case 'charge.dispute.created':
      return { ...none, open: true, status };
    case 'charge.dispute.updated':
    case 'charge.dispute.closed':
      return { ...none, open: true, status };
    case 'charge.dispute.funds_withdrawn':
      return { ...none, open: true, status, withdraw: true };
    case 'charge.dispute.funds_reinstated':
      return { ...none, status, reinstate: true };
    default:
      return null;
  }
}

export async function applyDisputeNotice(
  deps: { lifecycle: DisputeLifecycle; clock: Clock },
  tx: Queryable,
  recorded: RecordedEvent[],
  accountId: string,
  notice: DisputeNotice,
): Promise<Applied> {
  const step = stepOf(notice);
  if (!step) return 'ignored';
  const { lifecycle } = deps;
  const now = deps.clock.now();
  let row = await queries.selectDisputeByReference(tx, accountId, notice.disputeReference);
  if (!row) {
    if (!step.open) return 'ignored';
    const payment: PaymentRow | undefined =
      (notice.paymentId !== '' ? await selectPaymentById(tx, notice.paymentId) : undefined) ??
      (await selectPaymentByProcessorReference(tx, accountId, notice.processorReference));
    if (!payment || payment.processor_account_id !== accountId) return 'ignored';
    const status = step.status !== null && openStatuses.has(step.status) ? step.status : undefined;
    row = await lifecycle.open(
      tx,
      recorded,
      {
        paymentId: payment.id,
        amount: notice.amount,
        reason: reasonOf(notice.reasonCode),
        networkReasonCode: notice.reasonCode,
        stage: step.stage,
        ...(status ? { status } : {}),
        processor: { accountId, reference: notice.disputeReference, responseReference: notice.responseReference },
      },
      { withdrawNow: false, now },
    );
    if (!row) return 'ignored';
  } else {
    if (notice.responseReference !== undefined && row.processor_response_reference === null) {
      await queries.setResponseReference(tx, row.id, notice.responseReference);
    }
    if (step.status !== null && step.status !== row.status && openStatuses.has(step.status)) {
      row = (await moveOpen(deps, tx, recorded, row, step.status)) ?? row;
    }
  }
  if (step.withdraw && row.stage !== 'inquiry') await lifecycle.withdraw(tx, recorded, row, now);
  if (step.status === 'won' || step.status === 'lost' || step.status === 'warning_closed') {
    await lifecycle.close(tx, recorded, row, step.status, now);
  } else if (step.reinstate) {
    await lifecycle.reinstate(tx, recorded, row, now);
  }
  return 'applied';
}

/** An open dispute's new open status as the processor gives it. */
async function moveOpen(
  deps: { lifecycle: DisputeLifecycle; clock: Clock },
  tx: Queryable,
  recorded: RecordedEvent[],
  row: queries.DisputeRow,
  status: DisputeStatus,
): Promise<queries.DisputeRow | undefined> {
  const now = deps.clock.now();
  if (row.stage === 'inquiry' && (status === 'needs_response' || status === 'under_review')) {
    return deps.lifecycle.escalate(tx, recorded, row, status, now);
  }
  const operation =
    status === 'under_review' ? 'submit' : status === 'warning_under_review' ? 'submitInquiry' : 'reopen';
  if (!disputeStates.canStart(operation, row.status)) return undefined;
  const updated = await queries.changeDispute(tx, row.id, disputeStates.transition(operation, status), {}, now);
  if (updated) await deps.lifecycle.record(tx, recorded, 'dispute.updated', updated, now);
  return updated;
}
