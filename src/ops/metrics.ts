import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import type { RecordedEvent } from '../events/service.js';
import type { PgliteThreadStats } from '../db/pglite-worker.js';
import type { DatabaseGaugeSource } from './gauges.js';

/** How a webhook attempt ended, as tessera_webhook_attempts_total counts it. */
export type AttemptOutcomeLabel = 'succeeded' | 'failed' | 'skipped';

/**
 * How a processor call ended: `ok` (an answer, whatever it said: a decline is an answer),
 * `declined` (an authorization the processor refused) or `error` (no usable answer: a timeout, a
 * 5xx, a reset connection, an answer that could not be read).
 */
export type ProcessorOutcomeLabel = 'ok' | 'declined' | 'error';

export interface Metrics {
  /** One finished HTTP request: `route` is the route's pattern (`/api/services/v1/payment/:id`), never the URL. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** Events whose transaction committed: payments and refunds are counted by the status they reached. */
  observeEvents(events: readonly RecordedEvent[]): void;
  observeAttempt(outcome: AttemptOutcomeLabel): void;
  /** The event stream's self-check (src/events/feed.ts): its probe NOTIFY came back to its LISTEN, or not. */
  observeListenProbe(outcome: 'received' | 'missing'): void;
  /** One call to a processor (docs/processors.md, Monitoring): its outcome and how long it took. */
  observeProcessorRequest(processor: string, operation: string, outcome: ProcessorOutcomeLabel, seconds: number): void;
  /** The Prometheus text exposition of every family. */
  render(): Promise<{ contentType: string; body: string }>;
}

/** Seconds: from a cached answer (1 ms) to the webhook timeout. */
const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The metrics of docs/operations.md#metrics, through prom-client, in a registry of the process's own (tests run
 * several services in one process). Counters are the process's own (Prometheus adds the
 * processes up); the database-wide gauges come from `gauges`, computed by one process at a time.
 */
