/**
 * Collecting an invoice's money (docs/api.md#invoices): `pay` and automatic collection charge the customer's
 * bound card as a MIT; the hosted page takes a card (hosted-payment.ts). Every attempt claims the
 * invoice (pending_payment_id) in the transaction that inserts its payment, so two attempts never
 * run at once and a paid invoice is never paid again; its end is recorded by paymentEnded, inside
 * the transaction that records the payment's final state.
 *
 * Automatic collection (charge_automatically): the first attempt is due at finalization; after the
 * 1st, 2nd and 3rd failed attempt the next is due 1, 3 and 5 days later (so on days 1, 4 and 9);
 * after the 4th the invoice stays open, with no further automatic attempt (`pay` or the hosted
 * page can still collect it, or the merchant marks it uncollectible or voids it).
 */
import type { Queryable } from '../db/db.js';
import type { RecordedEvent } from '../events/service.js';
import { DomainError } from '../core/errors.js';
import type { MerchantContext } from '../core/merchant-context.js';
import type { InvoiceClaim, InvoicePaymentEnd } from '../payments/service.js';
import { checkPaymentMethod } from './editing.js';
import * as queries from './queries.js';
import {
  changeOrConflict,
  changeStatus,
  inTransaction,
  InvoiceConflict,
  invalidState,
  loadInvoice,
  merchantContextOf,
  paymentInProgress,
  recordEvent,
  requireStatus,
  toInvoice,
  type InvoiceDeps,
} from './records.js';
import type { Invoice } from './schemas.js';

export const collectJobKind = 'invoice.collect';

/** Days from a failed attempt to the next automatic one, by how many attempts have failed. */
export const retryDelaysDays: readonly number[] = [1, 3, 5];

const dayMs = 24 * 60 * 60 * 1000;

/** The payment's description, so that the merchant's payment list says what it paid. */
const paymentDescription = (row: queries.InvoiceRow) => `Invoice ${row.number ?? row.id}`;

/**
 * The claim of an attempt, in the transaction that inserts its payment: only while the invoice
 * can take a payment and has none under way. The attempt is no longer due once it has started.
 */
export function claimFor(deps: Pick<InvoiceDeps, 'clock'>, row: queries.InvoiceRow): InvoiceClaim {
  return async (tx, paymentId) => {
    await changeOrConflict(
      tx,
      row,
      'startPayment',
      { pending_payment_id: paymentId, next_payment_attempt: null },
      deps.clock.now(),
      null,
    );
  };
}

/** After `attempts` failed attempts: when automatic collection tries again (scheduled in `tx`), or null. */
async function scheduleRetry(
  deps: Pick<InvoiceDeps, 'jobs'>,
  tx: Queryable,
  row: queries.InvoiceRow,
  attempts: number,
  now: Date,
): Promise<Date | null> {
  const days = retryDelaysDays[attempts - 1];
  if (row.collection_method !== 'charge_automatically' || row.status !== 'open' || days === undefined) return null;
  const at = new Date(now.getTime() + days * dayMs);
  await deps.jobs.schedule(tx, collectJobKind, row.id, at);
  return at;
}

/** The changes and event of a failed attempt; `row` is locked by the caller's transaction. */
async function failedAttempt(
  deps: InvoiceDeps,
  tx: Queryable,
  recorded: RecordedEvent[],
  row: queries.InvoiceRow,
  failure: { paymentId: string | null; code: string; message: string },
  now: Date,
): Promise<void> {
  const attempts = row.attempt_count + 1;
  const next = await scheduleRetry(deps, tx, row, attempts, now);
  const updated = await changeStatus(
    tx,
    row.id,
    'paymentFailed',
    {
      pending_payment_id: null,
      payment_id: failure.paymentId ?? row.payment_id,
      attempt_count: attempts,
      last_error_code: failure.code,
      last_error_message: failure.message,
      next_payment_attempt: next,
    },
    now,
    failure.paymentId,
  );
  if (!updated) throw new InvoiceConflict(row);
  await recordEvent(deps, tx, recorded, 'invoice.payment_failed', updated);
}

/**
 * An attempt that could not start (no card bound, the MIT capability off, the card detached):
 * recorded as a failed attempt (docs/webhooks.md#event-codes invoice.payment_failed: "payment methods unavailable").
 */
async function recordUnstartedAttempt(deps: InvoiceDeps, invoiceId: string, reason: { code: string; message: string }) {
  await inTransaction(deps, async (tx, recorded) => {
    const row = await queries.selectInvoiceForUpdate(tx, invoiceId);
    if (!row || !['open', 'uncollectible'].includes(row.status) || row.pending_payment_id !== null) {
      throw new InvoiceConflict(row);
    }
    await failedAttempt(deps, tx, recorded, row, { paymentId: null, ...reason }, deps.clock.now());
  });
}

/** One MIT attempt on `methodId` (null: the customer has no bound card). */
async function attemptMit(
  deps: InvoiceDeps,
  row: queries.InvoiceRow,
  merchant: MerchantContext,
  methodId: string | null,
): Promise<void> {
  if (methodId === null) {
    await recordUnstartedAttempt(deps, row.id, {
      code: 'payment_method_unavailable',
      message: 'The customer has no card bound by a storing payment to charge',
    });
    return;
  }
  try {
    await deps.payments.createForInvoice(
      merchant,
      {
        invoiceId: row.id,
        customerId: row.customer_id,
        paymentMethodId: methodId,
        amount: row.amount_remaining,
        currency: row.currency,
        description: paymentDescription(row),
        initiator: 'mit',
        returnUrl: null,
      },
      claimFor(deps, row),
    );
  } catch (err) {
    // docs/api.md#tokenization-rules refusals of the charge itself (mit_not_enabled, payment_method_not_bound, a detached card).
    if (!(err instanceof DomainError)) throw err;
    await recordUnstartedAttempt(deps, row.id, { code: err.code, message: err.message });
  }
}

