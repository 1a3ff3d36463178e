/**
 * How a payment of an invoice ended, told to src/invoices/ inside the transaction that records
 * it: state-changes.ts record() calls the listener for every payment event that ends an invoice
 * payment (docs/api.md#invoices: the invoice is paid, or the failed attempt recorded, with the payment).
 */

import type { Queryable } from '../db/db.js';
import type { EventType } from '../events/schemas.js';
import type { RecordedEvent } from '../events/service.js';
import type * as queries from './queries.js';

/** How an invoice's payment ended, as the invoice needs to know it. */
export interface InvoicePaymentEnd {
  paymentId: string;
  invoiceId: string;
  status: 'succeeded' | 'failed' | 'canceled';
  amountReceived: string;
  errorCode: string | null;
  errorMessage: string | null;
}

/** Runs inside the transaction that records the end of an invoice's payment. */
export type InvoicePaymentListener = (
  tx: Queryable,
  recorded: RecordedEvent[],
  end: InvoicePaymentEnd,
) => Promise<void>;

const endings: Partial<Record<EventType, InvoicePaymentEnd['status']>> = {
  'payment.succeeded': 'succeeded',
  'payment.failed': 'failed',
  'payment.canceled': 'canceled',
};

/** The end of an invoice's payment, if this event of the payment is one; called by record(). */
export function invoicePaymentEnd(type: EventType, row: queries.PaymentRow): InvoicePaymentEnd | null {
  const status = endings[type];
  if (row.invoice_id === null || status === undefined) return null;
  return {
    paymentId: row.id,
    invoiceId: row.invoice_id,
    status,
    amountReceived: row.amount_received,
    errorCode: row.error_code,
    errorMessage: row.error_message,
  };
}
