/**
 * Named helpers for every merchant API operation, each a one-line binding of `request` (or, for
 * GET /events/stream, of `stream`): the argument and result types come from the generated OpenAPI
 * types, never written here.
 */
import type { RequestOptions, ServerSentEvent, TesseraClient } from './client.js';
import { TesseraError } from './errors.js';
import type { ApiPath, QueryParams, RequestBody, ResponseData, TesseraEvent } from './types.js';

/** The one path parameter of `path` set to `id`, whatever its name (`id`, `customerId`). */
const withId = (path: string, id: string) => ({ [/\{(\w+)\}/.exec(path)![1]!]: id });

// The helpers hand typed arguments to `request`, whose own generic types cannot follow a path
// that is itself generic here; the public signatures below are what callers see.
type Loose = (
  method: string,
  path: string,
  parts: { params?: unknown; query?: unknown; body?: unknown },
  options?: RequestOptions,
) => Promise<never>;
const loose = (client: TesseraClient) => client.request.bind(client) as unknown as Loose;

/** `create(body)`: a POST without a path parameter. */
export type Create<P extends ApiPath<'post'>> = (
  body: RequestBody<'post', P>,
  options?: RequestOptions,
) => Promise<ResponseData<'post', P>>;
/** `action(id, body?)`: a POST on one object. */
export type Action<P extends ApiPath<'post'>> = (
  id: string,
  body?: RequestBody<'post', P>,
  options?: RequestOptions,
) => Promise<ResponseData<'post', P>>;
/** `retrieve(id, query?)`: a GET on one object (or on what belongs to it). */
export type Retrieve<P extends ApiPath<'get'>> = (
  id: string,
  query?: QueryParams<'get', P>,
  options?: RequestOptions,
) => Promise<ResponseData<'get', P>>;
/** `list(query?)`: a GET of a list. */
export type List<P extends ApiPath<'get'>> = (
  query?: QueryParams<'get', P>,
  options?: RequestOptions,
) => Promise<ResponseData<'get', P>>;
/** `del(id)`: a DELETE of one object. */
export type Remove<P extends ApiPath<'delete'>> = (
  id: string,
  options?: RequestOptions,
) => Promise<ResponseData<'delete', P>>;

function create<P extends ApiPath<'post'>>(client: TesseraClient, path: P): Create<P> {
  return (body, options) => loose(client)('post', path, { body }, options);
}
function action<P extends ApiPath<'post'>>(client: TesseraClient, path: P): Action<P> {
  return (id, body, options) => loose(client)('post', path, { params: withId(path, id), body }, options);
}
function retrieve<P extends ApiPath<'get'>>(client: TesseraClient, path: P): Retrieve<P> {
  return (id, query, options) => loose(client)('get', path, { params: withId(path, id), query }, options);
}
function list<P extends ApiPath<'get'>>(client: TesseraClient, path: P): List<P> {
  return (query, options) => loose(client)('get', path, { query }, options);
}
function remove<P extends ApiPath<'delete'>>(client: TesseraClient, path: P): Remove<P> {
  return (id, options) => loose(client)('delete', path, { params: withId(path, id) }, options);
}

/** The events of GET /events/stream: each server-sent event's `data` is the event as a webhook endpoint gets it. */
async function* eventsOf(frames: AsyncIterable<ServerSentEvent>): AsyncGenerator<TesseraEvent, void, undefined> {
  for await (const frame of frames) {
    let event: TesseraEvent;
    try {
      event = JSON.parse(frame.data) as TesseraEvent;
    } catch {
      throw new TesseraError({
        code: 'invalid_response',
        msg: `the stream's event ${frame.id} is not JSON`,
        status: 200,
      });
    }
    yield event;
  }
}

export type Resources = ReturnType<typeof resources>;

