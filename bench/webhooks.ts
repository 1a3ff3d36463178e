/**
 * `npm run bench:webhooks`: the webhook engine (issue 3), on PGlite and then on PostgreSQL, beside
 * bare signed POSTs from undici to the same receiver measured in the same run. See
 * docs/performance.md ("Webhook engine").
 *
 *   npm run bench:webhooks                      both databases, one run
 *   npm run bench:webhooks -- --only postgres   one database (pglite | postgres)
 *   npm run bench:webhooks -- --runs 3          three runs per database; the summary shows medians
 *   npm run bench:webhooks -- --json FILE       every figure, machine-readable
 *   npm run bench:webhooks -- --drain-only      the drain and its bare sender only (no latency phases;
 *                                               what `npm run bench -- --phases webhooks` runs)
 *   npm run bench:webhooks -- --cpu-prof DIR    V8 CPU profiles of the sending processes (the drain
 *                                               and the latency service; bench/profile-summary.ts)
 *
 * Each run: a fresh database; K merchants with one webhook endpoint each, all on one receiver (a
 * node:http server in its own process, one path per endpoint); then
 *
 *   1. backlog: `tessera start` with TESSERA_WEBHOOK_DISPATCHER=off takes MIT payments until
 *      BENCH_WEBHOOK_DELIVERIES deliveries wait (each payment: one event, two notifications, the
 *      endpoint_ and the legacy kind); the service is stopped;
 *   2. drain: a process with the dispatcher on sends them (PGlite: `tessera start` on the same data
 *      folder; PostgreSQL: BENCH_WEBHOOK_WORKERS `tessera worker` processes, or `tessera start` when
 *      0); the rate is taken at the receiver, from the first to the last arrival;
 *   3. latency: `tessera start` (dispatcher on) takes MIT payments at a fixed offered rate
 *      (BENCH_WEBHOOK_RATE, then BENCH_WEBHOOK_SUSTAINED_RATE, by default half the payment rate the
 *      first achieved); latency = receiver arrival (Date.now()) − the event's `created`, both this
 *      machine's clock at 1 ms resolution, for the endpoint_ kind;
 *   4. physical limit: bare signed POSTs (bench/bare-sender.ts, its own process) to the same paths,
 *      the same body size: as many requests as the drain at the same total concurrency (K × the
 *      per-target cap), and the same number of notifications per second as each latency phase.
 *
 * Environment: BENCH_WEBHOOK_DELIVERIES (20000), BENCH_WEBHOOK_ENDPOINTS (8),
 * BENCH_WEBHOOK_CONCURRENCY_PER_TARGET (8, passed on as TESSERA_WEBHOOK_CONCURRENCY_PER_TARGET),
 * BENCH_WEBHOOK_WORKERS (1), BENCH_WEBHOOK_RATE (1000), BENCH_WEBHOOK_SUSTAINED_RATE (see above),
 * BENCH_DURATION_SECONDS (10), BENCH_CONNECTIONS (32), BENCH_WARMUP_SECONDS (3),
 * BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres), BENCH_TIMEOUT_SECONDS.
 *
 * Everything runs on 127.0.0.1, every server in its own child process; data folders and databases
 * are removed at the end, also after an error or Ctrl-C. The service runs with NODE_ENV=development,
 * since production refuses webhook URLs on loopback addresses (DESIGN §5).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { call, paymentBody } from './api.js';
import { cores, cpuShare, cpuSnapshot, type CpuShare, type CpuSnapshot } from './cpu.js';
import { closedLoop, fixedRate, percentile, type PhaseResult, type RequestSpec } from './load.js';
import { cards } from './cards.js';
import { backendsAndRuns, positiveInteger, type Backend } from './settings.js';
import {
  Cleanup,
  runBenchmark,
  childEnv,
  createDatabase,
  freePort,
  makeTempDir,
  repoRoot,
  startChild,
  startProcess,
  tail,
  type ChildServer,
} from './processes.js';

const apiBase = '/api/services/v1';
const goals = {
  drainPerSecond: { pglite: 3000, postgres: 5000 } as Record<Backend, number>,
  p99Ms: 50,
  atPaymentsPerSecond: 1000,
};
/** Each payment event goes to its merchant's one endpoint twice: the endpoint_ and the legacy kind (SPEC §6.4). */
const notificationsPerPayment = 2;

