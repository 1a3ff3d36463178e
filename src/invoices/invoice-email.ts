/**
 * The e-mail that sends an invoice to its customer (send_invoice): who bills, how much, when it
 * is due, and the link to the hosted invoice page, in plain text and in HTML. The HTML part is
 * written with the one HTML kit (src/web/html.ts): everything from the merchant is escaped.
 */
import type { MailMessage } from '../mail/transport.js';
import { formatAmount } from '../money.js';
import { html } from '../web/html.js';
import type { InvoiceRow } from './queries.js';

export interface InvoiceEmailView {
  to: string;
  merchantName: string;
  invoice: Pick<InvoiceRow, 'number' | 'currency' | 'amount_remaining' | 'due_date' | 'description'>;
  hostedInvoiceUrl: string;
}

/** 2026-12-22T00:00:00.000Z → "22 December 2026" (UTC, so every reader sees the same day). */
export function formatDueDate(date: Date): string {
  return date.toLocaleDateString('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'long', year: 'numeric' });
}

export function invoiceEmail(view: InvoiceEmailView): MailMessage {
  const { invoice } = view;
  const amount = `${formatAmount(BigInt(invoice.amount_remaining), invoice.currency)} ${invoice.currency}`;
  const number = invoice.number ?? '';
  const due = invoice.due_date === null ? null : formatDueDate(invoice.due_date);
  const lines = [
    `${view.merchantName} has sent you invoice ${number}.`,
    '',
    `Amount due: ${amount}`,
    ...(due ? [`Due: ${due}`] : []),
    ...(invoice.description ? ['', invoice.description] : []),
    '',
    'See and pay the invoice here:',
    view.hostedInvoiceUrl,
    '',
    'Anyone with this link can see the invoice and pay it; please do not forward it.',
  ];
  const body = html`<!doctype html>
    <html lang="en">
      <body style="font-family: system-ui, sans-serif; color: #1f2933">
        <p>${view.merchantName} has sent you invoice <strong>${number}</strong>.</p>
        <p>Amount due: <strong>${amount}</strong>${due ? html`<br />Due: ${due}` : ''}</p>
        ${invoice.description ? html`<p>${invoice.description}</p>` : ''}
        <p><a href="${view.hostedInvoiceUrl}">See and pay the invoice</a></p>
        <p style="color: #616e7c; font-size: 0.875rem">
          Anyone with this link can see the invoice and pay it; please do not forward it.
        </p>
      </body>
    </html> `;
  return {
    to: view.to,
    // One line whatever the merchant's name holds: a header ends at a line break.
    subject: `Invoice ${number} from ${view.merchantName}`.replace(/\s+/g, ' '),
    text: `${lines.join('\n')}\n`,
    html: body.text,
  };
}
