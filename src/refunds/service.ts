import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import type { EventType } from '../events/schemas.js';
import type { EventService, RecordedEvent } from '../events/service.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { createdBounds, normalizeMetadata } from '../core/common-schemas.js';
import type { Page } from '../core/page.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import { newId } from '../ids.js';
import type { JobRunner } from '../jobs/runner.js';
import { normalizeCurrency, parseAmount } from '../money.js';
import { refundableAmount, type PaymentForRefund, type RefundLedger } from '../payments/service.js';
import type { ProcessorRouter, RefundOutcome, RefundSettlement } from '../processor/processor.js';
import { isoTimestamp } from '../time.js';
import * as queries from './queries.js';
import { jobKinds, notifiedSettlementCheckMs, registerRefundJobs, resumeRefundAfterMs } from './jobs.js';
import type { CreateRefundBody, ListRefundsQuery, Refund } from './schemas.js';
import { refundStates, refundStatuses, type RefundOperation, type RefundStatus } from './states.js';

/*
 * Refunds (docs/api.md#refunds). A refund is created pending, in one transaction with the reservation of
 * its amount on the payment and its refund.pending event; only then is the processor asked,
 * outside any transaction, and its answer recorded in a second one: at once (succeeded or
 * failed, with the event), or later by a settlement job when the processor settles it later.
 */

type MerchantScope = Pick<MerchantContext, 'merchantId' | 'mode'>;

export interface RefundServiceDeps {
  db: Db;
  logger: FastifyBaseLogger;
  clock: Clock;
  /** Each refund goes through its payment's processor. */
  processors: ProcessorRouter;
  events: EventService;
  jobs: JobRunner;
  payments: RefundLedger;
  /** Told of every refund event inside the transaction that records it (src/ledger/ writes its balance transaction). */
  onRefundRecorded?: (tx: Queryable, type: EventType, row: queries.RefundRow) => Promise<void>;
}

export function toRefund(row: queries.RefundRow): Refund {
  return {
    id: row.id,
    amount: BigInt(row.amount).toString(),
    currency: row.currency,
    paymentId: row.payment_id,
    reason: row.reason,
    note: row.note,
    description: row.description,
    metadata: row.metadata,
    status: row.status,
    failureReason: row.failure_reason,
    created: isoTimestamp(row.created_at),
  };
}

/** docs/api.md#compatibility-with-existing-clients: a description sent as a number or `false` is kept as the text it stands for. */
function descriptionText(value: CreateRefundBody['description']): string | null {
  if (value === undefined) return null;
  if (value === false) return '';
  return String(value);
}

/** The refund's state changed between our read and our conditional update: someone else answered. */
class StateConflict extends Error {
  constructor(readonly current: queries.RefundRow | undefined) {
    super('The refund changed while it was being processed');
  }
}

/** How many times a refund is claimed again when the payment changed between the claim and its diagnosis. */
const maxClaimAttempts = 3;

/** The dashboard's filters of the refunds list beyond the API's: amount (minor units) and currency. */
export type RefundSearch = Pick<queries.RefundFilters, 'amountGte' | 'amountLte' | 'currency'>;

