/**
 * Paying on the hosted invoice page (docs/api.md#invoices): the card form's post becomes a new card payment
 * method (through the payment methods service, as any card) and a one-off payment of what
 * remains, with returnUrl back to the page; the challenge card goes through the 3-D Secure page
 * first. Paying twice is impossible: the payment claims the invoice in the transaction that
 * inserts it (collection.ts claimFor), so of two posts at once only one starts a payment.
 *
 * Card data never leaves this function except into the vault: a refused form is shown again with
 * a message beside each field and the number and security code left empty, and nothing here logs.
 */
import type { MerchantContext } from '../core/merchant-context.js';
import { DomainError } from '../core/errors.js';
import { isId } from '../ids.js';
import { claimFor } from './collection.js';
import { cardRefusal, readCardForm, type CardField, type CardForm, type CardFormState } from '../shopper/card-form.js';
import type { MessageKey } from '../shopper/messages.js';
import * as queries from './queries.js';
import {
  hostedInvoiceUrl,
  hostedTokenMatches,
  InvoiceConflict,
  merchantContextOf,
  type InvoiceDeps,
} from './records.js';

export type HostedPayResult =
  | { kind: 'not_found' }
  | { kind: 'refused'; row: queries.InvoiceRow; state: CardFormState }
  | { kind: 'redirect'; location: string };

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The card as a new payment method of the merchant (the vault checks it as any card), or why not. */
async function cardMethod(
  deps: InvoiceDeps,
  merchant: MerchantContext,
  card: CardForm,
): Promise<{ id: string } | { field: CardField; message: MessageKey }> {
  try {
    return await deps.paymentMethods.create(merchant, {
      type: 'card',
      card: { cardNo: card.cardNo, expMonth: card.expMonth, expYear: card.expYear, securityCode: card.securityCode },
      billingDetails: { firstName: card.firstName, ...(card.lastName ? { lastName: card.lastName } : {}) },
    });
  } catch (err) {
    const refusal = err instanceof DomainError ? cardRefusal(err) : null;
    if (!refusal) throw err;
    return refusal;
  }
}

export async function payOnHostedPage(
  deps: InvoiceDeps,
  invoiceId: string,
  form: Record<string, unknown>,
): Promise<HostedPayResult> {
  if (!isId('in', invoiceId) || !hostedTokenMatches(deps, invoiceId, text(form.token))) return { kind: 'not_found' };
  const row = await queries.selectInvoiceById(deps.db, invoiceId);
  if (!row || row.status === 'draft') return { kind: 'not_found' };
  // Paid, void, or a payment being processed: the page says which.
  const page = { kind: 'redirect', location: hostedInvoiceUrl(deps, row.id) } as const;
  if (!['open', 'uncollectible'].includes(row.status) || (await paymentUnderWay(deps, row))) return page;

  const read = readCardForm(form);
  if ('state' in read) return { kind: 'refused', row, state: read.state };
  const merchant = await merchantContextOf(deps, row);
  const method = await cardMethod(deps, merchant, read.card);
  if (!('id' in method)) {
    const kept = { expiry: text(form.expiry).trim(), name: text(form.name).trim() };
    return { kind: 'refused', row, state: { errors: { [method.field]: method.message }, ...kept } };
  }
  // A challenge left unanswered gives way to this new attempt (its cancellation frees the invoice).
  if (row.pending_payment_id !== null) await deps.payments.abandonInvoicePayment(row.pending_payment_id);
  try {
    const payment = await deps.payments.createForInvoice(
      merchant,
      {
        invoiceId: row.id,
        customerId: row.customer_id,
        paymentMethodId: method.id,
        amount: row.amount_remaining,
        currency: row.currency,
        description: `Invoice ${row.number ?? row.id}`,
        initiator: 'one_off',
        returnUrl: page.location,
      },
      claimFor(deps, row),
    );
    if (payment.status === 'requires_action' && payment.nextAction) {
      return { kind: 'redirect', location: payment.nextAction.redirectToUrl };
    }
  } catch (err) {
    // Another post won the claim: the page shows that payment.
    if (err instanceof InvoiceConflict) return page;
    if (!(err instanceof DomainError)) throw err;
    return { kind: 'refused', row, state: { errors: { form: 'paymentFailed' } } };
  }
  // Paid, or declined: the page shows which (a decline with its reason).
  return page;
}

/** Whether the page shows a payment as under way (one awaiting 3-D Secure may be replaced). */
export async function paymentUnderWay(deps: InvoiceDeps, row: queries.InvoiceRow): Promise<boolean> {
  if (row.pending_payment_id === null) return false;
  return (await deps.payments.statusOf(row.pending_payment_id)) !== 'requires_action';
}
