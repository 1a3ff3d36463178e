import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock.js';
import { colorWanted, logFormat, type Config } from './config.js';
import { openDb, type Db } from './db/db.js';
import { migrate } from './db/migrate.js';
import { hashKey } from './http/auth.js';
import { createIdempotency } from './http/idempotency.js';
import { createRateLimiter } from './http/rate-limit.js';
import { buildServer, type App } from './http/server.js';
import { createLogger, prettyDestination } from './logger.js';
import { resolveAdminKey, resolveMasterKey } from './secrets.js';
import { createJobRunner, type JobRunner } from './jobs/runner.js';
import { openVault, type Vault } from './vault/vault.js';
import { vaultRoutes } from './vault/routes.js';
import type { Processor } from './processor/processor.js';
import { createSandboxProcessor } from './processor/sandbox.js';
import { createMerchantService, type MerchantService } from './merchants/service.js';
import { merchantRoutes } from './merchants/routes.js';
import { createCustomerService, type CustomerService } from './customers/service.js';
import { customerRoutes } from './customers/routes.js';
import { createCheckoutService, type CheckoutService } from './checkout/service.js';
import { checkoutRoutes } from './checkout/routes.js';
import { hostedCheckoutRoutes } from './checkout/hosted-routes.js';
import { cardJsRoutes } from './cardjs/routes.js';
import { createPaymentMethodService, type PaymentMethodService } from './payment-methods/service.js';
import { paymentMethodRoutes } from './payment-methods/routes.js';
import { createPaymentService, type PaymentService } from './payments/service.js';
import { paymentRoutes, threeDSecureRoutes } from './payments/routes.js';
import { createRefundService, type RefundService } from './refunds/service.js';
import { refundRoutes } from './refunds/routes.js';
import { createEventService, type EventService } from './events/service.js';
import { eventRoutes } from './events/routes.js';
import { eventStreamRoutes } from './events/stream.js';
import { createWebhookEndpointService, type WebhookEndpointService } from './webhooks/endpoints/service.js';
import { webhookEndpointRoutes } from './webhooks/endpoints/routes.js';
import { createWebhookDeliveryService, type WebhookDeliveryService } from './webhooks/deliveries/service.js';
import { webhookDeliveryRoutes } from './webhooks/deliveries/routes.js';
import { createDeliveryScheduler, type DeliveryScheduler } from './webhooks/engine/scheduler.js';
import { createWebhookHttpClient } from './webhooks/http-client.js';
import { createWebhookCheckService } from './webhooks/check/service.js';
import { webhookCheckRoutes } from './webhooks/check/routes.js';
import { createWebhookDoctor } from './webhooks/check/doctor.js';
import { createFastForward, fastForwardRoutes } from './webhooks/deliveries/fast-forward.js';
import { createMailTransport, type MailTransport } from './mail/transport.js';
import { createInvoiceService, type InvoiceService } from './invoices/service.js';
import { hostedInvoiceRoutes, invoiceRoutes } from './invoices/routes.js';
import { createTeamService, type TeamService } from './team/service.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { createRetention } from './retention/service.js';
import { createRequestLogService, type RequestLogService } from './request-logs/service.js';

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
  /** Sends webhook deliveries; started by `tessera start` and `tessera worker` (tests call runOnce). */
  webhookDispatcher: DeliveryScheduler;
  invoices: InvoiceService;
  /** Checkout sessions and their hosted page (issue 14, DESIGN §9). */
  checkout: CheckoutService;
  /** Dashboard team members, sessions and the audit log (issue 11). */
  team: TeamService;
  /** The merchant API's request log, written in batches (flush() writes what is buffered). */
  requestLogs: RequestLogService;
  /** Where e-mails go: SMTP, or .eml files in the data folder (kept in memory with `memory://`). */
  mail: MailTransport;
  operatorKey: { value: string; created: boolean };
  /** The address customers' browsers use (3-D Secure pages); known once the server listens. */
  publicUrl(): string;
  close(): Promise<void>;
}

export interface TesseraOptions {
  config: Config;
  clock?: Clock;
  logger?: Logger;
  processor?: Processor;
}

