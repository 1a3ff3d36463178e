/** The hosted 3-D Secure page's side of a payment: what it shows and the cardholder's answer. */

import { DomainError } from '../core/errors.js';
import { isId } from '../ids.js';
import type { PaymentMethodForPayment } from '../payment-methods/service.js';
import { authorize } from './authorize.js';
import { completeRedirect } from './processor-answers.js';
import type { RedirectAction } from '../processor/processor.js';
import type { PaymentContext } from './context.js';
import * as queries from './queries.js';
import { checkMethod, methodIdOf } from './rules.js';
import type { Payment } from './payment-object.js';
import { change, changeStatus, inTransaction, ownerOf, record, StateConflict } from './state-changes.js';
import { paymentStates, type PaymentStatus } from './states.js';
import type { ChallengeView } from '../shopper/three-d-secure-page.js';

export interface CompletedChallenge {
  payment: Payment;
  returnUrl: string | null;
  /** False when the payment had already left requires_action (a second post of the page). */
  completedNow: boolean;
}

/** The payment behind a page address, or null for a wrong id or secret. */
async function paymentOfPage(
  ctx: Pick<PaymentContext, 'db' | 'view'>,
  paymentId: string,
  secret: string,
): Promise<queries.PaymentRow | null> {
  if (!isId('pt', paymentId) || !ctx.view.secretMatches(paymentId, secret)) return null;
  return (await queries.selectPaymentById(ctx.db, paymentId)) ?? null;
}

/**
 * The shopper came back from a processor's 3-D Secure page (docs/processors.md, 3-D Secure): the
 * processor is asked for the outcome. Returns null for a wrong id or secret.
 */
export async function completeProcessorRedirect(
  ctx: PaymentContext,
  paymentId: string,
  secret: string,
  params: Record<string, string>,
): Promise<CompletedChallenge | null> {
  const row = await paymentOfPage(ctx, paymentId, secret);
  if (!row) return null;
  const wasWaiting = row.status === 'requires_action';
  const after = (await completeRedirect(ctx, row.id, params)) ?? row;
  return { payment: ctx.view.toPayment(after), returnUrl: after.details.returnUrl, completedNow: wasWaiting };
}

/** The hosted page's view of a payment awaiting 3-D Secure; null for a wrong id or secret. */
export async function challengePage(
  ctx: Pick<PaymentContext, 'db' | 'view'>,
  paymentId: string,
  secret: string,
): Promise<{ view: ChallengeView; status: PaymentStatus; processorAction: RedirectAction | null } | null> {
  const row = await paymentOfPage(ctx, paymentId, secret);
  if (!row) return null;
  return {
    status: row.status,
    // A processor's own 3-D Secure step, where the shopper is sent instead of the sandbox's page.
    processorAction: row.status === 'requires_action' ? row.next_action : null,
    view: {
      paymentId: row.id,
      clientSecret: ctx.view.clientSecretOf(row.id),
      amount: BigInt(row.amount),
      currency: row.currency,
      description: row.details.description,
      returnUrl: row.details.returnUrl,
    },
  };
}

/** The method as it is now, or the reason it can no longer be used for this payment. */
async function methodOrReason(
  ctx: Pick<PaymentContext, 'db' | 'paymentMethods'>,
  row: queries.PaymentRow,
): Promise<PaymentMethodForPayment | DomainError> {
  const method = await ctx.paymentMethods.loadForPayment(ctx.db, ownerOf(row), methodIdOf(row));
  try {
    checkMethod(row, method);
    return method;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return err;
  }
}

/**
 * The method changed while the cardholder was on the page (detached, or bound to someone
 * else): nothing can be fixed from here, so the payment fails with the reason.
 */
async function failChallenged(
  ctx: PaymentContext,
  row: queries.PaymentRow,
  passed: boolean,
  reason: DomainError,
): Promise<queries.PaymentRow> {
  return inTransaction(ctx, async (tx, recorded) => {
    const now = ctx.clock.now();
    const updated = await change(
      tx,
      row,
      'completeChallenge',
      { status: 'processing', three_d_secure: passed ? 'passed' : 'failed' },
      now,
    );
    const final = await change(
      tx,
      updated,
      'finishAuthorization',
      { status: 'failed', error_code: reason.code, error_message: reason.message },
      now,
    );
    await record(ctx, tx, recorded, 'payment.failed', final);
    return final;
  }).catch(async (err: unknown) => {
    if (err instanceof StateConflict && err.current) return err.current;
    throw err;
  });
}

/**
 * The cardholder answered the hosted challenge. The authorization is asked again with the
 * result ('failed' is declined as authentication_failed); with manual confirmation a pass only
 * returns the payment to requires_confirmation, for the merchant's /confirm.
 * Returns null for a wrong id or secret.
 */
export async function completeChallenge(
  ctx: PaymentContext,
  paymentId: string,
  secret: string,
  result: 'pass' | 'fail',
): Promise<CompletedChallenge | null> {
  const row = await paymentOfPage(ctx, paymentId, secret);
  if (!row) return null;
  const answer = (payment: queries.PaymentRow, completedNow: boolean) => ({
    payment: ctx.view.toPayment(payment),
    returnUrl: payment.details.returnUrl,
    completedNow,
  });
  const current = async () => answer((await queries.selectPaymentById(ctx.db, row.id)) ?? row, false);
  if (!paymentStates.canStart('completeChallenge', row.status)) return answer(row, false);
  const passed = result === 'pass';
  if (passed && row.confirmation_method === 'manual') {
    const waiting = await changeStatus(
      ctx.db,
      row.id,
      'completeChallenge',
      { status: 'requires_confirmation', three_d_secure: 'passed' },
      ctx.clock.now(),
    );
    return waiting ? answer(waiting, true) : current();
  }
  const method = await methodOrReason(ctx, row);
  if (method instanceof DomainError) return answer(await failChallenged(ctx, row, passed, method), true);
  const claimed = await changeStatus(
    ctx.db,
    row.id,
    'completeChallenge',
    { status: 'processing', three_d_secure: passed ? 'passed' : 'failed' },
    ctx.clock.now(),
  );
  if (!claimed) return current();
  return answer(await authorize(ctx, claimed, method, passed ? 'passed' : 'failed'), true);
}