// ---- settings ------------------------------------------------------------------------------

function readSettings() {
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

type Settings = ReturnType<typeof readSettings>;

// ---- the APIs ------------------------------------------------------------------------------

interface ReceiverStats {
  requests: number;
  distinct: number;
  duplicates: number;
  unparsed: number;
  firstArrivalMs: number | null;
  lastArrivalMs: number | null;
  byPath: Record<string, number>;
}

class ReceiverClient {
  constructor(
    readonly server: ChildServer,
    readonly paths: string[],
  ) {}

  private async get<T>(route: string, method = 'GET'): Promise<T> {
    const response = await fetch(`${this.server.url}/_bench/${route}`, { method, signal: AbortSignal.timeout(30_000) });
    return (await response.json()) as T;
  }
  stats = () => this.get<ReceiverStats>('stats');
  records = () => this.get<{ arrivalMs: number[]; createdMs: number[]; endpointKind: number[] }>('records');
  sample = () => this.get<{ path: string; body: string } | null>('sample');
  reset = () => this.get<unknown>('reset', 'POST');

  /** Waits until `count` distinct deliveries have arrived; then a moment more, for duplicates. */
  async waitFor(count: number, timeoutMs: number): Promise<ReceiverStats> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const stats = await this.stats();
      if (stats.distinct >= count) {
        await sleep(300);
        return this.stats();
      }
      if (Date.now() > deadline) {
        throw new Error(`the receiver got ${stats.distinct} of ${count} deliveries within ${timeoutMs / 1000} s`);
      }
      await sleep(25);
    }
  }
}

interface Merchant {
  privateKey: string;
  endpointToken: string;
  pairs: Array<{ customerId: string; paymentMethodId: string }>;
}

/** Every answered payment with an outcome is one event, so this many notifications. */
const eventsOf = (phase: PhaseResult) => phase.checks.succeeded + phase.checks.declined;

/** One call per request through closedLoop, collecting the ids it answers. */
async function createMany(
  service: ChildServer,
  merchant: { privateKey: string },
  route: string,
  count: number,
  connections: number,
  nextBody: () => string,
  prefix: string,
): Promise<string[]> {
  const ids: string[] = [];
  const idPattern = new RegExp(`"id":"(${prefix}_\\d+)"`);
  const phase = await closedLoop({
    name: `setup: ${route}`,
    baseUrl: service.url,
    connections: Math.min(connections, count),
    amount: count,
    payment: false,
    servicePid: null,
    request: {
      path: `${apiBase}${route}`,
      headers: { authorization: `Bearer ${merchant.privateKey}` },
      nextBody,
      onSuccess: (body) => ids.push(idPattern.exec(body)![1]!),
    },
  });
  if (phase.checks.failures > 0 || ids.length < count) throw new Error(`${phase.name}: ${phase.checks.firstFailure}`);
  return ids;
}

/** K merchants, each with MIT on, one endpoint on its own receiver path, and stored card pairs. */
async function createMerchants(
  settings: Settings,
  service: ChildServer,
  adminKey: string,
  receiver: ReceiverClient,
): Promise<{ merchants: Merchant[]; bindingEvents: number }> {
  const pairsPerMerchant = Math.max(4, Math.ceil((2 * settings.connections) / settings.endpoints));
  const merchants: Merchant[] = [];
  let bindingEvents = 0;
  for (let index = 0; index < settings.endpoints; index += 1) {
    const created = await call(`${service.url}/admin/v1/merchants/create`, adminKey, {
      name: `Webhook benchmark merchant ${index + 1}`,
      tokenization: true,
      mit: true,
    });
    const privateKey: string = created.keys.privateKey;
    const endpoint = await call(`${service.url}${apiBase}/webhook_endpoints/create`, privateKey, {
      url: `${receiver.server.url}${receiver.paths[index]}`,
      legacyNotifications: true,
    });
    let number = 0;
    const customerIds = await createMany(
      service,
      { privateKey },
      '/customers/create',
      pairsPerMerchant,
      settings.connections,
      () => JSON.stringify({ firstName: 'Bench', lastName: `Customer ${++number}`, email: `b${number}@example.com` }),
      'cus',
    );
    const methodIds = await createMany(
      service,
      { privateKey },
      '/payment_methods/create',
      pairsPerMerchant,
      settings.connections,
      () => {
        const card = cards[number++ % cards.length]!;
        return JSON.stringify({ type: 'card', card: { ...card, expMonth: '12', expYear: '2030' } });
      },
      'pm',
    );
    const pairs = customerIds.map((customerId, at) => ({ customerId, paymentMethodId: methodIds[at]! }));
    // Each pair is bound by one storing payment; MIT payments then reuse it, as a subscription does.
    let next = 0;
    const binding = await closedLoop({
      name: 'setup: storing payments',
      baseUrl: service.url,
      connections: Math.min(settings.connections, pairs.length),
      amount: pairs.length,
      payment: true,
      servicePid: null,
      request: {
        path: `${apiBase}/payment/create`,
        headers: { authorization: `Bearer ${privateKey}` },
        nextBody: () => {
          const pair = pairs[next++]!;
          return paymentBody(pair);
        },
      },
    });
    if (binding.checks.succeeded !== pairs.length) throw new Error(`storing payments: ${binding.checks.firstFailure}`);
    bindingEvents += eventsOf(binding);
    merchants.push({ privateKey, endpointToken: endpoint.token, pairs });
  }
  return { merchants, bindingEvents };
}

