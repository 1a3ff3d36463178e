/**
 * `npm run bench`: the throughput and latency of POST /payment/create, on PGlite and then on
 * PostgreSQL, against a bare Fastify route measured in the same run. See docs/performance.md.
 *
 *   npm run bench                      both databases, one run
 *   npm run bench -- --only pglite     one database (pglite | postgres)
 *   npm run bench -- --runs 3          three runs per database; the summary shows medians
 *   npm run bench -- --phases mit      only some phases (storing, mit, refund, rate, half, bare,
 *                                      floor, growth, webhooks; all by default)
 *   npm run bench -- --quick           a smoke run: 3 s phases, small floors, a 20,000-row growth
 *   npm run bench -- --growth-rows N   the big size of the growth phase (1,000,000)
 *   npm run bench -- --cpu-prof DIR    V8 CPU profile of the service, plus each phase's time window
 *                                      (summarize with bench/profile-summary.ts)
 *   npm run bench -- --json FILE       every figure, machine-readable
 *
 * Environment: BENCH_DURATION_SECONDS (10), BENCH_CONNECTIONS (32), BENCH_RATE (1000),
 * BENCH_WARMUP_SECONDS (3), BENCH_STORING_PAYMENTS (per run; default: what the warm-up says
 * fills BENCH_DURATION_SECONDS), BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_TIMEOUT_SECONDS (a watchdog for the whole run; default from the settings).
 *
 * Everything runs on 127.0.0.1: the service and the bare route as child processes, a fresh
 * data folder or a fresh database each, all removed at the end, also after an error or Ctrl-C.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { call, paymentBody } from './api.js';
import { cores } from './cpu.js';
import { closedLoop, fixedRate, type PhaseResult, type RequestSpec } from './load.js';
import { cards } from './cards.js';
import { backendsAndRuns, positiveInteger, type Backend } from './settings.js';
import { runGrowth } from './growth.js';
import { pgliteFloor, postgresFloor, ratioTable, webhookRatio, type RatioFigures } from './ratios.js';
import {
  Cleanup,
  runBenchmark,
  childEnv,
  createDatabase,
  freePort,
  makeTempDir,
  repoRoot,
  startChild,
  tail,
  type ChildServer,
} from './processes.js';

type PhaseKey = 'storing' | 'mit' | 'refund' | 'rate' | 'half' | 'bare' | 'floor' | 'growth' | 'webhooks';
/** The phases that load the service with payments (the others have processes of their own). */
const paymentPhases: PhaseKey[] = ['storing', 'mit', 'refund', 'rate', 'half', 'bare'];

const apiBase = '/api/services/v1';
const goals = {
  throughput: { pglite: 1000, postgres: 3000 } as Record<Backend, number>,
  p99AtRateMs: 50,
};

// ---- settings ------------------------------------------------------------------------------

function readSettings() {
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
  const allPhases: PhaseKey[] = [...paymentPhases, 'floor', 'growth', 'webhooks'];
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
    databaseServerUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    // Setup (pairs, warm-up) takes about as long again as the phases; the watchdog allows a lot more.
    timeoutS: positiveInteger(
      'BENCH_TIMEOUT_SECONDS',
      backends.length * (600 + growthRows / 500 + runs * (phases.length * durationS * 4 + 60)),
    ),
  };
}

type Settings = ReturnType<typeof readSettings>;

// ---- the merchant API ----------------------------------------------------------------------

interface Pair {
  customerId: string;
  paymentMethodId: string;
}

interface Target {
  baseUrl: string;
  privateKey: string;
  pid: number;
  withPostgres: boolean;
}

const idIn = (prefix: string) => new RegExp(`"id":"(${prefix}_\\d+)"`);

