/**
 * The hosted checkout page (DESIGN §9): who is paid, the order lines, the total, and while the
 * session is open a card form posted back to Tessera. Plain HTML with no script at all (the CSP
 * forbids it) and no external resource; everything from the merchant is escaped. The card number
 * and security code are never written into a page, not even after a refused form.
 */
import type { CardField, CardFormState } from '../invoices/hosted-page.js';
import { currencyExponent, formatAmount } from '../money.js';
import { escapeHtml } from '../payments/three-d-secure-page.js';
import type { CheckoutSessionRow } from './queries.js';

/** An origin as CSP writes it: scheme, host and port, nothing that could end the directive. */
const cspOrigin = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;

/**
 * Nothing cached, no referrer, no script, no framing (clickjacking), the form posted to Tessera
 * only. form-action also governs the redirects that follow a post (browsers block the last hop
 * otherwise), so a paid form's redirect to the shop needs the origin of the session's returnUrl.
 */
export function checkoutPageHeaders(returnUrl?: string): Record<string, string> {
  const shop = returnUrl === undefined ? '' : new URL(returnUrl).origin;
  const formAction = cspOrigin.test(shop) ? `'self' ${shop}` : "'self'";
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  };
}

export interface CheckoutPageView {
  session: CheckoutSessionRow;
  merchantName: string;
  /** An attempt is under way (another tab's post, or a payment awaiting 3-D Secure). */
  pending: boolean;
  /** Why the last card did not go through, for the shopper to read. */
  declined?: string;
}

const css = `body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1f2933; margin: 0; }
main { max-width: 34rem; margin: 3rem auto; background: #fff; border-radius: 8px; padding: 2rem; }
table { width: 100%; border-collapse: collapse; margin: 1rem 0; }
td { padding: 0.4rem 0.25rem; border-bottom: 1px solid #e4e7eb; } td.num { text-align: right; }
form { display: grid; gap: 0.75rem; } label { display: grid; gap: 0.25rem; }
input { font-size: 1rem; padding: 0.5rem; } .error { color: #a61b1b; }
button { font-size: 1rem; padding: 0.75rem; background: #1f5fbf; color: #fff; border: 0; border-radius: 6px; }`;

export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${css}</style></head>
<body><main>
${body}
</main></body>
</html>
`;
}

/** A line's unit price as the shop gave it (a number, decimals allowed: DESIGN §2), in the currency's digits. */
function unitPrice(amount: number | string, currency: string): string {
  const value = Number(amount);
  if (!Number.isFinite(value)) return `${amount} ${currency}`;
  return `${value.toFixed(currencyExponent(currency))} ${currency}`;
}

function lines(session: CheckoutSessionRow): string {
  const items = session.details.lineItems ?? [];
  const rows = items.map((item) => {
    const quantity = item.quantity ?? 1;
    const price = item.amount === null ? '' : unitPrice(item.amount, item.currency ?? session.currency);
    return `<tr><td>${escapeHtml(item.name ?? item.description ?? 'Item')}</td><td class="num">${quantity}</td><td class="num">${escapeHtml(price)}</td></tr>`;
  });
  const total = `${formatAmount(BigInt(session.amount_total), session.currency)} ${session.currency}`;
  return `<table><tbody>${rows.join('\n')}</tbody>
<tfoot><tr><td colspan="2">Total</td><td class="num" id="total">${escapeHtml(total)}</td></tr></tfoot></table>`;
}

const fieldError = (state: CardFormState | undefined, field: CardField | 'form') => {
  const message = state?.errors[field];
  return message ? `<span class="error" id="${field}-error">${escapeHtml(message)}</span>` : '';
};

function cardForm(view: CheckoutPageView, state?: CardFormState): string {
  const { session } = view;
  const cancel = session.details.cancelUrl
    ? `<p><a href="${escapeHtml(`/checkout/${session.id}/cancel`)}">Cancel and return to the shop</a></p>`
    : '';
  return `${view.declined ? `<p class="error" id="declined">The card was not accepted: ${escapeHtml(view.declined)}</p>` : ''}
${fieldError(state, 'form')}
<form method="post" action="/checkout/${escapeHtml(session.id)}/pay" autocomplete="on">
<label>Card number <input name="cardNo" inputmode="numeric" autocomplete="cc-number" maxlength="23" required>
${fieldError(state, 'cardNo')}</label>
<label>Expiry (MM/YY) <input name="expiry" autocomplete="cc-exp" maxlength="7" required value="${escapeHtml(state?.expiry ?? '')}">
${fieldError(state, 'expiry')}</label>
<label>Security code <input name="securityCode" inputmode="numeric" autocomplete="cc-csc" maxlength="4" required>
${fieldError(state, 'securityCode')}</label>
<label>Name on card <input name="name" autocomplete="cc-name" maxlength="100" required value="${escapeHtml(state?.name ?? '')}">
${fieldError(state, 'name')}</label>
<button type="submit">Pay</button>
</form>
${cancel}`;
}

export function renderCheckoutPage(view: CheckoutPageView, state?: CardFormState): string {
  const { session } = view;
  let tail: string;
  if (session.status === 'complete') tail = '<p id="state">This order has been paid. Thank you.</p>';
  else if (session.status === 'expired') tail = '<p id="state">This checkout has expired; return to the shop.</p>';
  else if (view.pending) tail = '<p id="state">A payment is being processed. Reload this page in a moment.</p>';
  else tail = cardForm(view, state);
  const heading = `<h1>${escapeHtml(view.merchantName)}</h1>`;
  return layout(`Pay ${view.merchantName}`, `${heading}\n${lines(session)}\n${tail}`);
}

export function renderCheckoutMessage(title: string, text: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`);
}
