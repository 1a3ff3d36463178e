/**
 * What every invoice operation shares: its dependencies, loading an invoice, presenting it,
 * changing it by a conditional update, and recording its events in the change's transaction.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { CustomerService } from '../customers/service.js';
import type { Db, Queryable } from '../db/db.js';
import type { EventType } from '../events/schemas.js';
import type { EventService, RecordedEvent } from '../events/service.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { DomainError, notFound } from '../core/errors.js';
import type { JobRunner } from '../jobs/runner.js';
import type { MailTransport } from '../mail/transport.js';
import type { MerchantService } from '../merchants/service.js';
import type { PaymentMethodService } from '../payment-methods/service.js';
import type { Payment } from '../payments/payment-object.js';
import type { InvoiceClaim, InvoicePaymentRequest } from '../payments/service.js';
import type { PaymentStatus } from '../payments/states.js';
import { isoTimestamp } from '../time.js';
import * as queries from './queries.js';
import type { Invoice } from './schemas.js';
import { invoiceStates, type InvoiceOperation, type InvoiceStatus } from './states.js';

/** What invoices need of payments (src/payments/invoice-payments.ts); the payment service has it. */
export interface InvoicePayments {
  createForInvoice(merchant: MerchantContext, request: InvoicePaymentRequest, claim: InvoiceClaim): Promise<Payment>;
  statusOf(paymentId: string): Promise<PaymentStatus | null>;
  abandonInvoicePayment(paymentId: string): Promise<void>;
}

export interface InvoiceDeps {
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  events: EventService;
  jobs: JobRunner;
  customers: CustomerService;
  paymentMethods: PaymentMethodService;
  merchants: MerchantService;
  payments: InvoicePayments;
  mail: MailTransport;
  /** The key of hosted page tokens, derived from the master key (vault.deriveKey). */
  hostedPageKey: Buffer;
  /** The address customers' browsers use; known once the server listens. */
  publicUrl: () => string;
}

/** Another request or job changed the invoice between our read and our conditional update. */
export class InvoiceConflict extends Error {
  constructor(readonly current: queries.InvoiceRow | undefined) {
    super('The invoice changed while it was being processed');
  }
}

const verbs: Record<InvoiceOperation, string> = {
  updateDraft: 'updated',
  updateOpen: 'updated',
  finalize: 'finalized',
  send: 'sent',
  startPayment: 'paid',
  paymentSucceeded: 'paid',
  paymentFailed: 'paid',
  void: 'voided',
  markUncollectible: 'marked uncollectible',
  delete: 'deleted',
};

/** invalid_state naming the status found and those that `operations` (one action) start from. */
export function invalidState(
  status: InvoiceStatus,
  ...operations: [InvoiceOperation, ...InvoiceOperation[]]
): DomainError {
  const allowed = [...new Set(operations.flatMap((operation) => invoiceStates.startsFrom(operation)))].join(' or ');
  return new DomainError(
    'invalid_state',
    `The invoice cannot be ${verbs[operations[0]]} because its status is ${status}; it must be ${allowed}`,
    { param: 'id', status },
  );
}

/** The operation of `operations` that may start from the invoice's status, else invalid_state. */
export function requireStatus<O extends InvoiceOperation>(row: queries.InvoiceRow, ...operations: [O, ...O[]]): O {
  const operation = operations.find((candidate) => invoiceStates.canStart(candidate, row.status));
  if (operation === undefined) throw invalidState(row.status, ...operations);
  return operation;
}

/**
 * The hosted page's secret: an HMAC of the invoice id under a key derived from the master key.
 * Derived, never stored (as a payment's clientSecret): only this service can make it.
 */
export function hostedTokenOf(deps: Pick<InvoiceDeps, 'hostedPageKey'>, invoiceId: string): string {
  return createHmac('sha256', deps.hostedPageKey).update(invoiceId).digest('hex');
}

export function hostedTokenMatches(deps: Pick<InvoiceDeps, 'hostedPageKey'>, invoiceId: string, given: string) {
  const expected = Buffer.from(hostedTokenOf(deps, invoiceId));
  const candidate = Buffer.from(given);
  return candidate.length === expected.length && timingSafeEqual(candidate, expected);
}

/** The hosted invoice page's address (docs/api.md#invoices hostedInvoiceUrl). */
export function hostedInvoiceUrl(deps: Pick<InvoiceDeps, 'hostedPageKey' | 'publicUrl'>, invoiceId: string): string {
  return `${deps.publicUrl()}/invoice/${invoiceId}?token=${hostedTokenOf(deps, invoiceId)}`;
}

const timestamp = (date: Date | null) => (date === null ? null : isoTimestamp(date));

