/**
 * The hosted invoice page (hostedInvoiceUrl, docs/api.md): who bills (name, logo, colour), the
 * lines, the total, the due date and the status, and while the invoice can be paid a card form
 * posted back to Tessera, its button carrying the amount; all in the customer's language
 * (Accept-Language). No inline script and no external resource but the merchant's logo; written
 * with the one HTML kit (src/web/html.ts), so everything from the merchant is escaped. The card
 * number and security code are never written into a page, not even after a refused form: errors
 * are shown beside empty fields.
 */
import { html, type HtmlDocument, type SafeHtml } from '../web/html.js';
import { renderCardForm, type CardFormState } from './card-form.js';
import type { ShopperLocale } from './locales.js';
import { declineMessageKey, translate, type MessageKey } from './messages.js';
import { formatDate, formatMoney } from './format.js';
import { shopperPage, shopperPageHeaders, type ShopperBrand } from './page.js';

export type { CardField, CardFormState } from './card-form.js';

/**
 * Headers of every hosted invoice page: nothing cached, the token in the address never sent as a
 * referrer, no framing (a payment form inside someone else's page invites clickjacking), scripts
 * of this origin only, and the form posted to Tessera only.
 */
export function invoicePageHeaders(page: SafeHtml, brand: ShopperBrand | null): Record<string, string> {
  return shopperPageHeaders(page, brand, "'self'");
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

function summary(locale: ShopperLocale, view: HostedInvoiceView): SafeHtml {
  const t = (key: MessageKey) => translate(locale, key);
  const money = (amount: bigint) => formatMoney(locale, amount, view.currency);
  const lines = view.lines.map(
    (line) =>
      html`<tr>
        <td>${line.description}</td>
        <td class="num">${line.quantity}</td>
        <td class="num">${money(line.unitAmount)}</td>
        <td class="num">${money(line.total)}</td>
      </tr> `,
  );
  const facts: Array<[MessageKey, string]> = [
    ['invoice', view.number],
    ...(view.dueDate ? ([['dueDate', formatDate(locale, view.dueDate)]] as Array<[MessageKey, string]>) : []),
    ...(view.paidAt ? ([['paidOn', formatDate(locale, view.paidAt)]] as Array<[MessageKey, string]>) : []),
  ];
  return html`<p><span class="status ${view.status}">${t(statusText[view.status])}</span></p>
    <dl>
      ${facts.map(
        ([term, value]) =>
          html`<dt>${t(term)}</dt>
            <dd>${value}</dd>`,
      )}
    </dl>
    ${view.description ? html`<p>${view.description}</p>` : ''}
    <table>
      <thead>
        <tr>
          <th scope="col">${t('item')}</th>
          <th scope="col" class="num">${t('quantity')}</th>
          <th scope="col" class="num">${t('unitPrice')}</th>
          <th scope="col" class="num">${t('amount')}</th>
        </tr>
      </thead>
      <tbody>
        ${lines}
      </tbody>
      <tfoot>
        <tr>
          <td colspan="3">${t('total')}</td>
          <td class="num">${money(view.total)}</td>
        </tr>
      </tfoot>
    </table>`;
}

const statusText: Record<HostedInvoiceView['status'], MessageKey> = {
  open: 'statusDue',
  uncollectible: 'statusDue',
  paid: 'statusPaid',
  void: 'statusVoid',
};

function cardForm(locale: ShopperLocale, view: HostedInvoiceView, state?: CardFormState): SafeHtml {
  const amount = formatMoney(locale, view.remaining, view.currency);
  const lastError =
    view.lastError && !state
      ? html`<p class="error" id="last-error" role="alert">
          ${translate(locale, 'lastPaymentFailed')} ${translate(locale, declineMessageKey(view.lastError.code))}
        </p>`
      : '';
  const form = renderCardForm({
    locale,
    action: `/invoice/${encodeURIComponent(view.invoiceId)}/pay`,
    hidden: { token: view.token },
    payLabel: translate(locale, 'pay', { amount }),
    state,
  });
  return html`<h2>${translate(locale, 'payByCard', { amount })}</h2>
    ${lastError} ${form}`;
}

/** The invoice, and the card form while it can be paid. */
export function renderInvoicePage(locale: ShopperLocale, view: HostedInvoiceView, state?: CardFormState): HtmlDocument {
  const note = (key: MessageKey) => html`<p role="status">${translate(locale, key)}</p>`;
  let tail: SafeHtml;
  const payable = view.status !== 'paid' && view.status !== 'void' && !view.paymentPending;
  if (view.status === 'paid') tail = note('invoicePaid');
  else if (view.status === 'void') tail = note('invoiceVoid');
  else if (view.paymentPending) tail = note('invoicePending');
  else tail = cardForm(locale, view, state);
  return shopperPage({
    locale,
    title: translate(locale, 'invoiceTitle', { number: view.number, merchant: view.brand.name }),
    brand: view.brand,
    body: html`${summary(locale, view)} ${tail}`,
    cardScripts: payable,
  });
}

/** A page without an invoice (not found, unreadable form, failure), in the customer's language. */
export function renderInvoiceMessage(
  locale: ShopperLocale,
  title: MessageKey,
  text: MessageKey,
  values?: Record<string, string>,
): HtmlDocument {
  return shopperPage({
    locale,
    title: translate(locale, title),
    brand: { name: translate(locale, title), brandColor: null, logoUrl: null },
    body: html`<p>${translate(locale, text, values)}</p>`,
  });
}