/** `count` customers and as many card payment methods, through the API, at full concurrency. */
async function createPairs(
  target: Target,
  settings: Settings,
  count: number,
): Promise<{ pairs: Pair[]; phases: PhaseResult[] }> {
  const connections = Math.min(settings.connections, count);
  const headers = { authorization: `Bearer ${target.privateKey}` };
  const customerIds: string[] = [];
  let customerNumber = 0;
  const customers = await closedLoop({
    name: 'setup: POST /customers/create',
    baseUrl: target.baseUrl,
    connections,
    amount: count,
    payment: false,
    servicePid: target.pid,
    withPostgres: target.withPostgres,
    request: {
      path: `${apiBase}/customers/create`,
      headers,
      nextBody: () => {
        customerNumber += 1;
        return JSON.stringify({
          firstName: 'Bench',
          lastName: `Customer ${customerNumber}`,
          email: `bench${customerNumber}@example.com`,
        });
      },
      onSuccess: (body) => customerIds.push(idIn('cus').exec(body)![1]!),
    },
  });
  const methodIds: string[] = [];
  let methodNumber = 0;
  const methods = await closedLoop({
    name: 'setup: POST /payment_methods/create',
    baseUrl: target.baseUrl,
    connections,
    amount: count,
    payment: false,
    servicePid: target.pid,
    withPostgres: target.withPostgres,
    request: {
      path: `${apiBase}/payment_methods/create`,
      headers,
      nextBody: () => {
        const card = cards[methodNumber++ % cards.length]!;
        return JSON.stringify({ type: 'card', card: { ...card, expMonth: '12', expYear: '2030' } });
      },
      onSuccess: (body) => methodIds.push(idIn('pm').exec(body)![1]!),
    },
  });
  for (const phase of [customers, methods]) {
    if (phase.checks.failures > 0) throw new Error(`${phase.name}: ${phase.checks.firstFailure}`);
  }
  const pairs = customerIds.slice(0, count).map((customerId, index) => ({
    customerId,
    paymentMethodId: methodIds[index]!,
  }));
  if (pairs.length < count || methodIds.length < count) throw new Error(`only ${pairs.length} of ${count} pairs made`);
  return { pairs, phases: [customers, methods] };
}

function storingRequest(target: Target, pairs: Pair[], bound?: Pair[]): RequestSpec {
  let next = 0;
  return {
    path: `${apiBase}/payment/create`,
    headers: { authorization: `Bearer ${target.privateKey}` },
    nextBody: () => {
      // autocannon builds each connection's first request before it knows how many it will send;
      // `amount` keeps the number sent to the pool's size, so no pair is ever used twice.
      return paymentBody(pairs[next++ % pairs.length]!);
    },
    onSuccess: bound
      ? (body) => {
          if (!body.includes('"status":"succeeded"')) return;
          const customerId = /"customerId":"(cus_\d+)"/.exec(body)?.[1];
          const paymentMethodId = /"paymentMethod":"(pm_\d+)"/.exec(body)?.[1];
          if (customerId && paymentMethodId) bound.push({ customerId, paymentMethodId });
        }
      : undefined,
  };
}

function mitRequest(target: Target, pairs: Pair[], succeeded?: string[]): RequestSpec {
  let next = 0;
  return {
    path: `${apiBase}/payment/create`,
    headers: { authorization: `Bearer ${target.privateKey}` },
    nextBody: () => paymentBody(pairs[next++ % pairs.length]!, 'mit'),
    onSuccess: succeeded
      ? (body) => {
          const id = body.includes('"status":"succeeded"') ? idIn('pt').exec(body)?.[1] : undefined;
          if (id && succeeded.length < refundablePayments) succeeded.push(id);
        }
      : undefined,
  };
}

/** How many succeeded MIT payments the refund phase spreads its refunds over. */
const refundablePayments = 5000;

/**
 * A partial refund of one minor unit, round-robin over succeeded payments of 1000 units each: a
 * payment is refunded again only after every other one, so concurrent refunds rarely wait on the
 * same payment's row, as when a merchant refunds many orders.
 */
function refundRequest(target: Target, paymentIds: string[]): RequestSpec {
  let next = 0;
  return {
    path: `${apiBase}/refunds/create`,
    headers: { authorization: `Bearer ${target.privateKey}` },
    nextBody: () => JSON.stringify({ paymentId: paymentIds[next++ % paymentIds.length]!, amount: '1' }),
  };
}

// ---- one database --------------------------------------------------------------------------

