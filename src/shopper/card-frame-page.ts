/**
 * The card frame's page (docs/sdk.md): the card field that tessera.js mounts as an iframe of
 * Tessera's origin. Its script and style are files of this origin, the scripts run under the
 * page's nonce (no inline script: docs/decisions/0047); it may be framed only by the merchant's
 * website origins (CSP frame-ancestors), so it has no X-Frame-Options. Written with the one HTML
 * kit (src/web/html.ts): everything from the request is escaped; the card is never written into it.
 */
import { html, script, scriptSource, type HtmlDocument, type SafeHtml } from '../web/html.js';
import type { ShopperLocale } from './locales.js';
import { shopperDocument } from './page.js';
import { browserMessages, translate, type MessageKey } from './messages.js';

/** Who may frame the page: the merchant's website origins, or any page in development. */
export type FrameAncestors = { any: true } | { any: false; origins: readonly string[] };

export function frameAncestorsSource(ancestors: FrameAncestors): string {
  if (ancestors.any) return '*';
  return ancestors.origins.length === 0 ? "'none'" : ancestors.origins.join(' ');
}

export function cardFrameHeaders(page: SafeHtml, ancestors: FrameAncestors): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    // The page depends on the merchant's settings of the moment: never kept.
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'content-security-policy': [
      "default-src 'none'",
      `script-src ${scriptSource(page)}`,
      "style-src 'self'",
      "connect-src 'self'",
      "form-action 'none'",
      "base-uri 'none'",
      `frame-ancestors ${frameAncestorsSource(ancestors)}`,
    ].join('; '),
  };
}

function page(locale: ShopperLocale, body: (nonce: string) => SafeHtml): HtmlDocument {
  return shopperDocument(
    locale,
    translate(locale, 'cardDetails'),
    html`<link rel="stylesheet" href="/js/v1/card-frame.css" />`,
    body,
  );
}

export interface CardFrameView {
  locale: ShopperLocale;
  publicKey: string;
  parentOrigin: string;
  frameId: string;
  /** mountCard's amount and currency, written for the shopper: the label of the page's Pay button. */
  payLabel?: string | undefined;
}

/**
 * The field in the shopper's language (tessera.js's `locale`, else the browser's): labels here,
 * and the messages the frame's script shows as the shopper types in data-messages.
 */
export function renderCardFrame(view: CardFrameView): HtmlDocument {
  const t = (key: MessageKey) => translate(view.locale, key);
  const messages = JSON.stringify(browserMessages(view.locale));
  return page(
    view.locale,
    (nonce) =>
      html`<form
          id="card-form"
          novalidate
          autocomplete="on"
          data-key="${view.publicKey}"
          data-parent-origin="${view.parentOrigin}"
          data-frame-id="${view.frameId}"
          data-messages="${messages}"
          ${view.payLabel ? html` data-pay-label="${view.payLabel}"` : ''}
        >
          <div class="row">
            <label for="cardNo">${t('cardNumber')}</label>
            <div class="number">
              <input
                id="cardNo"
                name="cardNo"
                inputmode="numeric"
                autocomplete="cc-number"
                maxlength="23"
                placeholder="1234 1234 1234 1234"
                spellcheck="false"
                aria-describedby="error"
              />
              <span class="brand" id="card-brand" aria-live="polite" data-label="${t('cardBrand')}"></span>
            </div>
          </div>
          <div class="row two">
            <div class="row">
              <label for="expiry">${t('expiry')}</label>
              <input
                id="expiry"
                name="expiry"
                inputmode="numeric"
                autocomplete="cc-exp"
                maxlength="7"
                placeholder="${t('expiryPlaceholder')}"
                aria-describedby="error"
              />
            </div>
            <div class="row">
              <label for="securityCode">${t('securityCode')}</label>
              <input
                id="securityCode"
                name="securityCode"
                inputmode="numeric"
                autocomplete="cc-csc"
                maxlength="4"
                placeholder="CVC"
                aria-describedby="error"
              />
            </div>
          </div>
          <p id="error" class="error" role="alert"></p>
        </form>
        ${script('/js/v1/card-input.js', nonce)} ${script('/js/v1/card-frame.js', nonce)}`,
  );
}

/** What a developer sees in the frame when the key or the page's origin is refused (no script). */
export function renderRefusedFrame(message: string): HtmlDocument {
  return page('en', () => html`<p class="refused" id="refused" role="alert">${message}</p>`);
}
