/**
 * The hosted checkout page (docs/checkout.md): who is paid (the merchant's name, logo and colour),
 * the order lines, the total, and while the session is open a card form posted back to Tessera,
 * its Pay button carrying the amount, all in the shopper's language. No inline script and no
 * external resource but the merchant's logo; written with the one HTML kit (src/web/html.ts), so
 * everything from the merchant is escaped.
 */
import { html, type HtmlDocument, type SafeHtml } from '../web/html.js';
import { parseAmount, currencyExponent } from '../money.js';
import { renderCardForm, type CardFormState } from './card-form.js';
import type { ShopperLocale } from './locales.js';
import { translate, type MessageKey } from './messages.js';
import { formatMoney } from './format.js';
import { shopperPage, shopperPageHeaders, type ShopperBrand } from './page.js';

/** An origin as CSP writes it: scheme, host and port, nothing that could end the directive. */
const cspOrigin = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;

/**
 * Nothing cached, no referrer, scripts under the page's nonce only, no framing (clickjacking), the
 * form posted to Tessera only. form-action also governs the redirects that follow a post (browsers
 * block the last hop otherwise), so a paid form's redirect to the shop needs the origin of the
 * session's returnUrl.
 */
export function checkoutPageHeaders(
  page: SafeHtml,
  brand: ShopperBrand | null,
  returnUrl?: string,
): Record<string, string> {
  const shop = returnUrl === undefined ? '' : new URL(returnUrl).origin;
  return shopperPageHeaders(page, brand, cspOrigin.test(shop) ? `'self' ${shop}` : "'self'");
}

/** What the page shows of a checkout session (src/checkout/queries.ts holds the row). */
export interface CheckoutSessionView {
  id: string;
  status: 'open' | 'complete' | 'expired';
  /** Minor units, as a string of digits. */
  amount_total: string;
  currency: string;
  details: {
    lineItems: Array<{
      amount: number | null;
      currency: string | null;
      description: string | null;
      name: string | null;
      quantity: number | null;
    }> | null;
    cancelUrl: string | null;
    returnUrl: string;
    /** The page's language, when the session names one. */
    locale?: string | null;
  };
}

export interface CheckoutPageView {
  session: CheckoutSessionView;
  brand: ShopperBrand;
  /** An attempt is under way (another tab's post, or a payment awaiting 3-D Secure). */
  pending: boolean;
  /** Why the last card did not go through, for the shopper to read. */
  declined?: MessageKey;
}

/** A line's unit price as the shop gave it (a number in major units, decimals allowed: docs/api.md). */
function unitPrice(locale: ShopperLocale, amount: number | string, currency: string): string {
  const value = Number(amount);
  if (!Number.isFinite(value)) return `${amount} ${currency}`;
  const minor = parseAmount(value.toFixed(currencyExponent(currency)).replace('.', ''));
  return minor === undefined ? `${amount} ${currency}` : formatMoney(locale, minor, currency);
}

function lines(locale: ShopperLocale, session: CheckoutSessionView): SafeHtml {
  const t = (key: MessageKey) => translate(locale, key);
  const rows = (session.details.lineItems ?? []).map((item) => {
    const quantity = item.quantity ?? 1;
    const price = item.amount === null ? '' : unitPrice(locale, item.amount, item.currency ?? session.currency);
    const name = item.name ?? item.description ?? translate(locale, 'item');
    return html`<tr>
      <td>${name}</td>
      <td class="num">${quantity}</td>
      <td class="num">${price}</td>
    </tr> `;
  });
  const total = formatMoney(locale, BigInt(session.amount_total), session.currency);
  const head = rows.length
    ? html`<thead>
        <tr>
          <th scope="col">${t('item')}</th>
          <th scope="col" class="num">${t('quantity')}</th>
          <th scope="col" class="num">${t('unitPrice')}</th>
        </tr>
      </thead>`
    : '';
  return html`<table>
    <caption>
      ${t('orderSummary')}
    </caption>
    ${head}
    <tbody>
      ${rows}
    </tbody>
    <tfoot>
      <tr>
        <td colspan="2">${t('total')}</td>
        <td class="num" id="total">${total}</td>
      </tr>
    </tfoot>
  </table>`;
}

function cardForm(locale: ShopperLocale, view: CheckoutPageView, state?: CardFormState): SafeHtml {
  const { session } = view;
  const amount = formatMoney(locale, BigInt(session.amount_total), session.currency);
  const cancel = session.details.cancelUrl
    ? html`<p><a href="/checkout/${session.id}/cancel">${translate(locale, 'cancel')}</a></p>`
    : '';
  const declined = view.declined
    ? html`<p class="error" id="declined" role="alert">${translate(locale, view.declined)}</p>`
    : '';
  const form = renderCardForm({
    locale,
    action: `/checkout/${session.id}/pay`,
    payLabel: translate(locale, 'pay', { amount }),
    state,
  });
  return html`${declined} ${form} ${cancel}`;
}

export function renderCheckoutPage(locale: ShopperLocale, view: CheckoutPageView, state?: CardFormState): HtmlDocument {
  const { session } = view;
  const note = (key: MessageKey) => html`<p id="state" role="status">${translate(locale, key)}</p>`;
  let tail: SafeHtml;
  const open = session.status === 'open' && !view.pending;
  if (session.status === 'complete') tail = note('checkoutPaid');
  else if (session.status === 'expired') tail = note('checkoutExpired');
  else if (view.pending) tail = note('checkoutPending');
  else tail = cardForm(locale, view, state);
  return shopperPage({
    locale,
    title: translate(locale, 'checkoutTitle', { merchant: view.brand.name }),
    brand: view.brand,
    body: html`${lines(locale, session)} ${tail}`,
    cardScripts: open,
  });
}

/** A page without a form (not found, too many attempts…), in the shopper's language. */
export function renderCheckoutMessage(
  locale: ShopperLocale,
  title: MessageKey,
  text: MessageKey,
  values: Record<string, string> = {},
): HtmlDocument {
  return shopperPage({
    locale,
    title: translate(locale, title),
    brand: { name: translate(locale, title), brandColor: null, logoUrl: null },
    body: html`<p>${translate(locale, text, values)}</p>`,
  });
}