interface BackendReport {
  backend: Backend;
  runs: PhaseResult[][];
  setup: PhaseResult[];
  notes: string[];
  /** The rate of each run's half phase (half that run's MIT rate). */
  halfOffered: number[];
}

const phaseNames: Record<PhaseKey, (settings: Settings) => string> = {
  storing: () => 'storing payment (new pair each)',
  mit: () => 'MIT payment (stored pair)',
  refund: () => 'refund (1 unit of a succeeded payment)',
  rate: (settings) => `MIT payment at ${settings.ratePerSecond}/s`,
  half: () => 'MIT payment at half the MIT rate',
  bare: () => 'bare Fastify POST (denominator)',
  floor: () => 'database floor',
  growth: () => 'growth',
  webhooks: () => 'webhook drain',
};

interface Store {
  backend: Backend;
  dataDir: string;
  databaseUrl: string | undefined;
  adminKey: string;
  masterKey: string;
}

/** A fresh data folder (PGlite) or database (PostgreSQL), removed or dropped by the cleanup. */
async function newStore(cleanup: Cleanup, settings: Settings, backend: Backend): Promise<Store> {
  return {
    backend,
    dataDir: await makeTempDir(cleanup, `tessera-bench-${backend}-`),
    databaseUrl: backend === 'postgres' ? await createDatabase(cleanup, settings.databaseServerUrl) : undefined,
    adminKey: `bench_operator_${randomBytes(24).toString('hex')}`,
    masterKey: randomBytes(32).toString('hex'),
  };
}

async function startService(
  cleanup: Cleanup,
  settings: Settings,
  backend: Backend,
  existing?: Store,
): Promise<{ service: ChildServer; adminKey: string }> {
  const store = existing ?? (await newStore(cleanup, settings, backend));
  const { dataDir, databaseUrl, adminKey } = store;
  const port = await freePort();
  const profileArgs =
    settings.cpuProfDir && !existing
      ? ['--cpu-prof', '--cpu-prof-dir', settings.cpuProfDir, '--cpu-prof-name', `service-${backend}.cpuprofile`]
      : [];
  const service = await startChild(cleanup, {
    name: `tessera (${backend})`,
    args: [...profileArgs, path.join(repoRoot, 'dist', 'cli.js'), 'start'],
    env: childEnv({
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_ADMIN_KEY: adminKey,
      TESSERA_MASTER_KEY: store.masterKey,
      TESSERA_LOG_LEVEL: 'warn',
      // Passed on when set, to compare pool sizes without editing anything.
      TESSERA_DATABASE_POOL_SIZE: process.env.TESSERA_DATABASE_POOL_SIZE,
      TESSERA_WEBHOOK_DISPATCHER: process.env.TESSERA_WEBHOOK_DISPATCHER,
    }),
    port,
    logFile: path.join(dataDir, 'service.log'),
    healthPath: '/health',
  });
  return { service, adminKey };
}

