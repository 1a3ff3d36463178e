/** The webhook benchmark's measures: CPU of senders and receiver, drain throughput, delivery latency. */
import { cpuShare, cpuSnapshot, type CpuShare, type CpuSnapshot } from './cpu.js';
import { percentile, type PhaseResult } from './load.js';
import type { Backend } from './settings.js';
import { type ReceiverStats, ReceiverClient } from './webhooks-setup.js';

export interface Cpu {
  /** The sender: the service, the worker(s) or the bare sender. */
  senderPct: number | null;
  receiverPct: number | null;
  postgresPct: number | null;
  machinePct: number | null;
}

export function cpuOf(pids: number[], receiverPid: number, withPostgres: boolean): () => Cpu {
  const take = () => ({
    senders: pids.map((pid) => cpuSnapshot(pid, false)),
    receiver: cpuSnapshot(receiverPid, withPostgres),
  });
  const before = take();
  return () => {
    const after = take();
    const senders = pids.map((_, at) =>
      cpuShare(before.senders[at] as CpuSnapshot, after.senders[at] as CpuSnapshot),
    ) as CpuShare[];
    const receiver = cpuShare(before.receiver, after.receiver);
    const senderPct = senders.some((share) => share.servicePct === null)
      ? null
      : senders.reduce((sum, share) => sum + share.servicePct!, 0);
    return {
      senderPct,
      receiverPct: receiver.servicePct,
      postgresPct: receiver.postgresPct,
      machinePct: receiver.machinePct,
    };
  };
}

export interface Throughput {
  deliveries: number;
  /** First to last arrival at the receiver. */
  seconds: number;
  perSecond: number;
  duplicates: number;
  cpu: Cpu;
}

export function throughputOf(stats: ReceiverStats, cpu: Cpu): Throughput {
  const seconds = ((stats.lastArrivalMs ?? 0) - (stats.firstArrivalMs ?? 0)) / 1000;
  return {
    deliveries: stats.distinct,
    seconds,
    perSecond: seconds > 0 ? (stats.distinct - 1) / seconds : Number.NaN,
    duplicates: stats.duplicates,
    cpu,
  };
}

/**
 * Arrivals per second between the receiver's 25th and 75th percentile arrival: a drain once it
 * runs, without its first moments (connections opened, code not yet optimized) and its last.
 */
export async function middlePerSecondOf(receiver: ReceiverClient): Promise<number> {
  const arrivals = Float64Array.from((await receiver.records()).arrivalMs).sort();
  const from = Math.floor(arrivals.length / 4);
  const to = Math.floor((arrivals.length * 3) / 4);
  const seconds = ((arrivals[to] ?? 0) - (arrivals[from] ?? 0)) / 1000;
  return seconds > 0 ? (to - from) / seconds : Number.NaN;
}

export interface Latency {
  deliveries: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

export async function latencyOf(receiver: ReceiverClient, endpointKindOnly: boolean): Promise<Latency> {
  const records = await receiver.records();
  const values: number[] = [];
  records.arrivalMs.forEach((arrival, at) => {
    if (!endpointKindOnly || records.endpointKind[at] === 1) values.push(arrival - records.createdMs[at]!);
  });
  const sorted = Float64Array.from(values).sort();
  return {
    deliveries: sorted.length,
    p50Ms: percentile(sorted, 0.5),
    p90Ms: percentile(sorted, 0.9),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

export interface LatencyPhase {
  offeredPaymentsPerSecond: number;
  payments: PhaseResult;
  /** Notifications per second the receiver got during the phase (both kinds). */
  notificationsPerSecond: number;
  webhook: Latency;
  cpu: Cpu;
  bare: { offeredPerSecond: number; latency: Latency; sender: BareSummary; cpu: Cpu };
}

export interface RunReport {
  backend: Backend;
  drainBy: string;
  fill: PhaseResult;
  backlog: number;
  drain: Throughput & { middlePerSecond: number; fromSpawnSeconds: number };
  bareDrain: Throughput & { middlePerSecond: number; sender: BareSummary };
  latency: LatencyPhase[];
  bodyBytes: number;
  notes: string[];
}

export interface BareSummary {
  sent: number;
  succeeded: number;
  failed: number;
  notSent: number;
  firstError: string | null;
}
