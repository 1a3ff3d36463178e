// `npm run build`, which `npm start` runs first: compiles src/ to dist/ with tsc, copies the SQL
// migrations and the browser files of src/cardjs/static beside the compiled code (tsc compiles
// only TypeScript), then builds the SDK (scripts/sdk-build.mjs). Compiling is skipped when nothing it reads changed since the last
// compile that succeeded, which a stamp in dist/ records, so that `npm start` starts at once when
// nothing changed; `--force` compiles anyway.
import { execFileSync } from 'node:child_process';
import { cpSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { stale } from './stale.mjs';

const force = process.argv.includes('--force');
const stamp = 'dist/.build-stamp';

if (force || stale(stamp, 'src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json')) {
  // The stamp carries the time the compile began, so that a file saved while tsc ran counts as newer.
  const began = new Date();
  // The first compile takes about a minute on a small machine: say so, rather than sit silent.
  console.log('build: compiling src/ to dist/ with tsc (the first build takes about a minute) …');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  cpSync('src/migrations', 'dist/migrations', { recursive: true });
  // tessera.js and its card frame's script and style are served as written (src/cardjs/routes.ts).
  cpSync('src/cardjs/static', 'dist/cardjs/static', { recursive: true });
  writeFileSync(stamp, `${began.toISOString()}\n`);
  utimesSync(stamp, began, began);
} else {
  console.log('build: dist/ is up to date with src/ (node scripts/build.mjs --force compiles anyway)');
}
execFileSync(process.execPath, ['scripts/sdk-build.mjs', ...(force ? ['--force'] : [])], { stdio: 'inherit' });
