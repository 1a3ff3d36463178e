/**
 * Whether an open-loop phase's tail is a few stalls or spread over the whole phase:
 *
 *   BENCH_LATENCIES_DIR=/tmp/lat node --import tsx bench/run.ts --phases mit,half
 *   node --import tsx bench/latency-episodes.ts /tmp/lat/<phase>.json
 *
 * Reads the instants due and latencies a phase wrote (bench/phase-timeline.ts) and prints the
 * percentiles, the episodes (requests due within 50 ms of one another, each answered in more than
 * half the p99) largest first, with PGlite's upkeep seen from 300 ms before each to its end when
 * the phase read it (TESSERA_METRICS_TOKEN set), and the percentiles of the requests outside them
 * (and 200 ms before each, whose answers the episode may have held).
 */
import { readFileSync } from 'node:fs';
import { percentile } from './load.js';
import type { PhaseTimeline } from './phase-timeline.js';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: latency-episodes.ts <phase.json>\n');
  process.exit(1);
}
const phase = JSON.parse(readFileSync(file, 'utf8')) as PhaseTimeline;
const timeline = [...phase.answers].sort((a, b) => a[0] - b[0]);

/** Sorted as the benchmark sorts a phase's latencies, so that its percentiles are the ones it printed. */
const sortedOf = (latencies: readonly number[]) => Float64Array.from(latencies).sort();

function percentiles(latencies: readonly number[]): string {
  const sorted = sortedOf(latencies);
  const [p50, p90, p99] = [0.5, 0.9, 0.99].map((fraction) => percentile(sorted, fraction)) as [number, number, number];
  return `n ${sorted.length}, p50 ${p50.toFixed(1)}, p90 ${p90.toFixed(1)}, p99 ${p99.toFixed(1)} ms, p99 ÷ p50 ${(p99 / p50).toFixed(1)}`;
}

interface Episode {
  startMs: number;
  endMs: number;
  requests: number;
  maxMs: number;
}

const all = timeline.map(([, latency]) => latency);
const threshold = percentile(sortedOf(all), 0.99) / 2;
const episodes: Episode[] = [];
let current: Episode | undefined;
for (const [dueMs, latency] of timeline) {
  if (latency <= threshold) continue;
  if (current && dueMs - current.endMs < 50) {
    current.endMs = dueMs;
    current.requests += 1;
    current.maxMs = Math.max(current.maxMs, latency);
  } else {
    current = { startMs: dueMs, endMs: dueMs, requests: 1, maxMs: latency };
    episodes.push(current);
  }
}
const inside = (dueMs: number) => episodes.some((e) => dueMs >= e.startMs - 200 && dueMs <= e.endMs + 50);
const outside = timeline.filter(([dueMs]) => !inside(dueMs)).map(([, latency]) => latency);

/** The upkeep seen from 300 ms before an episode to its end. */
function upkeepDuring(episode: Episode): string {
  const seen = phase.upkeep.filter(([atMs]) => atMs >= episode.startMs - 300 && atMs <= episode.endMs + 100);
  return seen.length === 0
    ? ''
    : `; upkeep: ${seen.map(([atMs, what, ms]) => `${what} ${ms} ms at ${(atMs / 1000).toFixed(2)} s`).join(', ')}`;
}

function upkeepTotals(): string {
  const totals = new Map<string, number>();
  for (const [, what, ms] of phase.upkeep) totals.set(what, (totals.get(what) ?? 0) + ms);
  if (totals.size === 0) return 'none read (TESSERA_METRICS_TOKEN unset, or not PGlite)';
  return [...totals].map(([what, ms]) => `${what} ${ms.toFixed(0)} ms`).join(', ');
}

const lines = [
  `all: ${percentiles(all)}`,
  `episodes over ${threshold.toFixed(1)} ms: ${episodes.length}, ${episodes.reduce((sum, e) => sum + e.requests, 0)} requests`,
  ...[...episodes]
    .sort((a, b) => b.requests - a.requests)
    .slice(0, 15)
    .map(
      (e) =>
        `  at ${(e.startMs / 1000).toFixed(2)} s for ${(e.endMs - e.startMs).toFixed(0)} ms: ${e.requests} requests, the slowest ${e.maxMs.toFixed(0)} ms${upkeepDuring(e)}`,
    ),
  `outside them: ${percentiles(outside)}`,
  `upkeep in the phase: ${upkeepTotals()}`,
];
process.stdout.write(`${lines.join('\n')}\n`);
