/**
 * `npm run bench:webhooks`: the webhook engine (issue 3), on PGlite and then on PostgreSQL, beside
 * bare signed POSTs from undici to the same receiver measured in the same run. See
 * docs/performance.md#the-webhook-engine).
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
 * since production refuses webhook URLs on loopback addresses (docs/webhooks.md#endpoints-and-tokens).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cores } from './cpu.js';
import { runBenchmark, childEnv, freePort, makeTempDir, repoRoot, startChild } from './processes.js';
import { goals, readSettings } from './webhooks-settings.js';
import { ReceiverClient } from './webhooks-setup.js';
import type { RunReport } from './webhooks-measure.js';
import { benchRun } from './webhooks-run.js';
import { fmt, printBackend } from './webhooks-report.js';

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
