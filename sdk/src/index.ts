/**
 * @tessera/node: the Tessera merchant API for Node.js 20+, typed from the service's OpenAPI document.
 *
 *   const tessera = new Tessera({ apiKey: process.env.TESSERA_API_KEY, baseUrl: 'http://127.0.0.1:8080' });
 *   const customer = await tessera.customers.create({ email: 'ada@example.com' });
 */
import { TesseraClient, type TesseraOptions } from './client.js';
import { resources, type Resources } from './resources.js';
import { verifyWebhook, type VerifyWebhookOptions } from './verify-webhook.js';
import type { TesseraEvent } from './types.js';

export class Tessera extends TesseraClient {
  readonly customers: Resources['customers'];
  readonly paymentMethods: Resources['paymentMethods'];
  readonly payments: Resources['payments'];
  readonly refunds: Resources['refunds'];
  readonly balance: Resources['balance'];
  readonly balanceTransactions: Resources['balanceTransactions'];
  readonly payouts: Resources['payouts'];
  readonly disputes: Resources['disputes'];
  readonly invoices: Resources['invoices'];
  readonly checkoutSessions: Resources['checkoutSessions'];
  readonly events: Resources['events'];
  readonly webhookEndpoints: Resources['webhookEndpoints'];
  readonly webhookDeliveries: Resources['webhookDeliveries'];
  readonly webhooks: Resources['webhooks'] & { verify: typeof verifyEvent };

  constructor(options: TesseraOptions) {
    super(options);
    const bound = resources(this);
    this.customers = bound.customers;
    this.paymentMethods = bound.paymentMethods;
    this.payments = bound.payments;
    this.refunds = bound.refunds;
    this.balance = bound.balance;
    this.balanceTransactions = bound.balanceTransactions;
    this.payouts = bound.payouts;
    this.disputes = bound.disputes;
    this.invoices = bound.invoices;
    this.checkoutSessions = bound.checkoutSessions;
    this.events = bound.events;
    this.webhookEndpoints = bound.webhookEndpoints;
    this.webhookDeliveries = bound.webhookDeliveries;
    this.webhooks = { ...bound.webhooks, verify: verifyEvent };
  }
}

/** verifyWebhook, with the event typed: narrow on `event.type` to get its `data` as a Payment, Refund or Invoice. */
export function verifyEvent(options: VerifyWebhookOptions): TesseraEvent {
  return verifyWebhook(options) as unknown as TesseraEvent;
}

export default Tessera;
export { TesseraClient } from './client.js';
export type { RequestOptions, RequestParts, ServerSentEvent, TesseraOptions } from './client.js';
export { TesseraConnectionError, TesseraError, type TesseraErrorCode } from './errors.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookEvent,
  type WebhookVerificationReason,
} from './verify-webhook.js';
export type * from './types.js';
export type { Action, Create, List, Remove, Resources, Retrieve } from './resources.js';
export { apiBasePath } from './types.js';