/** The card an invoice is charged with: the one asked for, the invoice's own, or the customer's latest bound. */
async function methodFor(deps: InvoiceDeps, merchant: MerchantContext, row: queries.InvoiceRow, asked?: string) {
  if (asked !== undefined) return asked;
  return row.payment_method_id ?? (await deps.paymentMethods.latestStoredOfCustomer(merchant, row.customer_id));
}

/**
 * `POST /invoices/{id}/pay`: a MIT charge of what remains. A decline or a card that cannot be
 * charged leaves the invoice unpaid with invoice.payment_failed (the answer shows
 * lastPaymentError); success makes it paid with invoice.payment_succeeds.
 */
export async function payInvoice(
  deps: InvoiceDeps,
  merchant: MerchantContext,
  id: string,
  input: { paymentMethod?: string },
): Promise<Invoice> {
  const current = await loadInvoice(deps.db, merchant, id);
  requireStatus(current, 'startPayment');
  if (current.pending_payment_id !== null) throw paymentInProgress(current.pending_payment_id);
  if (input.paymentMethod !== undefined) {
    await checkPaymentMethod(deps, merchant, input.paymentMethod, current.customer_id);
  }
  const methodId = await methodFor(deps, merchant, current, input.paymentMethod);
  await attemptMit(deps, current, merchant, methodId).catch((err: unknown) => {
    if (!(err instanceof InvoiceConflict)) throw err;
    if (!err.current) throw invalidState(current.status, 'startPayment');
    if (err.current.pending_payment_id !== null) throw paymentInProgress(err.current.pending_payment_id);
    throw invalidState(err.current.status, 'startPayment');
  });
  return toInvoice(deps, await loadInvoice(deps.db, merchant, id));
}

/**
 * The automatic collection job: an attempt if one is still due now (a job run twice, or one made
 * stale by a `pay` in between, finds nothing due and does nothing).
 */
export async function collectInvoice(deps: InvoiceDeps, invoiceId: string): Promise<void> {
  const row = await queries.selectInvoiceById(deps.db, invoiceId);
  const due = row?.next_payment_attempt;
  if (!row || row.status !== 'open' || row.collection_method !== 'charge_automatically') return;
  if (row.pending_payment_id !== null || !due || due.getTime() > deps.clock.now().getTime()) return;
  const merchant = await merchantContextOf(deps, row);
  await attemptMit(deps, row, merchant, await methodFor(deps, merchant, row)).catch((err: unknown) => {
    if (!(err instanceof InvoiceConflict)) throw err;
  });
}

/**
 * The payments hook (src/payments/invoice-hook.ts), inside the transaction that records how a
 * payment of the invoice ended: succeeded → paid (invoice.payment_succeeds); failed → the attempt
 * recorded, the invoice still unpaid (invoice.payment_failed); canceled (a 3-D Secure page left
 * unanswered) → the invoice simply free for another attempt, with no event since nothing of the
 * Invoice object changed. Only the invoice's pending payment counts: a payment reversed after it
 * paid the invoice changes nothing here.
 */
export async function paymentEnded(
  deps: InvoiceDeps,
  tx: Queryable,
  recorded: RecordedEvent[],
  end: InvoicePaymentEnd,
): Promise<void> {
  const row = await queries.selectInvoiceForUpdate(tx, end.invoiceId);
  if (!row || row.pending_payment_id !== end.paymentId) {
    deps.logger.info(
      { invoiceId: end.invoiceId, paymentId: end.paymentId, status: end.status },
      'invoice payment ended after the fact; the invoice is unchanged',
    );
    return;
  }
  const now = deps.clock.now();
  if (end.status === 'canceled') {
    await changeStatus(tx, row.id, 'paymentFailed', { pending_payment_id: null }, now, end.paymentId);
    return;
  }
  if (end.status === 'failed') {
    await failedAttempt(
      deps,
      tx,
      recorded,
      row,
      {
        paymentId: end.paymentId,
        code: end.errorCode ?? 'payment_failed',
        message: end.errorMessage ?? 'The payment failed',
      },
      now,
    );
    return;
  }
  const remaining = BigInt(row.amount_remaining) - BigInt(end.amountReceived);
  const paid = await changeStatus(
    tx,
    row.id,
    'paymentSucceeded',
    {
      status: 'paid',
      amount_paid: (BigInt(row.amount_paid) + BigInt(end.amountReceived)).toString(),
      amount_remaining: (remaining > 0n ? remaining : 0n).toString(),
      payment_id: end.paymentId,
      pending_payment_id: null,
      attempt_count: row.attempt_count + 1,
      next_payment_attempt: null,
      last_error_code: null,
      last_error_message: null,
      paid_at: now,
    },
    now,
    end.paymentId,
  );
  if (!paid) throw new Error(`Invoice ${row.id} could not be marked paid by ${end.paymentId}`);
  await recordEvent(deps, tx, recorded, 'invoice.payment_succeeds', paid);
}
