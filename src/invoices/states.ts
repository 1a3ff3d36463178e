/**
 * The life of an invoice (docs/api.md#invoices) in one place: its statuses, every allowed change between
 * them, and the statuses each operation starts from. Every change is a conditional update
 * (`… WHERE id = $1 AND status = ANY($2)`) whose $2 and new status come from
 * `invoiceStates.transition()`, so two requests racing on one invoice (finalize and delete, pay
 * and void) cannot both win.
 */

import { defineStateTable } from '../state-table.js';

export const invoiceStatuses = ['draft', 'open', 'paid', 'uncollectible', 'void'] as const;
export type InvoiceStatus = (typeof invoiceStatuses)[number];

export const invoiceStates = defineStateTable({
  name: 'invoices',
  statuses: invoiceStatuses,
  /**
   * An uncollectible invoice can still be paid (the customer paid after all) or voided, as in
   * Stripe; paid and void are final. A deleted draft leaves the table altogether (its row is removed).
   */
  transitions: {
    draft: ['open'],
    open: ['paid', 'uncollectible', 'void'],
    uncollectible: ['paid', 'void'],
    paid: [],
    void: [],
  },
  operations: {
    /** A draft takes every field (editing.ts). */
    updateDraft: { from: ['draft'], to: [] },
    /** An open invoice: description, metadata and the due date only (editing.ts). */
    updateOpen: { from: ['open'], to: [] },
    /** Number assigned, totals frozen, hosted page opened. */
    finalize: { from: ['draft'], to: ['open'] },
    /** The customer is e-mailed the hosted page (send_invoice). */
    send: { from: ['open'], to: [] },
    /** A payment attempt starts (pay, automatic collection, the hosted page's card form). */
    startPayment: { from: ['open', 'uncollectible'], to: [] },
    /** The attempt's payment succeeded. */
    paymentSucceeded: { from: ['open', 'uncollectible'], to: ['paid'] },
    /** The attempt failed, or its payment was canceled: the invoice stays as it was, unpaid. */
    paymentFailed: { from: ['open', 'uncollectible'], to: [] },
    void: { from: ['open', 'uncollectible'], to: ['void'] },
    markUncollectible: { from: ['open'], to: ['uncollectible'] },
    /** Only a draft can be deleted (docs/webhooks.md#event-codes invoice.deleted: "a draft invoice is deleted"). */
    delete: { from: ['draft'], to: [] },
  },
});

export const allowedTransitions = invoiceStates.transitions;
export const operations = invoiceStates.operations;
export type InvoiceOperation = keyof typeof operations;
