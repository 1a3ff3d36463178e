/**
 * The invoice actions that move it through its life without money (docs/api.md#invoices): finalize (draft →
 * open), send (the e-mail with the hosted page), void and mark_uncollectible. Which event each
 * emits is written beside it and in docs/api.md.
 */
import type { MerchantContext } from '../core/merchant-context.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import { collectJobKind } from './collection.js';
import { invoiceEmail } from './invoice-email.js';
import { formatInvoiceNumber, numberPrefixOf } from './line-items.js';
import * as queries from './queries.js';
import {
  changeOrConflict,
  conflictAsInvalidState,
  hostedInvoiceUrl,
  inTransaction,
  InvoiceConflict,
  invalidState,
  paymentInProgress,
  loadInvoice,
  recordEvent,
  requireStatus,
  toInvoice,
  type InvoiceDeps,
} from './records.js';
import type { Invoice } from './schemas.js';
import { defaultDaysUntilDue } from './editing.js';

const dayMs = 24 * 60 * 60 * 1000;

/**
 * draft → open, emitting Invoice.updated: the next number of the merchant is taken in the same
 * transaction (queries.nextInvoiceNumber), the totals are fixed from then on, a send_invoice
 * invoice gets its due date (dueDate, or finalization + daysUntilDue, 30 days by default), and a
 * charge_automatically invoice its first collection attempt, due at once (collection.ts).
 */
export async function finalizeInvoice(deps: InvoiceDeps, merchant: MerchantContext, id: string): Promise<Invoice> {
  const current = await loadInvoice(deps.db, merchant, id);
  requireStatus(current, 'finalize');
  const now = deps.clock.now();
  if (current.due_date !== null && current.due_date.getTime() <= now.getTime()) {
    throw invalidField('dueDate', 'dueDate has passed; update it before finalizing the invoice', 'future');
  }
  const { name } = await deps.merchants.retrieve(merchant.merchantId);
  const sendInvoice = current.collection_method === 'send_invoice';
  const daysUntilDue =
    sendInvoice && current.due_date === null ? (current.days_until_due ?? defaultDaysUntilDue) : null;
  const updated = await inTransaction(deps, async (tx, recorded) => {
    const { prefix, number } = await queries.nextInvoiceNumber(
      tx,
      merchant.merchantId,
      merchant.mode,
      numberPrefixOf(name),
    );
    const row = await changeOrConflict(
      tx,
      current,
      'finalize',
      {
        status: 'open',
        number: formatInvoiceNumber(prefix, number),
        finalized_at: now,
        days_until_due: daysUntilDue,
        due_date: daysUntilDue === null ? current.due_date : new Date(now.getTime() + daysUntilDue * dayMs),
        amount_paid: '0',
        amount_remaining: current.amount_due,
        next_payment_attempt: sendInvoice ? null : now,
      },
      now,
    );
    if (!sendInvoice) await deps.jobs.schedule(tx, collectJobKind, row.id, now);
    await recordEvent(deps, tx, recorded, 'Invoice.updated', row);
    return row;
  }).catch((err: unknown) => conflictAsInvalidState(err, id, 'finalize'));
  return toInvoice(deps, updated);
}

/**
 * E-mails the customer the hosted page of an open send_invoice invoice, then records
 * Invoice.sent. The message goes out before the transaction (mail/transport.ts: never inside
 * one); if the invoice was voided in between, the page the customer opens says so.
 */
export async function sendInvoice(deps: InvoiceDeps, merchant: MerchantContext, id: string): Promise<Invoice> {
  const current = await loadInvoice(deps.db, merchant, id);
  requireStatus(current, 'send');
  if (current.collection_method !== 'send_invoice') {
    throw new DomainError(
      'invalid_state',
      'Only a send_invoice invoice is e-mailed; this one is charged automatically (collectionMethod charge_automatically)',
      { param: 'id', collectionMethod: current.collection_method },
    );
  }
  const customer = await deps.customers.require(deps.db, merchant, current.customer_id);
  if (!customer.email) {
    throw new DomainError(
      'invalid_state',
      `The customer ${customer.id} has no e-mail address; add one with POST /customers/${customer.id}/update`,
      { param: 'customerId' },
    );
  }
  const { name } = await deps.merchants.retrieve(merchant.merchantId);
  const message = invoiceEmail({
    to: customer.email,
    merchantName: name,
    invoice: current,
    hostedInvoiceUrl: hostedInvoiceUrl(deps, current.id),
  });
  try {
    await deps.mail.send(message);
  } catch (err) {
    const { code, message: reason } = err as { code?: string; message?: string };
    deps.logger.error({ invoiceId: current.id, code, reason }, 'invoice e-mail could not be sent');
    throw new DomainError('internal_error', 'The invoice e-mail could not be sent: the mail server did not take it', {
      param: 'id',
    });
  }
  const sent = await inTransaction(deps, async (tx, recorded) => {
    // No column changes; the conditional update checks that the invoice is still open.
    const row = await changeOrConflict(tx, current, 'send', {}, deps.clock.now());
    await recordEvent(deps, tx, recorded, 'Invoice.sent', row);
    return row;
  }).catch((err: unknown) => conflictAsInvalidState(err, id, 'send'));
  return toInvoice(deps, sent);
}

/**
 * open | uncollectible → void, emitting Invoice.voided. Refused while a payment of the invoice
 * may still succeed (pending_payment_id), so that no money arrives for a void invoice.
 */
export async function voidInvoice(deps: InvoiceDeps, merchant: MerchantContext, id: string): Promise<Invoice> {
  const current = await loadInvoice(deps.db, merchant, id);
  requireStatus(current, 'void');
  if (current.pending_payment_id !== null) throw paymentInProgress(current.pending_payment_id);
  const now = deps.clock.now();
  const voided = await inTransaction(deps, async (tx, recorded) => {
    const row = await changeOrConflict(
      tx,
      current,
      'void',
      { status: 'void', voided_at: now, next_payment_attempt: null },
      now,
      null,
    );
    await recordEvent(deps, tx, recorded, 'Invoice.voided', row);
    return row;
  }).catch((err: unknown) => {
    if (!(err instanceof InvoiceConflict)) throw err;
    if (!err.current) throw notFound('invoice', id);
    if (err.current.pending_payment_id !== null) throw paymentInProgress(err.current.pending_payment_id);
    throw invalidState(err.current.status, 'void');
  });
  return toInvoice(deps, voided);
}

/**
 * open → uncollectible, emitting Invoice.updated: the merchant no longer expects the money, so
 * automatic retries stop. It can still be paid (the customer paid after all) or voided.
 */
export async function markUncollectible(deps: InvoiceDeps, merchant: MerchantContext, id: string): Promise<Invoice> {
  const current = await loadInvoice(deps.db, merchant, id);
  requireStatus(current, 'markUncollectible');
  const now = deps.clock.now();
  const updated = await inTransaction(deps, async (tx, recorded) => {
    const row = await changeOrConflict(
      tx,
      current,
      'markUncollectible',
      { status: 'uncollectible', marked_uncollectible_at: now, next_payment_attempt: null },
      now,
    );
    await recordEvent(deps, tx, recorded, 'Invoice.updated', row);
    return row;
  }).catch((err: unknown) => conflictAsInvalidState(err, id, 'markUncollectible'));
  return toInvoice(deps, updated);
}
