/**
 * Which routes each part of the server serves (wiring only): the merchant API under its key, the
 * operator API under the operator key, and the public pages, health and callbacks. app.ts passes
 * these groups to the HTTP server (src/http/server.ts).
 */
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import type { App } from '../http/server.js';
import type { Idempotency } from '../http/idempotency.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { Vault } from '../vault/vault.js';
import { vaultRoutes } from '../vault/routes.js';
import { auditRoutes } from '../audit/routes.js';
import { merchantRoutes } from '../merchants/routes.js';
import { sandboxOwnerEmail } from '../merchants/sandbox.js';
import { sandboxRoutes } from '../merchants/sandbox-routes.js';
import { processorAccountRoutes, processorWebhookRoutes } from '../processor-accounts/routes.js';
import { customerRoutes } from '../customers/routes.js';
import { checkoutRoutes } from '../checkout/routes.js';
import { hostedCheckoutRoutes } from '../checkout/hosted-routes.js';
import { cardJsRoutes } from '../cardjs/routes.js';
import { paymentMethodRoutes } from '../payment-methods/routes.js';
import { paymentRoutes, threeDSecureRoutes } from '../payments/routes.js';
import { refundRoutes } from '../refunds/routes.js';
import { ledgerRoutes } from '../ledger/routes.js';
import { payoutRoutes } from '../payouts/routes.js';
import { disputeRoutes } from '../disputes/routes.js';
import { fileRoutes } from '../files/routes.js';
import { eventRoutes } from '../events/routes.js';
import { eventStreamRoutes } from '../events/stream-routes.js';
import { webhookEndpointRoutes } from '../webhooks/endpoints/routes.js';
import { webhookDeliveryRoutes } from '../webhooks/deliveries/routes.js';
import { sendingAddressRoutes } from '../webhooks/egress/routes.js';
import { sendingAddressesView } from '../webhooks/egress/sending-addresses.js';
import { webhookCheckRoutes } from '../webhooks/check/routes.js';
import { createWebhookDoctor } from '../webhooks/check/doctor.js';
import { createFastForward } from '../webhooks/deliveries/fast-forward.js';
import { fastForwardRoutes } from '../webhooks/deliveries/fast-forward-routes.js';
import { hostedInvoiceRoutes, invoiceRoutes } from '../invoices/routes.js';
import { dashboardRoutes } from '../dashboard/routes.js';
import { recoverRoutes } from '../webhooks/recover/routes.js';
import type { Services } from './services.js';

export interface RouteDeps {
  db: Db;
  clock: Clock;
  config: Config;
  vault: Vault;
  idempotency: Idempotency;
  /** The public-key routes and the hosted checkout form draw on the same buckets (card testing). */
  publicKeyLimiter: RateLimiter;
  /** Liveness, readiness and metrics, built by app.ts with the health it tracks. */
  opsRoutes: (app: App) => void;
  /** The address shoppers' browsers use; known once the server listens. */
  publicUrl: () => string;
}

export function routeGroups(services: Services, deps: RouteDeps) {
  const { db, clock, config, vault, idempotency, publicKeyLimiter, publicUrl } = deps;
  const { merchants, payments, paymentMethods, team, invoices, webhookDispatcher } = services;
  const { webhookEndpoints, processorAccounts } = services;
  return {
    merchantRoutes: [
      customerRoutes(services.customers),
      paymentMethodRoutes(paymentMethods),
      paymentRoutes(payments, idempotency),
      refundRoutes(services.refunds),
      ledgerRoutes(services.ledger),
      payoutRoutes(services.payouts),
      disputeRoutes(services.disputes),
      fileRoutes(services.files),
      invoiceRoutes(invoices),
      checkoutRoutes(services.checkout),
      eventStreamRoutes(services.eventFeed),
      eventRoutes(services.events),
      sendingAddressRoutes(config.webhookSendingAddresses),
      webhookEndpointRoutes(webhookEndpoints),
      webhookDeliveryRoutes(services.webhookDeliveries),
      recoverRoutes(services.recovery),
      webhookCheckRoutes(services.webhookChecks, createWebhookDoctor({ db, clock, webhookEndpoints })),
      fastForwardRoutes(createFastForward({ db, clock, wake: () => webhookDispatcher.wake() })),
    ],
    operatorRoutes: [
      merchantRoutes(
        merchants,
        async (tx, merchantId, email) => team.createOwner(tx, merchantId, email),
        (merchantId) => processorAccounts.hasEnabledAccount(merchantId, 'live'),
      ),
      processorAccountRoutes(processorAccounts),
      // Development only: a fresh sign-in link for the sandbox Owner (tessera dashboard-link).
      ...(config.nodeEnv === 'production'
        ? []
        : [sandboxRoutes(db, (id) => team.sandboxOwnerLink(id, sandboxOwnerEmail))]),
      vaultRoutes(vault),
      auditRoutes(db),
    ],
    publicRoutes: [
      deps.opsRoutes,
      threeDSecureRoutes(payments),
      processorWebhookRoutes(services.processorNotifications),
      hostedInvoiceRoutes(invoices, publicKeyLimiter),
      hostedCheckoutRoutes({ db, clock, merchants, paymentMethods, payments, publicUrl }, publicKeyLimiter),
      cardJsRoutes({ keys: merchants.keyLookup, merchants, production: config.nodeEnv === 'production' }),
      dashboardRoutes({
        ...services,
        sendingAddresses: sendingAddressesView(config.webhookSendingAddresses),
        clock,
        publicUrl,
        development: config.nodeEnv !== 'production',
      }),
    ],
  };
}
