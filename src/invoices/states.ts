/**
 * The life of an invoice (DESIGN §4) in one place: its statuses, every allowed change between
 * them, and the statuses each operation starts from. Every change is a conditional update
 * (`… WHERE id = $1 AND status = ANY($2)`) whose $2 comes from `operations` below, so two requests
 * racing on one invoice (finalize and delete, pay and void) cannot both win.
 */

export const invoiceStatuses = ['draft', 'open', 'paid', 'uncollectible', 'void'] as const;
export type InvoiceStatus = (typeof invoiceStatuses)[number];

/**
 * The one table of allowed transitions. An uncollectible invoice can still be paid (the customer
 * paid after all) or voided, as in Stripe; paid and void are final. A deleted draft leaves the
 * table altogether (its row is removed).
 */
export const allowedTransitions: Readonly<Record<InvoiceStatus, readonly InvoiceStatus[]>> = {
  draft: ['open'],
  open: ['paid', 'uncollectible', 'void'],
  uncollectible: ['paid', 'void'],
  paid: [],
  void: [],
};

/** What each operation may start from and where it may lead (`to: []`: the status stays). */
export const operations = {
  /** Draft: every field; open: description, metadata and the due date only. */
  update: { from: ['draft', 'open'], to: [] },
  /** Number assigned, totals frozen, hosted page opened. */
  finalize: { from: ['draft'], to: ['open'] },
  /** The customer is e-mailed the hosted page (send_invoice). */
  send: { from: ['open'], to: [] },
  /** A payment attempt starts (pay, automatic collection, the hosted page's card form). */
  startPayment: { from: ['open', 'uncollectible'], to: [] },
  /** The attempt's payment succeeded. */
  paymentSucceeded: { from: ['open', 'uncollectible'], to: ['paid'] },
  /** The attempt's payment failed or was canceled: the invoice stays as it was, unpaid. */
  paymentFailed: { from: ['open', 'uncollectible'], to: [] },
  void: { from: ['open', 'uncollectible'], to: ['void'] },
  markUncollectible: { from: ['open'], to: ['uncollectible'] },
  /** Only a draft can be deleted (SPEC §6.2 invoice.deleted: "a draft invoice is deleted"). */
  delete: { from: ['draft'], to: [] },
} as const satisfies Record<string, { from: readonly InvoiceStatus[]; to: readonly InvoiceStatus[] }>;
export type InvoiceOperation = keyof typeof operations;

export function startsFrom(operation: InvoiceOperation): readonly InvoiceStatus[] {
  return operations[operation].from;
}

export function canMove(from: InvoiceStatus, to: InvoiceStatus): boolean {
  return allowedTransitions[from].includes(to);
}

// The operations must stay within the table; a mistake here stops the service at start-up.
for (const [name, operation] of Object.entries(operations)) {
  for (const from of operation.from) {
    for (const to of operation.to as readonly InvoiceStatus[]) {
      if (!canMove(from, to))
        throw new Error(`invoices/states: ${name} moves ${from} → ${to}, which the table forbids`);
    }
  }
}