export function createMetrics({
  clock,
  gauges,
  ready,
  pgliteStats,
}: {
  clock: Clock;
  gauges: DatabaseGaugeSource;
  /** PGlite: its database thread's heap (which the default metrics do not see) and checkpoints. */
  pgliteStats?: () => Promise<PgliteThreadStats>;
  /** True when GET /health/ready would answer 200 now. */
  ready: () => Promise<boolean>;
}): Metrics {
  const registry = new Registry();
  // The database-wide gauges, in a registry of their own: while the database is out of reach they
  // are left out of the scrape, which still answers (tessera_ready 0 says why), rather than failing it.
  const database = new Registry();
  collectDefaultMetrics({ register: registry });

  new Gauge({
    name: 'tessera_ready',
    help: '1 when this process would answer GET /health/ready with 200 (database reachable within 1 s, schema current, not starting or stopping), else 0',
    registers: [registry],
    async collect() {
      this.set((await ready()) ? 1 : 0);
    },
  });

  if (pgliteStats) registerPgliteMetrics(registry, pgliteStats);

  const requests = new Counter({
    name: 'tessera_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'tessera_http_request_duration_seconds',
    help: 'Time from a request to its answer, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: durationBuckets,
    registers: [registry],
  });
  const payments = new Counter({
    name: 'tessera_payments_total',
    help: 'Payments reaching a status (processing, requires_capture, succeeded, failed, canceled), by who started them (customer or merchant: MIT)',
    labelNames: ['status', 'initiator'] as const,
    registers: [registry],
  });
  const refunds = new Counter({
    name: 'tessera_refunds_total',
    help: 'Refunds reaching a status (pending, succeeded, failed)',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'tessera_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: succeeded, failed (retried or given up) or skipped (endpoint disabled or deleted)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const listenProbes = new Counter({
    name: 'tessera_event_stream_probes_total',
    help: 'Self-checks of the event stream LISTEN session: received, or missing (see TESSERA_LISTEN_DATABASE_URL)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const processorRequests = new Counter({
    name: 'tessera_processor_requests_total',
    help: 'Calls to a processor (sandbox, adyen, stripe) by operation and outcome: ok, declined or error (no usable answer)',
    labelNames: ['processor', 'operation', 'outcome'] as const,
    registers: [registry],
  });
  const processorDurations = new Histogram({
    name: 'tessera_processor_request_duration_seconds',
    help: 'How long a processor took to answer a call, by processor and operation',
    labelNames: ['processor', 'operation'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  // The database-wide gauges are read once per scrape, whichever of them is collected first.
  let scrape: Promise<Awaited<ReturnType<DatabaseGaugeSource['read']>>> | undefined;
  const current = () => (scrape ??= gauges.read().finally(() => setTimeout(() => (scrape = undefined), 0)));
  new Gauge({
    name: 'tessera_webhook_deliveries_pending',
    help: 'Webhook deliveries waiting for a successful attempt, in the whole database',
    registers: [database],
    async collect() {
      this.set((await current()).pendingDeliveries);
    },
  });
  new Gauge({
    name: 'tessera_webhook_oldest_pending_seconds',
    help: 'Age of the oldest pending webhook delivery in seconds (0 when none is pending)',
    registers: [database],
    async collect() {
      const oldest = (await current()).oldestPendingAt;
      this.set(oldest === null ? 0 : Math.max(0, (clock.now().getTime() - Date.parse(oldest)) / 1000));
    },
  });
  new Gauge({
    name: 'tessera_webhook_endpoints',
    help: 'Webhook endpoints (not deleted) by health: healthy, failing or disabled',
    labelNames: ['health'] as const,
    registers: [database],
    async collect() {
      for (const [health, count] of Object.entries((await current()).endpoints)) this.set({ health }, count);
    },
  });

  return {
    observeRequest(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      durations.observe({ method, route }, seconds);
    },
    observeEvents(events) {
      for (const event of events) {
        const group = event.type.slice(0, event.type.indexOf('.'));
        if (group !== 'payment' && group !== 'refund') continue;
        const data = event.data;
        const status = typeof data.status === 'string' ? data.status : 'unknown';
        if (group === 'refund') refunds.inc({ status });
        else payments.inc({ status, initiator: data.subsequentInitialType === 'mit' ? 'merchant' : 'customer' });
      }
    },
    observeAttempt(outcome) {
      attempts.inc({ outcome });
    },
    observeListenProbe(outcome) {
      listenProbes.inc({ outcome });
    },
    observeProcessorRequest(processor, operation, outcome, seconds) {
      processorRequests.inc({ processor, operation, outcome });
      processorDurations.observe({ processor, operation }, seconds);
    },
    async render() {
      const own = await registry.metrics();
      const shared = await database.metrics().catch((err: unknown) => {
        if (isDatabaseUnavailable(err)) return '';
        throw err;
      });
      return { contentType: registry.contentType, body: `${own}${shared}` };
    },
  };
}

/**
 * PGlite's database thread: its heap, its checkpoints and vacuums (src/db/pglite-checkpointer.ts,
 * pglite-vacuum.ts). A closed database (the process is stopping) leaves the last figures.
 */
function registerPgliteMetrics(registry: Registry, pgliteStats: () => Promise<PgliteThreadStats>): void {
  // A scrape collects every family at once: the families of one scrape share the question.
  let asking: Promise<PgliteThreadStats | undefined> | undefined;
  const current = () =>
    (asking ??= pgliteStats()
      .catch(() => undefined)
      .finally(() => {
        asking = undefined;
      }));
  const gauge = (name: string, help: string, read: (stats: PgliteThreadStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const stats = await current();
        if (stats) this.set(read(stats));
      },
    });
  gauge(
    'tessera_pglite_thread_heap_used_bytes',
    'PGlite only: bytes of JavaScript heap in use in the database thread (its WebAssembly memory not counted)',
    (stats) => stats.heapUsedBytes,
  );
  gauge(
    'tessera_pglite_wal_since_checkpoint_bytes',
    'PGlite only: WAL written since the last checkpoint (one is taken at TESSERA_PGLITE_CHECKPOINT_WAL_MB)',
    (stats) => stats.walBytesSinceCheckpoint,
  );
  // The thread keeps the totals: each scrape sets the counters to them, by outcome where there is one.
  const total = (name: string, help: string, read: (stats: PgliteThreadStats) => number | Record<string, number>) =>
    new Counter({
      name,
      help,
      labelNames: ['outcome'] as const,
      registers: [registry],
      async collect() {
        const stats = await current();
        if (!stats) return;
        const figures = read(stats);
        this.reset();
        if (typeof figures === 'number') this.inc(figures);
        else for (const [outcome, value] of Object.entries(figures)) this.inc({ outcome }, value);
      },
    });
  total(
    'tessera_pglite_checkpoints_total',
    'PGlite only: checkpoints the database thread took (outcome taken) or tried and failed (outcome failed)',
    (stats) => ({ taken: stats.checkpoints, failed: stats.checkpointFailures }),
  );
  total(
    'tessera_pglite_checkpoint_seconds_total',
    'PGlite only: time spent in checkpoints, during which the database answers nothing else',
    (stats) => stats.checkpointSeconds,
  );
  total(
    'tessera_pglite_write_ahead_total',
    'PGlite only: steps of writing changed buffers ahead of a checkpoint (a list of them, or a slice written) done or failed',
    (stats) => ({ done: stats.writeAheadSteps, failed: stats.writeAheadFailures }),
  );
  total(
    'tessera_pglite_buffers_written_ahead_total',
    'PGlite only: changed buffers written in small slices between requests ahead of a checkpoint, which then has fewer to write',
    (stats) => stats.buffersWrittenAhead,
  );
  total(
    'tessera_pglite_write_ahead_seconds_total',
    'PGlite only: time spent listing and writing buffers ahead of checkpoints, in slices between requests',
    (stats) => stats.writeAheadSeconds,
  );
  total(
    'tessera_pglite_vacuums_total',
    'PGlite only: tables the database thread vacuumed (outcome done) or tried to and failed (outcome failed)',
    (stats) => ({ done: stats.vacuums, failed: stats.vacuumFailures }),
  );
  total(
    'tessera_pglite_vacuum_seconds_total',
    'PGlite only: time spent in vacuums, during which the database answers nothing else',
    (stats) => stats.vacuumSeconds,
  );
}
