/**
 * What happens to a dispute and its money (docs/disputes.md, Money), in the caller's transaction:
 * opened (a chargeback holds its amount of the payment), funds withdrawn (the amount and the
 * dispute fee leave the balance), closed (won: the amount comes back). Used by the sandbox and by
 * the processors' notifications alike; each step writes its balance transaction once (the
 * ledger's unique index) and records its event only when it did something.
 */
import type { Queryable } from '../db/db.js';
import type { EventType } from '../events/schemas.js';
import type { EventService, RecordedEvent } from '../events/service.js';
import type { JobRunner } from '../jobs/runner.js';
import { newId } from '../ids.js';
import { toBalanceTransaction, writeEntry } from '../ledger/service.js';
import { disputePayment, holdDisputed, releaseDisputed } from '../payments/dispute-queries.js';
import { isoTimestamp } from '../time.js';
import { scheduleDisputeMail } from './mail.js';
import * as queries from './queries.js';
import { evidenceFileFields, evidenceTextFields, type Dispute, type Evidence } from './schemas.js';
import { disputeStates, type DisputeReason, type DisputeStage, type DisputeStatus } from './states.js';

/** docs/disputes.md, Money: the dispute fee, minor units of the payment's currency. */
export const disputeFee = 1500n;
/** docs/decisions/0044-disputes.md: the sandbox's (and a processor's, when it names none) time to respond. */
export const responseWindowMs = 7 * 24 * 60 * 60 * 1000;

export function emptyEvidence(): Evidence {
  return Object.fromEntries([...evidenceTextFields, ...evidenceFileFields].map((field) => [field, null])) as Evidence;
}

export function toDispute(row: queries.DisputeRow, entries: queries.BalanceTransactionRowOf[], now: Date): Dispute {
  const closed = disputeStates.transitions[row.status].length === 0;
  return {
    id: row.id,
    paymentId: row.payment_id,
    amount: BigInt(row.amount).toString(),
    currency: row.currency,
    reason: row.reason,
    networkReasonCode: row.network_reason_code,
    stage: row.stage,
    status: row.status,
    evidence: { ...emptyEvidence(), ...row.evidence },
    evidenceDetails: {
      dueBy: isoTimestamp(row.due_by),
      hasEvidence: Object.values(row.evidence).some((value) => value !== null && value !== ''),
      pastDue: !closed && row.due_by.getTime() < now.getTime(),
      submissionCount: row.submission_count,
    },
    // An open inquiry holds nothing: a refund may still answer it.
    isChargeRefundable: row.stage === 'inquiry' && !closed,
    balanceTransactions: entries
      .filter((entry) => entry.source === row.id)
      .map((entry) => toBalanceTransaction(entry, now)),
    created: isoTimestamp(row.created_at),
  };
}

export interface OpenRequest {
  paymentId: string;
  /** null: all that is left of the payment. */
  amount: bigint | null;
  reason: DisputeReason;
  networkReasonCode: string | null;
  stage: DisputeStage;
  status?: DisputeStatus;
  dueBy?: Date;
  processor?: { accountId: string; reference: string; responseReference?: string | undefined };
}

