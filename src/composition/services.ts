/**
 * The domain services and how they know each other (wiring only): what a process runs between
 * its database and its HTTP server. app.ts opens the database, builds these, then serves them.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import type { JobRunner } from '../jobs/runner.js';
import type { Metrics } from '../ops/metrics.js';
import type { Heartbeat } from '../ops/heartbeat.js';
import type { Vault } from '../vault/vault.js';
import type { Processor } from '../processor/processor.js';
import { createSandboxProcessor } from '../processor/sandbox.js';
import { connectorFactories } from '../processor-accounts/factories.js';
import { createProcessorRegistry } from '../processor-accounts/connectors.js';
import { createProcessorAccountService } from '../processor-accounts/service.js';
import { createNotificationReceiver } from '../processor-accounts/notifications.js';
import { createMerchantService } from '../merchants/service.js';
import { createCustomerService } from '../customers/service.js';
import { createCheckoutService, type CheckoutService } from '../checkout/service.js';
import { createPaymentMethodService, type PaymentMethodService } from '../payment-methods/service.js';
import { createPaymentService } from '../payments/service.js';
import { createRefundService } from '../refunds/service.js';
import { createEventService } from '../events/service.js';
import { createEventFeed } from '../events/feed.js';
import { createWebhookEndpointService } from '../webhooks/endpoints/service.js';
import { createWebhookDeliveryService } from '../webhooks/deliveries/service.js';
import { createDeliveryScheduler } from '../webhooks/engine/scheduler.js';
import { createWebhookHttpClient } from '../webhooks/http-client.js';
import { createWebhookCheckService } from '../webhooks/check/service.js';
import { createMailTransport } from '../mail/transport.js';
import { createInvoiceService, type InvoiceService } from '../invoices/service.js';
import { createTeamService } from '../team/service.js';
import { createRetention } from '../retention/service.js';
import { createRequestLogService } from '../request-logs/service.js';
import {
  createEndpointHealthService,
  healthSweepEveryMs,
  type EndpointHealthService,
} from '../webhooks/health/service.js';
import { createRecoveryService } from '../webhooks/recover/service.js';
import { createLedgerService } from '../ledger/service.js';
import { createPayoutService } from '../payouts/service.js';
import { createDisputeService } from '../disputes/service.js';
import { createFileService } from '../files/service.js';
import { registerDisputeMail } from '../disputes/mail.js';

export interface ServiceDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  config: Config;
  vault: Vault;
  jobs: JobRunner;
  metrics: Metrics;
  heartbeat: Heartbeat;
  /** The sandbox processor unless a test gives another. */
  processor: Processor | undefined;
  /** The address shoppers' browsers use; known once the server listens. */
  publicUrl: () => string;
}

