/**
 * A stand-in for Stripe's API, for tests: an HTTP server on 127.0.0.1 (port 0) that the official
 * `stripe` client talks to over plain HTTP (the connector's baseUrl). The API itself is in
 * stripe-stand-in-api.ts; this file adds what Stripe does around it and what the tests need:
 *
 * - the secret key in `Authorization: Bearer …`, form-encoded bodies, JSON answers;
 * - idempotency as Stripe keeps it: a POST with an `Idempotency-Key` seen before (same endpoint,
 *   same parameters) is answered with the first answer, card errors included, without doing the
 *   work again; the same key with other parameters is a 400 `idempotency_error`;
 * - counts of the work really done per key (confirmations, captures, cancellations, refunds);
 * - faults: the next calls answered 500, or done and then never answered (past the client's
 *   timeout), or done and then the connection reset;
 * - the 3-D Secure page a redirect outcome sends the shopper to, which sends them back to the
 *   PaymentIntent's return_url;
 * - webhook events signed with the webhook secret (`Stripe-Signature`), or signed wrongly.
 */

import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Stripe from 'stripe';
import { StripeStandInApi } from './stripe-stand-in-api.js';
import { multipartFingerprint, parseMultipart, StripeStandInDisputes } from './stripe-stand-in-disputes.js';
import { parseForm, StripeRefusal, type Params } from './stripe-stand-in-params.js';

export { stripeTestCards } from './stripe-stand-in-api.js';

export type WorkKind = 'confirmations' | 'captures' | 'cancels' | 'refunds';

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  /** The parameters as Stripe decoded them, the card number shortened to its last four digits. */
  params: Params;
}

export interface SignedEvent {
  headers: Record<string, string>;
  rawBody: string;
}

export interface StripeStandIn {
  /** The base URL to give the connector: `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly secretKey: string;
  readonly webhookSecret: string;
  readonly api: StripeStandInApi;
  readonly requests: RecordedRequest[];
  /** How many times the work of `kind` was really done for this idempotency key. */
  count(kind: WorkKind, idempotencyKey: string): number;
  /** Charges whose money was taken (captured), over all keys. */
  capturedCharges(): number;
  /** Files uploaded and what each dispute was sent (updates with submit, closes). */
  readonly disputes: StripeStandInDisputes;
  /**
   * The next `times` calls to a path starting with `pathPrefix` meet the fault (done then reset, or
   * 500 without doing). The client sends again once on a reset connection: reset twice to fail it.
   */
  faultOn(pathPrefix: string, fault: 'fail' | 'reset', times?: number): void;
  /** The next `count` calls are answered 500 `api_error` without doing anything. */
  failNext(count: number, status?: number): void;
  /** The next `count` calls are done, then never answered (until close). */
  hangNext(count: number): void;
  /** The next `count` calls are done, then their connection is reset. */
  resetNext(count: number): void;
  /** An event as Stripe sends it to a webhook endpoint, signed (or not) as told. */
  event(
    type: string,
    object: object,
    options?: { timestampSeconds?: number; tamper?: boolean; secret?: string },
  ): SignedEvent;
  /** POSTs an event to a webhook endpoint, as Stripe does. */
  postEvent(url: string, event: SignedEvent): Promise<Response>;
  close(): Promise<void>;
}

type Fault = { kind: 'fail'; status: number } | { kind: 'hang' } | { kind: 'reset' };

