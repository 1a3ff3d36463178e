/** The report of `npm run bench`'s payment phases: a table per database, medians of runs, the goals. */
import type { Backend } from './settings.js';
import type { BackendReport } from './backend.js';
import type { PhaseResult } from './load.js';
import { phaseNames, type Settings } from './run-settings.js';

const goals = {
  throughput: { pglite: 1000, postgres: 3000 } as Record<Backend, number>,
  p99AtRateMs: 50,
};

export function median(values: number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The median run of each phase, by throughput (so its latencies belong to the same run). */
export function medianOf(runs: PhaseResult[][], name: string): PhaseResult | undefined {
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

export function printReport(settings: Settings, report: BackendReport): string[] {
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
