/** The merchant's actions on an existing payment: update, confirm, capture, cancel (docs/api.md#states). */

import { isUniqueViolation } from '../db/errors.js';
import type { MerchantContext } from '../core/merchant-context.js';
import type { CaptureOutcome } from '../processor/processor.js';
import { authorize } from './authorize.js';
import type { PaymentContext } from './context.js';
import {
  detailsOf,
  duplicateOrder,
  orderNoText,
  parseAmountField,
  parseCurrencyField,
  paymentMethodRequired,
} from './fields.js';
import { jobKinds } from './job-kinds.js';
import type * as queries from './queries.js';
import { applySeries, sameSeries, seriesRoleOf } from './recurring.js';
import { checkRules, requireAllowedNotifyUrl, threeDSecureFor, withMethodDetails } from './rules.js';
import type { CancelPaymentBody, ConfirmPaymentBody, UpdatePaymentBody } from './schemas.js';
import type { Payment } from './payment-object.js';
import {
  change,
  changeStatus,
  claim,
  conflictAsInvalidState,
  inTransaction,
  loadPayment,
  record,
  requireStatus,
} from './state-changes.js';

/** Changes request fields while the payment is not yet processed; every rule is checked again. */
export async function updatePayment(
  ctx: PaymentContext,
  merchant: MerchantContext,
  id: string,
  changes: UpdatePaymentBody,
): Promise<Payment> {
  await requireAllowedNotifyUrl(ctx, changes);
  const current = await loadPayment(ctx.db, merchant, id);
  requireStatus(current, 'update');
  const details = detailsOf(changes, current.details);
  // A follow-up's customer, method and `mit` came from its series; a new series derives them again.
  const leavesFollowUp =
    seriesRoleOf(current.details.recurring) === 'follow_up' &&
    !sameSeries(current.details.recurring, details.recurring);
  const kept = (value: string | null) => (leavesFollowUp ? null : value);
  const requested: queries.PaymentRow = {
    ...current,
    amount: changes.amount === undefined ? current.amount : parseAmountField(changes.amount).toString(),
    currency: changes.currency === undefined ? current.currency : parseCurrencyField(changes.currency),
    customer_id: changes.customerId ?? current.customer_id,
    payment_method_id: changes.paymentMethod ?? current.payment_method_id,
    order_no: orderNoText(changes.orderNo) ?? current.order_no,
    pre_auth: changes.preAuth ?? current.pre_auth,
    setup_future_usage: changes.setupFutureUsage ?? current.setup_future_usage,
    subsequent_initial_type: leavesFollowUp ? null : current.subsequent_initial_type,
    details,
  };
  const merged = await applySeries(ctx.db, merchant, requested, {
    customerId: changes.customerId ?? kept(current.customer_id),
    paymentMethod: changes.paymentMethod ?? kept(current.payment_method_id),
    setupFutureUsage: changes.setupFutureUsage ?? null,
    subsequentInitialType: requested.subsequent_initial_type,
  });
  const method = await checkRules(ctx, ctx.db, merchant, merged);
  // The first payment method moves the payment on to requires_confirmation.
  const providesMethod = current.payment_method_id === null && merged.payment_method_id !== null;
  try {
    const updated = await claim(ctx, ctx.db, current, providesMethod ? 'provideMethod' : 'update', {
      ...(providesMethod ? { status: 'requires_confirmation' as const } : {}),
      amount: merged.amount,
      currency: merged.currency,
      customer_id: merged.customer_id,
      payment_method_id: merged.payment_method_id,
      order_no: merged.order_no,
      pre_auth: merged.pre_auth,
      setup_future_usage: merged.setup_future_usage,
      subsequent_initial_type: merged.subsequent_initial_type,
      details: withMethodDetails(merged, method).details,
    });
    return ctx.view.toPayment(updated);
  } catch (err) {
    if (isUniqueViolation(err, 'payments_order_no')) throw duplicateOrder(merged.order_no ?? '');
    throw err;
  }
}

