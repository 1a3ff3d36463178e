/**
 * The physical limit beside the webhook dispatcher in `npm run bench:webhooks`: bare signed POSTs
 * from undici to the same receiver, in a process of their own, with the dispatcher's headers
 * (Content-Type, Request-Time, Signature: HMAC-SHA256 by the service's own signWebhook) and a
 * body of the same size (a delivered body with its id and created replaced). No database, no
 * claims, no attempt log: what is left is HTTP on this machine.
 *
 *   node --import tsx bench/bare-sender.ts '<json settings>'   (prints a JSON summary and exits)
 *
 * Modes: `closed` sends `total` requests with `concurrency` in flight at once; `rate` makes
 * requests due at `ratePerSecond` evenly spaced instants for `durationS` seconds, each body's
 * `created` being the instant it fell due, so that the receiver measures the same latency as for
 * the service (arrival − created).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { formatRequestTime, signWebhook } from '../src/webhooks/signature.js';

interface Settings {
  origin: string;
  paths: string[];
  token: string;
  sampleBody: string;
  mode: 'closed' | 'rate';
  concurrency: number;
  total?: number;
  ratePerSecond?: number;
  durationS?: number;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as Settings;
const head = /^\{"id":"(evt_[^"]+)","apiVersion":"v1","type":"([^"]+)","created":"([^"]+)"/.exec(settings.sampleBody);
if (!head) throw new Error('the sample body does not start like an event');
const idDigits = head[1]!.length - 'evt_'.length;
const type = head[2]!;
const rest = settings.sampleBody.slice(head[0].length);
const runTag = String(Date.now() % 1_000_000).padStart(6, '0');

/** A body of the sample's size: the same bytes after `created`. */
function bodyFor(index: number, createdAt: Date): string {
  const id = `evt_${runTag}${String(index).padStart(idDigits - runTag.length, '0')}`;
  return `{"id":"${id}","apiVersion":"v1","type":"${type}","created":"${createdAt.toISOString()}"${rest}`;
}

const pool = new Pool(settings.origin, { connections: settings.concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
const summary = { sent: 0, succeeded: 0, failed: 0, notSent: 0, firstError: null as string | null };

async function send(index: number, createdAt: Date): Promise<void> {
  const body = bodyFor(index, createdAt);
  const requestTime = formatRequestTime(new Date());
  summary.sent += 1;
  try {
    const response = await pool.request({
      method: 'POST',
      path: settings.paths[index % settings.paths.length]!,
      headers: {
        'Content-Type': 'application/json',
        'Request-Time': requestTime,
        Signature: signWebhook(settings.token, requestTime, body),
      },
      body,
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const answer = await response.body.text();
    if (response.statusCode >= 200 && response.statusCode < 300 && answer.trim() === 'success') summary.succeeded += 1;
    else {
      summary.failed += 1;
      summary.firstError ??= `HTTP ${response.statusCode} ${answer.slice(0, 100)}`;
    }
  } catch (err) {
    summary.failed += 1;
    summary.firstError ??= (err as Error).message;
  }
}

async function closedLoop(total: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await send(next++, new Date());
  };
  await Promise.all(Array.from({ length: settings.concurrency }, worker));
}

async function openLoop(ratePerSecond: number, durationS: number): Promise<void> {
  const total = Math.round(ratePerSecond * durationS);
  const intervalMs = 1000 / ratePerSecond;
  // As in bench/load.ts: beyond one second of backlog, requests that fall due are not sent.
  const maxBacklog = Math.max(settings.concurrency, ratePerSecond);
  const inFlight = new Set<Promise<void>>();
  const startedAt = performance.now();
  const startedAtWallMs = Date.now();
  let index = 0;
  while (index < total) {
    const due = Math.min(total, Math.floor((performance.now() - startedAt) / intervalMs) + 1);
    for (; index < due; index += 1) {
      if (inFlight.size >= maxBacklog) {
        summary.notSent += 1;
        continue;
      }
      const done: Promise<void> = send(index, new Date(startedAtWallMs + index * intervalMs)).finally(() =>
        inFlight.delete(done),
      );
      inFlight.add(done);
    }
    await sleep(Math.max(0, startedAt + index * intervalMs - performance.now()));
  }
  await Promise.all(inFlight);
}

// Started, the process says `ready` and waits for a `go` line, so that the benchmark measures the
// CPU of the sending alone (not of loading this script); done, it prints its summary and waits to be
// stopped (SIGTERM, or the end of its standard input).
process.stdout.write('ready\n');
await new Promise<void>((resolve) => {
  let input = '';
  const onData = (chunk: Buffer) => {
    input += chunk.toString();
    if (!input.includes('go\n')) return;
    process.stdin.off('data', onData);
    resolve();
  };
  process.stdin.on('data', onData);
});
try {
  if (settings.mode === 'closed') await closedLoop(settings.total ?? 10_000);
  else await openLoop(settings.ratePerSecond ?? 1000, settings.durationS ?? 10);
} finally {
  await pool.close();
}
process.stdout.write(`${JSON.stringify(summary)}\n`);
