import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import type { JobRunner } from '../jobs/runner.js';
import type { PaymentForRefund, RefundLedger } from '../payments/service.js';
import type { ProcessorRouter, RefundSettlement } from '../processor/processor.js';
import * as queries from './queries.js';

/*
 * The refunds' scheduled work (docs/api.md#refunds): asking the processor how an accepted refund
 * settled, and submitting again a refund that never got an answer. The service (service.ts)
 * schedules these jobs and passes in how a refund is submitted and settled.
 */

export const jobKinds = {
  /** Asks the processor how an accepted refund settled. */
  settle: 'refund.settle',
  /** Submits a refund whose process died, or whose processor was unreachable, before an answer. */
  resume: 'refund.resume',
} as const;

/** How often a refund a processor settles by notification is asked after, in case one was lost. */
export const notifiedSettlementCheckMs = 15 * 60 * 1000;

/** A refund without a processor answer this long after it was created is submitted again. */
export const resumeRefundAfterMs = 5 * 60 * 1000;

export interface RefundJobDeps {
  db: Db;
  clock: Clock;
  processors: ProcessorRouter;
  jobs: JobRunner;
  payments: RefundLedger;
}

export interface RefundWork {
  /** Asks the processor for the refund and records its answer; throws when it cannot answer. */
  submit(row: queries.RefundRow, payment: PaymentForRefund): Promise<queries.RefundRow>;
  /** Records a settled refund; a refund another process already changed is left as it is. */
  settle(
    row: queries.RefundRow,
    payment: PaymentForRefund,
    settlement: Exclude<RefundSettlement, { kind: 'pending' }>,
  ): Promise<void>;
}

export function registerRefundJobs({ db, clock, processors, jobs, payments }: RefundJobDeps, work: RefundWork): void {
  // Each re-reads the refund and changes it conditionally, so running one twice (a worker died
  // after the change but before marking the job done) changes nothing.

  jobs.register(jobKinds.settle, async (refundId) => {
    const row = await queries.selectRefundById(db, refundId);
    if (!row || row.status !== 'pending' || row.processor_reference === null) return;
    const payment = await payments.paymentOfRefund(db, row.payment_id);
    if (!payment) throw new Error(`Refund ${row.id} has no payment`);
    const settlement = await (await processors.of(payment.processedBy)).resolveRefund(row.processor_reference);
    if (settlement.kind === 'pending') {
      await jobs.schedule(db, jobKinds.settle, row.id, new Date(clock.now().getTime() + notifiedSettlementCheckMs));
      return;
    }
    await work.settle(row, payment, settlement);
  });

  jobs.register(jobKinds.resume, async (refundId) => {
    const row = await queries.selectRefundById(db, refundId);
    if (!row || row.status !== 'pending' || row.processor_reference !== null) return;
    const payment = await payments.paymentOfRefund(db, row.payment_id);
    if (!payment) throw new Error(`Refund ${row.id} has no payment`);
    // The refund id is the processor's idempotency key, so asking again cannot refund twice.
    // An outage throws, and the job runner tries again once the job's lease has run out.
    await work.submit(row, payment);
  });
}