export function createServices({
  db,
  clock,
  logger: log,
  config,
  vault,
  jobs,
  metrics,
  heartbeat,
  processor,
  publicUrl,
}: ServiceDeps) {
  const { processId } = heartbeat;
  const merchants = createMerchantService({ db, clock, vault });
  const events = createEventService({ db, clock });
  const eventFeed = createEventFeed({
    db,
    logger: log,
    markListening: (on) => heartbeat.listensEvents(on),
    onProbe: (outcome) => metrics.observeListenProbe(outcome),
  });
  const webhookEndpoints = createWebhookEndpointService({
    db,
    clock,
    vault,
    production: config.nodeEnv === 'production',
    allowPrivate: config.webhookAllowPrivate,
  });
  const webhookHttpClient = createWebhookHttpClient({
    timeoutMs: config.webhookTimeoutMs,
    production: config.nodeEnv === 'production',
    allowPrivate: config.webhookAllowPrivate,
    proxy: config.webhookProxy,
    sourceAddresses: config.webhookSourceAddresses,
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
    onAttempt: (outcome) => metrics.observeAttempt(outcome),
    onEndpointGone: (endpointId) => late.endpointHealth!.endpointGone(endpointId),
    processId,
  });
  const webhookDeliveries = createWebhookDeliveryService({
    db,
    clock,
    webhookEndpoints,
    onCreated: () => webhookDispatcher.wake(),
    olderProcessesAlive: heartbeat.olderProcessesAlive,
  });
  const webhookChecks = createWebhookCheckService({
    db,
    clock,
    webhookEndpoints,
    httpClient: webhookHttpClient,
    timeoutMs: config.webhookTimeoutMs,
    sendingAddresses: config.webhookSendingAddresses,
  });
  // Deliveries are planned in each event's transaction and handed to the dispatcher after commit.
  events.onRecorded((tx, event) => webhookDeliveries.plan(tx, event));
  // Events that planned no delivery (no endpoint subscribed, no notifyUrl) wake nobody; when each
  // event's count is known, the claim need not look first whether anything is due.
  events.onPublished((published) => {
    if (published.every((event) => event.deliveriesPlanned === 0)) return;
    webhookDispatcher.wake(published.every((event) => event.deliveriesPlanned !== undefined));
  });
  events.onPublished((published) => metrics.observeEvents(published));
  webhookEndpoints.onTokenRolled((endpointId, ciphertext, previous) =>
    webhookDispatcher.tokenRolled(endpointId, ciphertext, previous),
  );
  // Deleting a customer detaches its payment methods, and the end of an invoice's payment
  // changes its invoice: the services know each other only through these hooks, bound once
  // both exist.
  const late: {
    paymentMethods?: PaymentMethodService;
    invoices?: InvoiceService;
    checkout?: CheckoutService;
    endpointHealth?: EndpointHealthService;
  } = {};
  const customers = createCustomerService({
    db,
    clock,
    onDelete: { detachAllOfCustomer: (...args) => late.paymentMethods!.detachAllOfCustomer(...args) },
  });
  const paymentMethods = createPaymentMethodService({ db, clock, vault, customers });
  late.paymentMethods = paymentMethods;
  const ledger = createLedgerService({ db, clock });
  const processorAccounts = createProcessorAccountService({
    db,
    clock,
    vault,
    production: config.nodeEnv === 'production',
    publicUrl,
    merchantExists: async (merchantId) => (await merchants.retrieve(merchantId).catch(() => null)) !== null,
    onChange: () => merchants.forgetKeys(),
  });
  const processors = createProcessorRegistry({
    db,
    clock,
    vault,
    sandbox: processor ?? createSandboxProcessor({ followUpDelayMs: config.sandboxFollowUpDelayMs }),
    factories: connectorFactories,
    timeoutMs: config.processorTimeoutMs,
    observe: (...args) => metrics.observeProcessorRequest(...args),
  });
  const payments = createPaymentService({
    db,
    logger: log,
    clock,
    vault,
    processors,
    paymentMethods,
    events,
    jobs,
    publicUrl,
    ...(config.testSweepAfterMs === undefined ? {} : { interruptedAfterMs: config.testSweepAfterMs }),
    checkNotifyUrl: (url) => webhookEndpoints.requireAllowedUrl(url, 'notifyUrl'),
    onInvoicePaymentEnded: (...args) => late.invoices!.paymentEnded(...args),
    onCheckoutPaymentPaid: (...args) => late.checkout!.paymentPaid(...args),
    onPaymentRecorded: (tx, type, row) => ledger.paymentRecorded(tx, type, row),
  });
  // The reconciliation sweep for payments whose process died mid-authorization (see the service).
  jobs.every(Math.min(60 * 1000, config.testSweepAfterMs ?? Infinity), () =>
    payments.resumeInterruptedAuthorizations(),
  );
  const refunds = createRefundService({
    db,
    logger: log,
    clock,
    processors,
    events,
    jobs,
    payments: payments.refundLedger,
    onRefundRecorded: (tx, type, row) => ledger.refundRecorded(tx, type, row),
  });
  const disputes = createDisputeService({
    db,
    clock,
    events,
    jobs,
    processors,
    followUpDelayMs: config.sandboxFollowUpDelayMs,
  });
  const processorNotifications = createNotificationReceiver({
    db,
    clock,
    logger: log,
    registry: processors,
    targets: {
      authorisation: (...args) => payments.applyAuthorizationNotice(...args),
      capture: (...args) => payments.applyCaptureNotice(...args),
      refund: (...args) => refunds.applyRefundNotice(...args),
      dispute: (...args) => disputes.applyNotice(...args),
    },
  });
  const payouts = createPayoutService({
    db,
    clock,
    logger: log,
    events,
    jobs,
    followUpDelayMs: config.sandboxFollowUpDelayMs,
  });
  const files = createFileService({ db, clock });
  // The payout schedule (docs/balances.md): automatic payouts fall due by the UTC day.
  jobs.every(60 * 1000, () => payouts.runSchedule());
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
    publicUrl,
  });
  late.invoices = invoices;
  const checkout = createCheckoutService({
    db,
    clock,
    jobs,
    customers,
    payments,
    checkNotifyUrl: (url) => webhookEndpoints.requireAllowedUrl(url, 'notifyUrl'),
    publicUrl,
  });
  late.checkout = checkout;
  const team = createTeamService({ db, clock, mail, vault, publicUrl });
  registerDisputeMail({ db, logger: log, jobs, mail, members: (merchantId) => team.list(merchantId), publicUrl });
  const endpointHealth = createEndpointHealthService({
    db,
    clock,
    logger: log,
    jobs,
    mail,
    members: (merchantId) => team.list(merchantId),
    merchantName: async (merchantId) => (await merchants.retrieve(merchantId)).name,
    publicUrl,
    alertAfterSeconds: config.endpointAlertAfterSeconds,
    disableAfterSeconds: config.endpointDisableAfterSeconds,
  });
  late.endpointHealth = endpointHealth;
  jobs.every(healthSweepEveryMs, () => endpointHealth.sweep());
  const recovery = createRecoveryService({
    db,
    clock,
    webhookEndpoints,
    eventRetentionDays: config.eventRetentionDays,
    deliveryRetentionDays: config.deliveryRetentionDays,
    olderProcessesAlive: heartbeat.olderProcessesAlive,
    onCreated: () => webhookDispatcher.wake(),
  });
  // The backstop of recover's chains: a delivery whose predecessor will never be answered goes on.
  jobs.every(60 * 1000, () => recovery.releaseStranded());
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

  return {
    merchants,
    processorAccounts,
    processorNotifications,
    customers,
    paymentMethods,
    payments,
    refunds,
    ledger,
    payouts,
    disputes,
    files,
    events,
    eventFeed,
    webhookEndpoints,
    webhookHttpClient,
    webhookDispatcher,
    webhookDeliveries,
    webhookChecks,
    mail,
    invoices,
    checkout,
    team,
    endpointHealth,
    recovery,
    requestLogs,
  };
}

export type Services = ReturnType<typeof createServices>;
