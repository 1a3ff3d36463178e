/**
 * Issue 13's ratios for `npm run bench`: each figure beside a denominator measured in the same run.
 *
 * - the database floors: `pgbench` of bench/postgres-floor.sql (PostgreSQL) and bench/pglite-floor.ts
 *   (PGlite), each in a process of its own while the service is stopped;
 * - the webhook drain ÷ the bare undici sender: bench/webhooks.ts --drain-only, in a child process;
 * - the summary table of every ratio with its goal.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Backend } from './settings.js';
import { postgresTicks, processTicks } from './cpu.js';
import { Cleanup, childEnv, createDatabase, makeTempDir, repoRoot } from './processes.js';
import type { GrowthResult } from './growth.js';
import { connectorGoal, connectorNames, type ConnectorFigures } from './connector-phase.js';

export const ratioGoals = {
  mitOverFloor: 0.5,
  drainOverBare: 0.7,
  growth: 1.5,
  p99OverP50: 3,
};

/** Runs `command` to its end; its standard output, or an error with both outputs' end. */
function runToEnd(
  command: string,
  args: string[],
  env: Record<string, string>,
  onSpawn?: (pid: number | undefined) => void,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    onSpawn?.(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${(stdout + stderr).slice(-2000)}`));
    });
  });
}

export interface Floor {
  perSecond: number;
  /** CPU of the database and its client per pair, all processes: comparable under any load. */
  cpuMsPerPair: number | null;
  how: string;
}

/**
 * CPU ticks of `pid` and of every PostgreSQL process, sampled every 200 ms while `work` runs, so
 * that processes which end before it does (pgbench and its server connections) still count.
 */
async function cpuTicksDuring(
  pid: () => number | undefined,
  work: Promise<string>,
): Promise<{ output: string; ticks: number | null }> {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = (initial = false) => {
    const ticks = postgresTicks();
    const child = pid();
    if (ticks === null) return false;
    if (child !== undefined) {
      const value = processTicks(child);
      if (value !== null) ticks.set(child, value);
    }
    for (const [id, value] of ticks) {
      if (!first.has(id)) first.set(id, initial ? value : 0);
      last.set(id, value);
    }
    return true;
  };
  const available = sample(true);
  const timer = setInterval(() => sample(), 200);
  try {
    const output = await work;
    let total = 0;
    for (const [id, value] of last) total += value - (first.get(id) ?? 0);
    return { output, ticks: available ? total : null };
  } finally {
    clearInterval(timer);
  }
}

/** pgbench, 32 clients, `durationS` seconds, on a database of its own (dropped by the cleanup). */
export async function postgresFloor(
  cleanup: Cleanup,
  serverUrl: string,
  connections: number,
  durationS: number,
): Promise<Floor> {
  const databaseUrl = await createDatabase(cleanup, serverUrl);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const setup = await readFile(path.join(repoRoot, 'bench', 'postgres-floor-setup.sql'), 'utf8');
    await client.query(setup);
  } finally {
    await client.end();
  }
  const url = new URL(databaseUrl);
  const env = childEnv({
    PGHOST: url.hostname,
    PGPORT: url.port || '5432',
    PGUSER: decodeURIComponent(url.username) || 'postgres',
    PGPASSWORD: url.password ? decodeURIComponent(url.password) : undefined,
    PGDATABASE: url.pathname.slice(1),
  });
  const args = ['-n', '-M', 'prepared', '-c', String(connections), '-j', '2', '-T', String(durationS)];
  let childPid: number | undefined;
  const { output, ticks } = await cpuTicksDuring(
    () => childPid,
    runToEnd('pgbench', [...args, '-f', path.join(repoRoot, 'bench', 'postgres-floor.sql')], env, (pid) => {
      childPid = pid;
    }),
  );
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1];
  const transactions = /number of transactions actually processed: (\d+)/.exec(output)?.[1];
  if (!tps) throw new Error(`pgbench printed no tps:\n${output}`);
  return {
    perSecond: Number(tps),
    cpuMsPerPair: ticks !== null && transactions ? ((ticks / 100) * 1000) / Number(transactions) : null,
    how: `pgbench ${args.join(' ')} -f bench/postgres-floor.sql`,
  };
}

/** bench/pglite-floor.ts: `runs` runs of `pairs` read + write pairs by 32 callers; the median run. */
export async function pgliteFloor(pairs: number, runs: number): Promise<Floor> {
  const args = ['--import', 'tsx', path.join(repoRoot, 'bench', 'pglite-floor.ts'), '--pairs', String(pairs)];
  const output = await runToEnd(process.execPath, [...args, '--runs', String(runs)], childEnv({}));
  const runs_ = [...output.matchAll(/run \d+: (\d+) read\+write pairs\/s .*?([\d.]+) ms of CPU each/g)].map(
    (match) => ({ rate: Number(match[1]), cpu: Number(match[2]) }),
  );
  if (runs_.length === 0) throw new Error(`bench/pglite-floor.ts printed no rate:\n${output}`);
  runs_.sort((a, b) => a.rate - b.rate);
  const middle = runs_[Math.floor((runs_.length - 1) / 2)]!;
  return {
    perSecond: middle.rate,
    cpuMsPerPair: middle.cpu,
    how: `bench/pglite-floor.ts --pairs ${pairs} --runs ${runs} (median run)`,
  };
}

export interface WebhookRatio {
  drainPerSecond: number;
  barePerSecond: number;
  backlog: number;
}

/** bench/webhooks.ts --drain-only for one store, in a child process; its drain and bare rates. */
export async function webhookRatio(
  cleanup: Cleanup,
  backend: Backend,
  options: { deliveries: number; databaseServerUrl: string },
): Promise<WebhookRatio> {
  const dir = await makeTempDir(cleanup, 'tessera-bench-webhooks-');
  const jsonFile = path.join(dir, 'webhooks.json');
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  Object.assign(env, {
    BENCH_WEBHOOK_DELIVERIES: String(options.deliveries),
    BENCH_WARMUP_SECONDS: '1',
    BENCH_DATABASE_URL: options.databaseServerUrl,
  });
  delete env.BENCH_TIMEOUT_SECONDS;
  const script = path.join(repoRoot, 'bench', 'webhooks.ts');
  await runToEnd(
    process.execPath,
    ['--import', 'tsx', script, '--only', backend, '--drain-only', '--json', jsonFile],
    env,
  );
  const report = JSON.parse(await readFile(jsonFile, 'utf8')) as {
    results: Record<string, Array<{ backlog: number; drain: { perSecond: number }; bareDrain: { perSecond: number } }>>;
  };
  const run = report.results[backend]![0]!;
  return { drainPerSecond: run.drain.perSecond, barePerSecond: run.bareDrain.perSecond, backlog: run.backlog };
}

export interface RatioFigures {
  backend: Backend;
  mitRps?: number;
  /** CPU per MIT payment of the service, PostgreSQL and the load generator together. */
  mitCpuMs?: number | null;
  floor?: Floor;
  half?: { offered: number; answered: number; p50Ms: number; p99Ms: number };
  webhooks?: WebhookRatio;
  growth?: GrowthResult;
  connector?: ConnectorFigures;
}

const fixed = (value: number, digits: number) =>
  Number.isFinite(value) ? value.toFixed(digits).replace(/\B(?=(\d{3})+(?!\d))/g, ',') : '–';

function connectorLines(connector: ConnectorFigures): string[] {
  return [
    ...connector.rows.map((row) => `  ${row}`),
    ...connectorNames.map((name) => {
      const ratio = connector.ratios[name];
      const withDatabase =
        ratio.cpuWithDatabase === null ? '' : `, with PostgreSQL's ${fixed(ratio.cpuWithDatabase, 2)}`;
      return `  ${name} ÷ sandbox: payments/s ${fixed(ratio.rps, 2)}, CPU ${fixed(ratio.cpu, 2)}${withDatabase} (rounds, payments/s/CPU: ${ratio.each})`;
    }),
  ];
}