/** MIT payments, round-robin over the merchants (and so over the endpoints). */
function mitAcross(merchants: Merchant[]): RequestSpec {
  let next = 0;
  let current = merchants[0]!;
  return {
    path: `${apiBase}/payment/create`,
    headers: {},
    nextBody: () => {
      current = merchants[next % merchants.length]!;
      const pair = current.pairs[Math.floor(next / merchants.length) % current.pairs.length]!;
      next += 1;
      return paymentBody(pair, 'mit');
    },
    nextHeaders: () => ({ authorization: `Bearer ${current.privateKey}` }),
  };
}

// ---- measuring -----------------------------------------------------------------------------

interface Cpu {
  /** The sender: the service, the worker(s) or the bare sender. */
  senderPct: number | null;
  receiverPct: number | null;
  postgresPct: number | null;
  machinePct: number | null;
}

function cpuOf(pids: number[], receiverPid: number, withPostgres: boolean): () => Cpu {
  const take = () => ({
    senders: pids.map((pid) => cpuSnapshot(pid, false)),
    receiver: cpuSnapshot(receiverPid, withPostgres),
  });
  const before = take();
  return () => {
    const after = take();
    const senders = pids.map((_, at) =>
      cpuShare(before.senders[at] as CpuSnapshot, after.senders[at] as CpuSnapshot),
    ) as CpuShare[];
    const receiver = cpuShare(before.receiver, after.receiver);
    const senderPct = senders.some((share) => share.servicePct === null)
      ? null
      : senders.reduce((sum, share) => sum + share.servicePct!, 0);
    return {
      senderPct,
      receiverPct: receiver.servicePct,
      postgresPct: receiver.postgresPct,
      machinePct: receiver.machinePct,
    };
  };
}

interface Throughput {
  deliveries: number;
  /** First to last arrival at the receiver. */
  seconds: number;
  perSecond: number;
  duplicates: number;
  cpu: Cpu;
}

function throughputOf(stats: ReceiverStats, cpu: Cpu): Throughput {
  const seconds = ((stats.lastArrivalMs ?? 0) - (stats.firstArrivalMs ?? 0)) / 1000;
  return {
    deliveries: stats.distinct,
    seconds,
    perSecond: seconds > 0 ? (stats.distinct - 1) / seconds : Number.NaN,
    duplicates: stats.duplicates,
    cpu,
  };
}

