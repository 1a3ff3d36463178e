/**
 * The hosted invoice page (DESIGN §4 hostedInvoiceUrl): who bills, the lines, the total, the due
 * date and the status, and while the invoice can be paid a card form posted back to Tessera.
 * Plain HTML: no script at all (the CSP forbids it), no external resource, everything from the
 * merchant escaped. The card number and security code are never written into a page, not even
 * after a refused form: errors are shown beside empty fields.
 */
import { escapeHtml } from '../payments/three-d-secure-page.js';

/**
 * Headers of every hosted invoice page: nothing cached, the token in the address never sent as a
 * referrer, no framing (a payment form inside someone else's page invites clickjacking), and the
 * form posted to Tessera only.
 */
export const invoicePageHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
} as const;

export interface HostedInvoiceView {
  invoiceId: string;
  token: string;
  merchantName: string;
  number: string;
  status: 'open' | 'paid' | 'uncollectible' | 'void';
  description: string | null;
  lines: Array<{ description: string; quantity: number; unitText: string; totalText: string }>;
  /** The amounts for people to read, e.g. "19.99 USD". */
  totalText: string;
  remainingText: string;
  dueDateText: string | null;
  paidAtText: string | null;
  /** A payment of the invoice is under way (processing, awaiting 3-D Secure): no second one. */
  paymentPending: boolean;
  /** Why the last payment failed, for the customer to read (a decline message). */
  lastError: string | null;
}

export type CardField = 'cardNo' | 'expiry' | 'securityCode' | 'name';

