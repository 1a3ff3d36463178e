/**
 * Creating, changing and deleting invoices (docs/api.md#invoices): a draft is edited freely; an open invoice
 * keeps its customer, currency, lines and collection method, and only its description, metadata
 * and due date may change.
 */
import type { Queryable } from '../db/db.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import { newId } from '../ids.js';
import { normalizeCurrency } from '../money.js';
import { parseLineItems, parseMetadata } from './line-items.js';
import * as queries from './queries.js';
import {
  changeOrConflict,
  conflictAsInvalidState,
  inTransaction,
  invalidState,
  loadInvoice,
  recordEvent,
  requireStatus,
  toInvoice,
  type InvoiceDeps,
} from './records.js';
import { openInvoiceFields, type CreateInvoiceBody, type Invoice, type UpdateInvoiceBody } from './schemas.js';

const dayMs = 24 * 60 * 60 * 1000;

/** docs/api.md#invoices: a send_invoice invoice without daysUntilDue or dueDate is due this many days after finalize. */
export const defaultDaysUntilDue = 30;

function parseCurrency(code: string): string {
  const currency = normalizeCurrency(code);
  if (currency === undefined) throw invalidField('currency', 'currency must be an ISO 4217 currency code', 'currency');
  return currency;
}

function parseDueDate(value: string, now: Date): Date {
  const date = new Date(value);
  if (date.getTime() <= now.getTime()) throw invalidField('dueDate', 'dueDate must be in the future', 'future');
  return date;
}

/**
 * The due-date fields as stored: send_invoice takes daysUntilDue or dueDate (not both); with
 * charge_automatically the card is charged at finalize, so neither means anything and both are refused.
 */
function dueFields(
  row: Pick<queries.InvoiceRow, 'collection_method' | 'days_until_due' | 'due_date' | 'finalized_at'>,
  input: { daysUntilDue?: number; dueDate?: string },
  now: Date,
): Pick<queries.InvoiceRow, 'days_until_due' | 'due_date'> {
  if (input.daysUntilDue !== undefined && input.dueDate !== undefined) {
    throw invalidField('dueDate', 'Send daysUntilDue or dueDate, not both', 'exclusive');
  }
  if (row.collection_method === 'charge_automatically') {
    for (const field of ['daysUntilDue', 'dueDate'] as const) {
      if (input[field] !== undefined) {
        throw invalidField(field, `${field} applies only to collectionMethod send_invoice`, 'collection_method');
      }
    }
    return { days_until_due: null, due_date: null };
  }
  if (input.dueDate !== undefined) return { days_until_due: null, due_date: parseDueDate(input.dueDate, now) };
  if (input.daysUntilDue !== undefined) {
    // An open invoice's due date follows at once; a draft's is set when it is finalized.
    const due = row.finalized_at === null ? null : new Date(row.finalized_at.getTime() + input.daysUntilDue * dayMs);
    return { days_until_due: input.daysUntilDue, due_date: due };
  }
  return { days_until_due: row.days_until_due, due_date: row.due_date };
}

/**
 * The invoice's own payment method must be a card of its customer (docs/api.md#tokenization-rules binding): another
 * customer's is refused, and one bound to nobody cannot be charged as a MIT.
 */
export async function checkPaymentMethod(
  deps: InvoiceDeps,
  merchant: MerchantContext,
  paymentMethodId: string,
  customerId: string,
): Promise<void> {
  const method = await deps.paymentMethods.retrieve(merchant, paymentMethodId).catch((err: unknown) => {
    if (err instanceof DomainError && err.code === 'resource_missing') {
      throw new DomainError('resource_missing', err.message, { param: 'paymentMethod' });
    }
    throw err;
  });
  if (method.customerId === null) {
    throw new DomainError(
      'payment_method_not_bound',
      'The payment method is not bound to a customer; an invoice is charged with a card bound to its customer by a storing payment',
      { param: 'paymentMethod' },
    );
  }
  if (method.customerId !== customerId) {
    throw new DomainError('payment_method_bound_elsewhere', 'The payment method belongs to another customer', {
      param: 'paymentMethod',
    });
  }
}

export async function createInvoice(deps: InvoiceDeps, merchant: MerchantContext, input: CreateInvoiceBody) {
  const now = deps.clock.now();
  const currency = parseCurrency(input.currency);
  const { items, total } = parseLineItems(input.lineItems);
  const metadata = parseMetadata(input.metadata);
  const due = dueFields(
    { collection_method: input.collectionMethod, days_until_due: null, due_date: null, finalized_at: null },
    input,
    now,
  );
  await deps.customers.require(deps.db, merchant, input.customerId);
  if (input.paymentMethod !== undefined) {
    await checkPaymentMethod(deps, merchant, input.paymentMethod, input.customerId);
  }
  const row: queries.InvoiceRow = {
    id: newId('in'),
    merchant_id: merchant.merchantId,
    mode: merchant.mode,
    customer_id: input.customerId,
    currency,
    line_items: items,
    number: null,
    amount_due: total.toString(),
    amount_paid: '0',
    amount_remaining: total.toString(),
    collection_method: input.collectionMethod,
    ...due,
    payment_method_id: input.paymentMethod ?? null,
    description: input.description ?? null,
    metadata,
    status: 'draft',
    payment_id: null,
    pending_payment_id: null,
    attempt_count: 0,
    next_payment_attempt: null,
    last_error_code: null,
    last_error_message: null,
    finalized_at: null,
    paid_at: null,
    voided_at: null,
    marked_uncollectible_at: null,
    created_at: now,
    updated_at: now,
  };
  await inTransaction(deps, async (tx, recorded) => {
    await queries.insertInvoice(tx, row);
    await recordEvent(deps, tx, recorded, 'invoice.created', row);
  });
  return toInvoice(deps, row);
}

