/**
 * Scheduled follow-ups of payments and the sweep for interrupted authorizations. Each job
 * re-reads the payment and changes it conditionally, so running one twice (a worker died after
 * the change but before marking the job done) changes nothing.
 */

import type { EventType } from '../events/schemas.js';
import { DomainError } from '../core/errors.js';
import type { PaymentContext } from './context.js';
import { approvedChanges, authorize, failClaimed } from './authorize.js';
import { expiredCancellationReason, interruptedAuthorizationAfterMs, jobKinds } from './job-kinds.js';
import * as queries from './queries.js';
import { checkMethod, methodIdOf, threeDSecureFor } from './rules.js';
import { change, ignoreConflict, inTransaction, ownerOf, record, type StatusChange } from './state-changes.js';
import { paymentStates } from './states.js';

/** An authorization that the processor settles later has settled, or not. */
async function settle(ctx: PaymentContext, paymentId: string): Promise<void> {
  const row = await queries.selectPaymentById(ctx.db, paymentId);
  if (!row || row.status !== 'processing' || row.processor_reference === null) return;
  const outcome = await (await ctx.processors.of(row)).resolveFollowUp(row.processor_reference, 'settle');
  if (outcome.kind === 'disputed') throw new Error(`Payment ${row.id}: a settle follow-up answered with disputes`);
  await inTransaction(ctx, async (tx, recorded) => {
    const now = ctx.clock.now();
    let changes: StatusChange;
    let event: EventType;
    if (outcome.kind === 'succeeded') {
      const encrypted = await queries.selectNetworkToken(tx, row.id);
      const networkToken = encrypted === null ? null : await ctx.vault.decrypt(encrypted, row.id, tx);
      ({ changes, event } = await approvedChanges(
        ctx,
        tx,
        row,
        { networkTransactionId: row.network_transaction_id ?? '', networkToken },
        now,
      ));
    } else {
      changes = { status: 'failed', error_code: outcome.code, error_message: outcome.message };
      event = 'payment.failed';
    }
    const updated = await change(tx, row, 'settle', { ...changes, network_token_encrypted: null }, now);
    await record(ctx, tx, recorded, event, updated);
  }).catch(ignoreConflict);
}

/** docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one: a state change after the fact, told to the merchant by a second event. */
async function reverse(ctx: PaymentContext, paymentId: string): Promise<void> {
  const row = await queries.selectPaymentById(ctx.db, paymentId);
  if (!row || !paymentStates.canStart('reverse', row.status) || row.processor_reference === null) return;
  const outcome = await (await ctx.processors.of(row)).resolveFollowUp(row.processor_reference, 'reverse');
  if (outcome.kind === 'succeeded') return;
  if (outcome.kind === 'disputed') throw new Error(`Payment ${row.id}: a reverse follow-up answered with disputes`);
  await inTransaction(ctx, async (tx, recorded) => {
    // Refunds already made or under way are kept (docs/api.md, Refunds): the reversal takes back
    // only the rest, so what the payment keeps as received is what its refunds cover. Read under
    // the row's lock, so that no refund is claimed between this read and the change.
    const current = (await queries.selectPaymentForUpdate(tx, row.id)) ?? row;
    // What a chargeback holds has left with it (docs/disputes.md, Money), like a refund.
    const coveredByRefunds =
      BigInt(current.amount_refunded) + BigInt(current.amount_refund_pending) + BigInt(current.amount_disputed);
    const updated = await change(
      tx,
      current,
      'reverse',
      {
        status: 'failed',
        error_code: outcome.code,
        error_message: outcome.message,
        amount_received: coveredByRefunds.toString(),
        amount_capturable: '0',
      },
      ctx.clock.now(),
    );
    await record(ctx, tx, recorded, 'payment.failed', updated);
  }).catch(ignoreConflict);
}

/** docs/api.md#states: a pre-authorization never captured is canceled and its hold released. */
async function expirePreAuthorization(ctx: PaymentContext, paymentId: string): Promise<void> {
  const row = await queries.selectPaymentById(ctx.db, paymentId);
  if (!row || !paymentStates.canStart('expirePreAuthorization', row.status)) return;
  await inTransaction(ctx, async (tx, recorded) => {
    const now = ctx.clock.now();
    const updated = await change(
      tx,
      row,
      'expirePreAuthorization',
      { status: 'canceled', canceled_at: now, cancellation_reason: expiredCancellationReason, amount_capturable: '0' },
      now,
    );
    await ctx.jobs.schedule(tx, jobKinds.voidAuthorization, row.id, now);
    await record(ctx, tx, recorded, 'payment.canceled', updated);
  }).catch(ignoreConflict);
}

/** Releases a held or orphaned authorization; scheduled in the transaction that made it needless. */
async function voidAuthorization(ctx: PaymentContext, paymentId: string): Promise<void> {
  const row = await queries.selectPaymentById(ctx.db, paymentId);
  if (row?.processor_reference)
    await (
      await ctx.processors.of(row)
    ).cancel({
      paymentId: row.id,
      paymentReference: row.processor_reference,
      idempotencyKey: `${row.id}.cancel`,
    });
}

export function registerPaymentJobs(ctx: PaymentContext): void {
  ctx.jobs.register(jobKinds.settle, (paymentId) => settle(ctx, paymentId));
  ctx.jobs.register(jobKinds.reverse, (paymentId) => reverse(ctx, paymentId));
  ctx.jobs.register(jobKinds.expirePreAuthorization, (paymentId) => expirePreAuthorization(ctx, paymentId));
  ctx.jobs.register(jobKinds.voidAuthorization, (paymentId) => voidAuthorization(ctx, paymentId));
}

/**
 * The reconciliation sweep: a payment left in processing without a processor answer (its process
 * died between claiming it and recording the answer, or the processor timed out, failed with a
 * 5xx or reset the connection) is authorized again and recorded, with its event. Asking again
 * is safe with every processor: the sandbox keeps no state, and a connector sends the same
 * idempotency key (`<paymentId>.authorize`), so the processor answers the first attempt's outcome
 * instead of charging again (docs/processors.md, Never twice). Returns how many were resumed.
 */
export async function resumeInterruptedAuthorizations(ctx: PaymentContext): Promise<number> {
  const before = new Date(ctx.clock.now().getTime() - (ctx.interruptedAfterMs ?? interruptedAuthorizationAfterMs));
  // Stripe keeps an idempotency key for 24 hours: a replay after that could charge again, so a
  // payment through a processor is replayed for 23 hours at most; one still processing then is
  // reconciled by hand (docs/processors.md, Never twice).
  const replayableSince = new Date(ctx.clock.now().getTime() - 23 * 60 * 60 * 1000);
  const rows = await queries.selectInterruptedAuthorizations(ctx.db, before, 20, replayableSince);
  let resumed = 0;
  for (const row of rows) {
    const claimed = await queries.reclaimInterruptedAuthorization(ctx.db, row, ctx.clock.now());
    if (!claimed) continue;
    const method = await ctx.paymentMethods.loadForPayment(ctx.db, ownerOf(claimed), methodIdOf(claimed));
    try {
      checkMethod(claimed, method);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      // The method changed meanwhile (detached, bound to someone else): the payment fails with the reason.
      await failClaimed(ctx, claimed, err);
      resumed++;
      continue;
    }
    await authorize(ctx, claimed, method, threeDSecureFor(claimed)).catch(ignoreConflict);
    resumed++;
  }
  return resumed;
}
