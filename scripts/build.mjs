// `npm run build`, which `npm start` runs first: transpiles src/ to dist/ with esbuild, file by file
// (no bundle, no type check: `npm run typecheck` and CI do that), and copies the SQL migrations,
// the browser files of src/cardjs/static and Redoc's bundle beside the compiled code. A second or
// two, where tsc took a minute on a busy machine (docs/decisions/0049-first-hour.md). It builds only what the service
// runs: the SDK builds with `npm run sdk:build` (and in `npm test`). Skipped when nothing it reads
// changed since the last build that succeeded, which a stamp in dist/ records, so that `npm start`
// starts at once when nothing changed; `--force` builds anyway.
import { cpSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { buildSync } from 'esbuild';
import { stale, typescriptFiles } from './stale.mjs';

const force = process.argv.includes('--force');
const stamp = 'dist/.build-stamp';

if (force || stale(stamp, 'src', 'scripts/build.mjs', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json')) {
  // The stamp carries the time the build began, so that a file saved meanwhile counts as newer.
  const began = new Date();
  const files = typescriptFiles('src');
  console.log(`build: transpiling ${files.length} files of src/ to dist/ …`);
  // Nothing left from a source since removed.
  rmSync('dist', { recursive: true, force: true });
  buildSync({
    entryPoints: files,
    outbase: 'src',
    outdir: 'dist',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Node 20 reads `with { type: 'json' }` (src/http/reference-examples.ts); esbuild would drop it.
    supported: { 'import-attributes': true },
    sourcemap: true,
    logLevel: 'warning',
  });
  cpSync('src/migrations', 'dist/migrations', { recursive: true });
  // The API reference's captured examples, data that src/http/reference-examples.ts imports (npm run reference:capture writes it).
  cpSync('src/http/reference-examples.json', 'dist/http/reference-examples.json');
  // tessera.js and its card frame's script and style are served as written (src/cardjs/routes.ts).
  cpSync('src/cardjs/static', 'dist/cardjs/static', { recursive: true });
  // Redoc's standalone bundle, served at /docs (src/http/api-reference.ts): redoc is a
  // devDependency, so react, mobx and styled-components stay out of a production install.
  cpSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'), 'dist/http/redoc.standalone.js');
  writeFileSync(stamp, `${began.toISOString()}\n`);
  utimesSync(stamp, began, began);
  console.log(`build: dist/ built in ${((Date.now() - began.getTime()) / 1000).toFixed(1)} s`);
} else {
  console.log('build: dist/ is up to date with src/ (node scripts/build.mjs --force builds anyway)');
}
