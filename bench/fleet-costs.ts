/**
 * `npm run bench:fleet`: what the fleet machinery of issue 18 costs a payment, on PostgreSQL, in
 * one run. MIT payments (closed loop, BENCH_CONNECTIONS) ÷ the database floor (pgbench), with the
 * variants of the event stream's trigger (migration 0140) alternated, each round in another order:
 *
 *   no trigger     the events_notify trigger disabled (as before the cross-process stream)
 *   no stream      the trigger on, no stream open anywhere: it looks at tessera_processes, no NOTIFY
 *   stream open    the trigger on and one GET /events/stream open: a NOTIFY for every event
 *
 * and the heartbeat (src/ops/heartbeat.ts): its statement timed on the same database, and what
 * one beat every 2 s per process is per payment. The shared rate limits are not on this path
 * (private-key routes are not limited). docs/performance.md has the figures.
 *
 *   npm run bench:fleet                BENCH_DURATION_SECONDS (10) per phase, BENCH_ROUNDS (3)
 */
import pg from 'pg';
import { call } from './api.js';
import { closedLoop, type PhaseResult } from './load.js';
import { createPairs, mitRequest, storingRequest, type Pair, type Target } from './payment-requests.js';
import { runBenchmark } from './processes.js';
import { postgresFloor } from './ratios.js';
import { readSettings } from './run-settings.js';
import { newStore, startService } from './service.js';
import { positiveInteger } from './settings.js';

type Variant = 'no trigger' | 'no stream' | 'stream open';
const variants: Variant[] = ['no trigger', 'no stream', 'stream open'];

function main(): void {
  const settings = { ...readSettings(), backends: ['postgres' as const] };
  const rounds = positiveInteger('BENCH_ROUNDS', 3);
  runBenchmark(
    {
      title: `Fleet costs — ${settings.connections} connections, ${settings.durationS} s per phase, ${rounds} rounds`,
      timeoutS: 600 + rounds * variants.length * settings.durationS * 3,
      busyHint: '; other processes compete for the CPU',
    },
    async (cleanup, lines) => {
      const progress = (text: string) => process.stderr.write(`${text}\n`);
      const store = await newStore(cleanup, settings, 'postgres');
      const { service, adminKey } = await startService(cleanup, settings, 'postgres', store);
      const database = new pg.Client({ connectionString: store.databaseUrl });
      await database.connect();
      cleanup.add('bench database client', () => database.end());
      const merchant = await call(`${service.url}/admin/v1/merchants/create`, adminKey, {
        name: 'Fleet cost merchant',
        tokenization: true,
        mit: true,
      });
      const target: Target = {
        baseUrl: service.url,
        privateKey: merchant.keys.privateKey,
        pid: service.pid,
        withPostgres: true,
      };
      progress('setup: stored pairs for MIT');
      const pool = await createPairs(target, settings, Math.max(64, settings.connections));
      const pairs: Pair[] = [];
      await closedLoop({
        name: 'setup: storing payments',
        baseUrl: target.baseUrl,
        connections: Math.min(settings.connections, pool.pairs.length),
        amount: pool.pairs.length,
        payment: true,
        servicePid: target.pid,
        withPostgres: true,
        request: storingRequest(target, pool.pairs, pairs),
      });
      const mit = (name: string, durationS = settings.durationS) =>
        closedLoop({
          name,
          baseUrl: target.baseUrl,
          connections: settings.connections,
          durationS,
          payment: true,
          servicePid: target.pid,
          withPostgres: true,
          request: mitRequest(target, pairs),
        });
      progress('warm-up');
      await mit('warm-up', Math.max(3, settings.warmupS));

      const results = new Map<Variant, PhaseResult[]>(variants.map((variant) => [variant, []]));
      for (let round = 0; round < rounds; round++) {
        // Each round starts with another variant, so that none always runs first or last.
        const order = variants.map((_, index) => variants[(index + round) % variants.length]!);
        for (const variant of order) {
          progress(`round ${round + 1}: ${variant}`);
          await database.query(
            `ALTER TABLE events ${variant === 'no trigger' ? 'DISABLE' : 'ENABLE'} TRIGGER events_notify`,
          );
          const stream = variant === 'stream open' ? await openStream(target) : undefined;
          try {
            if (stream) {
              const [row] = (await database.query('SELECT count(*) AS n FROM tessera_processes WHERE listens_events'))
                .rows as Array<{ n: string }>;
              if (Number(row?.n) !== 1) throw new Error('the stream did not mark its process as listening');
            }
            results.get(variant)!.push(await mit(`MIT, ${variant}`));
          } finally {
            stream?.close();
          }
          if (stream && stream.received() === 0) throw new Error('the open stream received no event');
        }
      }
      await database.query('ALTER TABLE events ENABLE TRIGGER events_notify');

      progress('heartbeat statement');
      const beatUs = await timeBeat(database);
      progress('database floor');
      const floor = await postgresFloor(cleanup, settings.databaseServerUrl, settings.connections, settings.durationS);

      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
      const base = median(results.get('no trigger')!.map((result) => result.rps));
      lines.push(
        `database floor: ${floor.perSecond.toFixed(0)} read+write pairs/s (${floor.how})`,
        'variant        MIT/s per round            median   ÷ floor   vs no trigger',
      );
      for (const variant of variants) {
        const rates = results.get(variant)!.map((result) => result.rps);
        const rps = median(rates);
        lines.push(
          `${variant.padEnd(14)} ${rates
            .map((rate) => rate.toFixed(0).padStart(6))
            .join(' ')
            .padEnd(26)} ` +
            `${rps.toFixed(0).padStart(6)}   ${(rps / floor.perSecond).toFixed(3).padStart(7)}   ` +
            `${(((rps - base) / base) * 100).toFixed(1).padStart(6)} %`,
        );
      }
      // One beat every 2 s per process, against the database connection time of the payments it
      // answers meanwhile (payments/s × their median time to answer).
      const p50Ms = median(results.get('no trigger')!.map((result) => result.p50Ms));
      const beatShare = (0.5 * beatUs) / (base * p50Ms * 1000);
      lines.push(
        `heartbeat: ${beatUs.toFixed(0)} µs per beat (round trip); one beat per 2 s against ${base.toFixed(0)} ` +
          `payments/s of ${p50Ms.toFixed(1)} ms each is ${(beatShare * 100).toFixed(3)} % of their time`,
      );
      process.stdout.write(`${lines.join('\n')}\n`);
    },
  );
}