/** A refused form: a message per field, and what may be shown again (never the number or code). */
export interface CardFormState {
  errors: Partial<Record<CardField | 'form', string>>;
  expiry?: string;
  name?: string;
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1f2933; margin: 0; }
  main { max-width: 34rem; margin: 3rem auto; background: #fff; border-radius: 8px; padding: 2rem;
         box-shadow: 0 1px 3px rgba(0, 0, 0, 0.12); }
  h1 { font-size: 1.25rem; margin-top: 0; }
  h2 { font-size: 1rem; margin-top: 2rem; }
  table { width: 100%; border-collapse: collapse; margin: 1rem 0; }
  th, td { text-align: left; padding: 0.4rem 0.25rem; border-bottom: 1px solid #e4e7eb; }
  td.num, th.num { text-align: right; white-space: nowrap; }
  tfoot td { font-weight: 600; border-bottom: 0; }
  dl { display: grid; grid-template-columns: auto 1fr; gap: 0.25rem 1rem; }
  dt { color: #616e7c; }
  dd { margin: 0; }
  .status { display: inline-block; padding: 0.15rem 0.5rem; border-radius: 4px; background: #e4e7eb; }
  .status.paid { background: #d5f5e3; color: #0e7c3a; }
  .status.void { background: #fde2e1; color: #a61b1b; }
  form { display: grid; gap: 0.75rem; margin-top: 1rem; }
  label { display: grid; gap: 0.25rem; font-size: 0.9rem; }
  input { font-size: 1rem; padding: 0.5rem; border: 1px solid #9aa5b1; border-radius: 4px; }
  .row { display: grid; grid-template-columns: 1fr 1fr; gap: 0.75rem; }
  .error { color: #a61b1b; font-size: 0.875rem; }
  button { font-size: 1rem; padding: 0.75rem; border: 0; border-radius: 6px; background: #1f5fbf; color: #fff; cursor: pointer; }
  .note { color: #616e7c; font-size: 0.875rem; }
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

function summary(view: HostedInvoiceView): string {
  const lines = view.lines
    .map(
      (line) =>
        `<tr><td>${escapeHtml(line.description)}</td><td class="num">${line.quantity}</td>` +
        `<td class="num">${escapeHtml(line.unitText)}</td><td class="num">${escapeHtml(line.totalText)}</td></tr>`,
    )
    .join('\n');
  const facts: Array<[string, string]> = [
    ['Invoice', view.number],
    ...(view.dueDateText ? ([['Due', view.dueDateText]] as Array<[string, string]>) : []),
    ...(view.paidAtText ? ([['Paid', view.paidAtText]] as Array<[string, string]>) : []),
  ];
  return `<h1>${escapeHtml(view.merchantName)}</h1>
<p><span class="status ${escapeHtml(view.status)}">${escapeHtml(statusText[view.status])}</span></p>
<dl>${facts.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`).join('')}</dl>
${view.description ? `<p>${escapeHtml(view.description)}</p>` : ''}
<table>
<thead><tr><th>Description</th><th class="num">Qty</th><th class="num">Unit price</th><th class="num">Amount</th></tr></thead>
<tbody>
${lines}
</tbody>
<tfoot><tr><td colspan="3">Total</td><td class="num">${escapeHtml(view.totalText)}</td></tr></tfoot>
</table>`;
}

const statusText: Record<HostedInvoiceView['status'], string> = {
  open: 'Due',
  uncollectible: 'Due',
  paid: 'Paid',
  void: 'Void: nothing is due',
};

const fieldError = (state: CardFormState | undefined, field: CardField | 'form') => {
  const message = state?.errors[field];
  return message ? `<span class="error" id="${field}-error">${escapeHtml(message)}</span>` : '';
};

const described = (state: CardFormState | undefined, field: CardField) =>
  state?.errors[field] ? ` aria-invalid="true" aria-describedby="${field}-error"` : '';

function cardForm(view: HostedInvoiceView, state?: CardFormState): string {
  const action = `/invoice/${encodeURIComponent(view.invoiceId)}/pay`;
  return `<h2>Pay ${escapeHtml(view.remainingText)} by card</h2>
${view.lastError && !state ? `<p class="error">The last payment did not go through: ${escapeHtml(view.lastError)}</p>` : ''}
${fieldError(state, 'form')}
<form method="post" action="${action}" autocomplete="on">
<input type="hidden" name="token" value="${escapeHtml(view.token)}">
<label>Card number
<input name="cardNo" inputmode="numeric" autocomplete="cc-number" maxlength="23" required${described(state, 'cardNo')}>
${fieldError(state, 'cardNo')}</label>
<div class="row">
<label>Expiry (MM/YY)
<input name="expiry" autocomplete="cc-exp" placeholder="MM/YY" maxlength="7" required value="${escapeHtml(state?.expiry ?? '')}"${described(state, 'expiry')}>
${fieldError(state, 'expiry')}</label>
<label>Security code
<input name="securityCode" inputmode="numeric" autocomplete="cc-csc" maxlength="4" required${described(state, 'securityCode')}>
${fieldError(state, 'securityCode')}</label>
</div>
<label>Name on card
<input name="name" autocomplete="cc-name" maxlength="100" required value="${escapeHtml(state?.name ?? '')}"${described(state, 'name')}>
${fieldError(state, 'name')}</label>
<button type="submit">Pay ${escapeHtml(view.remainingText)}</button>
</form>`;
}

/** The invoice, and the card form while it can be paid. */
export function renderInvoicePage(view: HostedInvoiceView, state?: CardFormState): string {
  let tail: string;
  if (view.status === 'paid') tail = '<p>This invoice has been paid. Thank you.</p>';
  else if (view.status === 'void') tail = '<p>This invoice was voided; nothing is due.</p>';
  else if (view.paymentPending)
    tail = '<p>A payment of this invoice is being processed. Reload this page in a moment to see its result.</p>';
  else tail = cardForm(view, state);
  return layout(`Invoice ${view.number} from ${view.merchantName}`, `${summary(view)}\n${tail}`);
}

/** A missing invoice and a wrong token look the same, so the page reveals nothing about either. */
export function renderInvoiceNotFoundPage(): string {
  return layout('Not found', '<h1>This invoice page does not exist</h1><p>The link is wrong or incomplete.</p>');
}

/** Anything unexpected: the page says so without detail (the log has it, under the request's trace id). */
export function renderInvoiceErrorPage(): string {
  return layout(
    'Something went wrong',
    '<h1>Something went wrong</h1><p>Nothing was charged twice. Go back to the invoice link and reload it to see whether it is paid.</p>',
  );
}

export function renderInvoiceBadRequestPage(): string {
  return layout('Bad request', '<h1>The form could not be read</h1><p>Go back to the invoice link and try again.</p>');
}

/** Too many card attempts from one address or on one invoice (card testing), or the limit cannot be counted. */
export function renderInvoiceLimitedPage(retryAfterSeconds: number | null): string {
  return retryAfterSeconds === null
    ? layout(
        'Please try again',
        '<h1>Please try again</h1><p>The invoice page is briefly unavailable. Nothing was charged.</p>',
      )
    : layout(
        'Too many attempts',
        `<h1>Too many attempts</h1><p>Too many card attempts on this invoice page; go back and try again in ${retryAfterSeconds} seconds.</p>`,
      );
}
