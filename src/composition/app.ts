import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.js';
import { colorWanted, logFormat, type Config } from '../config.js';
import { ConfigError } from '../config-rules.js';
import { openDb, type Db } from '../db/db.js';
import { knownMigrations, migrate, schemaStatus, SchemaVersionError, refuseNewerSchema } from '../db/migrate.js';
import { createHealth, type Health, type Phase } from '../ops/health.js';
import { createDatabaseGauges } from '../ops/gauges.js';
import { createMetrics, type Metrics } from '../ops/metrics.js';
import { opsRoutes } from '../ops/routes.js';
import { hashKey } from '../core/merchant-context.js';
import { createIdempotency } from '../http/idempotency.js';
import { createRateLimiter } from '../http/rate-limit.js';
import { buildServer, type App } from '../http/server.js';
import { trackConnections } from '../http/connections.js';
import { createLogger, prettyDestination } from '../logger.js';
import { resolveAdminKey, resolveMasterKey } from '../secrets.js';
import { createJobRunner, type JobRunner } from '../jobs/runner.js';
import { openVault, type Vault } from '../vault/vault.js';
import { beatEveryMs, registerProcess, staleAfterMs, type Heartbeat } from '../ops/heartbeat.js';
import { idempotencySealer } from '../vault/secrets-at-rest.js';
import type { Processor } from '../processor/processor.js';
import type { MerchantService } from '../merchants/service.js';
import type { CustomerService } from '../customers/service.js';
import type { CheckoutService } from '../checkout/service.js';
import type { PaymentMethodService } from '../payment-methods/service.js';
import type { PaymentService } from '../payments/service.js';
import type { RefundService } from '../refunds/service.js';
import type { EventService } from '../events/service.js';
import type { WebhookEndpointService } from '../webhooks/endpoints/service.js';
import type { WebhookDeliveryService } from '../webhooks/deliveries/service.js';
import type { DeliveryScheduler } from '../webhooks/engine/scheduler.js';
import { checkSourceAddresses } from '../webhooks/egress/connector.js';
import type { MailTransport } from '../mail/transport.js';
import type { InvoiceService } from '../invoices/service.js';
import type { TeamService } from '../team/service.js';
import type { RequestLogService } from '../request-logs/service.js';
import type { EndpointHealthService } from '../webhooks/health/service.js';
import { createServices, type Services } from './services.js';
import { routeGroups } from './routes.js';

export interface Tessera {
  server: App;
  db: Db;
  clock: Clock;
  logger: Logger;
  jobs: JobRunner;
  vault: Vault;
  merchants: MerchantService;
  customers: CustomerService;
  paymentMethods: PaymentMethodService;
  payments: PaymentService;
  refunds: RefundService;
  events: EventService;
  webhookEndpoints: WebhookEndpointService;
  webhookDeliveries: WebhookDeliveryService;
  /** Endpoint health: the alert and disable sweep, counts by health (issue 20, docs/decisions/0016). */
  endpointHealth: EndpointHealthService;
  /** Sends webhook deliveries; started by `tessera start` and `tessera worker` (tests call runOnce). */
  webhookDispatcher: DeliveryScheduler;
  invoices: InvoiceService;
  /** Checkout sessions and their hosted page (issue 14, docs/checkout.md). */
  checkout: CheckoutService;
  /** Dashboard team members, sessions and the audit log (issue 11). */
  team: TeamService;
  /** The merchant API's request log, written in batches (flush() writes what is buffered). */
  requestLogs: RequestLogService;
  /** Where e-mails go: SMTP, or .eml files in the data folder (kept in memory with `memory://`). */
  mail: MailTransport;
  operatorKey: { value: string; created: boolean };
  /** Liveness, readiness and metrics (docs/operations.md#metrics); `routes` serves them on any server (the worker's). */
  ops: { health: Health; metrics: Metrics; routes: ReturnType<typeof opsRoutes> };
  /** The address customers' browsers use (3-D Secure pages); known once the server listens. */
  publicUrl(): string;
  /**
   * Stops: readiness answers 503 ("stopping") at once; after `delayMs` (SIGTERM: the load balancer's
   * time to notice) the server stops accepting and finishes the requests under way.
   */
  close(options?: { delayMs?: number }): Promise<void>;
}

export interface TesseraOptions {
  config: Config;
  clock?: Clock;
  logger?: Logger;
  processor?: Processor;
  /** What this process is in tessera_processes: an API process (default) or a worker. */
  processKind?: 'api' | 'worker';
  /** Told each slow start-up step before it runs (`tessera start` prints them: no long silence). */
  onStartupStep?: (step: string) => void;
}