/** One row per ratio: figure, denominator, ratio, goal, met. */
export function ratioTable(all: RatioFigures[]): string[] {
  const rows: string[][] = [['store', 'ratio', 'figure', 'denominator', 'ratio', 'goal', 'met']];
  const verdict = (met: boolean) => (met ? 'yes' : 'NO');
  for (const figures of all) {
    const store = figures.backend === 'pglite' ? 'PGlite' : 'PostgreSQL';
    if (figures.mitRps === undefined && figures.floor) {
      rows.push([
        store,
        'database floor (no MIT phase run)',
        '–',
        `${fixed(figures.floor.perSecond, 0)}/s`,
        '–',
        '–',
        '–',
      ]);
    }
    if (figures.mitRps !== undefined && figures.floor) {
      const ratio = figures.mitRps / figures.floor.perSecond;
      rows.push([
        store,
        'MIT payments/s ÷ database floor',
        `${fixed(figures.mitRps, 0)}/s`,
        `${fixed(figures.floor.perSecond, 0)}/s`,
        fixed(ratio, 2),
        `≥ ${ratioGoals.mitOverFloor}`,
        verdict(ratio >= ratioGoals.mitOverFloor),
      ]);
    }
    if (figures.mitCpuMs && figures.floor?.cpuMsPerPair) {
      const ratio = figures.floor.cpuMsPerPair / figures.mitCpuMs;
      rows.push([
        store,
        'same, by CPU: floor CPU/pair ÷ MIT CPU/payment',
        `${fixed(figures.mitCpuMs, 2)} ms`,
        `${fixed(figures.floor.cpuMsPerPair, 2)} ms`,
        fixed(ratio, 2),
        `≥ ${ratioGoals.mitOverFloor}`,
        verdict(ratio >= ratioGoals.mitOverFloor),
      ]);
    }
    if (figures.webhooks) {
      const { drainPerSecond, barePerSecond } = figures.webhooks;
      const ratio = drainPerSecond / barePerSecond;
      rows.push([
        store,
        `webhook drain ÷ bare undici (${fixed(figures.webhooks.backlog, 0)})`,
        `${fixed(drainPerSecond, 0)}/s`,
        `${fixed(barePerSecond, 0)}/s`,
        fixed(ratio, 2),
        `≥ ${ratioGoals.drainOverBare}`,
        verdict(ratio >= ratioGoals.drainOverBare),
      ]);
    }
    if (figures.growth) {
      const { bigRows, smallRows } = figures.growth;
      for (const query of figures.growth.queries) {
        rows.push([
          store,
          `${query.name} p50, ${fixed(bigRows, 0)} ÷ ${fixed(smallRows, 0)}`,
          `${fixed(query.big.p50Ms, 2)} ms`,
          `${fixed(query.small.p50Ms, 2)} ms`,
          fixed(query.ratio, 2),
          `≤ ${ratioGoals.growth}`,
          verdict(query.ratio <= ratioGoals.growth),
        ]);
      }
    }
    if (figures.half) {
      const { p50Ms, p99Ms, offered, answered } = figures.half;
      const ratio = p99Ms / p50Ms;
      const kept = answered >= offered * 0.98;
      rows.push([
        store,
        `p99 ÷ p50 at ${fixed(offered, 0)}/s (half the max)`,
        `${fixed(p99Ms, 1)} ms`,
        `${fixed(p50Ms, 1)} ms`,
        fixed(ratio, 2),
        `≤ ${ratioGoals.p99OverP50}`,
        verdict(kept && ratio <= ratioGoals.p99OverP50) + (kept ? '' : ` (${fixed(answered, 0)}/s answered)`),
      ]);
    }
    for (const name of figures.connector ? connectorNames : []) {
      const ratio = figures.connector!.ratios[name];
      rows.push([
        store,
        `${name} ÷ sandbox, service CPU/payment (${figures.connector!.rounds} rounds)`,
        `${fixed(ratio.cpuMs, 3)} ms`,
        `${fixed(ratio.sandboxCpuMs, 3)} ms`,
        fixed(ratio.cpu, 2),
        `≤ ${connectorGoal}`,
        verdict(ratio.cpu <= connectorGoal),
      ]);
    }
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) =>
        [2, 3, 4].includes(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  const plans = all.flatMap((figures) =>
    (figures.growth?.queries ?? []).map((query) => `  ${figures.backend} ${query.name}: ${query.plan}`),
  );
  const floors = all.flatMap((figures) => (figures.floor ? [`  ${figures.backend}: ${figures.floor.how}`] : []));
  const bigRows = all.find((figures) => figures.growth)?.growth?.bigRows ?? Number.NaN;
  return [
    '',
    '== Ratios of issues 13 and 42 (each beside its denominator, same run)',
    ...rows.map(line),
    ...(floors.length ? ['', 'floors:', ...floors] : []),
    ...all.flatMap((figures) =>
      figures.connector ? ['', `connector phases (${figures.backend}):`, ...connectorLines(figures.connector)] : [],
    ),
    ...(plans.length ? ['', `growth: plans at ${fixed(bigRows, 0)} rows (EXPLAIN ANALYZE):`, ...plans] : []),
  ];
}
