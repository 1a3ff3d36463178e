/**
 * The hosted invoice page (docs/api.md#invoices hostedInvoiceUrl, §13): who bills (name, logo, colour), the
 * lines, the total, the due date and the status, and while the invoice can be paid a card form
 * posted back to Tessera, its button carrying the amount; all in the customer's language
 * (Accept-Language; src/shopper/). No inline script and no external resource but the merchant's
 * logo; everything from the merchant escaped. The card number and security code are never
 * written into a page, not even after a refused form: errors are shown beside empty fields.
 */
import { escapeHtml } from '../payments/three-d-secure-page.js';
import { renderCardForm, type CardFormState } from '../shopper/card-form.js';
import type { ShopperLocale } from '../shopper/locales.js';
import { declineMessageKey, translate, type MessageKey } from '../shopper/messages.js';
import { formatDate, formatMoney } from '../shopper/format.js';
import { shopperPage, shopperPageHeaders, type ShopperBrand } from '../shopper/page.js';

export type { CardField, CardFormState } from '../shopper/card-form.js';

/**
 * Headers of every hosted invoice page: nothing cached, the token in the address never sent as a
 * referrer, no framing (a payment form inside someone else's page invites clickjacking), scripts
 * of this origin only, and the form posted to Tessera only.
 */
export function invoicePageHeaders(brand: ShopperBrand | null): Record<string, string> {
  return shopperPageHeaders(brand, "'self'");
}

export interface HostedInvoiceView {
  invoiceId: string;
  token: string;
  brand: ShopperBrand;
  number: string;
  status: 'open' | 'paid' | 'uncollectible' | 'void';
  description: string | null;
  currency: string;
  /** Amounts in minor units of `currency`, written in the customer's language by the page. */
  lines: Array<{ description: string; quantity: number; unitAmount: bigint; total: bigint }>;
  total: bigint;
  remaining: bigint;
  dueDate: Date | null;
  paidAt: Date | null;
  /** A payment of the invoice is under way (processing, awaiting 3-D Secure): no second one. */
  paymentPending: boolean;
  /** The last payment failed: its decline code (null when none is known), for the customer to read. */
  lastError: { code: string | null } | null;
}

function summary(locale: ShopperLocale, view: HostedInvoiceView): string {
  const t = (key: MessageKey) => escapeHtml(translate(locale, key));
  const money = (amount: bigint) => escapeHtml(formatMoney(locale, amount, view.currency));
  const lines = view.lines
    .map(
      (line) =>
        `<tr><td>${escapeHtml(line.description)}</td><td class="num">${line.quantity}</td>` +
        `<td class="num">${money(line.unitAmount)}</td><td class="num">${money(line.total)}</td></tr>`,
    )
    .join('\n');
  const facts: Array<[MessageKey, string]> = [
    ['invoice', view.number],
    ...(view.dueDate ? ([['dueDate', formatDate(locale, view.dueDate)]] as Array<[MessageKey, string]>) : []),
    ...(view.paidAt ? ([['paidOn', formatDate(locale, view.paidAt)]] as Array<[MessageKey, string]>) : []),
  ];
  return `<p><span class="status ${escapeHtml(view.status)}">${t(statusText[view.status])}</span></p>
<dl>${facts.map(([term, value]) => `<dt>${t(term)}</dt><dd>${escapeHtml(value)}</dd>`).join('')}</dl>
${view.description ? `<p>${escapeHtml(view.description)}</p>` : ''}
<table>
<thead><tr><th scope="col">${t('item')}</th><th scope="col" class="num">${t('quantity')}</th><th scope="col" class="num">${t('unitPrice')}</th><th scope="col" class="num">${t('amount')}</th></tr></thead>
<tbody>
${lines}
</tbody>
<tfoot><tr><td colspan="3">${t('total')}</td><td class="num">${money(view.total)}</td></tr></tfoot>
</table>`;
}

const statusText: Record<HostedInvoiceView['status'], MessageKey> = {
  open: 'statusDue',
  uncollectible: 'statusDue',
  paid: 'statusPaid',
  void: 'statusVoid',
};

function cardForm(locale: ShopperLocale, view: HostedInvoiceView, state?: CardFormState): string {
  const amount = formatMoney(locale, view.remaining, view.currency);
  const lastError =
    view.lastError && !state
      ? `<p class="error" id="last-error" role="alert">${escapeHtml(translate(locale, 'lastPaymentFailed'))} ${escapeHtml(
          translate(locale, declineMessageKey(view.lastError.code)),
        )}</p>`
      : '';
  const form = renderCardForm({
    locale,
    action: `/invoice/${encodeURIComponent(view.invoiceId)}/pay`,
    hidden: { token: view.token },
    payLabel: translate(locale, 'pay', { amount }),
    state,
  });
  return `<h2>${escapeHtml(translate(locale, 'payByCard', { amount }))}</h2>\n${lastError}\n${form}`;
}

/** The invoice, and the card form while it can be paid. */
export function renderInvoicePage(locale: ShopperLocale, view: HostedInvoiceView, state?: CardFormState): string {
  const note = (key: MessageKey) => `<p role="status">${escapeHtml(translate(locale, key))}</p>`;
  let tail: string;
  const payable = view.status !== 'paid' && view.status !== 'void' && !view.paymentPending;
  if (view.status === 'paid') tail = note('invoicePaid');
  else if (view.status === 'void') tail = note('invoiceVoid');
  else if (view.paymentPending) tail = note('invoicePending');
  else tail = cardForm(locale, view, state);
  return shopperPage({
    locale,
    title: translate(locale, 'invoiceTitle', { number: view.number, merchant: view.brand.name }),
    brand: view.brand,
    body: `${summary(locale, view)}\n${tail}`,
    cardScripts: payable,
  });
}

/** A page without an invoice (not found, unreadable form, failure), in the customer's language. */
export function renderInvoiceMessage(
  locale: ShopperLocale,
  title: MessageKey,
  text: MessageKey,
  values?: Record<string, string>,
): string {
  return shopperPage({
    locale,
    title: translate(locale, title),
    brand: { name: translate(locale, title), brandColor: null, logoUrl: null },
    body: `<p>${escapeHtml(translate(locale, text, values))}</p>`,
  });
}