/** Wiring only: config → database → services → HTTP server and background jobs. */
export async function createTessera({
  config,
  clock = systemClock,
  logger,
  processor,
  processKind = 'api',
  onStartupStep = () => {},
}: TesseraOptions): Promise<Tessera> {
  const log = logger ?? (await serviceLogger(config));
  if (config.webhookAllowPrivate) {
    // docs/security.md, "Private addresses": said at every start, since it widens what a merchant's URL reaches.
    log.warn(
      'TESSERA_WEBHOOK_ALLOW_PRIVATE=on: webhooks may reach private addresses (10/8, 172.16/12, 192.168/16, fc00::/7 …); cloud metadata and link-local addresses stay refused',
    );
  }
  // docs/webhooks.md#sending-addresses-allow-lists: an address the host does not have stops start-up with one line, before anything opens.
  await checkSourceAddresses(config.webhookSourceAddresses).catch((err: Error) => {
    throw new ConfigError(err.message);
  });
  onStartupStep(
    config.databaseUrl
      ? 'opening the PostgreSQL database (DATABASE_URL)'
      : `opening the PGlite database in ${config.dataDir}`,
  );
  const db = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    listenDatabaseUrl: config.listenDatabaseUrl,
    pgliteTemplate: config.testPgliteTemplate,
    pgliteCheckpointWalBytes: config.pgliteCheckpointWalMb * 1024 * 1024,
  });
  let phase: Phase = 'starting';
  let publicUrl = config.publicUrl ?? `http://${config.host}:${config.port}`;
  let services: Services | undefined;
  let heartbeat: Heartbeat | undefined;
  // True once the server stops accepting: a request on a kept-alive connection then gets a 503.
  let closing = false;
  try {
    const migrations = await knownMigrations();
    if (config.autoMigrate) {
      const { pending } = await schemaStatus(db, migrations);
      // A first start applies every migration: on PGlite that takes a while, so it is announced.
      if (pending.length)
        onStartupStep(`applying ${pending.length} database migration(s) (${pending.at(-1)} is the latest)`);
      await migrate(db);
    } else await refusePendingMigrations(db, migrations);
    const masterKey = await resolveMasterKey(config);
    const operatorKey = await resolveAdminKey(config);
    const vault = await openVault({ db, masterKey, previousMasterKey: config.previousMasterKey, clock });
    const health = createHealth({ db, knownMigrations: migrations, phase: () => phase });
    const gauges = createDatabaseGauges({
      db,
      clock,
      endpointsByHealth: (source) => services!.endpointHealth.countByHealth(source),
    });
    const metrics = createMetrics({
      clock,
      gauges,
      ready: async () => (await health.ready()).status === 'ok',
      ...(db.pgliteStats ? { pgliteStats: db.pgliteStats } : {}),
    });
    // Deliveries released from a dead process are due at once: the dispatcher is woken for them.
    let wakeDispatcher = () => {};
    heartbeat = await registerProcess({ db, kind: processKind, logger: log, onReleased: () => wakeDispatcher() });
    heartbeat.start();
    const { processId } = heartbeat;
    const jobs = createJobRunner({ db, clock, logger: log, pollIntervalMs: config.jobPollIntervalMs, processId });
    const idempotency = createIdempotency({
      db,
      clock,
      sealer: idempotencySealer(vault),
      leaseMs: config.idempotencyLeaseMs,
      answerDelayMs: config.testAnswerDelayMs,
      processId,
      liveness: { staleAfterMs, beatEveryMs },
    });
    jobs.every(10 * 60 * 1000, () => idempotency.purgeExpired());

    const serviceDeps = { db, clock, logger: log, config, vault, jobs, metrics, heartbeat, processor };
    services = createServices({ ...serviceDeps, publicUrl: () => publicUrl });
    // What the returned Tessera carries, and what closing stops.
    const { merchants, customers, paymentMethods, payments, refunds, events, webhookEndpoints } = services;
    const { webhookDeliveries, endpointHealth, webhookDispatcher, invoices, checkout, team } = services;
    const { requestLogs, mail, webhookHttpClient, eventFeed } = services;
    wakeDispatcher = () => webhookDispatcher.wake();

    // The public-key routes and the hosted checkout form draw on the same buckets (card testing).
    const publicKeyLimiter = createRateLimiter(db, clock, {
      perKeyPerMinute: config.publicKeyRequestsPerKeyPerMinute,
      perAddressPerMinute: config.publicKeyRequestsPerAddressPerMinute,
    });
    const operatorKeyHash = hashKey(operatorKey.value);
    const routes = opsRoutes({ health, metrics, operatorKeyHash, metricsToken: config.metricsToken });
    jobs.every(60 * 1000, () => publicKeyLimiter.purgeFull());
    const server = await buildServer({
      logger: log,
      strictTransportSecurity: config.publicUrl?.startsWith('https://') === true,
      keys: merchants.keyLookup,
      operatorKeyHash,
      idempotency,
      ...routeGroups(services, {
        db,
        clock,
        config,
        vault,
        idempotency,
        publicKeyLimiter,
        opsRoutes: routes,
        publicUrl: () => publicUrl,
      }),
      isStopping: () => closing,
      isDraining: () => phase === 'stopping',
      observeRequest: (...args) => metrics.observeRequest(...args),
      publicKeyLimiter,
      ...(config.trustProxy === undefined ? {} : { trustProxy: config.trustProxy }),
      recordApiRequest: (entry) => requestLogs.record(entry),
    });
    const connections = trackConnections(server.server);
    server.addHook('onListen', async () => {
      const address = server.server.address();
      if (!config.publicUrl && address && typeof address === 'object') {
        const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        publicUrl = `http://${host === '0.0.0.0' || host === '[::]' ? 'localhost' : host}:${address.port}`;
      }
    });
    phase = 'ready';

    return {
      server,
      db,
      clock,
      logger: log,
      jobs,
      vault,
      merchants,
      customers,
      paymentMethods,
      payments,
      refunds,
      events,
      webhookEndpoints,
      webhookDeliveries,
      endpointHealth,
      webhookDispatcher,
      invoices,
      checkout,
      team,
      requestLogs,
      mail,
      operatorKey,
      ops: { health, metrics, routes },
      publicUrl: () => publicUrl,
      async close({ delayMs = 0 } = {}) {
        // Readiness turns 503 at once ("stopping") and the dispatcher hands back what it claimed
        // ahead, waiting for the attempts under way to be recorded; after the delay the server
        // stops accepting and finishes the requests under way.
        phase = 'stopping';
        const serverClosed = new Promise<void>((resolve) => setTimeout(resolve, delayMs)).then(async () => {
          closing = true;
          // A kept-alive connection quiet now, or once its request is answered, would hold the
          // close for the keep-alive timeout (72 s), and one never used for its headers timeout:
          // such connections are closed as they are found, once no request can be on its way on
          // them (http/connections.ts).
          const sweep = setInterval(() => connections.closeQuiet(), 100);
          try {
            await server.close();
          } finally {
            clearInterval(sweep);
          }
        });
        await Promise.all([jobs.stop(), webhookDispatcher.stop(), serverClosed]);
        await webhookHttpClient.close();
        mail.close();
        // After the server: the last requests' rows are written before the database closes.
        await requestLogs.close();
        await eventFeed.close();
        await heartbeat!.stop();
        await db.close();
      },
    };
  } catch (err) {
    await heartbeat?.stop();
    await db.close().catch(() => {});
    throw err;
  }
}

