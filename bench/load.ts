/**
 * The two ways the benchmark loads a server:
 *
 * - closed loop (autocannon): a fixed number of connections, each sending its next request as soon
 *   as the previous one is answered — the throughput a fixed concurrency reaches;
 * - open loop at a fixed rate (our own, with undici): requests are due at evenly spaced instants
 *   whatever the server does, and each latency is measured from the instant the request was due,
 *   so a server that falls behind shows it in the percentiles (no coordinated omission).
 *   autocannon's own `overallRate` is not used for this: it lets every connection send as fast as
 *   it can until that second's quota is spent and then pause, so "1,000/s" arrives as a burst at
 *   full speed at the start of each second, and its percentiles are those of the burst.
 *
 * Both classify every answer (the envelope, and for payments their status) without parsing the
 * JSON, so that the load generator spends little of the machine's CPU.
 */
import autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { cpuShare, cpuSnapshot, type CpuShare } from './cpu.js';
import { phaseTimeline } from './phase-timeline.js';

export interface Checks {
  /** HTTP 200 with `{"code":"success",…}`. */
  success: number;
  /** Anything else: another status, an error envelope, a connection error or a timeout. */
  failures: number;
  non2xx: number;
  /** Payments only: the answered payment's status. */
  succeeded: number;
  declined: number;
  otherStatus: number;
  /** The first failed answer, to say what went wrong (answers never contain card data). */
  firstFailure: string | null;
}

export interface PhaseResult {
  name: string;
  requests: number;
  durationS: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  checks: Checks;
  cpu: CpuShare;
  note?: string;
}

export function newChecks(): Checks {
  return { success: 0, failures: 0, non2xx: 0, succeeded: 0, declined: 0, otherStatus: 0, firstFailure: null };
}

const successPrefix = /^\{"code":"success"/;

export function classify(checks: Checks, status: number, body: string, payment: boolean): boolean {
  if (status < 200 || status > 299) checks.non2xx += 1;
  if (status !== 200 || !successPrefix.test(body)) {
    checks.failures += 1;
    checks.firstFailure ??= `HTTP ${status} ${body.slice(0, 300)}`;
    return false;
  }
  checks.success += 1;
  if (payment) {
    if (body.includes('"status":"succeeded"')) checks.succeeded += 1;
    else if (body.includes('"status":"failed"')) checks.declined += 1;
    else checks.otherStatus += 1;
  }
  return true;
}

export function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/** Latencies in milliseconds, in a growable typed array (a phase may answer a few hundred thousand). */
class Latencies {
  private values = new Float64Array(1 << 16);
  private length = 0;

  add(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }

  sorted(): Float64Array {
    return this.values.slice(0, this.length).sort();
  }
}

export interface RequestSpec {
  path: string;
  headers: Record<string, string>;
  /** The body of the next request; called once per request, on the connection that sends it. */
  nextBody: () => string;
  /** Headers of the request whose body nextBody just made, beside `headers` (e.g. another merchant's key). */
  nextHeaders?: () => Record<string, string>;
  /** Called with every successful answer's body and the value nextBody's caller attached. */
  onSuccess?: (body: string) => void;
}

interface CannonContext {
  sentAt?: number;
}

/**
 * autocannon at fixed concurrency, for `durationS` seconds or exactly `amount` requests. Latency
 * and throughput are measured here rather than taken from autocannon: its histogram has whole
 * milliseconds, and its run ends on a one-second tick, which would count idle time after an
 * `amount` run as part of the run.
 */
export async function closedLoop(options: {
  name: string;
  baseUrl: string;
  connections: number;
  durationS?: number;
  amount?: number;
  request: RequestSpec;
  payment: boolean;
  servicePid: number | null;
  withPostgres?: boolean;
}): Promise<PhaseResult> {
  const checks = newChecks();
  const latencies = new Latencies();
  let lastAnswerAt = 0;
  const { request } = options;
  const before = cpuSnapshot(options.servicePid, options.withPostgres);
  const startedAt = performance.now();
  const result = await autocannon({
    url: options.baseUrl,
    connections: options.connections,
    pipelining: 1,
    timeout: 10,
    ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.durationS ?? 10 }),
    requests: [
      {
        method: 'POST',
        path: request.path,
        headers: { 'content-type': 'application/json', ...request.headers },
        setupRequest: (req, context) => {
          (context as CannonContext).sentAt = performance.now();
          const body = request.nextBody();
          if (!request.nextHeaders) return { ...req, body };
          return { ...req, body, headers: { ...req.headers, ...request.nextHeaders() } };
        },
        onResponse: (status, body, context) => {
          const now = performance.now();
          lastAnswerAt = now;
          const sentAt = (context as CannonContext).sentAt;
          if (sentAt !== undefined) latencies.add(now - sentAt);
          if (classify(checks, status, body, options.payment)) request.onSuccess?.(body);
        },
      },
    ],
  });
  const after = cpuSnapshot(options.servicePid, options.withPostgres);
  // Connection errors and timeouts never reach onResponse.
  checks.failures += result.errors;
  if (result.errors > 0) checks.firstFailure ??= `${result.errors} connection errors (${result.timeouts} timeouts)`;
  const answered = checks.success + checks.failures - result.errors;
  const durationS = ((lastAnswerAt || performance.now()) - startedAt) / 1000;
  const sorted = latencies.sorted();
  return {
    name: options.name,
    requests: answered,
    durationS,
    rps: answered / durationS,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    checks,
    cpu: cpuShare(before, after),
  };
}

