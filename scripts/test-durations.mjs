// Refreshes test/durations.json: the seconds each test file takes in a process of its own, per
// store. scripts/test-groups.mjs uses the larger of the two figures to start the longest
// processes first and to give its groups about equal work; a stale or missing figure costs time,
// never a test. Run after `npm run build && node scripts/test-build.mjs`, once per store:
//
//   node scripts/test-durations.mjs                      # PGlite
//   TESSERA_TEST_DATABASE_URL=postgres://… node scripts/test-durations.mjs
//
// It runs every bundled test file (.test-dist/*.test.js) three at a time, with the flags `npm test`
// gives (a test that reads its own stack needs the source maps), and writes the figures of this
// store, keeping the other store's.
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readRecordedDurations } from './test-groups.mjs';

const store = process.env.TESSERA_TEST_DATABASE_URL ? 'postgres' : 'pglite';
const file = 'test/durations.json';
const files = readdirSync('.test-dist').filter((name) => name.endsWith('.test.js'));
const seconds = {};
const failed = [];

async function runOne(name) {
  const started = performance.now();
  const code = await new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--liftoff-only', '--enable-source-maps', '--test', path.join('.test-dist', name)],
      {
        stdio: 'ignore',
      },
    );
    child.on('exit', resolve);
  });
  if (code !== 0) failed.push(name);
  seconds[name.slice(0, -'.test.js'.length)] = Math.round((performance.now() - started) / 100) / 10;
}

const queue = [...files];
await Promise.all(
  Array.from({ length: 3 }, async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) await runOne(name);
  }),
);
const recorded = readRecordedDurations(file);
recorded[store] = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(file, `${JSON.stringify(recorded, null, 2)}\n`);
console.log(
  `${file}: ${files.length} files on ${store}${failed.length > 0 ? `; failed (their figures still count): ${failed.join(', ')}` : ''}`,
);
