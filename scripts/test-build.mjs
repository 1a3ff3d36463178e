// `npm test` runs the test files as JavaScript: this transpiles test/ (and sdk/verify-webhook.ts,
// whose verifier tests import) into .test-dist/ with esbuild — no type check, `npm run typecheck` does that —
// in a second or two, and points their imports of src/ at dist/, which `npm run build` compiled
// with tsc from the same sources. A test process then loads plain JavaScript instead of compiling
// every module through tsx's loader on its start (about 2–3 s of CPU per test file, and again in
// each PGlite worker; docs/performance.md#test-suite-time). The layout keeps every file at the
// depth of its source (.test-dist/helpers/x.js for test/helpers/x.ts), so that relative paths to
// scripts/ and to files read from the repository stay the same. Single files still run from the
// sources: `node --import tsx --test test/FILE.test.ts`.
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, buildSync } from 'esbuild';
import { stale, typescriptFiles } from './stale.mjs';
import { writeRunEntries } from './test-groups.mjs';

const out = '.test-dist';
const stamp = path.join(out, '.build-stamp');
// dist/'s stamp: the test files are bundled with the service's compiled code (below).
const inputs = [
  'test',
  'sdk/src/verify-webhook.ts',
  'scripts/test-build.mjs',
  'scripts/test-groups.mjs',
  'package-lock.json',
  'dist/.build-stamp',
];
if (!stale(stamp, ...inputs)) process.exit(0);
// Written to a folder of its own and renamed into place, so that a test process never reads half.
const began = new Date();
const work = `${out}.${process.pid}`;

rmSync(work, { recursive: true, force: true });
const result = buildSync({
  // test/x.ts → .test-dist/x.js; the SDK's verifier (sdk/verify-webhook.ts re-exports it) → .test-dist/sdk/verify-webhook.js.
  entryPoints: [
    ...typescriptFiles('test').map((file) => ({ in: file, out: path.relative('test', file).replace(/\.ts$/, '') })),
    { in: 'sdk/src/verify-webhook.ts', out: 'sdk/verify-webhook' },
  ],
  outdir: work,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'inline',
  write: false,
  logLevel: 'warning',
});

// An import of src/ becomes one of dist/; of sdk/verify-webhook.js, of its copy beside the tests.
// Only import specifiers change (`from '…'`, `import('…')`), not paths the tests read as files.
const specifier = /(\bfrom\s*|\bimport\s*\(\s*)(["'])((?:\.\.\/)+)(src|sdk)\/([^"']*)\2/g;
for (const file of result.outputFiles) {
  const relative = path.relative(work, file.path);
  if (relative.startsWith('..')) throw new Error(`test-build: ${file.path} is outside ${work}`);
  const text = file.text.replace(specifier, (whole, lead, quote, up, root, rest) => {
    if (root === 'src') return `${lead}${quote}${up}dist/${rest}${quote}`;
    if (rest === 'verify-webhook.js') {
      const target = path.relative(path.dirname(file.path), path.join(work, 'sdk', 'verify-webhook.js'));
      return `${lead}${quote}${target.startsWith('.') ? target : `./${target}`}${quote}`;
    }
    return whole;
  });
  mkdirSync(path.dirname(file.path), { recursive: true });
  writeFileSync(file.path, text);
}
await bundleTestFiles();
await bundleCli();
// What `npm test` runs: .test-dist/run/, one entry per process (scripts/test-groups.mjs).
const run = writeRunEntries({
  testDir: 'test',
  bundled: work,
  run: path.join(work, 'run'),
  durationsFile: 'test/durations.json',
});
writeFileSync(path.join(work, '.build-stamp'), `${began.toISOString()}\n`);
utimesSync(path.join(work, '.build-stamp'), began, began);
rmSync(out, { recursive: true, force: true });
renameSync(work, out);
console.log(
  `test-build: ${result.outputFiles.length} files → ${out}/ (imports of src/ point at dist/); ` +
    `${run.processes} test processes, ${run.shared} files sharing ${run.groups} of them`,
);

/*
 * Each test file is then bundled with what it imports of dist/ and test/helpers/, and with
 * TypeBox, whose 374 modules cost a test process about 300 ms of CPU to load one by one (the
 * service's 400 modules another 80 ms; docs/performance.md#test-suite-time). The
 * code shared by the files goes into chunks (.test-dist/chunks/), so each is written once. The
 * other packages stay imports of node_modules, as the service loads them. Every bundled module's
 * `import.meta.url` becomes the address of the file it was (dist/x.js, .test-dist/helpers/x.js),
 * so that the paths it finds beside itself (migrations, static files, the PGlite worker) stay
 * right. The unbundled helpers stay in .test-dist/ for the scripts the tests start as processes.
 */
async function bundleTestFiles() {
  const entries = readdirSync(work).filter((name) => name.endsWith('.test.js'));
  await build({
    ...bundleOptions(),
    entryPoints: entries.map((name) => path.join(work, name)),
    outdir: work,
    allowOverwrite: true,
  });
}

/*
 * The `tessera` the tests start as a process (test/helpers/cli-process.ts), bundled the same way
 * from dist/cli/index.js into .test-dist/tessera/: a `tessera start` then loads a few files instead
 * of some 1,250 modules, about 0.3 s of CPU less per start (docs/performance.md#test-suite-time). It is dist/'s code: each module keeps the address of its dist/ file,
 * so the PGlite worker, the migrations and the static files are dist/'s own.
 */
async function bundleCli() {
  await build({
    ...bundleOptions(),
    entryPoints: [{ in: 'dist/cli/index.js', out: 'index' }],
    outdir: path.join(work, 'tessera'),
  });
}

/**
 * What both bundles share: TypeBox inlined, every other package imported from node_modules, code
 * shared between entries in chunks, and each bundled module's `import.meta.url` the address of the
 * file it came from (as it will be once .test-dist/ is in place).
 */
function bundleOptions() {
  const inlined = new Set(['typebox']);
  const finalPath = (file) => path.join(path.resolve(out), path.relative(path.resolve(work), file));
  return {
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [
      {
        name: 'tessera-test-bundle',
        setup(builder) {
          builder.onResolve({ filter: /^[^./]/ }, (args) => {
            const parts = args.path.split('/');
            const name = args.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
            return inlined.has(name) ? undefined : { external: true };
          });
          builder.onLoad({ filter: /\.js$/ }, (args) => {
            if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
            const inWork = args.path.startsWith(path.resolve(work) + path.sep);
            const address = pathToFileURL(inWork ? finalPath(args.path) : args.path).href;
            return {
              contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(address)),
              loader: 'js',
              resolveDir: path.dirname(args.path),
            };
          });
        },
      },
    ],
  };
}
