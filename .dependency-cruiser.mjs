/**
 * The layers of src/ (docs/decisions/0046-layers.md), checked by `npm run lint`, so that the next
 * import circle or a domain file reaching into the HTTP edge fails CI. From the bottom:
 *
 *   core/          the error catalog, the merchant context, the page type: imports nothing of ours
 *   src/*.ts       the kernel (config, ids, money, clock, …): imports core only
 *   db/            connection, migrator, pagination: imports the kernel and core only
 *   domains        customers/, payments/, webhooks/…: services and queries never import http/;
 *                  a domain's routes.ts, *-routes.ts, schemas.ts and *-schemas.ts are its edge
 *   web/           the one HTML kit (docs/decisions/0047-one-html-kit.md): imports core and the kernel only
 *   http/          server, auth, envelope, the status of each error kind: imports no domain
 *   dashboard/, cli/, composition/ (the wiring: config → db → services → server and workers)
 */

/** A domain folder's own edge: its routes and the request/response schemas they declare. */
const edgeFile = '/[a-z0-9-]*(routes|schemas)\\.ts$';

export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No module imports itself through others. A circle one of whose links is a type import is left to the folder rule ' +
        '(it vanishes when compiled: src/shopper/translations import the type of the messages they fill).',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-folder-circular',
      severity: 'error',
      comment: 'No folder imports itself through other folders.',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-imports-nothing',
      severity: 'error',
      comment: 'src/core/ is what every layer shares: it imports nothing of ours outside itself.',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'kernel-imports-core-only',
      severity: 'error',
      comment:
        'The files directly in src/ (config, ids, money, clock, …) sit just above core/: they import no folder but core/.',
      from: { path: '^src/[^/]+\\.ts$' },
      to: { path: '^src/[^/]+/', pathNot: '^src/core/' },
    },
    {
      name: 'db-imports-nothing-above',
      severity: 'error',
      comment: 'src/db/ imports only core/ and the kernel (src/*.ts), never a domain, the edge or the wiring.',
      from: { path: '^src/db/' },
      to: { path: '^src/[^/]+/', pathNot: '^src/(db|core)/' },
    },
    {
      name: 'domain-not-http',
      severity: 'error',
      comment:
        'A service, its queries and every other domain file throw domain errors (src/core/errors.ts) and know ' +
        'nothing of HTTP; only routes and schemas files, the dashboard, the CLI and the wiring import src/http/.',
      from: { path: '^src/', pathNot: ['^src/(http|dashboard|cli|composition)/', edgeFile] },
      to: { path: '^src/http/' },
    },
    {
      name: 'web-kit-is-a-leaf',
      severity: 'error',
      comment: 'src/web/ is the one HTML kit every page and e-mail builds on: it imports core/ and the kernel only.',
      from: { path: '^src/web/' },
      to: { path: '^src/[^/]+/', pathNot: '^src/(web|core)/' },
    },
    {
      name: 'http-imports-no-domain',
      severity: 'error',
      comment:
        'src/http/ is the edge every domain’s routes build on: it imports core/, db/, web/ (the HTML kit) and the kernel, never a domain ' +
        '(what it needs from one, the composition root passes in).',
      from: { path: '^src/http/' },
      to: { path: '^src/[^/]+/', pathNot: '^src/(http|core|db|web)/' },
    },
  ],
  options: {
    includeOnly: '^src/',
    exclude: { path: '^src/(migrations|cardjs/static)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    moduleSystems: ['es6'],
  },
};
