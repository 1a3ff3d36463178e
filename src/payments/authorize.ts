/**
 * Authorization: the processor is asked outside any transaction, and its answer is recorded in
 * one (the payment's new state, the card's binding, the event and any follow-up job).
 */

import { isUniqueViolation } from '../db/errors.js';
import type { Queryable } from '../db/db.js';
import type { EventType } from '../events/schemas.js';
import type { PaymentMethodForPayment } from '../payment-methods/service.js';
import type { AuthorizeOutcome, AuthorizeRequest, Processor, ThreeDSecureState } from '../processor/processor.js';
import type { PaymentContext } from './context.js';
import { sessionAlreadyPaying } from './checkout-hook.js';
import { duplicateOrder } from './fields.js';
import { jobKinds, preAuthorizationLifetimeMs } from './job-kinds.js';
import * as queries from './queries.js';
import { initiatorOf, methodIdOf } from './rules.js';
import {
  change,
  ignoreConflict,
  inTransaction,
  ownerOf,
  record,
  StateConflict,
  type StatusChange,
} from './state-changes.js';
import { paymentStates } from './states.js';

type AuthorizeContext = Pick<
  PaymentContext,
  'db' | 'clock' | 'vault' | 'processors' | 'paymentMethods' | 'events' | 'jobs' | 'view' | 'logger'
>;

/** A status change with the event that tells the merchant about it (null: none yet). */
interface Answer {
  changes: StatusChange;
  event: EventType | null;
}

/**
 * An authorization is final and approved (at once, or once it settled): a first storing payment
 * binds its method now (docs/api.md#tokenization-rules: only when it succeeds), a pre-authorization waits for
 * capture, anything else has succeeded.
 */
export async function approvedChanges(
  ctx: Pick<PaymentContext, 'paymentMethods' | 'jobs'>,
  tx: Queryable,
  row: queries.PaymentRow,
  credential: { networkTransactionId: string; networkToken: string | null },
  now: Date,
): Promise<{ changes: StatusChange; event: EventType }> {
  if (initiatorOf(row) === 'first_storing') {
    const bound = await ctx.paymentMethods.bindStoredCredential(tx, ownerOf(row), {
      paymentMethodId: methodIdOf(row),
      customerId: row.customer_id!,
      networkTransactionId: credential.networkTransactionId,
      networkToken: credential.networkToken,
      now,
    });
    if (!bound) {
      // Another customer's storing payment bound the method first (two ran at once): this one
      // fails and its authorization is released, in the same transaction as the failure.
      await ctx.jobs.schedule(tx, jobKinds.voidAuthorization, row.id, now);
      return {
        changes: {
          status: 'failed',
          error_code: 'payment_method_bound_elsewhere',
          error_message: 'The payment method was bound to another customer while this payment was processed',
        },
        event: 'payment.failed',
      };
    }
  }
  if (row.pre_auth === 'y') {
    await ctx.jobs.schedule(
      tx,
      jobKinds.expirePreAuthorization,
      row.id,
      new Date(now.getTime() + preAuthorizationLifetimeMs),
    );
    return {
      changes: { status: 'requires_capture', amount_capturable: row.amount },
      event: 'payment.requires_capture',
    };
  }
  return { changes: { status: 'succeeded', amount_received: row.amount }, event: 'payment.succeeded' };
}

/**
 * Where the processor's answer is written: over the row the caller claimed (in processing), or,
 * for a processor that keeps no state (Processor.statelessAuthorize), as the payment's first and
 * only insert, so that a payment created with confirm costs one transaction.
 */
export type AuthorizationTarget = 'claimed_row' | 'new_row';

async function writeAuthorization(
  tx: Queryable,
  target: AuthorizationTarget,
  row: queries.PaymentRow,
  changes: StatusChange,
  now: Date,
): Promise<queries.PaymentRow> {
  if (target === 'claimed_row') return change(tx, row, 'finishAuthorization', changes, now);
  // The new row is inserted where a claimed one would change: the table must allow that status too.
  const status = paymentStates.transition('finishAuthorization', changes.status).to ?? row.status;
  const { network_token_encrypted: networkToken = null, ...columns } = changes;
  const inserted: queries.PaymentRow = { ...row, ...columns, status, updated_at: now };
  await queries.insertPayment(tx, inserted, networkToken);
  return inserted;
}

function requestOf(
  row: queries.PaymentRow,
  method: PaymentMethodForPayment,
  threeDSecure: ThreeDSecureState,
  returnUrl: string,
) {
  const initiator = initiatorOf(row);
  const request: AuthorizeRequest = {
    paymentId: row.id,
    idempotencyKey: `${row.id}.authorize`,
    amount: BigInt(row.amount),
    currency: row.currency,
    card: {
      number: method.card.number,
      brand: method.card.brand,
      expMonth: method.card.expMonth,
      expYear: method.card.expYear,
      // docs/api.md#tokenization-rules: the security code serves the first authorization only; MIT never has one.
      securityCode: initiator === 'mit' ? null : method.card.securityCode,
      holderName: null,
    },
    capture: row.pre_auth === 'n',
    initiator,
    networkTransactionId: initiator === 'cit' || initiator === 'mit' ? method.networkTransactionId : null,
    threeDSecure,
    customerId: row.customer_id,
    orderNo: row.order_no,
    recurring: row.details.recurring !== null,
    returnUrl,
  };
  return request;
}