export function createRefundService(deps: RefundServiceDeps) {
  const { db, logger, clock, processors, events, jobs, payments } = deps;

  /** Runs `work` in a transaction, then publishes the events it recorded once they are committed. */
  async function inTransaction<T>(work: (tx: Queryable, recorded: RecordedEvent[]) => Promise<T>): Promise<T> {
    const recorded: RecordedEvent[] = [];
    const result = await db.transaction((tx) => work(tx, recorded));
    events.published(recorded);
    return result;
  }

  async function record(
    tx: Queryable,
    recorded: RecordedEvent[],
    type: EventType,
    row: queries.RefundRow,
    payment: PaymentForRefund,
  ): Promise<void> {
    const owner = { merchantId: row.merchant_id, mode: row.mode as MerchantScope['mode'] };
    // docs/webhooks.md#what-is-sent: the refund's events go to its payment's notifyUrl, which the Refund does not carry.
    recorded.push(await events.record(tx, owner, type, toRefund(row), { notifyUrl: payment.notifyUrl }));
    await deps.onRefundRecorded?.(tx, type, row);
  }

  async function change(
    tx: Queryable,
    row: queries.RefundRow,
    operation: RefundOperation,
    { status, ...changes }: queries.RefundChanges & { status?: RefundStatus },
    now: Date,
    options: { unanswered?: boolean } = {},
  ): Promise<queries.RefundRow> {
    const move = refundStates.transition(operation, status);
    const updated = await queries.changeRefund(tx, row.id, move, changes, now, options);
    if (!updated) throw new StateConflict(await queries.selectRefundById(tx, row.id));
    return updated;
  }

  /** Why no amount could be reserved on the payment; null when it now would fit (it changed meanwhile). */
  async function refusal(
    merchant: MerchantScope,
    paymentId: string,
    amount: bigint | null,
  ): Promise<DomainError | null> {
    const payment = await payments.paymentForRefund(db, merchant, paymentId);
    if (!payment) {
      return new DomainError(
        'resource_missing',
        /^pt_\d{19}$/.test(paymentId) ? `No such payment: '${paymentId}'` : 'No such payment',
        { param: 'paymentId' },
      );
    }
    if (!payments.refundableStatuses.includes(payment.status)) {
      return new DomainError(
        'invalid_state',
        `The payment cannot be refunded because its status is ${payment.status}; it must be ${payments.refundableStatuses.join(' or ')}`,
        { param: 'paymentId', status: payment.status },
      );
    }
    if (payment.amountReceived === 0n) {
      return new DomainError(
        'invalid_state',
        'The payment cannot be refunded because it received no money (a zero-amount authorization)',
        { param: 'paymentId', status: payment.status },
      );
    }
    const left = refundableAmount(payment);
    if (amount !== null && amount <= left) return null;
    if (amount === null && left > 0n) return null;
    const message =
      left === 0n
        ? `Nothing is left to refund on the payment: ${payment.amountRefunded} of ${payment.amountReceived} (${payment.currency} minor units) is refunded, ${payment.amountRefundPending} is pending and ${payment.amountDisputed} is held by a dispute`
        : `amount ${amount} is more than is left to refund on the payment: ${left} (${payment.currency} minor units)${payment.amountDisputed > 0n ? `; ${payment.amountDisputed} is held by a dispute` : ''}`;
    return new DomainError('amount_too_large', message, {
      param: 'amount',
      amountRefundable: left.toString(),
      currency: payment.currency,
    });
  }

  /**
   * The refund, its reserved amount and its refund.pending event, in one transaction. The
   * reservation is the payment's conditional update; if it fails, the payment is read to say why.
   */
  async function claim(
    merchant: MerchantScope,
    input: CreateRefundBody,
    fields: Pick<queries.RefundRow, 'reason' | 'note' | 'description' | 'metadata'>,
    amount: bigint | null,
  ): Promise<{ row: queries.RefundRow; payment: PaymentForRefund }> {
    const currency = input.currency === undefined ? undefined : normalizeCurrency(input.currency);
    if (input.currency !== undefined && currency === undefined) {
      throw invalidField('currency', 'currency must be an ISO 4217 currency code', 'currency');
    }
    for (let attempt = 1; ; attempt++) {
      const claimed = await inTransaction(async (tx, recorded) => {
        const now = clock.now();
        const reserved = await payments.reserveRefund(tx, merchant, input.paymentId, amount, now);
        if (!reserved) return undefined;
        if (currency !== undefined && currency !== reserved.payment.currency) {
          // Thrown inside the transaction, so the reservation is rolled back with it.
          throw invalidField(
            'currency',
            `currency must be the payment's currency, ${reserved.payment.currency}`,
            'payment_currency',
          );
        }
        const row: queries.RefundRow = {
          id: newId('re'),
          merchant_id: merchant.merchantId,
          mode: merchant.mode,
          payment_id: reserved.payment.id,
          amount: reserved.amount.toString(),
          currency: reserved.payment.currency,
          ...fields,
          status: 'pending',
          failure_reason: null,
          processor_reference: null,
          created_at: now,
          updated_at: now,
        };
        await queries.insertRefund(tx, row);
        await record(tx, recorded, 'refund.pending', row, reserved.payment);
        // The safety net: if this process dies before the processor's answer is recorded (or
        // the processor cannot be reached), the refund is submitted again later.
        await jobs.schedule(tx, jobKinds.resume, row.id, new Date(now.getTime() + resumeRefundAfterMs));
        return { row, payment: reserved.payment };
      });
      if (claimed) return claimed;
      const reason = await refusal(merchant, input.paymentId, amount);
      if (reason) throw reason;
      // Another refund settled or failed between the claim and the diagnosis: claim again.
      if (attempt >= maxClaimAttempts) throw new Error(`Refund of ${input.paymentId} kept losing races`);
    }
  }

  /**
   * Asks the processor for the refund (outside any transaction: a slow processor must hold no
   * lock) and records its answer. Throws when the processor cannot answer at all; the refund
   * then stays pending for the resume job.
   */
  async function submit(row: queries.RefundRow, payment: PaymentForRefund): Promise<queries.RefundRow> {
    if (payment.processorReference === null) throw new Error(`Payment ${payment.id} has no processor reference`);
    const processor = await processors.of(payment.processedBy);
    const outcome = await processor.refund({
      paymentId: payment.id,
      paymentReference: payment.processorReference,
      refundId: row.id,
      amount: BigInt(row.amount),
      currency: row.currency,
      idempotencyKey: row.id,
    });
    return recordAnswer(row, payment, outcome).catch((err: unknown) => {
      // Another process recorded an answer first (the resume job and a slow request): keep it.
      if (err instanceof StateConflict && err.current) return err.current;
      throw err;
    });
  }

  async function recordAnswer(
    row: queries.RefundRow,
    payment: PaymentForRefund,
    outcome: RefundOutcome,
  ): Promise<queries.RefundRow> {
    return inTransaction(async (tx, recorded) => {
      const now = clock.now();
      switch (outcome.kind) {
        case 'accepted': {
          // Still pending, and refund.pending was sent: no event until it settles.
          const updated = await change(tx, row, 'accept', { processor_reference: outcome.processorReference }, now, {
            unanswered: true,
          });
          // A processor that notifies (followUp null) is still asked now and then, in case a
          // notification is lost (docs/processors.md, Notifications).
          const afterMs = outcome.followUp?.afterMs ?? notifiedSettlementCheckMs;
          await jobs.schedule(tx, jobKinds.settle, row.id, new Date(now.getTime() + afterMs));
          return updated;
        }
        case 'succeeded':
        case 'failed': {
          const succeeded = outcome.kind === 'succeeded';
          const updated = await change(
            tx,
            row,
            'settle',
            {
              status: outcome.kind,
              processor_reference: outcome.processorReference,
              failure_reason: succeeded ? null : outcome.reason,
            },
            now,
            { unanswered: true },
          );
          await payments.finishRefund(tx, row.payment_id, BigInt(row.amount), outcome.kind, now);
          await record(tx, recorded, succeeded ? 'refund.succeeded' : 'refund.failed', updated, payment);
          return updated;
        }
      }
    });
  }

  /** A pending refund settled (by the follow-up job, or by the processor's notification). */
  async function settle(
    row: queries.RefundRow,
    payment: PaymentForRefund,
    settlement: Exclude<RefundSettlement, { kind: 'pending' }>,
  ): Promise<void> {
    await inTransaction(async (tx, recorded) => {
      const now = clock.now();
      const succeeded = settlement.kind === 'succeeded';
      const updated = await change(
        tx,
        row,
        'settle',
        { status: settlement.kind, failure_reason: succeeded ? null : settlement.reason },
        now,
      );
      await payments.finishRefund(tx, row.payment_id, BigInt(row.amount), settlement.kind, now);
      await record(tx, recorded, succeeded ? 'refund.succeeded' : 'refund.failed', updated, payment);
    });
  }

  registerRefundJobs(deps, {
    submit,
    settle: (row, payment, settlement) => settle(row, payment, settlement).catch(ignoreConflict),
  });

  return {
    /**
     * A processor's notification that a refund settled (docs/processors.md, Notifications):
     * applied if the refund, made through that account, is still pending; whichever of it and
     * the processor's first answer comes first wins.
     */
    async applyRefundNotice(
      accountId: string,
      refundId: string,
      settlement: Exclude<RefundSettlement, { kind: 'pending' }>,
    ): Promise<'applied' | 'ignored'> {
      const row = await queries.selectRefundById(db, refundId);
      if (!row || row.status !== 'pending') return 'ignored';
      const payment = await payments.paymentOfRefund(db, row.payment_id);
      if (!payment || payment.processedBy.processor_account_id !== accountId) return 'ignored';
      try {
        await settle(row, payment, settlement);
        return 'applied';
      } catch (err) {
        ignoreConflict(err);
        return 'ignored';
      }
    },

    /** docs/api.md#refunds: a refund of a payment with money received, pending until the processor settles it. */
    async create(merchant: MerchantContext, input: CreateRefundBody): Promise<Refund> {
      let amount: bigint | null = null;
      if (input.amount !== undefined) {
        amount = parseAmount(input.amount) ?? null;
        if (amount === null || amount === 0n) {
          throw invalidField(
            'amount',
            'amount must be a string of digits (minor units) or a whole number, from 1 to 12 digits and more than 0',
          );
        }
      }
      if (input.reason === 'other' && (input.note === undefined || input.note.trim() === '')) {
        throw invalidField('note', 'note is required when reason is other', 'required');
      }
      const fields = {
        reason: input.reason ?? null,
        note: input.note ?? null,
        description: descriptionText(input.description),
        metadata: normalizeMetadata(input.metadata),
      };
      const { row, payment } = await claim(merchant, input, fields, amount);
      try {
        return toRefund(await submit(row, payment));
      } catch (err) {
        // The refund exists and its amount is reserved; the resume job submits it again.
        logger.error({ err, refundId: row.id }, 'refund not submitted to the processor; it will be retried');
        return toRefund(row);
      }
    },

    async retrieve(merchant: MerchantContext, id: string): Promise<Refund> {
      const row = await queries.selectRefund(db, merchant.merchantId, merchant.mode, id);
      if (!row) throw notFound('refund', id);
      return toRefund(row);
    },

    /** The API's list; `search` adds the dashboard's amount and currency filters. */
    async list(merchant: MerchantContext, query: ListRefundsQuery, search: RefundSearch = {}): Promise<Page<Refund>> {
      const { rows, hasMore } = await queries.selectRefundPage(
        db,
        merchant.merchantId,
        merchant.mode,
        {
          paymentId: query.paymentId,
          status: query.status,
          ...createdBounds(query),
          ...search,
        },
        query,
      );
      return { data: rows.map(toRefund), hasMore };
    },

    /** The dashboard's status tabs: refunds of each status (and all), each count stopped at `cap`. */
    countByStatus(merchant: MerchantContext, range: { createdGte?: Date; createdLte?: Date }, cap: number) {
      return queries.countRefundsByStatus(db, merchant.merchantId, merchant.mode, refundStatuses, range, cap);
    },
  };
}

function ignoreConflict(err: unknown): void {
  // A job that finds its refund already changed by another process has nothing left to do.
  if (!(err instanceof StateConflict)) throw err;
}

export type RefundService = ReturnType<typeof createRefundService>;