/** GET /events/stream, read and counted until closed. */
async function openStream(target: Target) {
  const abort = new AbortController();
  const response = await fetch(`${target.baseUrl}/api/services/v1/events/stream`, {
    headers: { authorization: `Bearer ${target.privateKey}` },
    signal: abort.signal,
  }).catch((err: unknown) => {
    throw new Error(`GET /events/stream failed: ${String((err as Error).cause ?? err)}`);
  });
  if (response.status !== 200) throw new Error(`the stream answered ${response.status}`);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let events = 0;
  let connected = () => {};
  const ready = new Promise<void>((resolve) => (connected = resolve));
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const text = decoder.decode(value, { stream: true });
      if (text.includes(': connected')) connected();
      events += text.split('\nevent: ').length - 1;
    }
  })().catch(() => {});
  await ready;
  return { received: () => events, close: () => abort.abort() };
}

/** The heartbeat's statement (src/ops/heartbeat.ts), run 200 times: microseconds each, round trip included. */
async function timeBeat(database: pg.Client): Promise<number> {
  const [row] = (await database.query('SELECT id FROM tessera_processes LIMIT 1')).rows as Array<{ id: string }>;
  const beat = {
    name: 'beat',
    text: `WITH beat AS (UPDATE tessera_processes SET heartbeat_at = now() WHERE id = $1 RETURNING id)
       SELECT (SELECT count(*) FROM beat) AS alive,
              ARRAY(SELECT id FROM tessera_processes
                    WHERE id <> $1 AND heartbeat_at < now() - $2 * interval '1 millisecond') AS dead`,
    values: [row!.id, 8000],
  };
  for (let index = 0; index < 20; index++) await database.query(beat);
  const started = performance.now();
  for (let index = 0; index < 200; index++) await database.query(beat);
  return ((performance.now() - started) * 1000) / 200;
}

main();
