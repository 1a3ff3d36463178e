/**
 * BENCH_LATENCIES_DIR: what an open-loop phase (bench/load.ts) writes for bench/latency-episodes.ts —
 * each answer's instant due (ms from the phase's start) and its latency, and, when
 * TESSERA_METRICS_TOKEN is set (the benchmark passes it to the service), PGlite's upkeep as /metrics
 * counts it, read every 100 ms: each vacuum, checkpoint and writing ahead that took time since the
 * last read, with the instant it was seen. The reads cost the service a /metrics request each.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The upkeep counters of /metrics (seconds in all), by the name printed: each one's line. */
const upkeepSeries = Object.entries({
  vacuum: 'tessera_pglite_vacuum_seconds_total',
  checkpoint: 'tessera_pglite_checkpoint_seconds_total',
  'writing ahead': 'tessera_pglite_write_ahead_seconds_total',
}).map(([what, series]) => ({ what, line: new RegExp(`^${series} (\\S+)$`, 'm') }));

export interface PhaseTimeline {
  /** The phase's start on the wall clock (ms since the epoch), to line it up with other samples. */
  startedAtEpochMs: number;
  /** [ms from the phase's start the request was due, its latency in ms] */
  answers: Array<[number, number]>;
  /** [ms from the phase's start it was seen, what, ms it took since the last read] */
  upkeep: Array<[number, string, number]>;
}

export function phaseTimeline(options: { name: string; baseUrl: string; startedAt: number }) {
  const dir = process.env.BENCH_LATENCIES_DIR;
  if (!dir) return undefined;
  const token = process.env.TESSERA_METRICS_TOKEN;
  const timeline: PhaseTimeline = {
    startedAtEpochMs: Math.round(performance.timeOrigin + options.startedAt),
    answers: [],
    upkeep: [],
  };
  const round = (ms: number) => Math.round(ms * 100) / 100;
  let polling = token !== undefined;
  const poll = async () => {
    const last = new Map<string, number>();
    while (polling) {
      const response = await fetch(new URL('/metrics', options.baseUrl), {
        headers: { authorization: `Bearer ${token}` },
      }).catch(() => undefined);
      const text = response?.ok ? await response.text() : '';
      const seenAt = round(performance.now() - options.startedAt);
      for (const { what, line } of upkeepSeries) {
        const value = Number(line.exec(text)?.[1]);
        if (!Number.isFinite(value)) continue;
        const before = last.get(what);
        if (before !== undefined && value > before)
          timeline.upkeep.push([seenAt, what, round((value - before) * 1000)]);
        last.set(what, value);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const polled = poll();
  return {
    answered(dueAt: number, latencyMs: number): void {
      timeline.answers.push([round(dueAt - options.startedAt), round(latencyMs)]);
    },
    async write(): Promise<void> {
      polling = false;
      await polled;
      mkdirSync(dir, { recursive: true });
      const file = `${options.name.replace(/\W+/g, '-')}-${Date.now()}.json`;
      writeFileSync(path.join(dir, file), JSON.stringify(timeline));
    },
  };
}