/**
 * Open loop: `ratePerSecond` requests due at evenly spaced instants for `durationS` seconds, on
 * up to `connections` keep-alive connections (more requests than that wait in the client's queue,
 * and that wait counts in their latency, as it would for a real caller).
 */
export async function fixedRate(options: {
  name: string;
  baseUrl: string;
  connections: number;
  ratePerSecond: number;
  durationS: number;
  request: RequestSpec;
  payment: boolean;
  servicePid: number | null;
  withPostgres?: boolean;
}): Promise<PhaseResult> {
  const checks = newChecks();
  const latencies = new Latencies();
  const { request, ratePerSecond } = options;
  // A server that cannot keep up would otherwise make the phase last until the whole backlog is
  // answered; beyond one second of backlog, requests that fall due are counted as not sent.
  const maxBacklog = Math.max(options.connections, ratePerSecond);
  let notSent = 0;
  const pool = new Pool(options.baseUrl, {
    connections: options.connections,
    pipelining: 1,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const headers = { 'content-type': 'application/json', ...request.headers };
  const total = Math.round(ratePerSecond * options.durationS);
  const intervalMs = 1000 / ratePerSecond;
  const inFlight = new Set<Promise<void>>();
  let lastAnswerAt = 0;

  const send = (dueAt: number) => {
    if (inFlight.size >= maxBacklog) {
      notSent += 1;
      return;
    }
    const body = request.nextBody();
    const done = pool
      .request({
        method: 'POST',
        path: request.path,
        headers: request.nextHeaders ? { ...headers, ...request.nextHeaders() } : headers,
        body,
      })
      .then(async (response) => {
        const body = await response.body.text();
        lastAnswerAt = performance.now();
        latencies.add(lastAnswerAt - dueAt);
        timeline?.answered(dueAt, lastAnswerAt - dueAt);
        if (classify(checks, response.statusCode, body, options.payment)) request.onSuccess?.(body);
      })
      .catch((err: unknown) => {
        checks.failures += 1;
        checks.firstFailure ??= `request error: ${(err as Error).message}`;
      })
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
  };

  const before = cpuSnapshot(options.servicePid, options.withPostgres);
  const startedAt = performance.now();
  const timeline = phaseTimeline({ name: options.name, baseUrl: options.baseUrl, startedAt });
  let sent = 0;
  try {
    while (sent < total) {
      const due = Math.min(total, Math.floor((performance.now() - startedAt) / intervalMs) + 1);
      for (; sent < due; sent += 1) send(startedAt + sent * intervalMs);
      await sleep(Math.max(0, startedAt + sent * intervalMs - performance.now()));
    }
    // Every request has its own timeout, so this wait is bounded.
    await Promise.all(inFlight);
  } finally {
    await pool.close();
  }
  const after = cpuSnapshot(options.servicePid, options.withPostgres);
  await timeline?.write();
  if (notSent > 0) {
    checks.failures += notSent;
    checks.firstFailure ??= `${notSent} requests not sent: more than ${maxBacklog} were waiting for an answer`;
  }
  const answered = checks.success + checks.failures - notSent;
  const durationS = ((lastAnswerAt || performance.now()) - startedAt) / 1000;
  const sorted = latencies.sorted();
  return {
    name: options.name,
    requests: answered,
    durationS,
    rps: answered / durationS,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    checks,
    cpu: cpuShare(before, after),
    ...(notSent > 0 ? { note: `${notSent} of ${total} requests not sent (backlog over ${maxBacklog})` } : {}),
  };
}
