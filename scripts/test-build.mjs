// `npm test` runs the test files as JavaScript: this transpiles test/ (and sdk/verify-webhook.ts,
// whose verifier tests import) into .test-dist/ with esbuild — no type check, `npm run typecheck` does that —
// in a second or two, and points their imports of src/ at dist/, which `npm run build` compiled
// with tsc from the same sources. A test process then loads plain JavaScript instead of compiling
// every module through tsx's loader on its start (about 2–3 s of CPU per test file, and again in
// each PGlite worker; docs/performance.md, "Test suite time"). The layout keeps every file at the
// depth of its source (.test-dist/helpers/x.js for test/helpers/x.ts), so that relative paths to
// scripts/ and to files read from the repository stay the same. Single files still run from the
// sources: `node --import tsx --test test/FILE.test.ts`.
import { mkdirSync, readdirSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { stale } from './stale.mjs';

const out = '.test-dist';
const stamp = path.join(out, '.build-stamp');
const inputs = ['test', 'sdk/src/verify-webhook.ts', 'scripts/test-build.mjs', 'package-lock.json'];
if (!stale(stamp, ...inputs)) process.exit(0);
// Written to a folder of its own and renamed into place, so that a test process never reads half.
const began = new Date();
const work = `${out}.${process.pid}`;

function typescriptFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...typescriptFiles(file));
    else if (file.endsWith('.ts') && !file.endsWith('.d.ts')) found.push(file);
  }
  return found;
}

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
writeFileSync(path.join(work, '.build-stamp'), `${began.toISOString()}\n`);
utimesSync(path.join(work, '.build-stamp'), began, began);
rmSync(out, { recursive: true, force: true });
renameSync(work, out);
console.log(`test-build: ${result.outputFiles.length} files → ${out}/ (imports of src/ point at dist/)`);
