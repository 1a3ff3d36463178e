/**
 * The frame of every page a shopper sees on Tessera (hosted checkout, hosted invoice): the
 * language and its direction, the merchant's name, logo and brand colour, the style, and the
 * card scripts, which are files of this origin run under the page's nonce (never inline:
 * docs/decisions/0025, 0047). Without script the pages work the same, checked by the server
 * (progressive enhancement). Written with the one HTML kit (src/web/html.ts).
 */
import { html, htmlDocument, script, scriptSource, styleText, type HtmlDocument, type SafeHtml } from '../web/html.js';
import { textDirection, type ShopperLocale } from './locales.js';

/** What the merchant set in the dashboard's Settings: how its pages look to its shoppers. */
export interface ShopperBrand {
  name: string;
  /** `#rrggbb`, checked when set (src/merchants/branding.ts). */
  brandColor: string | null;
  /** An https URL, checked when set. */
  logoUrl: string | null;
}

const brandColorForm = /^#[0-9a-f]{6}$/i;

/** WCAG relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const channel = (offset: number) => {
    const value = parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/**
 * White or black text on the brand colour, whichever contrasts more: one of the two always reaches
 * WCAG's 4.5:1, so a merchant's colour can never make the Pay button unreadable.
 */
export function textOn(hex: string): '#ffffff' | '#000000' {
  const light = luminance(hex);
  return 1.05 / (light + 0.05) >= (light + 0.05) / 0.05 ? '#ffffff' : '#000000';
}

const css = styleText`*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;background:#f4f5f7;color:#1f2933;margin:0}
main{max-width:34rem;margin:2rem auto;background:#fff;border-radius:8px;padding:2rem;box-shadow:0 1px 3px rgba(0,0,0,.12);border-top:4px solid var(--brand)}
@media (max-width:40rem){main{margin:0;border-radius:0;padding:1.25rem;min-height:100vh}}
header{display:flex;align-items:center;gap:.75rem;margin-bottom:1rem}
header img{max-height:40px;max-width:160px}
h1{font-size:1.25rem;margin:0}
h2{font-size:1rem;margin:1.5rem 0 .5rem}
table{width:100%;border-collapse:collapse;margin:1rem 0}
caption{text-align:start;font-weight:600;padding-bottom:.25rem}
th,td{text-align:start;padding:.4rem .25rem;border-bottom:1px solid #e4e7eb;vertical-align:top}
.num{text-align:end;white-space:nowrap}
tfoot td{font-weight:600;border-bottom:0}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}
dt{color:#52606d}dd{margin:0}
.status{display:inline-block;padding:.15rem .5rem;border-radius:4px;background:#e4e7eb}
.status.paid{background:#d5f5e3;color:#0b5e2c}.status.void{background:#fde2e1;color:#8a1414}
form{display:grid;gap:.9rem;margin-top:1rem}
.field{display:grid;gap:.25rem;align-content:start}
.row{display:grid;grid-template-columns:1fr 1fr;gap:.75rem}
label{font-size:.9rem;font-weight:500}
.hint{color:#52606d;font-size:.8rem}
.number{position:relative}
input{font:inherit;width:100%;padding:.6rem .7rem;border:1px solid #7b8794;border-radius:6px;background:#fff;color:#1f2933}
input:focus{outline:3px solid var(--brand);outline-offset:1px}
input[aria-invalid=true]{border-color:#b3261e;border-width:2px}
.brand{position:absolute;inset-inline-end:.5rem;top:50%;transform:translateY(-50%);font-size:.75rem;font-weight:700;padding:.1rem .4rem;border-radius:4px;background:#e4e7eb;color:#1f2933}
.brand:empty{display:none}
.field-error:empty{display:none}
.error{color:#b3261e;font-size:.875rem;margin:0}
p.error{padding:.6rem .75rem;background:#fdecea;border-radius:6px}
button{font:inherit;font-weight:600;padding:.8rem;border:0;border-radius:6px;background:var(--brand);color:var(--on-brand);cursor:pointer}
button:focus-visible{outline:3px solid #1f2933;outline-offset:2px}
button[disabled]{opacity:.7;cursor:progress}
a{color:#1a4f9c}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.secure{color:#52606d;font-size:.8rem;text-align:center;margin:1rem 0 0}`;

/** The merchant's colour where it is safe (an exact `#rrggbb`), else Tessera's blue. */
function brandStyle(brand: ShopperBrand): SafeHtml {
  const color = brand.brandColor && brandColorForm.test(brand.brandColor) ? brand.brandColor : '#1f5fbf';
  return html`:root{--brand:${color};--on-brand:${textOn(color)}}`;
}

/** The logo's origin for CSP img-src, or null when there is none (or it is not https). */
export function logoOrigin(brand: ShopperBrand): string | null {
  if (!brand.logoUrl) return null;
  try {
    const url = new URL(brand.logoUrl);
    return url.protocol === 'https:' ? url.origin : null;
  } catch {
    return null;
  }
}

export interface ShopperPageOptions {
  locale: ShopperLocale;
  title: string;
  brand: ShopperBrand;
  body: SafeHtml;
  /** Load the card scripts (pages with a card form). */
  cardScripts?: boolean;
}

/**
 * The document every shopper page is (the hosted pages and the card frame): its language and
 * direction, the head's common lines and title, then the page's own `head` lines and `body`.
 */
export function shopperDocument(
  locale: ShopperLocale,
  title: string,
  head: SafeHtml,
  body: (nonce: string) => SafeHtml,
): HtmlDocument {
  return htmlDocument(
    (nonce) =>
      html`<!doctype html>
        <html lang="${locale}" dir="${textDirection(locale)}">
          <head>
            <meta charset="utf-8" />
            <meta name="viewport" content="width=device-width, initial-scale=1" />
            <meta name="robots" content="noindex" />
            <title>${title}</title>
            ${head}
          </head>
          <body>
            ${body(nonce)}
          </body>
        </html> `,
  );
}

export function shopperPage(options: ShopperPageOptions): HtmlDocument {
  const { locale, brand } = options;
  const logo = logoOrigin(brand) ? html`<img src="${brand.logoUrl}" alt="" />` : '';
  return shopperDocument(
    locale,
    options.title,
    html`<style>
      ${brandStyle(brand)}
      ${css}
    </style>`,
    (nonce) =>
      html`<main>
          <header>
            ${logo}
            <h1>${brand.name}</h1>
          </header>
          ${options.body}
        </main>
        ${options.cardScripts ? ['\n', script('/js/v1/card-input.js', nonce), '\n', script('/js/v1/hosted-form.js', nonce)] : ''}`,
  );
}

/**
 * Headers of every shopper page: nothing cached, no referrer (the address holds a token), no
 * framing (clickjacking), scripts only under the page's nonce, images only from the merchant's
 * logo, and forms posted where `formAction` says.
 */
export function shopperPageHeaders(
  page: SafeHtml,
  brand: ShopperBrand | null,
  formAction: string,
): Record<string, string> {
  const logo = brand ? logoOrigin(brand) : null;
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'content-security-policy': [
      "default-src 'none'",
      `script-src ${scriptSource(page)}`,
      "style-src 'unsafe-inline'",
      ...(logo ? [`img-src ${logo}`] : []),
      `form-action ${formAction}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
  };
}
