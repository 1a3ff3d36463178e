/**
 * The hosted 3-D Secure challenge page of the sandbox (docs/api.md, nextAction): small,
 * self-contained HTML with no script and no external resource. The customer's browser reaches it
 * through the payment's nextAction.redirectToUrl; the payment's client secret in its address is
 * what lets it in. Written with the one HTML kit (src/web/html.ts), so everything merchant-supplied
 * is escaped. In the shopper's language (docs/decisions/0024: the `locale` the hosted checkout
 * hands on in the address, else the browser's Accept-Language), like the hosted checkout and
 * invoice pages that lead to it.
 */
import type { RedirectAction } from '../processor/processor.js';
import { html, type SafeHtml } from '../web/html.js';
import { formatMoney } from './format.js';
import { textDirection, type ShopperLocale } from './locales.js';
import { translate, type MessageKey } from './messages.js';

/** No script at all (script-src falls back to default-src 'none'). */
const contentSecurityPolicy = (formAction: string) =>
  `default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'; form-action ${formAction}; base-uri 'none'`;

/**
 * Headers for every page: nothing cached, the secret in the address never sent as a referrer, no
 * `<base>` and forms posted to this origin only (docs/security.md, "Headers").
 */
export const pageHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'content-security-policy': contentSecurityPolicy("'self'"),
} as const;

const cspOrigin = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;

/**
 * The challenge page's headers: form-action also governs the redirect that follows the post
 * (browsers block that hop otherwise), so the origin of the payment's returnUrl is allowed too.
 */
export function challengePageHeaders(returnUrl: string | null): Record<string, string> {
  let shop = '';
  let hostedCheckout = false;
  try {
    if (returnUrl !== null) {
      const url = new URL(returnUrl);
      shop = url.origin;
      hostedCheckout = hostedCheckoutReturn.test(url.pathname);
    }
  } catch {
    shop = '';
  }
  // A hosted checkout's payment returns to the checkout page, which sends the shopper on to the
  // shop's own returnUrl, unknown here: that second hop is allowed to any https address.
  const targets = ["'self'", ...(cspOrigin.test(shop) ? [shop] : []), ...(hostedCheckout ? ['https:'] : [])];
  return { ...pageHeaders, 'content-security-policy': contentSecurityPolicy(targets.join(' ')) };
}

/** The hosted checkout's return address (src/checkout/hosted-payment.ts). */
const hostedCheckoutReturn = /^\/checkout\/cs_\d{19}\/return$/;

function page(locale: ShopperLocale, title: string, body: SafeHtml): string {
  return html`<!doctype html>
    <html lang="${locale}" dir="${textDirection(locale)}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}</title>
        <style>
          body {
            font-family: system-ui, sans-serif;
            background: #f4f5f7;
            color: #1f2933;
            margin: 0;
          }
          main {
            max-width: 26rem;
            margin: 4rem auto;
            background: #fff;
            border-radius: 8px;
            padding: 2rem;
            box-shadow: 0 1px 3px rgba(0, 0, 0, 0.12);
          }
          h1 {
            font-size: 1.25rem;
            margin-top: 0;
          }
          dl {
            display: grid;
            grid-template-columns: auto 1fr;
            gap: 0.25rem 1rem;
          }
          dt {
            color: #616e7c;
          }
          dd {
            margin: 0;
          }
          form {
            display: flex;
            gap: 0.75rem;
            margin-top: 1.5rem;
          }
          button {
            flex: 1;
            font-size: 1rem;
            padding: 0.75rem;
            border: 0;
            border-radius: 6px;
            cursor: pointer;
          }
          .pass {
            background: #0e7c3a;
            color: #fff;
          }
          .fail {
            background: #c62828;
            color: #fff;
          }
          .note {
            color: #616e7c;
            font-size: 0.875rem;
          }
        </style>
      </head>
      <body>
        <main>${body}</main>
      </body>
    </html> `.text;
}