/** What an update of a draft writes: any field, the totals recomputed from new lines. */
async function draftChanges(
  deps: InvoiceDeps,
  merchant: MerchantContext,
  current: queries.InvoiceRow,
  input: UpdateInvoiceBody,
  now: Date,
): Promise<queries.InvoiceChanges> {
  const customerId = input.customerId ?? current.customer_id;
  const collectionMethod = input.collectionMethod ?? current.collection_method;
  const lines = input.lineItems === undefined ? null : parseLineItems(input.lineItems);
  // A switch to charge_automatically drops the due date that only send_invoice has.
  const switched = collectionMethod !== current.collection_method;
  const due = dueFields(
    {
      collection_method: collectionMethod,
      days_until_due: switched ? null : current.days_until_due,
      due_date: switched ? null : current.due_date,
      finalized_at: null,
    },
    input,
    now,
  );
  if (input.customerId !== undefined) await deps.customers.require(deps.db, merchant, customerId);
  const paymentMethod = input.paymentMethod ?? current.payment_method_id;
  // A new customer must own the method kept from before, as much as a new method must be the customer's.
  if (paymentMethod !== null && (input.paymentMethod !== undefined || input.customerId !== undefined)) {
    await checkPaymentMethod(deps, merchant, paymentMethod, customerId);
  }
  return {
    customer_id: customerId,
    currency: input.currency === undefined ? undefined : parseCurrency(input.currency),
    line_items: lines?.items,
    amount_due: lines?.total.toString(),
    amount_remaining: lines?.total.toString(),
    collection_method: collectionMethod,
    ...due,
    payment_method_id: paymentMethod,
    description: input.description,
    metadata: input.metadata === undefined ? undefined : parseMetadata(input.metadata),
  };
}

/** What an update of an open invoice writes; any other field is refused as invalid_state, naming it. */
function openChanges(current: queries.InvoiceRow, input: UpdateInvoiceBody, now: Date): queries.InvoiceChanges {
  for (const field of Object.keys(input)) {
    if (!(openInvoiceFields as readonly string[]).includes(field)) {
      throw new DomainError(
        'invalid_state',
        `${field} cannot change once the invoice is ${current.status}; only ${openInvoiceFields.join(', ')} can`,
        { param: field, status: current.status },
      );
    }
  }
  return {
    ...dueFields(current, input, now),
    description: input.description,
    metadata: input.metadata === undefined ? undefined : parseMetadata(input.metadata),
  };
}

export async function updateInvoice(
  deps: InvoiceDeps,
  merchant: MerchantContext,
  id: string,
  input: UpdateInvoiceBody,
): Promise<Invoice> {
  const now = deps.clock.now();
  const current = await loadInvoice(deps.db, merchant, id);
  const operation = requireStatus(current, 'updateDraft', 'updateOpen');
  const changes =
    operation === 'updateDraft'
      ? await draftChanges(deps, merchant, current, input, now)
      : openChanges(current, input, now);
  const updated = await inTransaction(deps, async (tx, recorded) => {
    // Only from the status whose rules were applied: a draft finalized meanwhile is not edited as one.
    const row = await changeOrConflict(tx, current, operation, changes, now);
    await recordEvent(deps, tx, recorded, 'Invoice.updated', row);
    return row;
  }).catch((err: unknown) => conflictAsInvalidState(err, id, 'updateDraft', 'updateOpen'));
  return toInvoice(deps, updated);
}

/** docs/webhooks.md#event-codes invoice.deleted: only a draft; the event carries the invoice as it was. */
export async function deleteInvoice(
  deps: InvoiceDeps,
  merchant: MerchantContext,
  id: string,
): Promise<{ id: string; deleted: true }> {
  const deleted = await inTransaction(deps, async (tx: Queryable, recorded) => {
    const row = await queries.deleteDraft(tx, merchant.merchantId, merchant.mode, id);
    if (row) await recordEvent(deps, tx, recorded, 'invoice.deleted', row);
    return row;
  });
  if (!deleted) {
    const current = await queries.selectInvoice(deps.db, merchant.merchantId, merchant.mode, id);
    if (!current) throw notFound('invoice', id);
    throw invalidState(current.status, 'delete');
  }
  return { id, deleted: true };
}
