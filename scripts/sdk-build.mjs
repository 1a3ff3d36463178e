// Builds the SDK package (sdk/): its types generated from the OpenAPI document
// (scripts/sdk-generate.ts → sdk/src/generated/), then compiled twice, to ESM (dist/esm) and to
// CommonJS (dist/cjs), each with its .d.ts; the CommonJS folder gets a package.json saying so,
// since the SDK's own says "type": "module". A step whose inputs are older than its output is
// skipped, so that `npm run build` and `npm pack` in sdk/ cost nothing when nothing changed;
// `--force` runs every step.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { stale as staleOutput } from './stale.mjs';

const force = process.argv.includes('--force');
const generated = 'sdk/src/generated/openapi.ts';
const cjsMarker = 'sdk/dist/cjs/package.json';

const stale = (output, ...inputs) => force || staleOutput(output, ...inputs);

// The document is made from the route schemas under src/ (the migrations and the dashboard's
// assets are part of that service, and a change there is a reason to regenerate too).
if (stale(generated, 'src', 'scripts/sdk-generate.ts', 'package-lock.json')) {
  console.log('sdk: generating its types from the OpenAPI document …');
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/sdk-generate.ts'], { stdio: 'inherit' });
}
if (stale(cjsMarker, 'sdk/src', 'sdk/tsconfig.json', 'sdk/tsconfig.cjs.json', 'sdk/package.json')) {
  console.log('sdk: compiling sdk/ to ESM and CommonJS …');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  rmSync('sdk/dist', { recursive: true, force: true });
  for (const project of ['sdk/tsconfig.json', 'sdk/tsconfig.cjs.json']) {
    execFileSync(process.execPath, [tsc, '-p', project], { stdio: 'inherit' });
  }
  writeFileSync(cjsMarker, '{ "type": "commonjs" }\n');
  console.log('sdk: compiled to sdk/dist/esm and sdk/dist/cjs');
}
