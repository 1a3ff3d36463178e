import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import type { EventType } from '../events/schemas.js';
import type { EventService } from '../events/service.js';
import type { JobRunner } from '../jobs/runner.js';
import type { PaymentMethodService } from '../payment-methods/service.js';
import type { ProcessorRouter } from '../processor/processor.js';
import type { Vault } from '../vault/vault.js';
import type { CheckoutPaymentListener } from './checkout-hook.js';
import type { InvoicePaymentListener } from './invoice-hook.js';
import type { PaymentRow } from './queries.js';
import type { PaymentView } from './view.js';

export interface PaymentServiceDeps {
  db: Db;
  logger: FastifyBaseLogger;
  clock: Clock;
  vault: Vault;
  /** Each payment's processor: the sandbox, or the connector of the account it was made with. */
  processors: ProcessorRouter;
  paymentMethods: PaymentMethodService;
  events: EventService;
  jobs: JobRunner;
  /** How long a payment waits in processing without an answer before the sweep replays it (tests shorten it). */
  interruptedAfterMs?: number;
  /** The address customers' browsers use; known once the server listens. */
  publicUrl: () => string;
  /**
   * Refuses a notifyUrl that webhooks may not be sent to (the rules of an endpoint's url, docs/webhooks.md#endpoints-and-tokens: in production no loopback, private, link-local or metadata address), naming the field.
   */
  checkNotifyUrl?: (url: string) => Promise<void>;
  /**
   * Told, inside the transaction that records it, that a payment of an invoice succeeded, failed
   * or was canceled (src/invoices/ marks the invoice paid or records the failed attempt).
   */
  onInvoicePaymentEnded?: InvoicePaymentListener;
  /**
   * Told, inside the transaction that records it, that a payment of a checkout session's hosted
   * page went through (src/checkout/ completes the session with it).
   */
  onCheckoutPaymentPaid?: CheckoutPaymentListener;
  /**
   * Told of every payment event inside the transaction that records it, whichever processor
   * answered (src/ledger/ writes the payment's balance transaction, or a reversal's).
   */
  onPaymentRecorded?: (tx: Queryable, type: EventType, row: PaymentRow) => Promise<void>;
}

/**
 * What the payment modules are given: the service's dependencies and the view that renders a
 * payment. Each function names the part it uses (`Pick<PaymentContext, …>`), so its
 * dependencies show in its signature.
 */
export interface PaymentContext extends PaymentServiceDeps {
  view: PaymentView;
}