interface Latency {
  deliveries: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

async function latencyOf(receiver: ReceiverClient, endpointKindOnly: boolean): Promise<Latency> {
  const records = await receiver.records();
  const values: number[] = [];
  records.arrivalMs.forEach((arrival, at) => {
    if (!endpointKindOnly || records.endpointKind[at] === 1) values.push(arrival - records.createdMs[at]!);
  });
  const sorted = Float64Array.from(values).sort();
  return {
    deliveries: sorted.length,
    p50Ms: percentile(sorted, 0.5),
    p90Ms: percentile(sorted, 0.9),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

interface LatencyPhase {
  offeredPaymentsPerSecond: number;
  payments: PhaseResult;
  /** Notifications per second the receiver got during the phase (both kinds). */
  notificationsPerSecond: number;
  webhook: Latency;
  cpu: Cpu;
  bare: { offeredPerSecond: number; latency: Latency; sender: BareSummary; cpu: Cpu };
}

interface RunReport {
  backend: Backend;
  drainBy: string;
  fill: PhaseResult;
  backlog: number;
  drain: Throughput & { fromSpawnSeconds: number };
  bareDrain: Throughput & { sender: BareSummary };
  latency: LatencyPhase[];
  bodyBytes: number;
  notes: string[];
}

interface BareSummary {
  sent: number;
  succeeded: number;
  failed: number;
  notSent: number;
  firstError: string | null;
}

// ---- one run on one database ---------------------------------------------------------------

async function benchRun(
  cleanup: Cleanup,
  settings: Settings,
  backend: Backend,
  receiver: ReceiverClient,
  label: string,
): Promise<RunReport> {
  const progress = (text: string) => process.stderr.write(`[${backend} ${label}] ${text}\n`);
  const dataDir = await makeTempDir(cleanup, `tessera-bench-webhooks-${backend}-`);
  const databaseUrl = backend === 'postgres' ? await createDatabase(cleanup, settings.databaseServerUrl) : undefined;
  const withPostgres = backend === 'postgres';
  const adminKey = `bench_operator_${randomBytes(24).toString('hex')}`;
  // The same keys for every process on this database: they share the vault and the operator key.
  const masterKey = randomBytes(32).toString('hex');
  const serviceEnv = (dispatcher: 'on' | 'off', port?: number) =>
    childEnv({
      // Production refuses webhook URLs on loopback addresses.
      NODE_ENV: 'development',
      PORT: port === undefined ? undefined : String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_ADMIN_KEY: adminKey,
      TESSERA_MASTER_KEY: masterKey,
      TESSERA_LOG_LEVEL: 'warn',
      TESSERA_WEBHOOK_CONCURRENCY_PER_TARGET: String(settings.concurrencyPerTarget),
      TESSERA_WEBHOOK_DISPATCHER: dispatcher,
      TESSERA_DATABASE_POOL_SIZE: process.env.TESSERA_DATABASE_POOL_SIZE,
    });
  const profileName = (name: string) => `${backend}-${label.replace(/\W+/g, '-')}-${name}`;
  const profileArgs = (name: string) =>
    settings.cpuProfDir
      ? ['--cpu-prof', '--cpu-prof-dir', settings.cpuProfDir, '--cpu-prof-name', `${profileName(name)}.cpuprofile`]
      : [];
  // The phases of each profile on the monotonic clock, for bench/profile-summary.ts.
  const windows = new Map<string, Array<{ name: string; startUs: string; endUs: string }>>();
  const nowUs = () => String(process.hrtime.bigint() / 1000n);
  const inWindow = async <T>(profile: string, name: string, work: () => Promise<T>): Promise<T> => {
    const startUs = nowUs();
    const result = await work();
    windows.set(profile, [...(windows.get(profile) ?? []), { name, startUs, endUs: nowUs() }]);
    return result;
  };
  const startService = async (dispatcher: 'on' | 'off', name: string) => {
    const port = await freePort();
    return startChild(cleanup, {
      name,
      args: [...(dispatcher === 'on' ? profileArgs('service') : []), path.join(repoRoot, 'dist', 'cli.js'), 'start'],
      env: serviceEnv(dispatcher, port),
      port,
      logFile: path.join(dataDir, `${name.replace(/\W+/g, '-')}.log`),
      healthPath: '/health',
    });
  };
  const notes: string[] = [];
  const logsWithErrors = new Set<string>();
  const checkLog = async (file: string) => {
    if (/"level":(50|60)/.test(await tail(file, 200))) logsWithErrors.add(file);
  };

  // 1. The backlog, with no process sending.
  progress('setup: merchants, endpoints, stored cards (dispatcher off)');
  await receiver.reset();
  const filler = await startService('off', 'tessera start (dispatcher off)');
  let merchants: Merchant[];
  let fill: PhaseResult;
  let backlog: number;
  try {
    const made = await createMerchants(settings, filler, adminKey, receiver);
    merchants = made.merchants;
    const payments = Math.max(0, Math.ceil(settings.deliveries / notificationsPerPayment) - made.bindingEvents);
    progress(`backlog: ${payments} MIT payments`);
    fill = await closedLoop({
      name: 'MIT payments, dispatcher off (backlog)',
      baseUrl: filler.url,
      connections: settings.connections,
      amount: payments,
      payment: true,
      servicePid: filler.pid,
      withPostgres,
      request: mitAcross(merchants),
    });
    if (fill.checks.failures > 0 || fill.checks.otherStatus > 0) {
      throw new Error(`backlog payments: ${fill.checks.firstFailure ?? `${fill.checks.otherStatus} without outcome`}`);
    }
    backlog = (made.bindingEvents + eventsOf(fill)) * notificationsPerPayment;
    const early = await receiver.stats();
    if (early.requests > 0) throw new Error(`${early.requests} notifications were sent with the dispatcher off`);
  } finally {
    await filler.stop();
    await checkLog(filler.logFile);
  }

  // 2. The drain.
  const drainByWorkers = backend === 'postgres' && settings.workers > 0;
  const drainBy = drainByWorkers
    ? `${settings.workers} × tessera worker`
    : `tessera start${backend === 'pglite' ? ' (same data folder)' : ''}`;
  progress(`drain: ${backlog} deliveries by ${drainBy}`);
  const spawnedAtMs = Date.now();
  let service: ChildServer | undefined;
  let drain: RunReport['drain'];
  const drainTimeoutMs = 60_000 + backlog * 2;
  if (drainByWorkers) {
    const workers = [];
    for (let index = 0; index < settings.workers; index += 1) {
      workers.push(
        await startProcess(cleanup, {
          name: `tessera worker ${index + 1}`,
          args: [...profileArgs(`worker-${index + 1}`), path.join(repoRoot, 'dist', 'cli.js'), 'worker'],
          env: serviceEnv('on'),
          logFile: path.join(dataDir, `worker-${index + 1}.log`),
        }),
      );
    }
    const cpu = cpuOf(
      workers.map((worker) => worker.pid),
      receiver.server.pid,
      withPostgres,
    );
    try {
      const stats = await inWindow('worker-1', 'drain', () => receiver.waitFor(backlog, drainTimeoutMs));
      drain = { ...throughputOf(stats, cpu()), fromSpawnSeconds: (stats.lastArrivalMs! - spawnedAtMs) / 1000 };
    } finally {
      for (const worker of workers) {
        await worker.stop();
        await checkLog(worker.logFile);
      }
    }
    service = await startService('on', 'tessera start');
  } else {
    service = await startService('on', 'tessera start');
    const cpu = cpuOf([service.pid], receiver.server.pid, withPostgres);
    const stats = await inWindow('service', 'drain', () => receiver.waitFor(backlog, drainTimeoutMs));
    drain = { ...throughputOf(stats, cpu()), fromSpawnSeconds: (stats.lastArrivalMs! - spawnedAtMs) / 1000 };
  }
  if (drain.deliveries !== backlog) notes.push(`drain: ${drain.deliveries} distinct deliveries for ${backlog} planned`);
  if (drain.duplicates > 0) notes.push(`drain: ${drain.duplicates} deliveries arrived more than once`);
  const sample = await receiver.sample();
  if (!sample) throw new Error('no endpoint_ notification arrived');

  // 3. Latency, with the dispatcher on in the service that takes the payments.
  const latency: Array<Omit<LatencyPhase, 'bare'>> = [];
  try {
    for (const merchant of merchants) {
      const waiting = await call(
        `${service.url}${apiBase}/webhook_deliveries?status=pending&limit=1`,
        merchant.privateKey,
      );
      if (waiting.data.length > 0) throw new Error('deliveries are still pending after the drain');
    }
    progress('warm-up');
    await receiver.reset();
    const warmup = await closedLoop({
      name: 'warm-up',
      baseUrl: service.url,
      connections: settings.connections,
      durationS: settings.warmupS,
      payment: true,
      servicePid: service.pid,
      request: mitAcross(merchants),
    });
    await receiver.waitFor(eventsOf(warmup) * notificationsPerPayment, 60_000);

    const rates = settings.drainOnly ? [] : [settings.ratePerSecond];
    for (let index = 0; index < rates.length; index += 1) {
      const rate = rates[index]!;
      progress(`latency: MIT payments at ${rate}/s for ${settings.durationS} s`);
      await receiver.reset();
      const cpu = cpuOf([service.pid], receiver.server.pid, withPostgres);
      const payments = await inWindow('service', `rate-${rate}`, () =>
        fixedRate({
          name: `MIT payments at ${rate}/s`,
          baseUrl: service.url,
          connections: settings.connections,
          ratePerSecond: rate,
          durationS: settings.durationS,
          payment: true,
          servicePid: service.pid,
          withPostgres,
          request: mitAcross(merchants),
        }),
      );
      // Payments that timed out on the client may still have committed: at least this many.
      const stats = await receiver.waitFor(eventsOf(payments) * notificationsPerPayment, 60_000);
      const phaseCpu = cpu();
      latency.push({
        offeredPaymentsPerSecond: rate,
        payments,
        notificationsPerSecond: throughputOf(stats, phaseCpu).perSecond,
        webhook: await latencyOf(receiver, true),
        cpu: phaseCpu,
      });
      if (index === 0) {
        const sustained = settings.sustainedRatePerSecond ?? Math.max(10, Math.floor((payments.rps * 0.5) / 10) * 10);
        if (sustained !== rate) rates.push(sustained);
      }
    }
  } finally {
    await service.stop();
    await checkLog(service.logFile);
  }

  // 4. The physical limit: bare signed POSTs to the same receiver.
  const runBare = async (mode: Record<string, unknown>): Promise<{ sender: BareSummary; cpu: Cpu }> => {
    const sender = await startProcess(cleanup, {
      name: 'bare sender',
      args: [
        '--import',
        'tsx',
        path.join(repoRoot, 'bench', 'bare-sender.ts'),
        JSON.stringify({
          origin: receiver.server.url,
          paths: receiver.paths,
          token: merchants[0]!.endpointToken,
          sampleBody: sample.body,
          concurrency: settings.endpoints * settings.concurrencyPerTarget,
          ...mode,
        }),
      ],
      env: childEnv({ NODE_ENV: 'production' }),
      logFile: path.join(dataDir, 'bare-sender.log'),
      readyWhen: /^ready$/m,
    });
    try {
      const cpu = cpuOf([sender.pid], receiver.server.pid, false);
      sender.write('go\n');
      const summary = /^\{.*\}$/m;
      let running = true;
      void sender.exited.then(() => (running = false));
      while (!summary.test(sender.output())) {
        if (!running) throw new Error(`bare sender failed:\n${await tail(sender.logFile)}`);
        await sleep(10);
      }
      const measured = cpu();
      return { sender: JSON.parse(summary.exec(sender.output())![0]) as BareSummary, cpu: measured };
    } finally {
      await sender.stop();
    }
  };
  progress(`bare: ${backlog} signed POSTs, ${settings.endpoints * settings.concurrencyPerTarget} in flight`);
  await receiver.reset();
  const closed = await runBare({ mode: 'closed', total: backlog });
  const bareDrain = { ...throughputOf(await receiver.waitFor(backlog, 60_000), closed.cpu), sender: closed.sender };
  const withBare: LatencyPhase[] = [];
  for (const phase of latency) {
    const offered = phase.offeredPaymentsPerSecond * notificationsPerPayment;
    progress(`bare: ${offered} signed POSTs/s for ${settings.durationS} s`);
    await receiver.reset();
    const run = await runBare({ mode: 'rate', ratePerSecond: offered, durationS: settings.durationS });
    await receiver.waitFor(run.sender.succeeded, 60_000);
    withBare.push({
      ...phase,
      bare: { offeredPerSecond: offered, latency: await latencyOf(receiver, false), sender: run.sender, cpu: run.cpu },
    });
  }
  if (settings.cpuProfDir) {
    for (const [profile, list] of windows) {
      const phases = { profile: `${profileName(profile)}.cpuprofile`, clock: 'monotonic µs', windows: list };
      await writeFile(
        path.join(settings.cpuProfDir, `phases-${profileName(profile)}.json`),
        `${JSON.stringify(phases, null, 2)}\n`,
      );
    }
  }
  for (const file of logsWithErrors)
    notes.push(`${path.basename(file)} logged errors; last lines:\n${await tail(file, 5)}`);
  return {
    backend,
    drainBy,
    fill,
    backlog,
    drain,
    bareDrain,
    latency: withBare,
    bodyBytes: Buffer.byteLength(sample.body),
    notes,
  };
}

// ---- report --------------------------------------------------------------------------------

const fmt = (value: number | null | undefined, digits = 0) =>
  value === null || value === undefined || Number.isNaN(value)
    ? '–'
    : value.toFixed(digits).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const pct = (value: number | null) => (value === null ? '–' : `${fmt(value)}%`);
const ratio = (service: number, bare: number) =>
  Number.isFinite(service) && Number.isFinite(bare) && bare > 0
    ? (service / bare).toFixed(service / bare >= 10 ? 0 : 2)
    : '–';

function median(values: number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) =>
          column === 0 || column >= 4 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The figures of one run, or the median of each figure over several runs (`reports`). */
function printBackend(settings: Settings, reports: RunReport[]): string[] {
  const first = reports[0]!;
  const m = (pick: (report: RunReport) => number) => median(reports.map(pick));
  const out: string[] = [];
  const title = first.backend === 'pglite' ? 'PGlite (embedded, data folder)' : 'PostgreSQL (127.0.0.1)';
  out.push(
    '',
    `== ${title}${reports.length > 1 ? ` — median of ${reports.length} runs (each figure on its own)` : ''}`,
    `${settings.endpoints} endpoints (one per merchant, one receiver path each) × ${settings.concurrencyPerTarget} per target = ` +
      `${settings.endpoints * settings.concurrencyPerTarget} in flight; 2 notifications per payment (endpoint_ and legacy); ` +
      `body ${first.bodyBytes} bytes; drain by ${first.drainBy}`,
  );
  const verdict = (met: boolean) => (met ? 'yes' : 'NO');
  const drainGoal = goals.drainPerSecond[first.backend];
  const drainRate = m((report) => report.drain.perSecond);
  const bareRate = m((report) => report.bareDrain.perSecond);
  const rows: string[][] = [['measure', 'service', 'bare undici', 'service ÷ bare', 'goal', 'met']];
  rows.push([
    `drain of ${fmt(m((report) => report.backlog))} deliveries, per s`,
    fmt(drainRate),
    fmt(bareRate),
    ratio(drainRate, bareRate),
    `≥ ${fmt(drainGoal)}/s`,
    verdict(drainRate >= drainGoal),
  ]);
  rows.push([
    '  first to last arrival, s',
    fmt(
      m((report) => report.drain.seconds),
      2,
    ),
    fmt(
      m((report) => report.bareDrain.seconds),
      2,
    ),
    '',
    '',
    '',
  ]);
  rows.push([
    '  process spawn to last arrival, s',
    fmt(
      m((report) => report.drain.fromSpawnSeconds),
      2,
    ),
    '',
    '',
    '',
    '',
  ]);
  first.latency.forEach((phase, index) => {
    const at = (pick: (latency: LatencyPhase) => number) => m((report) => pick(report.latency[index]!));
    const achieved = at((latency) => latency.payments.rps);
    const isGoalRate = phase.offeredPaymentsPerSecond === goals.atPaymentsPerSecond;
    rows.push([
      `payments offered ${fmt(phase.offeredPaymentsPerSecond)}/s: answered/s`,
      fmt(achieved),
      '',
      '',
      isGoalRate ? `${fmt(goals.atPaymentsPerSecond)}/s` : '',
      isGoalRate ? verdict(achieved >= goals.atPaymentsPerSecond * 0.98) : '',
    ]);
    rows.push([
      '  notifications received/s',
      fmt(at((latency) => latency.notificationsPerSecond)),
      fmt(at((latency) => latency.bare.offeredPerSecond)),
      '',
      '',
      '',
    ]);
    for (const [name, key] of [
      ['p50', 'p50Ms'],
      ['p90', 'p90Ms'],
      ['p99', 'p99Ms'],
      ['max', 'maxMs'],
    ] as const) {
      const service = at((latency) => latency.webhook[key]);
      const bare = at((latency) => latency.bare.latency[key]);
      const goal = key === 'p99Ms' && isGoalRate;
      rows.push([
        `  webhook latency ${name}, ms`,
        fmt(service),
        fmt(bare),
        ratio(service, bare),
        goal ? `≤ ${goals.p99Ms} ms` : '',
        goal ? verdict(service <= goals.p99Ms && achieved >= goals.atPaymentsPerSecond * 0.98) : '',
      ]);
    }
    rows.push([
      '  payment API p50 / p99, ms',
      `${fmt(at((latency) => latency.payments.p50Ms))} / ${fmt(at((latency) => latency.payments.p99Ms))}`,
      '',
      '',
      '',
      '',
    ]);
  });
  out.push(table(rows));

  out.push('', 'CPU (% of one core; sender = service / worker(s) / bare sender):');
  const cpuRows: string[][] = [['phase', 'sender', 'receiver', 'postgres', 'machine']];
  const cpuRow = (name: string, pick: (report: RunReport) => Cpu) => {
    const value = (key: keyof Cpu) => {
      const values = reports.map((report) => pick(report)[key]);
      return values.some((entry) => entry === null) ? null : median(values as number[]);
    };
    cpuRows.push([
      name,
      pct(value('senderPct')),
      pct(value('receiverPct')),
      pct(value('postgresPct')),
      pct(value('machinePct')),
    ]);
  };
  cpuRow('drain (service)', (report) => report.drain.cpu);
  cpuRow('drain (bare)', (report) => report.bareDrain.cpu);
  first.latency.forEach((phase, index) => {
    cpuRow(`${fmt(phase.offeredPaymentsPerSecond)} payments/s (service)`, (report) => report.latency[index]!.cpu);
    cpuRow(`${fmt(phase.offeredPaymentsPerSecond * 2)} POSTs/s (bare)`, (report) => report.latency[index]!.bare.cpu);
  });
  out.push(table(cpuRows));
  out.push(
    '',
    `backlog filled at ${fmt(m((report) => report.fill.rps))} MIT payments/s with the dispatcher off ` +
      `(p50 ${fmt(m((report) => report.fill.p50Ms))} ms, p99 ${fmt(m((report) => report.fill.p99Ms))} ms)`,
  );
  for (const report of reports) {
    for (const phase of report.latency) {
      if (phase.payments.note) out.push(`note: ${phase.payments.name}: ${phase.payments.note}`);
      if (phase.payments.checks.firstFailure && !phase.payments.note) {
        out.push(`note: ${phase.payments.name}: first failure ${phase.payments.checks.firstFailure}`);
      }
      if (phase.bare.sender.notSent > 0 || phase.bare.sender.failed > 0) {
        out.push(
          `note: bare at ${phase.bare.offeredPerSecond}/s: ${phase.bare.sender.notSent} not sent, ${phase.bare.sender.failed} failed`,
        );
      }
    }
    for (const note of report.notes) out.push(`note: ${note}`);
  }
  return out;
}

// ---- main ----------------------------------------------------------------------------------

function main(): void {
  const settings = readSettings();
  const title =
    `Tessera webhook benchmark — ${cores} cores, Node ${process.version}, backlog ${fmt(settings.deliveries)} deliveries, ` +
    `${settings.durationS} s per latency phase, ${settings.runs} run(s)`;
  runBenchmark({ title, timeoutS: settings.timeoutS }, async (cleanup, lines) => {
    const results: Record<string, RunReport[]> = {};
    if (settings.cpuProfDir) await mkdir(settings.cpuProfDir, { recursive: true });
    const logDir = await makeTempDir(cleanup, 'tessera-bench-receiver-');
    const port = await freePort();
    const receiverServer = await startChild(cleanup, {
      name: 'webhook receiver',
      args: ['--import', 'tsx', path.join(repoRoot, 'bench', 'receiver-server.ts'), String(port)],
      env: childEnv({ NODE_ENV: 'production' }),
      port,
      logFile: path.join(logDir, 'receiver.log'),
      healthPath: '/health',
    });
    const receiver = new ReceiverClient(
      receiverServer,
      Array.from({ length: settings.endpoints }, (_, index) => `/hook/${index + 1}`),
    );
    for (const backend of settings.backends) {
      const reports: RunReport[] = [];
      for (let run = 0; run < settings.runs; run += 1) {
        reports.push(await benchRun(cleanup, settings, backend, receiver, `run ${run + 1}/${settings.runs}`));
      }
      results[backend] = reports;
      lines.push(...printBackend(settings, reports));
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    if (settings.jsonFile) {
      await writeFile(
        settings.jsonFile,
        `${JSON.stringify({ settings, cores, node: process.version, goals, results }, null, 2)}\n`,
      );
    }
  });
}

main();