async function benchBackend(
  cleanup: Cleanup,
  settings: Settings,
  backend: Backend,
  bare: ChildServer | null,
): Promise<BackendReport> {
  const { service, adminKey } = await startService(cleanup, settings, backend);
  const report: BackendReport = { backend, runs: [], setup: [], notes: [], halfOffered: [] };
  const windows: Array<{ name: string; startUs: string; endUs: string }> = [];
  const inWindow = async (name: string, work: () => Promise<PhaseResult>) => {
    const startUs = process.hrtime.bigint() / 1000n;
    const result = await work();
    windows.push({ name, startUs: String(startUs), endUs: String(process.hrtime.bigint() / 1000n) });
    return result;
  };
  try {
    const merchant = await call(`${service.url}/admin/v1/merchants/create`, adminKey, {
      name: 'Benchmark merchant',
      tokenization: true,
      mit: true,
    });
    const target: Target = {
      baseUrl: service.url,
      privateKey: merchant.keys.privateKey,
      pid: service.pid,
      withPostgres: backend === 'postgres',
    };
    const progress = (text: string) => process.stderr.write(`[${backend}] ${text}\n`);

    // Stored pairs for MIT: each bound by one storing payment, then used over and over, as a
    // merchant charges a subscription.
    progress('setup: pairs for MIT');
    const mitPool = await createPairs(target, settings, Math.max(64, settings.connections));
    const mitPairs: Pair[] = [];
    const binding = await closedLoop({
      name: 'setup: storing payments for MIT pairs',
      baseUrl: target.baseUrl,
      connections: Math.min(settings.connections, mitPool.pairs.length),
      amount: mitPool.pairs.length,
      payment: true,
      servicePid: target.pid,
      withPostgres: target.withPostgres,
      request: storingRequest(target, mitPool.pairs, mitPairs),
    });
    if (mitPairs.length === 0) throw new Error(`no storing payment succeeded: ${binding.checks.firstFailure}`);

    // Warm-up: the JIT and the database caches settle; its storing rate sizes the measured runs.
    progress('warm-up');
    const warmupPool = await createPairs(target, settings, 1000);
    report.setup.push(...warmupPool.phases);
    const warmupStoring = await closedLoop({
      name: 'warm-up: storing payments',
      baseUrl: target.baseUrl,
      connections: settings.connections,
      amount: warmupPool.pairs.length,
      payment: true,
      servicePid: target.pid,
      withPostgres: target.withPostgres,
      request: storingRequest(target, warmupPool.pairs),
    });
    // Its succeeded payments are what the refund phase refunds.
    const refundable: string[] = [];
    const warmupMit = await closedLoop({
      name: 'warm-up: MIT payments',
      baseUrl: target.baseUrl,
      connections: settings.connections,
      durationS: settings.warmupS,
      payment: true,
      servicePid: target.pid,
      withPostgres: target.withPostgres,
      request: mitRequest(target, mitPairs, refundable),
    });
    report.setup.push(warmupStoring, warmupMit);
    for (const phase of [warmupStoring, warmupMit]) {
      if (phase.checks.failures > 0) throw new Error(`${phase.name}: ${phase.checks.firstFailure}`);
    }

    let storingPools: Pair[][] = [];
    if (settings.phases.has('storing')) {
      const perRun =
        settings.storingPayments ??
        Math.min(200_000, Math.max(settings.connections * 10, Math.ceil(warmupStoring.rps * settings.durationS * 1.2)));
      progress(`setup: ${perRun} new pairs per run for storing payments`);
      const fresh = await createPairs(target, settings, perRun * settings.runs);
      storingPools = Array.from({ length: settings.runs }, (_, run) =>
        fresh.pairs.slice(run * perRun, (run + 1) * perRun),
      );
      report.notes.push(`storing payments: ${perRun} per run, each on a customer and payment method never used before`);
    }

    for (let run = 0; run < settings.runs; run += 1) {
      const results: PhaseResult[] = [];
      const label = `run ${run + 1}/${settings.runs}`;
      if (settings.phases.has('storing')) {
        progress(`${label}: storing payments`);
        results.push(
          await inWindow(`storing#${run + 1}`, () =>
            closedLoop({
              name: phaseNames.storing(settings),
              baseUrl: target.baseUrl,
              connections: settings.connections,
              amount: storingPools[run]!.length,
              payment: true,
              servicePid: target.pid,
              withPostgres: target.withPostgres,
              request: storingRequest(target, storingPools[run]!),
            }),
          ),
        );
      }
      let mitRps = Number.NaN;
      if (settings.phases.has('mit')) {
        progress(`${label}: MIT payments`);
        results.push(
          await inWindow(`mit#${run + 1}`, async () => {
            const mit = await closedLoop({
              name: phaseNames.mit(settings),
              baseUrl: target.baseUrl,
              connections: settings.connections,
              durationS: settings.durationS,
              payment: true,
              servicePid: target.pid,
              withPostgres: target.withPostgres,
              request: mitRequest(target, mitPairs),
            });
            mitRps = mit.rps;
            return mit;
          }),
        );
      }
      if (settings.phases.has('half') && mitRps > 2) {
        // Issue 13: p99 ÷ p50 at half the maximum rate just measured (the closed loop's).
        const rate = Math.round(mitRps / 2);
        progress(`${label}: MIT payments at ${rate}/s (half the MIT rate)`);
        report.halfOffered.push(rate);
        results.push(
          await inWindow(`half#${run + 1}`, () =>
            fixedRate({
              name: phaseNames.half(settings),
              baseUrl: target.baseUrl,
              connections: settings.connections,
              ratePerSecond: rate,
              durationS: settings.durationS,
              payment: true,
              servicePid: target.pid,
              withPostgres: target.withPostgres,
              request: mitRequest(target, mitPairs),
            }),
          ),
        );
      }
      if (settings.phases.has('refund')) {
        if (refundable.length === 0) throw new Error('no succeeded MIT payment to refund');
        progress(`${label}: refunds`);
        results.push(
          await inWindow(`refund#${run + 1}`, () =>
            closedLoop({
              name: phaseNames.refund(settings),
              baseUrl: target.baseUrl,
              connections: settings.connections,
              durationS: settings.durationS,
              payment: false,
              servicePid: target.pid,
              withPostgres: target.withPostgres,
              request: refundRequest(target, refundable),
            }),
          ),
        );
      }
      if (settings.phases.has('rate')) {
        progress(`${label}: MIT payments at ${settings.ratePerSecond}/s`);
        results.push(
          await inWindow(`rate#${run + 1}`, () =>
            fixedRate({
              name: phaseNames.rate(settings),
              baseUrl: target.baseUrl,
              connections: settings.connections,
              ratePerSecond: settings.ratePerSecond,
              durationS: settings.durationS,
              payment: true,
              servicePid: target.pid,
              withPostgres: target.withPostgres,
              request: mitRequest(target, mitPairs),
            }),
          ),
        );
      }
      if (bare) {
        progress(`${label}: bare Fastify route`);
        results.push(
          await closedLoop({
            name: phaseNames.bare(settings),
            baseUrl: bare.url,
            connections: settings.connections,
            durationS: settings.durationS,
            payment: false,
            servicePid: bare.pid,
            request: { ...mitRequest(target, mitPairs), path: '/bare' },
          }),
        );
      }
      report.runs.push(results);
    }
    if (settings.cpuProfDir) {
      await writeFile(
        path.join(settings.cpuProfDir, `phases-${backend}.json`),
        `${JSON.stringify({ profile: `service-${backend}.cpuprofile`, clock: 'monotonic µs', windows }, null, 2)}\n`,
      );
    }
  } catch (err) {
    process.stderr.write(`[${backend}] service log (end):\n${await tail(service.logFile)}\n`);
    throw err;
  } finally {
    await service.stop();
  }
  const errors = await tail(service.logFile, 5);
  if (/"level":(50|60)/.test(errors)) report.notes.push(`the service logged errors; last lines:\n${errors}`);
  return report;
}

