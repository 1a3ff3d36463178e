/** The payment phases of `npm run bench` on one database: setup, warm-up and each run's phases. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { call } from './api.js';
import { closedLoop, fixedRate, type PhaseResult } from './load.js';
import { createPairs, mitRequest, refundRequest, storingRequest, type Pair, type Target } from './payment-requests.js';
import { Cleanup, tail, type ChildServer } from './processes.js';
import { phaseNames, type Settings } from './run-settings.js';
import { startService } from './service.js';
import type { Backend } from './settings.js';

export interface BackendReport {
  backend: Backend;
  runs: PhaseResult[][];
  setup: PhaseResult[];
  notes: string[];
  /** The rate of each run's half phase (half that run's MIT rate). */
  halfOffered: number[];
}

export async function benchBackend(
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
