/** One run of the webhook benchmark on one database: backlog, drain, latency phases and their bare senders. */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { call } from './api.js';
import { closedLoop, fixedRate, type PhaseResult } from './load.js';
import type { Backend } from './settings.js';
import {
  Cleanup,
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
import { notificationsPerPayment, type Settings } from './webhooks-settings.js';
import { ReceiverClient, type Merchant, eventsOf, createMerchants, mitAcross, apiBase } from './webhooks-setup.js';
import {
  type Cpu,
  cpuOf,
  middlePerSecondOf,
  throughputOf,
  latencyOf,
  type LatencyPhase,
  type RunReport,
  type BareSummary,
} from './webhooks-measure.js';

export async function benchRun(
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
      args: [
        ...(dispatcher === 'on' ? profileArgs('service') : []),
        path.join(repoRoot, 'dist', 'cli', 'index.js'),
        'start',
      ],
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
          args: [...profileArgs(`worker-${index + 1}`), path.join(repoRoot, 'dist', 'cli', 'index.js'), 'worker'],
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
      drain = {
        ...throughputOf(stats, cpu()),
        middlePerSecond: await middlePerSecondOf(receiver),
        fromSpawnSeconds: (stats.lastArrivalMs! - spawnedAtMs) / 1000,
      };
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
    drain = {
      ...throughputOf(stats, cpu()),
      middlePerSecond: await middlePerSecondOf(receiver),
      fromSpawnSeconds: (stats.lastArrivalMs! - spawnedAtMs) / 1000,
    };
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
  const bareDrain = {
    ...throughputOf(await receiver.waitFor(backlog, 60_000), closed.cpu),
    middlePerSecond: await middlePerSecondOf(receiver),
    sender: closed.sender,
  };
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
