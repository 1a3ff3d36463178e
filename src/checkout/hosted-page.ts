/**
 * The hosted checkout page (docs/checkout.md, docs/checkout.md#the-page): who is paid (the merchant's name, logo and colour),
 * the order lines, the total, and while the session is open a card form posted back to Tessera,
 * its Pay button carrying the amount, all in the shopper's language (src/shopper/). No inline
 * script and no external resource but the merchant's logo; everything from the merchant is escaped.
 */
import { escapeHtml } from '../payments/three-d-secure-page.js';
import { renderCardForm, type CardFormState } from '../shopper/card-form.js';
import type { ShopperLocale } from '../shopper/locales.js';
import { translate, type MessageKey } from '../shopper/messages.js';
import { formatMoney } from '../shopper/format.js';
import { shopperPage, shopperPageHeaders, type ShopperBrand } from '../shopper/page.js';
import { parseAmount, currencyExponent } from '../money.js';
import type { CheckoutSessionRow } from './queries.js';

/** An origin as CSP writes it: scheme, host and port, nothing that could end the directive. */
const cspOrigin = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;

/**
 * Nothing cached, no referrer, scripts of this origin only, no framing (clickjacking), the form
 * posted to Tessera only. form-action also governs the redirects that follow a post (browsers
 * block the last hop otherwise), so a paid form's redirect to the shop needs the origin of the
 * session's returnUrl.
 */
export function checkoutPageHeaders(brand: ShopperBrand | null, returnUrl?: string): Record<string, string> {
  const shop = returnUrl === undefined ? '' : new URL(returnUrl).origin;
  return shopperPageHeaders(brand, cspOrigin.test(shop) ? `'self' ${shop}` : "'self'");
}

export interface CheckoutPageView {
  session: CheckoutSessionRow;
  brand: ShopperBrand;
  /** An attempt is under way (another tab's post, or a payment awaiting 3-D Secure). */
  pending: boolean;
  /** Why the last card did not go through, for the shopper to read. */
  declined?: MessageKey;
}

/** A line's unit price as the shop gave it (a number in major units, decimals allowed: docs/api.md#requests). */
function unitPrice(locale: ShopperLocale, amount: number | string, currency: string): string {
  const value = Number(amount);
  if (!Number.isFinite(value)) return `${amount} ${currency}`;
  const minor = parseAmount(value.toFixed(currencyExponent(currency)).replace('.', ''));
  return minor === undefined ? `${amount} ${currency}` : formatMoney(locale, minor, currency);
}

function lines(locale: ShopperLocale, session: CheckoutSessionRow): string {
  const t = (key: MessageKey) => escapeHtml(translate(locale, key));
  const rows = (session.details.lineItems ?? []).map((item) => {
    const quantity = item.quantity ?? 1;
    const price = item.amount === null ? '' : unitPrice(locale, item.amount, item.currency ?? session.currency);
    const name = item.name ?? item.description ?? translate(locale, 'item');
    return `<tr><td>${escapeHtml(name)}</td><td class="num">${quantity}</td><td class="num">${escapeHtml(price)}</td></tr>`;
  });
  const total = formatMoney(locale, BigInt(session.amount_total), session.currency);
  const head = rows.length
    ? `<thead><tr><th scope="col">${t('item')}</th><th scope="col" class="num">${t('quantity')}</th><th scope="col" class="num">${t('unitPrice')}</th></tr></thead>`
    : '';
  return `<table><caption>${t('orderSummary')}</caption>${head}<tbody>${rows.join('\n')}</tbody>
<tfoot><tr><td colspan="2">${t('total')}</td><td class="num" id="total">${escapeHtml(total)}</td></tr></tfoot></table>`;
}

function cardForm(locale: ShopperLocale, view: CheckoutPageView, state?: CardFormState): string {
  const { session } = view;
  const amount = formatMoney(locale, BigInt(session.amount_total), session.currency);
  const cancel = session.details.cancelUrl
    ? `<p><a href="${escapeHtml(`/checkout/${session.id}/cancel`)}">${escapeHtml(translate(locale, 'cancel'))}</a></p>`
    : '';
  const declined = view.declined
    ? `<p class="error" id="declined" role="alert">${escapeHtml(translate(locale, view.declined))}</p>`
    : '';
  const form = renderCardForm({
    locale,
    action: `/checkout/${session.id}/pay`,
    payLabel: translate(locale, 'pay', { amount }),
    state,
  });
  return `${declined}\n${form}\n${cancel}`;
}

export function renderCheckoutPage(locale: ShopperLocale, view: CheckoutPageView, state?: CardFormState): string {
  const { session } = view;
  const note = (key: MessageKey) => `<p id="state" role="status">${escapeHtml(translate(locale, key))}</p>`;
  let tail: string;
  const open = session.status === 'open' && !view.pending;
  if (session.status === 'complete') tail = note('checkoutPaid');
  else if (session.status === 'expired') tail = note('checkoutExpired');
  else if (view.pending) tail = note('checkoutPending');
  else tail = cardForm(locale, view, state);
  return shopperPage({
    locale,
    title: translate(locale, 'checkoutTitle', { merchant: view.brand.name }),
    brand: view.brand,
    body: `${lines(locale, session)}\n${tail}`,
    cardScripts: open,
  });
}

/** A page without a form (not found, too many attempts…), in the shopper's language. */
export function renderCheckoutMessage(
  locale: ShopperLocale,
  title: MessageKey,
  text: MessageKey,
  values: Record<string, string> = {},
): string {
  return shopperPage({
    locale,
    title: translate(locale, title),
    brand: { name: translate(locale, title), brandColor: null, logoUrl: null },
    body: `<p>${escapeHtml(translate(locale, text, values))}</p>`,
  });
}
