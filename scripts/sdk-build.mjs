// Builds the SDK package (sdk/): its types generated from the OpenAPI document
// (scripts/sdk-generate.ts → sdk/src/generated/), then compiled twice, to ESM (dist/esm) and to
// CommonJS (dist/cjs), each with its .d.ts; the CommonJS folder gets a package.json saying so,
// since the SDK's own says "type": "module". A step whose inputs are older than its output is
// skipped, so that `npm run build` and `npm pack` in sdk/ cost nothing when nothing changed;
// `--force` runs every step.
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const force = process.argv.includes('--force');
const generated = 'sdk/src/generated/openapi.ts';
const cjsMarker = 'sdk/dist/cjs/package.json';

/** The newest modification time under these files and folders (0 when none exists). */
function newest(...entries) {
  let latest = 0;
  for (const entry of entries) {
    let stat;
    try {
      stat = statSync(entry);
    } catch {
      continue;
    }
    if (stat.isDirectory()) {
      for (const child of readdirSync(entry)) latest = Math.max(latest, newest(path.join(entry, child)));
    } else {
      latest = Math.max(latest, stat.mtimeMs);
    }
  }
  return latest;
}

const stale = (output, ...inputs) => force || newest(output) === 0 || newest(...inputs) > newest(output);

// The document is made from the route schemas under src/ (the migrations and the dashboard's
// assets are part of that service, and a change there is a reason to regenerate too).
if (stale(generated, 'src', 'scripts/sdk-generate.ts', 'package-lock.json')) {
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/sdk-generate.ts'], { stdio: 'inherit' });
}
if (stale(cjsMarker, 'sdk/src', 'sdk/tsconfig.json', 'sdk/tsconfig.cjs.json', 'sdk/package.json')) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  rmSync('sdk/dist', { recursive: true, force: true });
  for (const project of ['sdk/tsconfig.json', 'sdk/tsconfig.cjs.json']) {
    execFileSync(process.execPath, [tsc, '-p', project], { stdio: 'inherit' });
  }
  writeFileSync(cjsMarker, '{ "type": "commonjs" }\n');
  console.log('sdk: compiled to sdk/dist/esm and sdk/dist/cjs');
}
