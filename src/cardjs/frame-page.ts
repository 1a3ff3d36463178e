/**
 * The card frame's page (issue 14): the card field that tessera.js mounts as an iframe of Tessera's
 * origin. Its script and style are files of this origin (CSP without inline script); it may be
 * framed only by the merchant's website origins (CSP frame-ancestors), so it has no
 * X-Frame-Options. Everything from the request is escaped; the card is never written into it.
 */
import { escapeHtml } from '../payments/three-d-secure-page.js';

/** Who may frame the page: the merchant's website origins, or any page in development. */
export type FrameAncestors = { any: true } | { any: false; origins: readonly string[] };

export function frameAncestorsSource(ancestors: FrameAncestors): string {
  if (ancestors.any) return '*';
  return ancestors.origins.length === 0 ? "'none'" : ancestors.origins.join(' ');
}

export function cardFrameHeaders(ancestors: FrameAncestors): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    // The page depends on the merchant's settings of the moment: never kept.
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'content-security-policy': [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "form-action 'none'",
      "base-uri 'none'",
      `frame-ancestors ${frameAncestorsSource(ancestors)}`,
    ].join('; '),
  };
}

function page(body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>Card details</title>
<link rel="stylesheet" href="/js/v1/card-frame.css"></head>
<body>
${body}
</body>
</html>
`;
}

export interface CardFrameView {
  publicKey: string;
  parentOrigin: string;
  frameId: string;
}

export function renderCardFrame(view: CardFrameView): string {
  return page(`<form id="card-form" novalidate autocomplete="on" data-key="${escapeHtml(view.publicKey)}"
 data-parent-origin="${escapeHtml(view.parentOrigin)}" data-frame-id="${escapeHtml(view.frameId)}">
<div class="row"><label for="cardNo">Card number
<input id="cardNo" name="cardNo" inputmode="numeric" autocomplete="cc-number" maxlength="23" placeholder="1234 1234 1234 1234" spellcheck="false"></label></div>
<div class="row two"><label for="expiry">Expiry
<input id="expiry" name="expiry" autocomplete="cc-exp" maxlength="7" placeholder="MM / YY"></label>
<label for="securityCode">Security code
<input id="securityCode" name="securityCode" inputmode="numeric" autocomplete="cc-csc" maxlength="4" placeholder="CVC"></label></div>
<p id="error" class="error" role="alert"></p>
</form>
<script src="/js/v1/card-frame.js"></script>`);
}

/** What a developer sees in the frame when the key or the page's origin is refused. */
export function renderRefusedFrame(message: string): string {
  return page(`<p class="refused" id="refused" role="alert">${escapeHtml(message)}</p>`);
}