// ---- report --------------------------------------------------------------------------------

function median(values: number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The median run of each phase, by throughput (so its latencies belong to the same run). */
function medianOf(runs: PhaseResult[][], name: string): PhaseResult | undefined {
  const results = runs.map((run) => run.find((phase) => phase.name === name)).filter((phase) => phase !== undefined);
  if (results.length === 0) return undefined;
  const ranked = [...results].sort((a, b) => a.rps - b.rps);
  const chosen = ranked[Math.floor((ranked.length - 1) / 2)]!;
  return {
    ...chosen,
    rps: median(results.map((phase) => phase.rps)),
    p50Ms: median(results.map((phase) => phase.p50Ms)),
    p99Ms: median(results.map((phase) => phase.p99Ms)),
  };
}

const percent = (value: number | null) => (value === null || Number.isNaN(value) ? '–' : `${fmt(value)}%`);

const fmt = (value: number | null, digits = 0) =>
  value === null || Number.isNaN(value) ? '–' : value.toFixed(digits).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** CPU that neither the server, PostgreSQL nor the load generator used: someone else's work. */
function otherCpu(phase: PhaseResult): number | null {
  const { machinePct, servicePct, postgresPct, loadPct } = phase.cpu;
  if (machinePct === null || servicePct === null) return null;
  return Math.max(0, machinePct - servicePct - (postgresPct ?? 0) - loadPct);
}

/**
 * CPU milliseconds per answered request: where a request's cost lies (the service or PostgreSQL).
 * It rises too when other processes compete for the machine (context switches, cold caches).
 */
function perRequest(phase: PhaseResult, pct: number | null): string {
  if (pct === null || Number.isNaN(pct) || phase.rps <= 0) return '–';
  return ((pct / 100) * (1000 / phase.rps)).toFixed(2);
}

function table(phases: PhaseResult[], bareRps: number | undefined): string {
  const header = [
    'phase',
    'req/s',
    'p50 ms',
    'p99 ms',
    'requests',
    'non-2xx',
    'failed',
    'declined',
    '÷ bare',
    'svc CPU',
    'svc ms/req',
    'pg CPU',
    'pg ms/req',
    'load CPU',
    'other CPU',
  ];
  const rows = phases.map((phase) => [
    phase.name,
    fmt(phase.rps),
    fmt(phase.p50Ms, 1),
    fmt(phase.p99Ms, 1),
    fmt(phase.requests),
    fmt(phase.checks.non2xx),
    fmt(phase.checks.failures),
    fmt(phase.checks.declined + phase.checks.otherStatus),
    bareRps ? (phase.rps / bareRps).toFixed(3) : '–',
    percent(phase.cpu.servicePct),
    perRequest(phase, phase.cpu.servicePct),
    percent(phase.cpu.postgresPct),
    perRequest(phase, phase.cpu.postgresPct),
    percent(phase.cpu.loadPct),
    percent(otherCpu(phase)),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

function printReport(settings: Settings, report: BackendReport): string[] {
  const out: string[] = [];
  const names = [...new Set(report.runs.flat().map((phase) => phase.name))];
  const medians = names.map((name) => medianOf(report.runs, name)!);
  const bareRps = medians.find((phase) => phase.name === phaseNames.bare(settings))?.rps;
  const title = report.backend === 'pglite' ? 'PGlite (embedded, data folder)' : 'PostgreSQL (127.0.0.1)';
  out.push('', `== ${title}${settings.runs > 1 ? ` — median of ${settings.runs} runs` : ''}`);
  out.push(table(medians, bareRps));
  if (settings.runs > 1) {
    report.runs.forEach((run, index) => {
      const runBare = run.find((phase) => phase.name === phaseNames.bare(settings))?.rps;
      out.push('', `run ${index + 1}:`, table(run, runBare));
    });
  }
  out.push('', 'setup and warm-up (not measured phases):', table(report.setup, undefined));
  for (const note of report.notes) out.push(`note: ${note}`);

  const goal = goals.throughput[report.backend];
  const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
  out.push('', 'goals:');
  for (const key of ['storing', 'mit'] as const) {
    const phase = medians.find((candidate) => candidate.name === phaseNames[key](settings));
    if (phase) out.push(`  ${phase.name}: ${fmt(phase.rps)}/s, goal ≥ ${fmt(goal)}/s — ${verdict(phase.rps >= goal)}`);
  }
  const rate = medians.find((candidate) => candidate.name === phaseNames.rate(settings));
  if (rate) {
    const kept = rate.rps >= settings.ratePerSecond * 0.98;
    out.push(
      `  p99 at ${fmt(settings.ratePerSecond)}/s: ${fmt(rate.p99Ms, 1)} ms at ${fmt(rate.rps)}/s answered, goal ≤ ${goals.p99AtRateMs} ms — ${verdict(kept && rate.p99Ms <= goals.p99AtRateMs)}`,
    );
  }
  const failures = report.runs.flat().reduce((sum, phase) => sum + phase.checks.failures, 0);
  for (const phase of report.runs.flat()) {
    if (phase.note) out.push(`  ${phase.name}: ${phase.note}`);
    if (phase.checks.firstFailure) out.push(`  first failure in ${phase.name}: ${phase.checks.firstFailure}`);
  }
  out.push(`  failed requests in measured phases: ${failures}`);
  return out;
}

// ---- issue 13: the phases with processes of their own -----------------------------------------

/** The database floor, the growth and the webhook drain of one store, each after the other. */
async function ratioPhases(cleanup: Cleanup, settings: Settings, figures: RatioFigures): Promise<void> {
  const { backend } = figures;
  const progress = (text: string) => process.stderr.write(`[${backend}] ${text}\n`);
  if (settings.phases.has('floor')) {
    progress('database floor');
    figures.floor =
      backend === 'postgres'
        ? await postgresFloor(cleanup, settings.databaseServerUrl, settings.connections, settings.durationS)
        : await pgliteFloor(settings.quick ? 1000 : 5000, settings.quick ? 1 : 3);
  }
  if (settings.phases.has('growth')) {
    const store = await newStore(cleanup, settings, backend);
    let running: ChildServer | null = null;
    figures.growth = await runGrowth(
      {
        adminKey: store.adminKey,
        database: backend === 'postgres' ? { databaseUrl: store.databaseUrl } : { dataDir: store.dataDir },
        start: async () => {
          running = (await startService(cleanup, settings, backend, store)).service;
          return running.url;
        },
        stop: async () => {
          await running?.stop();
          running = null;
        },
      },
      { bigRows: settings.growthRows, requests: settings.growthRequests, progress },
    );
  }
  if (settings.phases.has('webhooks')) {
    progress(`webhook drain of ${settings.webhookDeliveries} deliveries and the bare sender (bench/webhooks.ts)`);
    figures.webhooks = await webhookRatio(cleanup, backend, {
      deliveries: settings.webhookDeliveries,
      databaseServerUrl: settings.databaseServerUrl,
    });
  }
}

// ---- main ----------------------------------------------------------------------------------

function main(): void {
  const settings = readSettings();
  const title =
    `Tessera benchmark — ${cores} cores, Node ${process.version}, ${settings.connections} connections, ` +
    `${settings.durationS} s per phase, ${settings.runs} run(s), load generator in this process`;
  runBenchmark(
    {
      title,
      timeoutS: settings.timeoutS,
      busyHint: '; other processes compete for the CPU (see the "other CPU" column)',
    },
    async (cleanup, lines) => {
      const reports: BackendReport[] = [];
      if (settings.cpuProfDir) await mkdir(settings.cpuProfDir, { recursive: true });
      let bare: ChildServer | null = null;
      if (settings.phases.has('bare')) {
        const logDir = await makeTempDir(cleanup, 'tessera-bench-bare-');
        const port = await freePort();
        bare = await startChild(cleanup, {
          name: 'bare Fastify route',
          args: ['--import', 'tsx', path.join(repoRoot, 'bench', 'bare-server.ts'), String(port)],
          env: childEnv({ NODE_ENV: 'production' }),
          port,
          logFile: path.join(logDir, 'bare.log'),
          healthPath: '/health',
        });
      }
      const ratios: RatioFigures[] = [];
      for (const backend of settings.backends) {
        const figures: RatioFigures = { backend };
        if (paymentPhases.some((phase) => settings.phases.has(phase))) {
          const report = await benchBackend(cleanup, settings, backend, bare);
          reports.push(report);
          lines.push(...printReport(settings, report));
          const mit = medianOf(report.runs, phaseNames.mit(settings));
          const half = medianOf(report.runs, phaseNames.half(settings));
          if (mit) {
            figures.mitRps = mit.rps;
            const { servicePct, postgresPct, loadPct } = mit.cpu;
            figures.mitCpuMs =
              servicePct === null ? null : ((servicePct + (postgresPct ?? 0) + loadPct) / 100) * (1000 / mit.rps);
          }
          if (half) {
            const offered = median(report.halfOffered);
            figures.half = { offered, answered: half.rps, p50Ms: half.p50Ms, p99Ms: half.p99Ms };
          }
        }
        await ratioPhases(cleanup, settings, figures);
        ratios.push(figures);
        process.stderr.write(`${ratioTable(ratios).join('\n')}\n`);
      }
      lines.push(...ratioTable(ratios));
      process.stdout.write(`${lines.join('\n')}\n`);
      if (settings.jsonFile) {
        await writeFile(
          settings.jsonFile,
          `${JSON.stringify({ settings: { ...settings, phases: [...settings.phases] }, cores, node: process.version, reports, ratios }, null, 2)}\n`,
        );
      }
    },
  );
}

main();