/** The processor's answer as the payment's change, scheduling the follow-up it asks for. */
async function answerOf(
  ctx: AuthorizeContext,
  tx: Queryable,
  row: queries.PaymentRow,
  outcome: AuthorizeOutcome,
  now: Date,
): Promise<Answer> {
  const risk = { risk_score: outcome.risk.riskScore, risk_message: outcome.risk.riskMessage };
  switch (outcome.kind) {
    case 'challenge':
      // No event: the payment waits for the cardholder (docs/api.md#states requires_action).
      return { changes: { ...risk, status: 'requires_action', use_3d: true }, event: null };
    case 'redirect':
      // The processor's own 3-D Secure step: the shopper is sent there from Tessera's 3-D Secure
      // page and comes back to it (docs/processors.md, 3-D Secure). No event, as for 'challenge'.
      return {
        changes: {
          ...risk,
          status: 'requires_action',
          use_3d: true,
          processor_reference: outcome.processorReference,
          next_action: outcome.action,
        },
        event: null,
      };
    case 'pending':
      // Taken, outcome to come by a notification (or the sweep): still processing, no event yet.
      return {
        changes: { ...risk, status: 'processing', processor_reference: outcome.processorReference },
        event: null,
      };
    case 'declined':
      return {
        changes: {
          ...risk,
          status: 'failed',
          processor_reference: outcome.processorReference,
          processor_reason: outcome.processorReason ?? null,
          error_code: outcome.code,
          error_message: outcome.message,
        },
        event: 'payment.failed',
      };
    case 'approved': {
      const approved = {
        ...risk,
        processor_reference: outcome.processorReference,
        network_transaction_id: outcome.networkTransactionId,
        next_action: null,
        processor_fee:
          outcome.processorFee === undefined || outcome.processorFee === null ? null : outcome.processorFee.toString(),
        error_code: null,
        error_message: null,
      };
      if (outcome.followUp?.kind === 'settle') {
        // Not succeeded yet, so nothing is bound yet: the network token waits, encrypted.
        const token = initiatorOf(row) === 'first_storing' ? outcome.networkToken : null;
        await ctx.jobs.schedule(tx, jobKinds.settle, row.id, new Date(now.getTime() + outcome.followUp.afterMs));
        return {
          changes: {
            ...approved,
            status: 'processing',
            network_token_encrypted: token === null ? null : ctx.vault.encrypt(token, row.id),
          },
          event: 'payment.processing',
        };
      }
      const final = await approvedChanges(
        ctx,
        tx,
        row,
        { networkTransactionId: outcome.networkTransactionId, networkToken: outcome.networkToken },
        now,
      );
      if (outcome.followUp?.kind === 'reverse' && final.changes.status !== 'failed') {
        await ctx.jobs.schedule(tx, jobKinds.reverse, row.id, new Date(now.getTime() + outcome.followUp.afterMs));
      }
      if (outcome.followUp?.kind === 'dispute' && final.changes.status === 'succeeded') {
        const at = new Date(now.getTime() + outcome.followUp.afterMs);
        await ctx.jobs.schedule(tx, jobKinds.sandboxDispute, row.id, at);
      }
      return { changes: { ...approved, ...final.changes }, event: final.event };
    }
  }
}

/**
 * A connector says a request was refused outright (`refusedOutright`, e.g. Adyen's 4xx for a key
 * without the right role): nothing was authorized and a replay would be refused again. Anything
 * else thrown leaves the outcome unknown (docs/processors.md, Never twice).
 */
function refusedOutright(err: unknown): boolean {
  return (err as { refusedOutright?: unknown } | null)?.refusedOutright === true;
}

function newRowRefusal(caught: unknown, row: queries.PaymentRow): unknown {
  if (isUniqueViolation(caught, 'payments_order_no')) return duplicateOrder(row.order_no ?? '');
  if (isUniqueViolation(caught, 'payments_checkout_session')) return sessionAlreadyPaying();
  return caught;
}

/**
 * Asks the processor, outside any transaction (a slow processor must not hold a connection or
 * a lock), then records its answer in one transaction: the payment's new state, the binding,
 * the event and any follow-up job. For a claimed_row target, `row` is in processing, claimed by
 * the caller; for a new_row target it is not written yet. `resolved`: the payment's processor,
 * when the caller has it already.
 */
