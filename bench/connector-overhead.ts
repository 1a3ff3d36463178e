/**
 * `npm run bench:connector`: the connector phase of `npm run bench` (bench/connector-phase.ts)
 * alone — Stripe ÷ sandbox and Adyen ÷ sandbox, per payment, in the same run (issue 42,
 * docs/performance.md#processor-connectors).
 *
 *   npm run bench:connector                    PGlite, then PostgreSQL
 *   npm run bench:connector -- --only pglite   one store
 *   npm run bench:connector -- --cpu-prof DIR  V8 CPU profile of the service and each phase's window
 *                                              (node --import tsx bench/profile-summary.ts
 *                                              DIR/phases-pglite-connector.json stripe#1)
 *
 * Environment: BENCH_DURATION_SECONDS (10 per phase), BENCH_CONNECTIONS (16), BENCH_CONNECTOR_ROUNDS
 * (3), BENCH_DATABASE_URL.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectorPhase } from './connector-phase.js';
import { runBenchmark } from './processes.js';
import { ratioTable } from './ratios.js';
import { backendsAndRuns, positiveInteger } from './settings.js';

const { values } = parseArgs({ options: { only: { type: 'string' }, 'cpu-prof': { type: 'string' } } });
const { backends } = backendsAndRuns(values);
const settings = {
  durationS: positiveInteger('BENCH_DURATION_SECONDS', 10),
  connections: positiveInteger('BENCH_CONNECTIONS', 16),
  rounds: positiveInteger('BENCH_CONNECTOR_ROUNDS', 3),
  cpuProfDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined,
  databaseServerUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
};

runBenchmark(
  {
    title: `Tessera connector overhead — ${settings.connections} connections, ${settings.durationS} s per phase, ${settings.rounds} rounds`,
    timeoutS: positiveInteger('BENCH_TIMEOUT_SECONDS', 900),
  },
  async (cleanup, lines) => {
    if (settings.cpuProfDir) await mkdir(settings.cpuProfDir, { recursive: true });
    const all = [];
    for (const backend of backends) all.push({ backend, connector: await connectorPhase(cleanup, settings, backend) });
    lines.push(...ratioTable(all));
    process.stdout.write(`${lines.join('\n')}\n`);
  },
);
