/**
 * The API reference at /docs (docs/api.md#the-api-reference, issue 21): Redoc's standalone bundle, served by the
 * service itself (copied into dist/ by scripts/build.mjs, so that redoc and what it is built from
 * stay out of the production install; from node_modules when run from the sources), renders the merchant OpenAPI document — the guides and the
 * error catalog in its opening sections, a request example, answers and `x-codeSamples` on
 * every operation, search and deep links (`#operation/…`, `#section/…`). No request leaves the
 * service: no CDN, no web font (docs/decisions/0018-api-reference-redoc.md says why Redoc).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { html, htmlDocument, script, scriptSource, styleText, type HtmlDocument } from '../web/html.js';
import { fileURLToPath } from 'node:url';
import { apiBasePath, type App } from './app-types.js';

/** Beside this module in dist/ (scripts/build.mjs copies it there); redoc's own from the sources. */
function bundlePath(): string {
  const built = fileURLToPath(new URL('./redoc.standalone.js', import.meta.url));
  return existsSync(built) ? built : createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
}

export const referencePath = '/docs';

/**
 * The reference's icon, in the tab and in place of the logo Redoc's menu footer loads from
 * cdn.redoc.ly (no option removes it; the page's policy blocked it, two console errors a visit).
 */
const favicon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="6" fill="#1f3a5f"/>
<path d="M8 9h16v4h-6v13h-4V13H8z" fill="#fff"/>
</svg>
`;
const faviconPath = `${referencePath}/favicon.svg`;
const redocLogo = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

/**
 * docs/dashboard.md#layout-phones-and-accessibility (no serious axe-core violation): Redoc's default colors for inline code, for the
 * error answers' tabs and for its small headings are below the 4.5:1 contrast of WCAG AA.
 */
const theme = {
  typography: { code: { color: '#b3261e' } },
  colors: { responses: { error: { tabTextColor: '#ff8a80' } } },
};

/**
 * What Redoc's theme cannot set: its small headings' color, and its code samples wrapped rather
 * than boxes that scroll sideways, which a keyboard could not reach (Redoc makes them no focus stop).
 */
const referenceStyle = styleText`body { margin: 0; }
redoc h5 { color: #50585d !important; }
redoc pre { white-space: pre-wrap !important; word-break: break-all; overflow: visible !important; }`;

/**
 * Redoc's media type and example pickers are selects without a name: this names them as Redoc
 * renders them (served from this origin, as the policy below requires of every script).
 */
const labelScript = `'use strict';
new MutationObserver(() => {
  for (const select of document.querySelectorAll('redoc select:not([aria-label])')) {
    const first = select.options[0] ? select.options[0].value : '';
    select.setAttribute('aria-label', first.includes('/') ? 'Media type' : 'Example');
  }
}).observe(document.documentElement, { childList: true, subtree: true });
`;

/**
 * The page: the bundle and the document, both from this origin; options as Redoc reads them. Its
 * scripts run under the page's nonce (docs/decisions/0047-one-html-kit.md).
 */
function referencePage(): HtmlDocument {
  return htmlDocument(
    (nonce) =>
      html`<!doctype html>
        <html lang="en">
          <head>
            <meta charset="utf-8" />
            <meta name="viewport" content="width=device-width, initial-scale=1" />
            <title>Tessera API reference</title>
            <link rel="icon" href="${faviconPath}" type="image/svg+xml" />
            <style>
              ${referenceStyle}
            </style>
          </head>
          <body>
            <redoc
              spec-url="${apiBasePath}/openapi.json"
              required-props-first="true"
              expand-responses="200"
              path-in-middle-panel="true"
              hide-hostname="true"
              json-sample-expand-level="3"
              theme="${JSON.stringify(theme)}"
            ></redoc>
            ${script(`${referencePath}/labels.js`, nonce)} ${script(`${referencePath}/redoc.standalone.js`, nonce)}
          </body>
        </html> `,
  );
}

/**
 * Nothing the page loads or fetches may come from another origin, so that the reference is the
 * same offline (the bundle's one address elsewhere, its logo's, is replaced by the favicon's).
 */
const referencePolicy = (page: HtmlDocument) =>
  [
    "default-src 'self'",
    `script-src ${scriptSource(page)}`,
    // Redoc's styles are inserted at run time (styled-components); its search runs in a blob: worker.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "worker-src 'self' blob:",
    "frame-ancestors 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');

/** Registers /docs, its scripts and /docs/json (the merchant document, as at /api/services/v1/openapi.json). */
export function registerApiReference(app: App, document: () => unknown): void {
  // Read once, on first use: 0.9 MB that every visit of /docs would otherwise read from disk.
  let bundle: Buffer | undefined;
  const hide = { schema: { hide: true } };
  const sendPage = async (_request: unknown, reply: import('fastify').FastifyReply) => {
    const page = referencePage();
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', referencePolicy(page))
      .send(page.text);
  };
  app.get(referencePath, hide, sendPage);
  app.get(`${referencePath}/redoc.standalone.js`, hide, async (_request, reply) => {
    bundle ??= Buffer.from(readFileSync(bundlePath(), 'utf8').replace(redocLogo, faviconPath));
    return reply
      .type('application/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400')
      .send(bundle);
  });
  app.get(`${referencePath}/labels.js`, hide, async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').header('cache-control', 'no-cache').send(labelScript),
  );
  app.get(faviconPath, hide, async (_request, reply) =>
    reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(favicon),
  );
  app.get(`${referencePath}/json`, hide, async () => document());
}