/** Wiring only: config → database → services → HTTP server and background jobs. */
export async function createTessera({
  config,
  clock = systemClock,
  logger,
  processor,
}: TesseraOptions): Promise<Tessera> {
  const log = logger ?? serviceLogger(config);
  const db = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    pgliteTemplate: config.testPgliteTemplate,
  });
  let ready = false;
  try {
    await migrate(db);
    const masterKey = await resolveMasterKey(config);
    const operatorKey = await resolveAdminKey(config);
    const vault = await openVault({ db, masterKey, clock });
    const jobs = createJobRunner({ db, clock, logger: log, pollIntervalMs: config.jobPollIntervalMs });
    const idempotency = createIdempotency({
      db,
      clock,
      sealer: vault,
      leaseMs: config.idempotencyLeaseMs,
      answerDelayMs: config.testAnswerDelayMs,
    });
    jobs.every(10 * 60 * 1000, () => idempotency.purgeExpired());

    const merchants = createMerchantService({ db, clock });
    const events = createEventService({ db, clock });
    const webhookEndpoints = createWebhookEndpointService({
      db,
      clock,
      vault,
      production: config.nodeEnv === 'production',
    });
    const webhookHttpClient = createWebhookHttpClient({
      timeoutMs: config.webhookTimeoutMs,
      production: config.nodeEnv === 'production',
    });
    const webhookDispatcher = createDeliveryScheduler({
      db,
      clock,
      logger: log,
      webhookEndpoints,
      httpClient: webhookHttpClient,
      retryDelaysSeconds: config.webhookRetryDelaysSeconds,
      timeoutMs: config.webhookTimeoutMs,
      leaseMarginMs: config.testWebhookLeaseMarginMs,
      concurrencyPerTarget: config.webhookConcurrencyPerTarget,
      maxInFlight: config.webhookMaxInFlight,
      pollIntervalMs: config.webhookPollIntervalMs,
    });
    const webhookDeliveries = createWebhookDeliveryService({
      db,
      clock,
      webhookEndpoints,
      onCreated: () => webhookDispatcher.wake(),
    });
    const webhookChecks = createWebhookCheckService({
      db,
      clock,
      webhookEndpoints,
      httpClient: webhookHttpClient,
      timeoutMs: config.webhookTimeoutMs,
    });
    // Deliveries are planned in each event's transaction and handed to the dispatcher after commit.
    events.onRecorded((tx, event, object) => webhookDeliveries.plan(tx, event, object));
    events.onPublished(() => webhookDispatcher.wake());
    webhookEndpoints.onTokenRolled((endpointId, ciphertext) => webhookDispatcher.tokenRolled(endpointId, ciphertext));
    // Deleting a customer detaches its payment methods, and the end of an invoice's payment
    // changes its invoice: the services know each other only through these hooks, bound once
    // both exist.
    const late: { paymentMethods?: PaymentMethodService; invoices?: InvoiceService; checkout?: CheckoutService } = {};
    const customers = createCustomerService({
      db,
      clock,
      onDelete: { detachAllOfCustomer: (...args) => late.paymentMethods!.detachAllOfCustomer(...args) },
    });
    const paymentMethods = createPaymentMethodService({ db, clock, vault, customers });
    late.paymentMethods = paymentMethods;
    let publicUrl = config.publicUrl ?? `http://${config.host}:${config.port}`;
    const paymentProcessor = processor ?? createSandboxProcessor({ followUpDelayMs: config.sandboxFollowUpDelayMs });
    const payments = createPaymentService({
      db,
      logger: log,
      clock,
      vault,
      processor: paymentProcessor,
      paymentMethods,
      events,
      jobs,
      publicUrl: () => publicUrl,
      checkNotifyUrl: (url) => webhookEndpoints.requireAllowedUrl(url, 'notifyUrl'),
      onInvoicePaymentEnded: (...args) => late.invoices!.paymentEnded(...args),
      onCheckoutPaymentPaid: (...args) => late.checkout!.paymentPaid(...args),
    });
    // The reconciliation sweep for payments whose process died mid-authorization (see the service).
    jobs.every(60 * 1000, () => payments.resumeInterruptedAuthorizations());
    const refunds = createRefundService({
      db,
      logger: log,
      clock,
      processor: paymentProcessor,
      events,
      jobs,
      payments: payments.refundLedger,
    });
    const mail = createMailTransport({
      smtpUrl: config.smtpUrl,
      from: config.mailFrom,
      dataDir: config.dataDir,
      clock,
    });
    const invoices = createInvoiceService({
      db,
      clock,
      logger: log,
      events,
      jobs,
      customers,
      paymentMethods,
      merchants,
      payments,
      mail,
      hostedPageKey: vault.deriveKey('invoice-hosted-page'),
      publicUrl: () => publicUrl,
    });
    late.invoices = invoices;
    const checkout = createCheckoutService({
      db,
      clock,
      jobs,
      customers,
      payments,
      checkNotifyUrl: (url) => webhookEndpoints.requireAllowedUrl(url, 'notifyUrl'),
      publicUrl: () => publicUrl,
    });
    late.checkout = checkout;
    const team = createTeamService({ db, clock, mail, vault, publicUrl: () => publicUrl });
    const requestLogs = createRequestLogService({ db, clock, logger: log });
    jobs.every(60 * 60 * 1000, () => requestLogs.purgeExpired());
    const retention = createRetention({
      db,
      clock,
      logger: log,
      deliveryRetentionDays: config.deliveryRetentionDays,
      eventRetentionDays: config.eventRetentionDays,
    });
    jobs.every(60 * 60 * 1000, () => retention.prune());

    // The public-key routes and the hosted checkout form draw on the same buckets (card testing).
    const publicKeyLimiter = createRateLimiter(clock, {
      perKeyPerMinute: config.publicKeyRequestsPerKeyPerMinute,
      perAddressPerMinute: config.publicKeyRequestsPerAddressPerMinute,
    });
    const server = await buildServer({
      logger: log,
      keys: merchants.keyLookup,
      operatorKeyHash: hashKey(operatorKey.value),
      idempotency,
      merchantRoutes: [
        customerRoutes(customers),
        paymentMethodRoutes(paymentMethods),
        paymentRoutes(payments, idempotency),
        refundRoutes(refunds),
        invoiceRoutes(invoices),
        checkoutRoutes(checkout),
        eventStreamRoutes(events),
        eventRoutes(events),
        webhookEndpointRoutes(webhookEndpoints),
        webhookDeliveryRoutes(webhookDeliveries),
        webhookCheckRoutes(webhookChecks, createWebhookDoctor({ db, clock, webhookEndpoints })),
        fastForwardRoutes(createFastForward({ db, clock, wake: () => webhookDispatcher.wake() })),
      ],
      operatorRoutes: [
        merchantRoutes(merchants, async (tx, merchantId, email) => team.createOwner(tx, merchantId, email)),
        vaultRoutes(vault),
      ],
      publicRoutes: [
        threeDSecureRoutes(payments),
        hostedInvoiceRoutes(invoices),
        hostedCheckoutRoutes(
          { db, clock, merchants, paymentMethods, payments, publicUrl: () => publicUrl },
          publicKeyLimiter,
        ),
        cardJsRoutes({ keys: merchants.keyLookup, merchants, production: config.nodeEnv === 'production' }),
        dashboardRoutes({
          team,
          merchants,
          customers,
          payments,
          paymentMethods,
          refunds,
          invoices,
          events,
          webhookEndpoints,
          webhookDeliveries,
          webhookChecks,
          requestLogs,
          publicUrl: () => publicUrl,
        }),
      ],
      isReady: () => ready,
      publicKeyLimiter,
      ...(config.trustProxy === undefined ? {} : { trustProxy: config.trustProxy }),
      recordApiRequest: (entry) => requestLogs.record(entry),
    });
    server.addHook('onListen', async () => {
      const address = server.server.address();
      if (!config.publicUrl && address && typeof address === 'object') {
        const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        publicUrl = `http://${host === '0.0.0.0' || host === '[::]' ? 'localhost' : host}:${address.port}`;
      }
    });
    ready = true;

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
      webhookDispatcher,
      invoices,
      checkout,
      team,
      requestLogs,
      mail,
      operatorKey,
      publicUrl: () => publicUrl,
      async close() {
        ready = false;
        await Promise.all([jobs.stop(), webhookDispatcher.stop()]);
        await webhookHttpClient.close();
        mail.close();
        await server.close();
        // After the server: the last requests' rows are written before the database closes.
        await requestLogs.close();
        await db.close();
      },
    };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

/** Readable lines when a person watches the terminal in development; JSON lines otherwise. */
function serviceLogger(config: Config): Logger {
  const terminal = process.stdout.isTTY === true;
  if (logFormat(config.nodeEnv, terminal) === 'json') return createLogger(config.logLevel);
  return createLogger(config.logLevel, prettyDestination(colorWanted(terminal)));
}