/** requires_confirmation → the authorization, with what the payer's session adds. */
export async function confirmPayment(
  ctx: PaymentContext,
  merchant: MerchantContext,
  id: string,
  input: ConfirmPaymentBody,
): Promise<Payment> {
  await requireAllowedNotifyUrl(ctx, input);
  const current = await loadPayment(ctx.db, merchant, id);
  requireStatus(current, 'confirm');
  // A live payment created while its account was enabled is not sent once the account is disabled.
  const processor = await ctx.processors.forNewAuthorization(current);
  const requested: queries.PaymentRow = {
    ...current,
    payment_method_id: input.paymentMethod ?? current.payment_method_id,
    details: detailsOf(input, current.details),
  };
  // The series is checked again: its relation must still stand, and the method may not change.
  const next = await applySeries(ctx.db, merchant, requested, {
    customerId: requested.customer_id,
    paymentMethod: requested.payment_method_id,
    setupFutureUsage: null,
    subsequentInitialType: requested.subsequent_initial_type,
  });
  if (next.payment_method_id === null) throw paymentMethodRequired();
  const method = (await checkRules(ctx, ctx.db, merchant, next))!;
  const claimed = await claim(ctx, ctx.db, current, 'confirm', {
    status: 'processing',
    payment_method_id: next.payment_method_id,
    details: withMethodDetails(next, method).details,
  });
  return ctx.view.toPayment(await authorize(ctx, claimed, method, threeDSecureFor(claimed), 'claimed_row', processor));
}

/** docs/api.md#states: the full amount of a pre-authorization. */
export async function capturePayment(ctx: PaymentContext, merchant: MerchantContext, id: string): Promise<Payment> {
  const current = await loadPayment(ctx.db, merchant, id);
  requireStatus(current, 'capture');
  const reference = current.processor_reference;
  if (reference === null) throw new Error(`Payment ${current.id} awaits capture without an authorization`);
  // Held in processing while the processor captures, so that a cancel or the 7-day expiry
  // cannot release the authorization underneath the capture.
  const claimed = await claim(ctx, ctx.db, current, 'capture', { status: 'processing' });
  let captured: CaptureOutcome;
  try {
    captured = await (
      await ctx.processors.of(claimed)
    ).capture({
      paymentId: claimed.id,
      paymentReference: reference,
      amount: BigInt(claimed.amount),
      currency: claimed.currency,
      idempotencyKey: `${claimed.id}.capture`,
    });
  } catch (err) {
    // No answer: the authorization is still held, so the payment can be captured again.
    await changeStatus(ctx.db, id, 'finishCapture', { status: 'requires_capture' }, ctx.clock.now());
    throw err;
  }
  // The processor took the capture and tells its outcome by a notification: the payment waits in
  // processing until then (docs/processors.md, Notifications).
  if (captured.kind === 'pending') return ctx.view.toPayment(claimed);
  const updated = await recordCapture(ctx, claimed, captured).catch((err: unknown) =>
    conflictAsInvalidState(err, 'capture'),
  );
  return ctx.view.toPayment(updated);
}

/**
 * Records a capture's final answer (at once, or by a processor's notification) over the payment
 * held in processing for it: succeeded with the amount received, or failed with its hold released.
 */
export async function recordCapture(
  ctx: Pick<PaymentContext, 'db' | 'clock' | 'events' | 'jobs' | 'view'>,
  claimed: queries.PaymentRow,
  captured: Exclude<CaptureOutcome, { kind: 'pending' }>,
): Promise<queries.PaymentRow> {
  return inTransaction(ctx, async (tx, recorded) => {
    const now = ctx.clock.now();
    if (captured.kind === 'captured') {
      const row = await change(
        tx,
        claimed,
        'finishCapture',
        { status: 'succeeded', amount_received: claimed.amount, amount_capturable: '0' },
        now,
      );
      await record(ctx, tx, recorded, 'payment.succeeded', row);
      return row;
    }
    const row = await change(
      tx,
      claimed,
      'finishCapture',
      { status: 'failed', error_code: captured.code, error_message: captured.message, amount_capturable: '0' },
      now,
    );
    await ctx.jobs.schedule(tx, jobKinds.voidAuthorization, row.id, now);
    await record(ctx, tx, recorded, 'payment.failed', row);
    return row;
  });
}

export async function cancelPayment(
  ctx: PaymentContext,
  merchant: MerchantContext,
  id: string,
  input: CancelPaymentBody,
): Promise<Payment> {
  const current = await loadPayment(ctx.db, merchant, id);
  requireStatus(current, 'cancel');
  const updated = await inTransaction(ctx, async (tx, recorded) => {
    const now = ctx.clock.now();
    const row = await change(
      tx,
      current,
      'cancel',
      {
        status: 'canceled',
        canceled_at: now,
        cancellation_reason: input.cancellationReason ?? null,
        amount_capturable: '0',
      },
      now,
    );
    // Only a pre-authorization awaiting capture holds funds; the hold is released with the
    // cancellation committed, retried by the job runner until the processor answers.
    if (row.processor_reference !== null) await ctx.jobs.schedule(tx, jobKinds.voidAuthorization, row.id, now);
    await record(ctx, tx, recorded, 'payment.canceled', row);
    return row;
  }).catch((err: unknown) => conflictAsInvalidState(err, 'cancel'));
  return ctx.view.toPayment(updated);
}