export interface ChallengeView {
  paymentId: string;
  clientSecret: string;
  /** The amount in minor units and its currency, written in the shopper's language on the page. */
  amount: bigint;
  currency: string;
  description: string | null;
  /** Where the post's redirect goes (the payment's returnUrl), for the page's form-action. */
  returnUrl: string | null;
}

/** The challenge, in the shopper's language: Pass and Fail post the same form with a different outcome. */
export function renderChallengePage(view: ChallengeView, locale: ShopperLocale): string {
  const t = (key: MessageKey) => translate(locale, key);
  const rows = [
    [translate(locale, 'amount'), formatMoney(locale, view.amount, view.currency)],
    ...(view.description ? [[translate(locale, 'description'), view.description]] : []),
  ].map(
    ([term, value]) =>
      html`<dt>${term}</dt>
        <dd>${value}</dd>`,
  );
  return page(
    locale,
    translate(locale, 'threeDsTitle'),
    html`<h1>${t('threeDsTitle')}</h1>
      <p>${t('threeDsIntro')}</p>
      <dl>${rows}</dl>
      <form method="post" action="/3ds/${encodeURIComponent(view.paymentId)}">
        <input type="hidden" name="secret" value="${view.clientSecret}" />
        <input type="hidden" name="locale" value="${locale}" />
        <button class="pass" type="submit" name="outcome" value="pass">${t('threeDsPass')}</button>
        <button class="fail" type="submit" name="outcome" value="fail">${t('threeDsFail')}</button>
      </form>
      <p class="note">${t('threeDsSandbox')}</p>`,
  );
}

/**
 * A processor's own 3-D Secure step that is a form post (docs/processors.md, 3-D Secure): the
 * shopper's browser posts the processor's fields to its page, with the button, so that no script
 * is needed. The page's CSP allows that one form target (processorRedirectHeaders).
 */
export function renderProcessorRedirectPage(action: RedirectAction, locale: ShopperLocale): string {
  const t = (key: MessageKey) => translate(locale, key);
  const fields = Object.entries(action.data).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" /> `,
  );
  return page(
    locale,
    translate(locale, 'threeDsTitle'),
    html`<h1>${t('threeDsTitle')}</h1>
      <p>${t('threeDsIntro')}</p>
      <form method="post" action="${action.url}">
        ${fields}<button class="pass" type="submit">${t('threeDsContinue')}</button>
      </form>`,
  );
}

/** The redirect page's headers: the page's own, with the processor's page as the one form target. */
export function processorRedirectHeaders(action: RedirectAction): Record<string, string> {
  return {
    ...pageHeaders,
    'content-security-policy': contentSecurityPolicy(new URL(action.url).origin),
  };
}

/** A missing payment and a wrong secret look the same, so the page reveals nothing about either. */
export function renderNotFoundPage(locale: ShopperLocale): string {
  return page(
    locale,
    translate(locale, 'notFoundTitle'),
    html`<h1>${translate(locale, 'notFoundTitle')}</h1>
      <p>${translate(locale, 'threeDsNotFound')}</p>`,
  );
}

/** A post without Pass or Fail. */
export function renderBadRequestPage(locale: ShopperLocale): string {
  return page(
    locale,
    translate(locale, 'badRequestTitle'),
    html`<h1>${translate(locale, 'badRequestTitle')}</h1>
      <p>${translate(locale, 'threeDsChoose')}</p>`,
  );
}

/** Shown when the payment has no return address, or no longer awaits authentication. */
export function renderResultPage(
  result: { paymentId: string; status: string; message: MessageKey },
  locale: ShopperLocale,
): string {
  const t = (key: MessageKey) => translate(locale, key);
  return page(
    locale,
    translate(locale, 'threeDsResultTitle'),
    html`<h1>${t(result.message)}</h1>
      <dl>
        <dt>${t('payment')}</dt>
        <dd>${result.paymentId}</dd>
        <dt>${t('paymentStatus')}</dt>
        <dd>${result.status}</dd>
      </dl>
      <p class="note">${t('closePage')}</p>`,
  );
}