interface Stored {
  fingerprint: string;
  status: number;
  body: unknown;
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const secretKey = `sk_test_${randomBytes(16).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
  const faults: Fault[] = [];
  const pathFaults = new Map<string, Fault[]>();
  const disputes = new StripeStandInDisputes();
  const stored = new Map<string, Stored>();
  const counts = new Map<string, number>();
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch (caught) {
        send(res, 500, { error: { type: 'api_error', message: `Stand-in failure: ${String(caught)}` } });
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const api = new StripeStandInApi(url);

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, {
      'content-type': 'application/json',
      'request-id': `req_${randomBytes(7).toString('hex')}`,
      ...headers,
    });
    res.end(JSON.stringify(body));
  }

  function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    const body = raw.toString('utf8');
    const target = new URL(req.url ?? '/', url);
    const method = req.method ?? 'GET';
    const path = target.pathname;

    const challenge = /^\/stand-in\/3ds\/([\w]+)$/.exec(path);
    if (challenge && method === 'GET')
      return answerChallenge(res, challenge[1]!, target.searchParams.get('result') !== 'fail');

    if (req.headers.authorization !== `Bearer ${secretKey}`) {
      return send(res, 401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } });
    }
    if (typeof req.headers['stripe-version'] !== 'string') {
      return send(res, 400, { error: { type: 'invalid_request_error', message: 'Stripe-Version is missing' } });
    }
    const contentType = headerOf(req, 'content-type') ?? '';
    const multipart = method === 'POST' && contentType.startsWith('multipart/form-data');
    const parts = multipart ? parseMultipart(contentType, raw) : null;
    const params = parts
      ? (Object.fromEntries(
          Object.entries(parts).map(([name, value]) => [name, typeof value === 'string' ? value : value.name]),
        ) as Params)
      : parseForm(method === 'GET' ? target.search.slice(1) : body);
    const key = method === 'POST' ? (headerOf(req, 'idempotency-key') ?? null) : null;
    requests.push({ method, path, idempotencyKey: key, params: masked(params) });

    const pathFault = [...pathFaults.keys()].find((prefix) => path.startsWith(prefix));
    const fault = pathFault === undefined ? faults.shift() : pathFaults.get(pathFault)!.shift();
    if (pathFault !== undefined && pathFaults.get(pathFault)!.length === 0) pathFaults.delete(pathFault);
    if (fault?.kind === 'fail') {
      return send(res, fault.status, { error: { type: 'api_error', message: 'An unknown error occurred' } });
    }
    // Stripe answers a key it has seen with the first answer, without doing the work again.
    const fingerprint = parts
      ? multipartFingerprint(path, parts)
      : createHash('sha256').update(`${method} ${path} ${body}`).digest('hex');
    const earlier = key === null ? undefined : stored.get(key);
    let answer: { status: number; body: unknown; replayed: boolean };
    if (earlier !== undefined) {
      if (earlier.fingerprint !== fingerprint) {
        return send(res, 400, {
          error: {
            type: 'idempotency_error',
            message:
              'Keys for idempotent requests can only be used with the same parameters they were first used with.',
          },
        });
      }
      answer = { status: earlier.status, body: earlier.body, replayed: true };
    } else {
      const result = parts ? disputes.createFile(parts) : execute(method, path, params, key);
      answer = { ...result, replayed: false };
      // Requests refused before the work began (400 parameter errors) are not kept, as at Stripe.
      if (key !== null && result.status !== 400)
        stored.set(key, { fingerprint, status: result.status, body: result.body });
    }
    if (fault?.kind === 'hang') {
      hanging.add(res);
      return;
    }
    if (fault?.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    send(res, answer.status, answer.body, answer.replayed ? { 'idempotent-replayed': 'true' } : {});
  }

  function counted(kind: WorkKind, key: string | null): void {
    const name = `${kind}:${key ?? ''}`;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }

  function execute(
    method: string,
    path: string,
    params: Params,
    key: string | null,
  ): { status: number; body: unknown } {
    try {
      if (method === 'POST' && path === '/v1/payment_intents') {
        const created = api.createPaymentIntent(params);
        counted('confirmations', key);
        return created.status === 200 ? { status: 200, body: api.view(created.body, params) } : created;
      }
      const intentPath = /^\/v1\/payment_intents\/([\w]+)(?:\/(capture|cancel))?$/.exec(path);
      if (intentPath) {
        const [, id, action] = intentPath;
        if (method === 'GET' && action === undefined) return { status: 200, body: api.retrieve(id!, params) };
        if (method === 'POST' && action === 'capture') {
          const captured = api.capture(id!, params);
          counted('captures', key);
          return { status: 200, body: captured };
        }
        if (method === 'POST' && action === 'cancel') {
          const canceled = api.cancel(id!, params);
          counted('cancels', key);
          return { status: 200, body: canceled };
        }
      }
      if (method === 'POST' && path === '/v1/refunds') {
        const refund = api.createRefund(params);
        counted('refunds', key);
        return { status: 200, body: refund };
      }
      const disputed = method === 'POST' ? disputes.execute(path, params, key) : null;
      if (disputed) return disputed;
      const refundPath = /^\/v1\/refunds\/([\w]+)$/.exec(path);
      if (refundPath && method === 'GET') return { status: 200, body: api.retrieveRefund(refundPath[1]!) };
      return {
        status: 404,
        body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` } },
      };
    } catch (caught) {
      if (caught instanceof StripeRefusal) return { status: caught.status, body: { error: caught.error } };
      throw caught;
    }
  }

  function answerChallenge(res: ServerResponse, id: string, passed: boolean): void {
    const intent = api.intents.get(id);
    const returnUrl = intent?.next_action?.redirect_to_url?.return_url;
    if (intent === undefined || typeof returnUrl !== 'string') {
      res.writeHead(404).end('No 3-D Secure step is waiting for this PaymentIntent');
      return;
    }
    api.finishChallenge(id, passed);
    // Stripe sends the shopper back with the PaymentIntent's id and client secret in the query.
    const back = new URL(returnUrl);
    back.searchParams.set('payment_intent', id);
    back.searchParams.set('payment_intent_client_secret', intent.client_secret);
    back.searchParams.set('redirect_status', passed ? 'succeeded' : 'failed');
    res.writeHead(302, { location: back.toString() }).end();
  }

  return {
    url,
    secretKey,
    webhookSecret,
    get api() {
      return api;
    },
    requests,
    disputes,
    faultOn(pathPrefix, fault, times = 1) {
      const one: Fault = fault === 'fail' ? { kind: 'fail', status: 500 } : { kind: 'reset' };
      pathFaults.set(pathPrefix, Array<Fault>(times).fill(one));
    },
    count: (kind, key) => counts.get(`${kind}:${key}`) ?? 0,
    capturedCharges: () => [...api.charges.values()].filter((charge) => charge.captured).length,
    failNext(count, status = 500) {
      for (let index = 0; index < count; index += 1) faults.push({ kind: 'fail', status });
    },
    hangNext(count) {
      for (let index = 0; index < count; index += 1) faults.push({ kind: 'hang' });
    },
    resetNext(count) {
      for (let index = 0; index < count; index += 1) faults.push({ kind: 'reset' });
    },
    event(type, object, options = {}) {
      const rawBody = JSON.stringify({
        id: `evt_${randomBytes(12).toString('hex')}`,
        object: 'event',
        api_version: Stripe.API_VERSION,
        created: Math.floor(Date.now() / 1000),
        data: { object },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      });
      const header = Stripe.webhooks.generateTestHeaderString({
        payload: rawBody,
        secret: options.secret ?? webhookSecret,
        ...(options.timestampSeconds === undefined ? {} : { timestamp: options.timestampSeconds }),
      });
      // A tampered event: the body changed after it was signed.
      const sent = options.tamper ? rawBody.replace('"livemode":false', '"livemode":true') : rawBody;
      return { headers: { 'content-type': 'application/json', 'stripe-signature': header }, rawBody: sent };
    },
    async postEvent(target, event) {
      return fetch(target, { method: 'POST', headers: event.headers, body: event.rawBody });
    },
    async close() {
      for (const res of hanging) res.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function masked(params: Params): Params {
  const copy = structuredClone(params) as any;
  const card = copy.payment_method_data?.card;
  if (card && typeof card.number === 'string') card.number = `…${card.number.slice(-4)}`;
  return copy;
}
