/**
 * Where the CPU went during a phase, from /proc (Linux): the service process, every PostgreSQL
 * server process, this process (the load generator) and the whole machine. Percentages are of
 * one core, so on a 2-core machine the machine total tops out at 200 %. Elsewhere than Linux
 * the figures are simply absent.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

const ticksPerSecond = 100;

export interface CpuSnapshot {
  atMs: number;
  serviceTicks: number | null;
  /** Per PostgreSQL process, since processes come and go (connections, a dropped database). */
  postgresTicks: Map<number, number> | null;
  loadMicros: number;
  machineBusyTicks: number | null;
}

export interface CpuShare {
  servicePct: number | null;
  postgresPct: number | null;
  loadPct: number;
  machinePct: number | null;
}

export function processTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

export function postgresTicks(): Map<number, number> | null {
  const ticks = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const value = processTicks(Number(entry));
    if (value !== null) ticks.set(Number(entry), value);
  }
  return ticks;
}

/** CPU of the processes alive at the end; one that started meanwhile counts from zero. */
function postgresDelta(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (before === null || after === null) return null;
  let total = 0;
  for (const [pid, ticks] of after) total += ticks - (before.get(pid) ?? 0);
  return total;
}

function machineBusyTicks(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [, ...values] = line.trim().split(/\s+/);
    const numbers = values.map(Number);
    const idle = (numbers[3] ?? 0) + (numbers[4] ?? 0);
    return numbers.reduce((sum, value) => sum + value, 0) - idle;
  } catch {
    return null;
  }
}

/** `withPostgres`: whether PostgreSQL serves the phase (on PGlite its CPU is someone else's). */
export function cpuSnapshot(servicePid: number | null, withPostgres = false): CpuSnapshot {
  const usage = process.cpuUsage();
  return {
    atMs: performance.now(),
    serviceTicks: servicePid === null ? null : processTicks(servicePid),
    postgresTicks: withPostgres ? postgresTicks() : null,
    loadMicros: usage.user + usage.system,
    machineBusyTicks: machineBusyTicks(),
  };
}

export function cpuShare(before: CpuSnapshot, after: CpuSnapshot): CpuShare {
  const seconds = (after.atMs - before.atMs) / 1000;
  const pct = (a: number | null, b: number | null) =>
    a === null || b === null || seconds <= 0 ? null : ((b - a) / ticksPerSecond / seconds) * 100;
  return {
    servicePct: pct(before.serviceTicks, after.serviceTicks),
    postgresPct: pct(0, postgresDelta(before.postgresTicks, after.postgresTicks)),
    loadPct: ((after.loadMicros - before.loadMicros) / 1e6 / seconds) * 100,
    machinePct: pct(before.machineBusyTicks, after.machineBusyTicks),
  };
}

export const cores = os.availableParallelism();

/** How busy the machine is while this benchmark does nothing (percent of one core). */
export async function machineBusyPct(durationMs: number): Promise<number | null> {
  const before = cpuSnapshot(null);
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  return cpuShare(before, cpuSnapshot(null)).machinePct;
}
