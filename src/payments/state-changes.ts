/**
 * How a payment changes: in a transaction with its event (outbox, published after commit), by a
 * conditional update whose guard and new status come from the state table (states.ts). A lost
 * race is a StateConflict inside a transaction, or invalid_state for a request's claim.
 */

import type { Queryable } from '../db/db.js';
import type { RecordedEvent } from '../events/service.js';
import type { EventType } from '../events/schemas.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { DomainError, notFound } from '../core/errors.js';
import type { PaymentContext } from './context.js';
import { checkoutPayment } from './checkout-hook.js';
import { invoicePaymentEnd } from './invoice-hook.js';
import * as queries from './queries.js';
import { paymentStates, startsFrom, type PaymentOperation, type PaymentStatus } from './states.js';

/** A change of columns and, where the operation leads elsewhere, of the status. */
export type StatusChange = queries.PaymentChanges & { status?: PaymentStatus };

/** Another request or job changed the payment between our read and our conditional update. */
export class StateConflict extends Error {
  constructor(readonly current: queries.PaymentRow | undefined) {
    super('The payment changed while it was being processed');
  }
}

const verbs: Record<PaymentOperation, string> = {
  update: 'updated',
  provideMethod: 'updated',
  confirm: 'confirmed',
  completeChallenge: 'authenticated',
  finishAuthorization: 'authorized',
  settle: 'settled',
  capture: 'captured',
  finishCapture: 'captured',
  cancel: 'canceled',
  expirePreAuthorization: 'canceled',
  reverse: 'reversed',
  refund: 'refunded',
};

export function invalidState(status: PaymentStatus, operation: PaymentOperation): DomainError {
  const allowed = startsFrom(operation).join(' or ');
  return new DomainError(
    'invalid_state',
    `The payment cannot be ${verbs[operation]} because its status is ${status}; it must be ${allowed}`,
    { param: 'id', status },
  );
}

export function requireStatus(row: queries.PaymentRow, operation: PaymentOperation): void {
  if (!paymentStates.canStart(operation, row.status)) throw invalidState(row.status, operation);
}

export function conflictAsInvalidState(err: unknown, operation: PaymentOperation): never {
  if (err instanceof StateConflict && err.current) throw invalidState(err.current.status, operation);
  throw err;
}

export function ignoreConflict(err: unknown): void {
  // A job that finds its payment already changed by another process has nothing left to do.
  if (!(err instanceof StateConflict)) throw err;
}

/**
 * Jobs and the hosted 3-D Secure page act without a key, on behalf of the payment's merchant.
 * The capability flags were checked when the payment was created and confirmed; what follows
 * only continues that confirmation, so they are not consulted again.
 */
export function ownerOf(row: queries.PaymentRow): MerchantContext {
  return {
    merchantId: row.merchant_id,
    mode: row.mode === 'live' ? 'live' : 'test',
    keyKind: 'private',
    tokenizationEnabled: true,
    mitEnabled: true,
  };
}

export async function loadPayment(
  source: Queryable,
  merchant: MerchantContext,
  id: string,
): Promise<queries.PaymentRow> {
  const row = await queries.selectPayment(source, merchant.merchantId, merchant.mode, id);
  if (!row) throw notFound('payment', id);
  return row;
}

/** Runs `work` in a transaction, then publishes the events it recorded once they are committed. */
export async function inTransaction<T>(
  ctx: Pick<PaymentContext, 'db' | 'events'>,
  work: (tx: Queryable, recorded: RecordedEvent[]) => Promise<T>,
): Promise<T> {
  const recorded: RecordedEvent[] = [];
  const result = await ctx.db.transaction((tx) => work(tx, recorded));
  ctx.events.published(recorded);
  return result;
}

/**
 * Records the payment's event in the change's transaction (outbox). Every final state of a
 * payment is recorded here, so this is also where the invoice of an invoice payment learns how
 * it ended, the checkout session of a hosted-page payment that it is paid, and the ledger what
 * money moved, in the same transaction (invoice-payments.ts, checkout-hook.ts, src/ledger/).
 */
export async function record(
  ctx: Pick<PaymentContext, 'events' | 'view'> &
    Partial<Pick<PaymentContext, 'onInvoicePaymentEnded' | 'onCheckoutPaymentPaid' | 'onPaymentRecorded'>>,
  tx: Queryable,
  recorded: RecordedEvent[],
  type: EventType,
  row: queries.PaymentRow,
): Promise<void> {
  recorded.push(await ctx.events.record(tx, ownerOf(row), type, ctx.view.toEventObject(row)));
  await ctx.onPaymentRecorded?.(tx, type, row);
  const end = invoicePaymentEnd(type, row);
  if (end !== null) await ctx.onInvoicePaymentEnded?.(tx, recorded, end);
  const paid = checkoutPayment(type, row);
  if (paid !== null) await ctx.onCheckoutPaymentPaid?.(tx, paid);
}

/**
 * The conditional update of `operation`, its new status checked against the state table. Zero
 * rows: another request or job changed the payment first.
 */
export function changeStatus(
  source: Queryable,
  id: string,
  operation: PaymentOperation,
  { status, ...columns }: StatusChange,
  now: Date,
): Promise<queries.PaymentRow | undefined> {
  return queries.changePayment(source, id, paymentStates.transition(operation, status), columns, now);
}

/** The conditional update of `operation` in a transaction; a lost race becomes a StateConflict that rolls back. */
export async function change(
  tx: Queryable,
  row: queries.PaymentRow,
  operation: PaymentOperation,
  changes: StatusChange,
  now: Date,
): Promise<queries.PaymentRow> {
  const updated = await changeStatus(tx, row.id, operation, changes, now);
  if (!updated) throw new StateConflict(await queries.selectPaymentById(tx, row.id));
  return updated;
}

/** Claims the payment for an operation; a lost race answers with the status that won. */
export async function claim(
  ctx: Pick<PaymentContext, 'clock'>,
  source: Queryable,
  row: queries.PaymentRow,
  operation: PaymentOperation,
  changes: StatusChange,
): Promise<queries.PaymentRow> {
  const claimed = await changeStatus(source, row.id, operation, changes, ctx.clock.now());
  if (claimed) return claimed;
  const current = await queries.selectPaymentById(source, row.id);
  throw invalidState(current?.status ?? row.status, operation);
}