export async function authorize(
  ctx: AuthorizeContext,
  row: queries.PaymentRow,
  method: PaymentMethodForPayment,
  threeDSecure: ThreeDSecureState,
  target: AuthorizationTarget = 'claimed_row',
  resolved: Processor | null = null,
): Promise<queries.PaymentRow> {
  // The caller that has just resolved the processor (forNewAuthorization) passes it on, so that
  // its account is not read twice in one request (docs/decisions/0051-connector-overhead.md).
  const processor = resolved ?? (await ctx.processors.of(row));
  let outcome: AuthorizeOutcome;
  try {
    outcome = await processor.authorize(requestOf(row, method, threeDSecure, ctx.view.processorReturnUrl(row.id)));
  } catch (err) {
    if (!processor.statelessAuthorize && !refusedOutright(err)) {
      // No usable answer from a real processor (a timeout, a 5xx, a reset connection): it may
      // have authorized. The payment stays processing and the sweep asks again with the same
      // idempotency key until the outcome is known (docs/processors.md, Never twice).
      ctx.logger.warn(
        { paymentId: row.id, processor: processor.name, reason: (err as Error).message },
        'the processor gave no usable answer; the payment stays processing until the sweep learns its outcome',
      );
      return row;
    }
    // No answer at all from the sandbox (an outage), or a processor refused the request itself
    // (a 4xx: nothing was authorized, and the same request would be refused again): the payment
    // must not stay in processing forever. It fails, so that the merchant can retry with a new
    // payment. The sandbox's outage goes to the log as the request's error; a processor's refusal
    // is an answer, with its status kept as the processor's reason.
    const refused = !processor.statelessAuthorize;
    const failed = await inTransaction(ctx, async (tx, recorded) => {
      const written = await writeAuthorization(
        tx,
        target,
        row,
        {
          status: 'failed',
          error_code: 'processing_error',
          error_message: 'The payment could not be processed.',
          ...(refused ? { processor_reason: (err as Error).message.slice(0, 200) } : {}),
        },
        ctx.clock.now(),
      );
      await record(ctx, tx, recorded, 'payment.failed', written);
      return written;
    }).catch(ignoreConflict);
    if (refused) {
      ctx.logger.error(
        { paymentId: row.id, processor: processor.name, reason: (err as Error).message },
        'the processor refused the payment request itself (its credentials, role or the request): the payment failed',
      );
      if (failed) return failed;
    }
    throw err;
  }

  try {
    return await recordAuthorization(ctx, row, outcome, method.card.securityCode !== null, target);
  } catch (caught) {
    // A real processor's notification recorded the outcome first (docs/processors.md,
    // Notifications): it stands, and the authorization it recorded is the merchant's.
    if (caught instanceof StateConflict && caught.current && !processor.statelessAuthorize) return caught.current;
    // A new row's insert is sent when the transaction ends, so its duplicate orderNo (or second
    // payment of a checkout session) shows here.
    const err = target === 'new_row' ? newRowRefusal(caught, row) : caught;
    // The answer was not recorded (only a bug moves a claimed payment out of processing; a new
    // row can meet a duplicate orderNo): an approved authorization must still be released.
    if (outcome.kind === 'approved' && (err instanceof StateConflict || target === 'new_row')) {
      await processor.cancel({
        paymentId: row.id,
        paymentReference: outcome.processorReference,
        idempotencyKey: `${row.id}.cancel`,
      });
    }
    throw err;
  }
}

/**
 * Records a processor's answer to an authorization in one transaction: the payment's new state,
 * the card's binding, the security code's erasure, the event and any follow-up job. Used for the
 * answer to authorize(), to a 3-D Secure redirect's completion, and to a processor's
 * notification; a StateConflict says the payment was no longer processing.
 */
export async function recordAuthorization(
  ctx: AuthorizeContext,
  row: queries.PaymentRow,
  outcome: AuthorizeOutcome,
  securityCodeSent: boolean,
  target: AuthorizationTarget = 'claimed_row',
): Promise<queries.PaymentRow> {
  return inTransaction(ctx, async (tx, recorded) => {
    const now = ctx.clock.now();
    const { changes, event } = await answerOf(ctx, tx, row, outcome, now);
    // A first storing payment that is final and approved has just bound its card, which erased
    // the code in the same statement.
    const codeErased =
      initiatorOf(row) === 'first_storing' && (changes.status === 'succeeded' || changes.status === 'requires_capture');
    // The processor has seen the code once; a challenge is not an attempt, since the
    // authorization after it still needs the code.
    if (outcome.kind !== 'challenge' && securityCodeSent && !codeErased) {
      await ctx.paymentMethods.eraseSecurityCode(tx, methodIdOf(row));
    }
    const updated = await writeAuthorization(tx, target, row, changes, now);
    if (event !== null) await record(ctx, tx, recorded, event, updated);
    return updated;
  });
}

/**
 * The payment fails without asking the processor (its method became unusable while it waited),
 * with the reason, unless another process changed it first.
 */
export async function failClaimed(
  ctx: Pick<PaymentContext, 'db' | 'clock' | 'events' | 'view'>,
  claimed: queries.PaymentRow,
  reason: { code: string; message: string },
): Promise<void> {
  await inTransaction(ctx, async (tx, recorded) => {
    const failed = await change(
      tx,
      claimed,
      'finishAuthorization',
      { status: 'failed', error_code: reason.code, error_message: reason.message },
      ctx.clock.now(),
    );
    await record(ctx, tx, recorded, 'payment.failed', failed);
  }).catch(ignoreConflict);
}