export function resources(client: TesseraClient) {
  return {
    customers: {
      create: create(client, '/customers/create'),
      retrieve: retrieve(client, '/customers/{id}'),
      list: list(client, '/customers'),
      update: action(client, '/customers/{id}/update'),
      del: remove(client, '/customers/{id}'),
    },
    paymentMethods: {
      create: create(client, '/payment_methods/create'),
      retrieve: retrieve(client, '/payment_methods/{id}'),
      /** The customer's payment methods: `list(customerId, query?)`. */
      list: retrieve(client, '/payment_methods/list/{customerId}'),
      attach: action(client, '/payment_methods/{id}/attach'),
      detach: action(client, '/payment_methods/{id}/detach'),
      update: action(client, '/payment_methods/{id}/update'),
    },
    payments: {
      create: create(client, '/payment/create'),
      retrieve: retrieve(client, '/payment/{id}'),
      list: list(client, '/payment'),
      update: action(client, '/payment/{id}/update'),
      confirm: action(client, '/payment/{id}/confirm'),
      capture: action(client, '/payment/{id}/capture'),
      cancel: action(client, '/payment/{id}/cancel'),
    },
    refunds: {
      create: create(client, '/refunds/create'),
      retrieve: retrieve(client, '/refunds/{id}'),
      list: list(client, '/refunds'),
    },
    /** docs/balances.md: available and pending per currency, and a period's balance change. */
    balance: {
      retrieve: list(client, '/balance'),
      summary: list(client, '/balance/summary'),
    },
    balanceTransactions: {
      retrieve: retrieve(client, '/balance_transactions/{id}'),
      list: list(client, '/balance_transactions'),
    },
    disputes: {
      retrieve: retrieve(client, '/disputes/{id}'),
      list: list(client, '/disputes'),
      /** Stages evidence; `submit: true` sends it. */
      update: action(client, '/disputes/{id}/update'),
      accept: action(client, '/disputes/{id}/accept'),
    },
    payouts: {
      create: create(client, '/payouts/create'),
      /** While `pending`; 409 `payout_not_cancelable` once the bank has it. */
      cancel: action(client, '/payouts/{id}/cancel'),
      retrieve: retrieve(client, '/payouts/{id}'),
      list: list(client, '/payouts'),
      /** Every balance transaction the payout settles (as JSON; the CSV form is the same route with `Accept: text/csv`). */
      reconciliation: retrieve(client, '/payouts/{id}/reconciliation'),
    },
    invoices: {
      create: create(client, '/invoices/create'),
      retrieve: retrieve(client, '/invoices/{id}'),
      list: list(client, '/invoices'),
      update: action(client, '/invoices/{id}/update'),
      finalize: action(client, '/invoices/{id}/finalize'),
      send: action(client, '/invoices/{id}/send'),
      pay: action(client, '/invoices/{id}/pay'),
      void: action(client, '/invoices/{id}/void'),
      markUncollectible: action(client, '/invoices/{id}/mark_uncollectible'),
      del: remove(client, '/invoices/{id}'),
    },
    checkoutSessions: {
      create: create(client, '/checkout/session/create'),
      retrieve: retrieve(client, '/checkout/session/{id}'),
      list: list(client, '/checkout/session'),
      /** Expires an open session at once: its page can no longer be paid. */
      expire: action(client, '/checkout/session/{id}/expire'),
    },
    events: {
      retrieve: retrieve(client, '/events/{id}') as (
        id: string,
        query?: undefined,
        options?: RequestOptions,
      ) => Promise<TesseraEvent>,
      list: list(client, '/events') as (
        query?: QueryParams<'get', '/events'>,
        options?: RequestOptions,
      ) => Promise<{ data: TesseraEvent[]; hasMore: boolean }>,
      deliveries: retrieve(client, '/events/{id}/deliveries'),
      attempts: retrieve(client, '/events/{id}/attempts'),
      resend: action(client, '/events/{id}/resend'),
      /**
       * The merchant's events as they happen (GET /events/stream), for as long as the loop runs:
       * `for await (const event of tessera.events.stream({ types: 'payment.succeeded' }, { signal }))`.
       * Each has the `endpoint_` form of its type, as a webhook carries it. Events recorded while no
       * stream is open are not replayed: read them with `list`. Aborting `signal` ends the loop.
       */
      stream: (
        query?: QueryParams<'get', '/events/stream'>,
        options?: RequestOptions,
      ): AsyncGenerator<TesseraEvent, void, undefined> => eventsOf(client.stream('/events/stream', { query }, options)),
    },
    webhookEndpoints: {
      create: create(client, '/webhook_endpoints/create'),
      retrieve: retrieve(client, '/webhook_endpoints/{id}'),
      list: list(client, '/webhook_endpoints'),
      update: action(client, '/webhook_endpoints/{id}/update'),
      del: remove(client, '/webhook_endpoints/{id}'),
      revealToken: retrieve(client, '/webhook_endpoints/{id}/reveal_token'),
      rollToken: action(client, '/webhook_endpoints/{id}/roll_token'),
      /** The go-live check: test deliveries to the endpoint, a verdict per case. */
      check: action(client, '/webhook_endpoints/{id}/check'),
      checks: retrieve(client, '/webhook_endpoints/{id}/checks'),
      /** Sends the endpoint again every event from `since` (to `until`) that it has not acknowledged. */
      recover: action(client, '/webhook_endpoints/{id}/recover'),
      /** docs/webhooks.md#sending-addresses-allow-lists: the addresses webhooks come from, for an IP allow-list. */
      sendingAddresses: list(client, '/webhook_endpoints/sending_addresses'),
    },
    webhookDeliveries: {
      list: list(client, '/webhook_deliveries'),
      retrieve: retrieve(client, '/webhook_deliveries/{id}'),
      attempts: retrieve(client, '/webhook_deliveries/{id}/attempts'),
      resend: action(client, '/webhook_deliveries/{id}/resend'),
      /** Test mode: runs the delivery's remaining retry schedule compressed by `factor`. */
      fastForward: action(client, '/webhook_deliveries/{id}/fast_forward'),
    },
    webhooks: {
      /** Says why a signature does not verify (docs/webhooks.md#what-is-sent): body changed, wrong token, clock skew, … */
      doctor: create(client, '/webhooks/doctor'),
    },
  };
}
