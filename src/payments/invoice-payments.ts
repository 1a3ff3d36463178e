/**
 * Payments of invoices (docs/api.md#invoices): a payment with its invoiceId set, either a MIT on the
 * customer's bound card (`pay`, automatic collection) or a one-off payment with a card entered on
 * the hosted invoice page (3-D Secure through the challenge page, returnUrl back to the invoice).
 *
 * The invoice side stays in src/invoices/: it claims the invoice in the transaction that inserts
 * the payment (so two payments never start for one invoice), and it is told, inside the
 * transaction that records the payment's final state, how the payment ended (invoice-hook.ts),
 * so that invoice and payment change together or not at all.
 */

import type { Queryable } from '../db/db.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { authorize } from './authorize.js';
import type { PaymentContext } from './context.js';
import { newPaymentRow } from './create.js';
import * as queries from './queries.js';
import { checkRules, threeDSecureFor, withMethodDetails } from './rules.js';
import type { Payment } from './payment-object.js';
import { change, ignoreConflict, inTransaction, record } from './state-changes.js';
import type { PaymentStatus } from './states.js';

export interface InvoicePaymentRequest {
  invoiceId: string;
  customerId: string;
  paymentMethodId: string;
  /** Minor units, digits. */
  amount: string;
  currency: string;
  description: string;
  /** `mit`: the customer's bound card, cardholder absent; `one_off`: a card entered on the hosted page. */
  initiator: 'mit' | 'one_off';
  /** Where the 3-D Secure page sends the cardholder back (the hosted invoice page). */
  returnUrl: string | null;
}

/**
 * Claims the invoice for the new payment, inside the transaction that inserts it; throws (rolling
 * the insert back) when the invoice cannot take a payment now.
 */
export type InvoiceClaim = (tx: Queryable, paymentId: string) => Promise<void>;

/**
 * Creates and authorizes the payment of an invoice. The rules of docs/api.md#tokenization-rules apply as to any payment
 * (a MIT needs the MIT capability and a bound card) and are thrown as DomainErrors before anything
 * is written. The payment is inserted (claimed, in processing) with the invoice's claim in one
 * transaction, then authorized: never the one-write path, since the claim must exist before the
 * processor is asked.
 */
export async function createInvoicePayment(
  ctx: PaymentContext,
  merchant: MerchantContext,
  request: InvoicePaymentRequest,
  claimInvoice: InvoiceClaim,
): Promise<Payment> {
  const requested: queries.PaymentRow = {
    ...newPaymentRow(
      merchant,
      {
        amount: request.amount,
        currency: request.currency,
        customerId: request.customerId,
        paymentMethod: request.paymentMethodId,
        description: request.description,
        ...(request.initiator === 'mit' ? { subsequentInitialType: 'mit' as const } : {}),
        ...(request.returnUrl === null ? {} : { returnUrl: request.returnUrl }),
      },
      true,
      ctx.clock.now(),
    ),
    invoice_id: request.invoiceId,
  };
  const method = await checkRules(ctx, ctx.db, merchant, requested);
  if (method === null) throw new Error(`Invoice payment ${requested.id} has no payment method`);
  const row = withMethodDetails(requested, method);
  await ctx.db.transaction(async (tx) => {
    await queries.insertPayment(tx, row);
    await claimInvoice(tx, row.id);
  });
  return ctx.view.toPayment(await authorize(ctx, row, method, threeDSecureFor(row)));
}

/** The status of a payment, for the hosted invoice page (null when there is none). */
export async function paymentStatusOf(
  ctx: Pick<PaymentContext, 'db'>,
  paymentId: string,
): Promise<PaymentStatus | null> {
  return (await queries.selectPaymentById(ctx.db, paymentId))?.status ?? null;
}

/**
 * Cancels an invoice payment left waiting for 3-D Secure (the customer went away from the
 * challenge and now tries again on the invoice page), with its payment.canceled event; the
 * invoice learns of it through record() in the same transaction. Nothing happens when the
 * payment is no longer waiting.
 */
export async function abandonInvoicePayment(ctx: PaymentContext, paymentId: string): Promise<void> {
  const row = await queries.selectPaymentById(ctx.db, paymentId);
  if (!row || row.invoice_id === null || row.status !== 'requires_action') return;
  await inTransaction(ctx, async (tx, recorded) => {
    const now = ctx.clock.now();
    const canceled = await change(
      tx,
      row,
      'cancel',
      { status: 'canceled', canceled_at: now, cancellation_reason: 'abandoned' },
      now,
    );
    await record(ctx, tx, recorded, 'payment.canceled', canceled);
  }).catch(ignoreConflict);
}
