/**
 * Types of the merchant API, derived from the OpenAPI document's `paths` (generated at build time
 * into ./generated/openapi.ts by scripts/sdk-generate.ts): nothing here repeats a field by hand.
 */
import type { paths } from './generated/openapi.js';

export type { paths } from './generated/openapi.js';

export const apiBasePath = '/api/services/v1';
type Base = typeof apiBasePath;

export type Method = 'get' | 'post' | 'delete';

/** A merchant API path relative to the base path that has `method`, e.g. `/payment/{id}/capture` for post. */
export type ApiPath<M extends Method> = {
  [P in keyof paths]: P extends `${Base}${infer Rest}`
    ? [NonNullable<paths[P][M]>] extends [never]
      ? never
      : Rest
    : never;
}[keyof paths];

/** The OpenAPI operation `method path`. */
export type Operation<M extends Method, P extends ApiPath<M>> = `${Base}${P}` extends infer K extends keyof paths
  ? NonNullable<paths[K][M]>
  : never;

export type RequestBody<M extends Method, P extends ApiPath<M>> =
  Operation<M, P> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type QueryParams<M extends Method, P extends ApiPath<M>> =
  Operation<M, P> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type PathParams<M extends Method, P extends ApiPath<M>> =
  Operation<M, P> extends { parameters: { path: infer Params } } ? Params : never;

/** The `data` of the operation's `success` answer. */
export type ResponseData<M extends Method, P extends ApiPath<M>> =
  Operation<M, P> extends { responses: { 200: { content: { 'application/json': { data: infer D } } } } } ? D : never;

export type Customer = ResponseData<'get', '/customers/{id}'>;
export type PaymentMethod = ResponseData<'get', '/payment_methods/{id}'>;
export type Payment = ResponseData<'get', '/payment/{id}'>;
export type Refund = ResponseData<'get', '/refunds/{id}'>;
export type Invoice = ResponseData<'get', '/invoices/{id}'>;
export type BalanceTransaction = ResponseData<'get', '/balance_transactions/{id}'>;
export type Payout = ResponseData<'get', '/payouts/{id}'>;
export type Dispute = ResponseData<'get', '/disputes/{id}'>;
export type CheckoutSession = ResponseData<'get', '/checkout/session/{id}'>;
export type WebhookEndpoint = ResponseData<'get', '/webhook_endpoints/{id}'>;
export type WebhookDelivery = ResponseData<'get', '/webhook_deliveries/{id}'>;

/** the event (docs/webhooks.md#event-codes) codes, written exactly as the spec writes them (three invoice codes start upper case). */
export type EventCode =
  | 'payment.processing'
  | 'payment.succeeded'
  | 'payment.failed'
  | 'payment.requires_capture'
  | 'payment.canceled'
  | 'refund.pending'
  | 'refund.succeeded'
  | 'refund.failed'
  | 'invoice.created'
  | 'invoice.deleted'
  | 'invoice.payment_succeeds'
  | 'invoice.payment_failed'
  | 'Invoice.sent'
  | 'Invoice.updated'
  | 'Invoice.voided'
  | 'payout.created'
  | 'payout.paid'
  | 'payout.failed'
  | 'payout.canceled'
  | 'dispute.created'
  | 'dispute.updated'
  | 'dispute.closed'
  | 'dispute.funds_withdrawn'
  | 'dispute.funds_reinstated';

/** docs/webhooks.md#what-is-sent: the endpoint notification's type, `endpoint_<group>.<group>_<action>` (endpoint_payment.payment_succeeded). */
export type EndpointEventType<C extends string = EventCode> = C extends `${infer Group}.${infer Action}`
  ? `endpoint_${Group}.${Group}_${Action}`
  : never;

/** The object an event's `data` holds: the payment, refund, payout, dispute or invoice as it was when the event happened. */
export type EventData<C extends EventCode> = C extends `payment.${string}`
  ? Payment
  : C extends `refund.${string}`
    ? Refund
    : C extends `payout.${string}`
      ? Payout
      : C extends `dispute.${string}`
        ? Dispute
        : Invoice;

/**
 * An event as the API lists it (`type` the code) or as a webhook carries it (`type` the endpoint form,
 * or the code in the legacy notification). Narrow on `type` to get a typed `data`.
 */
export type TesseraEvent = {
  [C in EventCode]: {
    id: string;
    apiVersion: 'v1';
    type: C | EndpointEventType<C>;
    created: string;
    /** Grows with each event of the same object: a receiver ignores an event older than one it has (docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one). */
    sequence: number;
    data: EventData<C>;
  };
}[EventCode];
