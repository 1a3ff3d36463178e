/**
 * `npm run bench`: the throughput and latency of POST /payment/create, on PGlite and then on
 * PostgreSQL, against a bare Fastify route measured in the same run. See docs/performance.md.
 *
 *   npm run bench                      both databases, one run
 *   npm run bench -- --only pglite     one database (pglite | postgres)
 *   npm run bench -- --runs 3          three runs per database; the summary shows medians
 *   npm run bench -- --phases mit      only some phases (storing, mit, refund, rate, half, bare,
 *                                      floor, growth, webhooks, connector; all by default)
 *   npm run bench -- --quick           a smoke run: 3 s phases, small floors, a 20,000-row growth
 *   npm run bench -- --growth-rows N   the big size of the growth phase (1,000,000)
 *   npm run bench -- --cpu-prof DIR    V8 CPU profile of the service, plus each phase's time window
 *                                      (summarize with bench/profile-summary.ts)
 *   npm run bench -- --json FILE       every figure, machine-readable
 *
 * Environment: BENCH_DURATION_SECONDS (10), BENCH_CONNECTIONS (32), BENCH_RATE (1000),
 * BENCH_WARMUP_SECONDS (3), BENCH_CONNECTOR_ROUNDS (3: rounds of sandbox, Stripe and Adyen payments), BENCH_STORING_PAYMENTS (per run; default: what the warm-up says
 * fills BENCH_DURATION_SECONDS), BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_TIMEOUT_SECONDS (a watchdog for the whole run; default from the settings),
 * BENCH_SERVICE_NODE_FLAGS (Node or V8 flags for the service alone, e.g. "--trace-gc"),
 * BENCH_KEEP_DATA=1 (the temporary folders, a PGlite data folder among them, are left in place).
 *
 * Everything runs on 127.0.0.1: the service and the bare route as child processes, a fresh
 * data folder or a fresh database each, all removed at the end, also after an error or Ctrl-C.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cores } from './cpu.js';
import { benchBackend, type BackendReport } from './backend.js';
import { ratioPhases } from './ratio-phases.js';
import { ratioTable, type RatioFigures } from './ratios.js';
import { median, medianOf, printReport } from './run-report.js';
import { paymentPhases, phaseNames, readSettings } from './run-settings.js';
import { runBenchmark, childEnv, freePort, makeTempDir, repoRoot, startChild, type ChildServer } from './processes.js';

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
