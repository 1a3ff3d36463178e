/** The settings of `npm run bench:webhooks` (bench/webhooks.ts): its options, environment values and goals. */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { backendsAndRuns, positiveInteger, type Backend } from './settings.js';

export const goals = {
  drainPerSecond: { pglite: 3000, postgres: 5000 } as Record<Backend, number>,
  p99Ms: 50,
  atPaymentsPerSecond: 1000,
};
/** Each payment event goes to its merchant's one endpoint twice: the endpoint_ and the legacy kind (docs/webhooks.md#what-is-sent). */
export const notificationsPerPayment = 2;

// ---- settings ------------------------------------------------------------------------------

export function readSettings() {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      runs: { type: 'string' },
      json: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'drain-only': { type: 'boolean' },
    },
  });
  const { backends, runs } = backendsAndRuns(values);
  const deliveries = positiveInteger('BENCH_WEBHOOK_DELIVERIES', 20_000, 100);
  const durationS = positiveInteger('BENCH_DURATION_SECONDS', 10);
  const sustained = process.env.BENCH_WEBHOOK_SUSTAINED_RATE;
  return {
    backends,
    runs,
    jsonFile: values.json ? path.resolve(values.json) : undefined,
    drainOnly: values['drain-only'] === true,
    cpuProfDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined,
    deliveries,
    endpoints: positiveInteger('BENCH_WEBHOOK_ENDPOINTS', 8),
    concurrencyPerTarget: positiveInteger('BENCH_WEBHOOK_CONCURRENCY_PER_TARGET', 8),
    workers: positiveInteger('BENCH_WEBHOOK_WORKERS', 1, 0),
    ratePerSecond: positiveInteger('BENCH_WEBHOOK_RATE', goals.atPaymentsPerSecond),
    sustainedRatePerSecond: sustained ? positiveInteger('BENCH_WEBHOOK_SUSTAINED_RATE', 0) : undefined,
    durationS,
    connections: positiveInteger('BENCH_CONNECTIONS', 32),
    warmupS: positiveInteger('BENCH_WARMUP_SECONDS', 3),
    databaseServerUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    // Filling the backlog runs at about 100 payments/s at worst (PGlite on a busy machine).
    timeoutS: positiveInteger(
      'BENCH_TIMEOUT_SECONDS',
      backends.length * runs * (240 + deliveries / notificationsPerPayment / 100 + 8 * durationS),
    ),
  };
}

export type Settings = ReturnType<typeof readSettings>;
