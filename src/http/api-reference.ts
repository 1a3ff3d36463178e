/**
 * The API reference at /docs (DESIGN §14, issue 21): Redoc's standalone bundle, served by the
 * service itself from node_modules, renders the merchant OpenAPI document — the guides and the
 * error catalog in its opening sections, a request example, answers and `x-codeSamples` on
 * every operation, search and deep links (`#operation/…`, `#section/…`). No request leaves the
 * service: no CDN, no web font (docs/decisions/0018-api-reference-redoc.md says why Redoc).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { apiBasePath, type App } from './app-types.js';

const bundlePath = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

export const referencePath = '/docs';

/** The page: the bundle and the document, both from this origin; options as Redoc reads them. */
function referencePage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tessera API reference</title>
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="${apiBasePath}/openapi.json" required-props-first="true" expand-responses="200"
  path-in-middle-panel="true" hide-hostname="true" json-sample-expand-level="3"></redoc>
<script src="${referencePath}/redoc.standalone.js"></script>
</body>
</html>
`;
}

/** Registers /docs, its script and /docs/json (the merchant document, as at /api/services/v1/openapi.json). */
export function registerApiReference(app: App, document: () => unknown): void {
  // Read once, on first use: 0.9 MB that every visit of /docs would otherwise read from disk.
  let bundle: Buffer | undefined;
  const page = referencePage();
  const hide = { schema: { hide: true } };
  const sendPage = async (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page);
  app.get(referencePath, hide, sendPage);
  app.get(`${referencePath}/redoc.standalone.js`, hide, async (_request, reply) => {
    bundle ??= readFileSync(bundlePath);
    return reply
      .type('application/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400')
      .send(bundle);
  });
  app.get(`${referencePath}/json`, hide, async () => document());
}