export function toInvoice(deps: Pick<InvoiceDeps, 'hostedPageKey' | 'publicUrl'>, row: queries.InvoiceRow): Invoice {
  return {
    id: row.id,
    customerId: row.customer_id,
    currency: row.currency,
    lineItems: row.line_items.map((item) => ({
      description: item.description,
      amount: BigInt(item.amount).toString(),
      quantity: item.quantity,
    })),
    number: row.number,
    amountDue: BigInt(row.amount_due).toString(),
    amountPaid: BigInt(row.amount_paid).toString(),
    amountRemaining: BigInt(row.amount_remaining).toString(),
    collectionMethod: row.collection_method,
    daysUntilDue: row.days_until_due,
    dueDate: timestamp(row.due_date),
    paymentMethod: row.payment_method_id,
    description: row.description,
    metadata: row.metadata,
    status: row.status,
    // A draft has no page yet: its contents may still change (docs/api.md#invoices: set at finalize).
    hostedInvoiceUrl: row.status === 'draft' ? null : hostedInvoiceUrl(deps, row.id),
    paymentId: row.payment_id,
    attemptCount: row.attempt_count,
    nextPaymentAttempt: timestamp(row.next_payment_attempt),
    lastPaymentError:
      row.last_error_code === null ? null : { code: row.last_error_code, message: row.last_error_message ?? '' },
    finalizedAt: timestamp(row.finalized_at),
    paidAt: timestamp(row.paid_at),
    voidedAt: timestamp(row.voided_at),
    markedUncollectibleAt: timestamp(row.marked_uncollectible_at),
    created: isoTimestamp(row.created_at),
  };
}

export async function loadInvoice(
  source: Queryable,
  merchant: Pick<MerchantContext, 'merchantId' | 'mode'>,
  id: string,
): Promise<queries.InvoiceRow> {
  const row = await queries.selectInvoice(source, merchant.merchantId, merchant.mode, id);
  if (!row) throw notFound('invoice', id);
  return row;
}

/** Jobs, the hosted page and the payment hook act without a key, for the invoice's merchant. */
export function ownerOf(
  row: Pick<queries.InvoiceRow, 'merchant_id' | 'mode'>,
): Pick<MerchantContext, 'merchantId' | 'mode'> {
  return { merchantId: row.merchant_id, mode: row.mode === 'live' ? 'live' : 'test' };
}

/**
 * Jobs and the hosted page act without a key, for the invoice's merchant, with its capability
 * flags as they are now (a MIT charge needs the MIT capability, docs/api.md#tokenization-rules).
 */
export async function merchantContextOf(
  deps: Pick<InvoiceDeps, 'merchants'>,
  row: Pick<queries.InvoiceRow, 'merchant_id' | 'mode'>,
): Promise<MerchantContext> {
  const merchant = await deps.merchants.retrieve(row.merchant_id);
  return {
    ...ownerOf(row),
    keyKind: 'private',
    tokenizationEnabled: merchant.tokenization,
    mitEnabled: merchant.mit,
  };
}

export const paymentInProgress = (paymentId: string) =>
  new DomainError(
    'invalid_state',
    `A payment of this invoice (${paymentId}) is under way and may still succeed; wait until it has finished or been canceled`,
    { param: 'id', paymentId },
  );

/** Runs `work` in a transaction, then publishes the events it recorded once they are committed. */
export async function inTransaction<T>(
  deps: Pick<InvoiceDeps, 'db' | 'events'>,
  work: (tx: Queryable, recorded: RecordedEvent[]) => Promise<T>,
): Promise<T> {
  const recorded: RecordedEvent[] = [];
  const result = await deps.db.transaction((tx) => work(tx, recorded));
  deps.events.published(recorded);
  return result;
}

/** docs/webhooks.md#event-codes: the event's `data` is the Invoice as it is after the change. */
export async function recordEvent(
  deps: Pick<InvoiceDeps, 'events' | 'hostedPageKey' | 'publicUrl'>,
  tx: Queryable,
  recorded: RecordedEvent[],
  type: EventType,
  row: queries.InvoiceRow,
): Promise<void> {
  recorded.push(await deps.events.record(tx, ownerOf(row), type, toInvoice(deps, row)));
}

/** A change of columns and, where the operation leads elsewhere, of the status. */
export type InvoiceChange = queries.InvoiceChanges & { status?: InvoiceStatus };

/**
 * The conditional update of `operation`, its new status checked against the state table (and,
 * with `pending`, the invoice's pending payment); zero rows: another request or job won.
 */
export function changeStatus(
  source: Queryable,
  id: string,
  operation: InvoiceOperation,
  { status, ...columns }: InvoiceChange,
  now: Date,
  pending?: string | null,
): Promise<queries.InvoiceRow | undefined> {
  return queries.changeInvoice(source, id, invoiceStates.transition(operation, status), columns, now, pending);
}

/** changeStatus in a transaction: a lost race becomes an InvoiceConflict that rolls it back. */
export async function changeOrConflict(
  tx: Queryable,
  row: queries.InvoiceRow,
  operation: InvoiceOperation,
  changes: InvoiceChange,
  now: Date,
  pending?: string | null,
): Promise<queries.InvoiceRow> {
  const updated = await changeStatus(tx, row.id, operation, changes, now, pending);
  if (!updated) throw new InvoiceConflict(await queries.selectInvoiceById(tx, row.id));
  return updated;
}

/** A conflict answered as the state the invoice is in now (404 when it was deleted meanwhile). */
export function conflictAsInvalidState(
  err: unknown,
  id: string,
  ...operations: [InvoiceOperation, ...InvoiceOperation[]]
): never {
  if (err instanceof InvoiceConflict) {
    throw err.current ? invalidState(err.current.status, ...operations) : notFound('invoice', id);
  }
  throw err;
}
