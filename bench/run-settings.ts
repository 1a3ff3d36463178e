/** The settings of `npm run bench` (bench/run.ts): its command-line options and environment values. */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { backendsAndRuns, positiveInteger } from './settings.js';

export type PhaseKey =
  'storing' | 'mit' | 'refund' | 'rate' | 'half' | 'bare' | 'floor' | 'growth' | 'webhooks' | 'connector';
/** The phases that load the service with payments (the others have processes of their own). */
export const paymentPhases: PhaseKey[] = ['storing', 'mit', 'refund', 'rate', 'half', 'bare'];

export function readSettings() {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      runs: { type: 'string' },
      phases: { type: 'string' },
      'cpu-prof': { type: 'string' },
      json: { type: 'string' },
      quick: { type: 'boolean' },
      'growth-rows': { type: 'string' },
    },
  });
  const quick = values.quick === true;
  const { backends, runs } = backendsAndRuns(values);
  const allPhases: PhaseKey[] = [...paymentPhases, 'floor', 'growth', 'webhooks', 'connector'];
  const phases = values.phases === undefined ? allPhases : (values.phases.split(',') as PhaseKey[]);
  for (const phase of phases) {
    if (!allPhases.includes(phase)) throw new Error(`--phases takes a list of ${allPhases.join(', ')}`);
  }
  if (phases.includes('half') && !phases.includes('mit')) throw new Error('--phases: half needs mit (half its rate)');
  const growthRows = Number(values['growth-rows'] ?? (quick ? 20_000 : 1_000_000));
  if (!Number.isInteger(growthRows) || growthRows < 2000) throw new Error('--growth-rows takes a whole number ≥ 2000');
  const durationS = positiveInteger('BENCH_DURATION_SECONDS', quick ? 3 : 10);
  const storingPayments = process.env.BENCH_STORING_PAYMENTS ? positiveInteger('BENCH_STORING_PAYMENTS', 0) : undefined;
  return {
    backends,
    runs,
    phases: new Set(phases),
    cpuProfDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined,
    jsonFile: values.json ? path.resolve(values.json) : undefined,
    durationS,
    connections: positiveInteger('BENCH_CONNECTIONS', 32),
    ratePerSecond: positiveInteger('BENCH_RATE', 1000),
    warmupS: positiveInteger('BENCH_WARMUP_SECONDS', quick ? 1 : 3),
    quick,
    growthRows,
    growthRequests: quick ? 20 : 200,
    webhookDeliveries: positiveInteger('BENCH_WEBHOOK_DELIVERIES', quick ? 1000 : 20_000, 100),
    storingPayments,
    // Rounds of the connector phase (sandbox, Stripe, Adyen in a rotated order each).
    connectorRounds: positiveInteger('BENCH_CONNECTOR_ROUNDS', quick ? 1 : 3),
    databaseServerUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    // Setup (pairs, warm-up) takes about as long again as the phases; the watchdog allows a lot more.
    timeoutS: positiveInteger(
      'BENCH_TIMEOUT_SECONDS',
      backends.length * (600 + growthRows / 500 + runs * (phases.length * durationS * 4 + 60)),
    ),
  };
}

export type Settings = ReturnType<typeof readSettings>;

export const phaseNames: Record<PhaseKey, (settings: Settings) => string> = {
  storing: () => 'storing payment (new pair each)',
  mit: () => 'MIT payment (stored pair)',
  refund: () => 'refund (1 unit of a succeeded payment)',
  rate: (settings) => `MIT payment at ${settings.ratePerSecond}/s`,
  half: () => 'MIT payment at half the MIT rate',
  bare: () => 'bare Fastify POST (denominator)',
  floor: () => 'database floor',
  growth: () => 'growth',
  webhooks: () => 'webhook drain',
  connector: () => 'connector overhead',
};