/** Readable lines when a person watches the terminal in development; JSON lines otherwise. */
async function serviceLogger(config: Config): Promise<Logger> {
  const terminal = process.stdout.isTTY === true;
  if (logFormat(config.nodeEnv, terminal) === 'json') return createLogger(config.logLevel);
  // One line per request on a terminal; the full detail at debug (src/logger.ts).
  const requestDetail = config.logLevel === 'debug' || config.logLevel === 'trace';
  return createLogger(
    config.logLevel,
    await prettyDestination(colorWanted(terminal), process.stdout, { requestDetail }),
  );
}

/**
 * `--no-migrate` (TESSERA_AUTO_MIGRATE=off): the schema must be exactly what this code needs. A
 * newer one is refused as a migrating start refuses it; a missing migration too, naming it, since
 * this code would fail on what it lacks: run `tessera migrate` first (docs/operations.md, "Upgrades").
 */
async function refusePendingMigrations(db: Db, migrations: readonly string[]): Promise<void> {
  await refuseNewerSchema(db, migrations);
  const { pending, latestApplied, latestKnown } = await schemaStatus(db, migrations);
  if (pending.length === 0) return;
  throw new SchemaVersionError(
    `The database schema is at ${latestApplied ?? 'nothing'}, older than this Tessera needs (${latestKnown}; not applied: ${pending.join(', ')}), and --no-migrate is set: run tessera migrate first`,
  );
}