export function createDisputeLifecycle({ events, jobs }: { events: EventService; jobs: JobRunner }) {
  async function record(tx: Queryable, recorded: RecordedEvent[], type: EventType, row: queries.DisputeRow, now: Date) {
    const entries = await queries.selectEntriesOf(tx, [row.id]);
    const owner = { merchantId: row.merchant_id, mode: row.mode as 'test' | 'live' };
    recorded.push(await events.record(tx, owner, type, toDispute(row, entries, now)));
  }

  /** The amount and the fee leave the balance, once. */
  async function withdraw(tx: Queryable, recorded: RecordedEvent[], row: queries.DisputeRow, now: Date) {
    const written = await writeEntry(tx, {
      merchantId: row.merchant_id,
      mode: row.mode,
      type: 'dispute',
      source: row.id,
      amount: -BigInt(row.amount),
      fees: [{ type: 'dispute_fee', amount: disputeFee, description: 'Dispute fee' }],
      currency: row.currency,
      availableOn: now,
      reportingCategory: 'dispute',
      created: now,
    });
    if (written) await record(tx, recorded, 'dispute.funds_withdrawn', row, now);
  }

  /** The amount comes back (a won chargeback), once; the fee stays charged. */
  async function reinstate(tx: Queryable, recorded: RecordedEvent[], row: queries.DisputeRow, now: Date) {
    const withdrawn = await queries.selectEntriesOf(tx, [row.id]);
    if (!withdrawn.some((entry) => entry.type === 'dispute')) return;
    const written = await writeEntry(tx, {
      merchantId: row.merchant_id,
      mode: row.mode,
      type: 'dispute_reversal',
      source: row.id,
      amount: BigInt(row.amount),
      fees: [],
      currency: row.currency,
      availableOn: now,
      reportingCategory: 'dispute_reversal',
      created: now,
    });
    if (written) await record(tx, recorded, 'dispute.funds_reinstated', row, now);
  }

  return {
    record,
    withdraw,
    reinstate,

    /**
     * Opens a dispute of the payment, its amount capped at what is left of it (refunds already
     * made keep theirs). A chargeback holds that amount at once; `withdrawNow` also takes the
     * money (the sandbox; a processor says when it did). Undefined without the payment.
     */
    async open(
      tx: Queryable,
      recorded: RecordedEvent[],
      request: OpenRequest,
      options: { withdrawNow: boolean; now: Date },
    ): Promise<queries.DisputeRow | undefined> {
      const { now } = options;
      const id = newId('dp');
      const holds = request.stage !== 'inquiry';
      const payment = await disputePayment(tx, request.paymentId, request.amount, id, holds, now);
      if (!payment) return undefined;
      const amount = BigInt(payment.disputed);
      const row: queries.DisputeRow = {
        id,
        merchant_id: payment.merchant_id,
        mode: payment.mode,
        payment_id: payment.id,
        amount: amount.toString(),
        currency: payment.currency,
        reason: request.reason,
        network_reason_code: request.networkReasonCode,
        stage: request.stage,
        status: request.status ?? (holds ? 'needs_response' : 'warning_needs_response'),
        evidence: emptyEvidence(),
        due_by: request.dueBy ?? new Date(now.getTime() + responseWindowMs),
        submission_count: 0,
        amount_held: holds ? amount.toString() : '0',
        processor_account_id: request.processor?.accountId ?? null,
        processor_reference: request.processor?.reference ?? null,
        processor_response_reference: request.processor?.responseReference ?? null,
        response_sending: null,
        created_at: now,
        updated_at: now,
      };
      await queries.insertDispute(tx, row);
      await record(tx, recorded, 'dispute.created', row, now);
      await scheduleDisputeMail(jobs, tx, row, now);
      if (holds && options.withdrawNow) await withdraw(tx, recorded, row, now);
      return row;
    },

    /** An inquiry became a chargeback (a processor said so): it now holds its amount. */
    async escalate(
      tx: Queryable,
      recorded: RecordedEvent[],
      row: queries.DisputeRow,
      status: 'needs_response' | 'under_review',
      now: Date,
    ): Promise<queries.DisputeRow | undefined> {
      const held = await holdDisputed(tx, row.payment_id, BigInt(row.amount), now);
      const updated = await queries.changeDispute(
        tx,
        row.id,
        disputeStates.transition('escalate', status),
        { stage: 'chargeback', amount_held: held },
        now,
      );
      if (updated) await record(tx, recorded, 'dispute.updated', updated, now);
      return updated;
    },

    /**
     * The outcome: won gives the held amount back to the payment and the money back to the
     * balance; lost and a closed inquiry keep things as they are.
     */
    async close(
      tx: Queryable,
      recorded: RecordedEvent[],
      row: queries.DisputeRow,
      status: 'won' | 'lost' | 'warning_closed',
      now: Date,
    ): Promise<queries.DisputeRow | undefined> {
      const move =
        status === 'warning_closed'
          ? disputeStates.transition('closeInquiry', status)
          : disputeStates.transition('decide', status);
      const won = status === 'won';
      const updated = await queries.changeDispute(tx, row.id, move, won ? { amount_held: 0n } : {}, now);
      if (!updated) return undefined;
      if (won && BigInt(row.amount_held) > 0n) await releaseDisputed(tx, row.payment_id, BigInt(row.amount_held), now);
      await record(tx, recorded, 'dispute.closed', updated, now);
      if (won) await reinstate(tx, recorded, updated, now);
      return updated;
    },
  };
}

export type DisputeLifecycle = ReturnType<typeof createDisputeLifecycle>;
