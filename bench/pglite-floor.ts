/**
 * What PGlite alone does on this machine for a payment's two statements, with no HTTP and no
 * application code: a primary-key read, then one statement inserting a row into each of two
 * tables with three indexes each (as a payment and its event). A floor for the PGlite figures of
 * `npm run bench`, with 32 callers at once:
 *
 *   node --import tsx bench/pglite-floor.ts
 *
 * The real statements cost more (foreign keys, more columns); see docs/performance.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDb } from '../src/db/db.js';

// `--pairs N --runs R` (5000 and 3): what `npm run bench` passes for a shorter floor.
const { values } = parseArgs({ options: { pairs: { type: 'string' }, runs: { type: 'string' } } });
const perRun = Number(values.pairs ?? 5000);
const runs = Number(values.runs ?? 3);
if (!Number.isInteger(perRun) || perRun < 100 || !Number.isInteger(runs) || runs < 1) {
  throw new Error('--pairs takes a whole number ≥ 100, --runs one ≥ 1');
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'tessera-pglite-floor-'));
const db = await openDb({ dataDir });
try {
  for (const sql of [
    'CREATE TABLE floor_method (id int PRIMARY KEY)',
    'INSERT INTO floor_method VALUES (1)',
    'CREATE TABLE floor_payment (id bigint PRIMARY KEY, merchant_id int, created_at timestamptz, customer_id int, body text)',
    'CREATE INDEX ON floor_payment (merchant_id, created_at, id)',
    'CREATE INDEX ON floor_payment (customer_id, created_at)',
    'CREATE TABLE floor_event (id bigint PRIMARY KEY, merchant_id int, created_at timestamptz, object_id bigint, body text)',
    'CREATE INDEX ON floor_event (merchant_id, created_at, id)',
    'CREATE INDEX ON floor_event (object_id, created_at)',
  ]) {
    await db.query(sql);
  }
  const write = `WITH payment AS (INSERT INTO floor_payment (id, merchant_id, created_at, customer_id, body)
                   VALUES ($1, 1, now(), 1, $2))
                 INSERT INTO floor_event (id, merchant_id, created_at, object_id, body) VALUES ($3, 1, now(), $4, $5)`;
  const paymentBody = 'x'.repeat(600);
  const eventBody = 'y'.repeat(1200);
  let id = 0;
  // 32 callers at once, as the benchmark's 32 connections: PGlite (in its worker thread) is kept busy.
  const callers = 32;
  const pairs = async (count: number) => {
    let left = count;
    const caller = async () => {
      while (left > 0) {
        left--;
        await db.query('SELECT 1 FROM floor_method WHERE id = $1', [1]);
        id++;
        await db.execute(write, [id, paymentBody, id, id, eventBody]);
      }
    };
    await Promise.all(Array.from({ length: callers }, caller));
  };
  await pairs(Math.min(2000, perRun));
  for (let run = 1; run <= runs; run++) {
    const started = performance.now();
    // CPU of the whole process, both threads (process.cpuUsage is the process's rusage).
    const cpuBefore = process.cpuUsage();
    await pairs(perRun);
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMsPerPair = (cpu.user + cpu.system) / 1000 / perRun;
    console.log(
      `run ${run}: ${Math.round(perRun / seconds)} read+write pairs/s (${((seconds * 1000) / perRun).toFixed(3)} ms each, ` +
        `${cpuMsPerPair.toFixed(3)} ms of CPU each)`,
    );
  }
} finally {
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
}
