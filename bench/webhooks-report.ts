/** The webhook benchmark's report: one table per database, medians of runs, the goals. */
import { goals, type Settings } from './webhooks-settings.js';
import type { Cpu, LatencyPhase, RunReport } from './webhooks-measure.js';

export const fmt = (value: number | null | undefined, digits = 0) =>
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
export function printBackend(settings: Settings, reports: RunReport[]): string[] {
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
  const middleRate = m((report) => report.drain.middlePerSecond);
  const bareMiddleRate = m((report) => report.bareDrain.middlePerSecond);
  rows.push([
    '  middle half (25th to 75th arrival), per s',
    fmt(middleRate),
    fmt(bareMiddleRate),
    ratio(middleRate, bareMiddleRate),
    '',
    '',
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
