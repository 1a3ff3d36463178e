/**
 * A stand-in for Adyen's Checkout API v71, written for the tests (docs/processors-adyen.md, Testing):
 * it plays Adyen's outcomes by card number, remembers payments by pspReference, honours
 * Idempotency-Key as Adyen does, counts what it did per key, fails on demand, and sends signed
 * standard notifications. Its answers are held to Adyen's published description by the Prism proxy
 * in front of it (test/helpers/prism.ts).
 */

import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  notificationBody,
  postNotification,
  signedNotificationItem,
  type NotificationItemFields,
} from './adyen-signed-notifications.js';
import {
  createDisputeDesk,
  disputeOperationOf,
  disputeServicePrefix,
  type DisputeDesk,
  type DisputeOperation,
} from './adyen-stand-in-disputes.js';
import { adyenTestCards, networkReference, pspReference, refusals, serviceError } from './adyen-stand-in-cards.js';

export { adyenTestCards } from './adyen-stand-in-cards.js';
export type { NotificationItemFields } from './adyen-signed-notifications.js';

export type StandInOperation = 'authorise' | 'details' | 'capture' | 'cancel' | 'refund' | DisputeOperation;

export interface ReceivedRequest {
  operation: StandInOperation;
  path: string;
  idempotencyKey: string | null;
  body: Record<string, unknown>;
}

export interface CapturedCharge {
  paymentPspReference: string;
  amount: { value: number; currency: string };
  idempotencyKey: string | null;
}

export type Fault = 'fail' | 'hang' | 'reset';

interface StoredAnswer {
  bodyHash: string;
  status: number;
  answer: Record<string, unknown>;
}

export interface AdyenStandIn {
  /** `http://127.0.0.1:<port>`: Adyen's paths answer here with or without the `/v71` prefix. */
  url: string;
  port: number;
  apiKey: string;
  merchantAccount: string;
  hmacKey: string;
  /** Every request that reached the stand-in's logic (not those refused for a bad key), in order. */
  received: ReceivedRequest[];
  /** The body of the first request received with `idempotencyKey`; throws when there was none. */
  sent(idempotencyKey: string): Record<string, unknown>;
  /** How many times `operation` was really performed (not replayed) for `idempotencyKey`, or for any key. */
  count(operation: StandInOperation, idempotencyKey?: string): number;
  /** Money taken: one entry per auto-captured authorisation and per capture. */
  capturedCharges(): CapturedCharge[];
  /** Its Disputes API's root (give it as the account's disputesBaseUrl). */
  disputesUrl: string;
  /** What the Disputes API was sent, per disputePspReference. */
  disputeDesk: DisputeDesk;
  /** The next request of `operation` meets `fault` (before the queued faults of failNext and the like). */
  faultOn(operation: StandInOperation, fault: Fault): void;
  /** The next `calls` requests answer 500 without doing anything. */
  failNext(calls: number): void;
  /** The next `calls` requests are performed and recorded, then never answered. */
  hangNext(calls: number): void;
  /** The next `calls` requests are performed and recorded, then their connection is reset. */
  resetNext(calls: number): void;
  /** A NotificationRequestItem with its correct hmacSignature (or a wrong one). */
  notificationItem(fields: NotificationItemFields, options?: { badSignature?: boolean }): Record<string, unknown>;
  /** A standard notification body holding `items` (each from notificationItem). */
  notificationBody(items: Record<string, unknown>[]): string;
  /** POSTs a signed notification of one item to `url`, as Adyen does; answers the HTTP status and body. */
  notify(
    url: string,
    fields: NotificationItemFields,
    options?: { badSignature?: boolean },
  ): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

function attribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

export async function startAdyenStandIn({
  apiKey = 'AQE_test_api_key_for_the_stand_in',
  merchantAccount = 'TesseraTestMerchant',
  hmacKey = randomBytes(32).toString('hex').toUpperCase(),
}: { apiKey?: string; merchantAccount?: string; hmacKey?: string } = {}): Promise<AdyenStandIn> {
  const received: ReceivedRequest[] = [];
  const performed: { operation: StandInOperation; idempotencyKey: string | null }[] = [];
  const charges: CapturedCharge[] = [];
  const answersByKey = new Map<string, StoredAnswer>();
  const payments = new Map<string, { amount: { value: number; currency: string }; manualCapture: boolean }>();
  const redirects = new Map<
    string,
    { pspReference: string; fails: boolean; returnUrl: string; body: Record<string, unknown> }
  >();
  const faults: Fault[] = [];
  const operationFaults = new Map<StandInOperation, Fault>();
  const disputeDesk = createDisputeDesk(merchantAccount);
  const sockets = new Set<Socket>();
  let url = '';

  function authorise(body: Record<string, unknown>): { status: number; answer: Record<string, unknown> } {
    const method = body.paymentMethod as Record<string, string>;
    const amount = body.amount as { value: number; currency: string };
    const additionalData = (body.additionalData ?? {}) as Record<string, string>;
    const reference = pspReference();
    const common = { pspReference: reference, merchantReference: String(body.reference) };
    const refusal = refusals.get(method.number ?? '');
    if (refusal) {
      return {
        status: 200,
        answer: {
          ...common,
          resultCode: refusal.resultCode,
          refusalReason: refusal.reason,
          refusalReasonCode: refusal.code,
          fraudResult: { accountScore: refusal.score ?? 10 },
        },
      };
    }
    const threeDSecureCards: string[] = [
      adyenTestCards.threeDSecure,
      adyenTestCards.threeDSecureFails,
      adyenTestCards.threeDSecureFormPost,
    ];
    if (threeDSecureCards.includes(method.number ?? '')) {
      const token = randomBytes(18).toString('base64url');
      const returnUrl = String(body.returnUrl);
      redirects.set(token, {
        pspReference: reference,
        fails: method.number === adyenTestCards.threeDSecureFails,
        returnUrl,
        body,
      });
      // An older issuer page is reached by a form post and posts MD and PaRes back to TermUrl.
      const action =
        method.number === adyenTestCards.threeDSecureFormPost
          ? {
              type: 'redirect',
              method: 'POST',
              url: `${url}/3ds-form`,
              data: { MD: token, PaReq: 'stand-in-pareq', TermUrl: returnUrl },
            }
          : { type: 'redirect', method: 'GET', url: `${url}/3ds/${token}`, paymentMethodType: 'scheme' };
      return { status: 200, answer: { resultCode: 'RedirectShopper', action } };
    }
    if (method.number === adyenTestCards.nativeThreeDSecure) {
      const action = { type: 'threeDS2', subtype: 'fingerprint', token: 'stand-in-token', paymentMethodType: 'scheme' };
      return { status: 200, answer: { resultCode: 'IdentifyShopper', action } };
    }
    if (method.number === adyenTestCards.received)
      return { status: 200, answer: { ...common, resultCode: 'Received' } };
    return { status: 200, answer: authorised(reference, body, amount, additionalData.manualCapture === 'true') };
  }

  function authorised(
    reference: string,
    body: Record<string, unknown>,
    amount: { value: number; currency: string },
    manualCapture: boolean,
  ): Record<string, unknown> {
    const method = body.paymentMethod as Record<string, string>;
    payments.set(reference, { amount, manualCapture });
    if (!manualCapture) charges.push({ paymentPspReference: reference, amount, idempotencyKey: null });
    return {
      pspReference: reference,
      merchantReference: String(body.reference),
      resultCode: 'Authorised',
      amount,
      additionalData: { networkTxReference: method.networkPaymentReference ?? networkReference() },
      fraudResult: { accountScore: 12 },
    };
  }

  function details(body: Record<string, unknown>): { status: number; answer: Record<string, unknown> } {
    const given = (body.details ?? {}) as Record<string, string>;
    const token = given.redirectResult ?? (given.PaRes === `pares-${given.MD}` ? given.MD : undefined) ?? '';
    const redirect = redirects.get(token);
    if (!redirect) return { status: 422, answer: serviceError(422, '14_018', 'Invalid redirectResult') };
    redirects.delete(token);
    if (redirect.fails) {
      return {
        status: 200,
        answer: {
          pspReference: redirect.pspReference,
          merchantReference: String(redirect.body.reference),
          resultCode: 'Refused',
          refusalReason: '3D Not Authenticated',
          refusalReasonCode: '11',
        },
      };
    }
    const amount = redirect.body.amount as { value: number; currency: string };
    const manual = (redirect.body.additionalData as Record<string, string> | undefined)?.manualCapture === 'true';
    return { status: 200, answer: authorised(redirect.pspReference, redirect.body, amount, manual) };
  }

  function modification(
    operation: 'capture' | 'cancel' | 'refund',
    paymentReference: string,
    body: Record<string, unknown>,
    idempotencyKey: string | null,
  ): { status: number; answer: Record<string, unknown> } {
    const payment = payments.get(paymentReference);
    if (!payment)
      return { status: 422, answer: serviceError(422, '167', 'Original pspReference required for this operation') };
    if (operation === 'capture') {
      charges.push({
        paymentPspReference: paymentReference,
        amount: body.amount as CapturedCharge['amount'],
        idempotencyKey,
      });
    }
    return {
      status: 201,
      answer: {
        ...body,
        paymentPspReference: paymentReference,
        pspReference: pspReference(),
        status: 'received',
      },
    };
  }

  function route(path: string): { operation: StandInOperation; paymentReference: string | null } | null {
    if (path === '/payments') return { operation: 'authorise', paymentReference: null };
    if (path === '/payments/details') return { operation: 'details', paymentReference: null };
    const dispute = disputeOperationOf(path);
    if (dispute) return { operation: dispute, paymentReference: null };
    const match = /^\/payments\/([^/]+)\/(captures|cancels|refunds)$/.exec(path);
    if (!match) return null;
    const operation = ({ captures: 'capture', cancels: 'cancel', refunds: 'refund' } as const)[
      match[2] as 'captures' | 'cancels' | 'refunds'
    ];
    return { operation, paymentReference: decodeURIComponent(match[1]!) };
  }

  function perform(
    found: { operation: StandInOperation; paymentReference: string | null },
    body: Record<string, unknown>,
    idempotencyKey: string | null,
  ): { status: number; answer: Record<string, unknown> } {
    if (found.operation === 'authorise') return authorise(body);
    if (found.operation === 'details') return details(body);
    if (disputeOperationOf(`${disputeServicePrefix}/${found.operation}`)) {
      return disputeDesk.perform(found.operation as DisputeOperation, body);
    }
    return modification(
      found.operation as 'capture' | 'cancel' | 'refund',
      found.paymentReference!,
      body,
      idempotencyKey,
    );
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = (request.url ?? '/').split('?')[0]!.replace(/^\/v71(?=\/)/, '');
    const send = (status: number, answer: Record<string, unknown>) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    };

    const threeDSecure = /^\/3ds\/([A-Za-z0-9_-]+)$/.exec(path);
    if (request.method === 'GET' && threeDSecure) {
      // The issuer's page: it passes (or fails) at once and sends the shopper back with redirectResult.
      const redirect = redirects.get(threeDSecure[1]!);
      if (!redirect) return void send(404, serviceError(404, '000', 'Unknown 3-D Secure session'));
      const back = new URL(redirect.returnUrl);
      back.searchParams.set('redirectResult', threeDSecure[1]!);
      response.writeHead(302, { location: back.href });
      return void response.end();
    }

    if (request.method === 'POST' && path === '/3ds-form') {
      // The form-post issuer page: it passes at once and posts MD and PaRes back to TermUrl.
      const form = new URLSearchParams(raw);
      const redirect = redirects.get(form.get('MD') ?? '');
      if (!redirect || form.get('TermUrl') !== redirect.returnUrl) {
        return void send(404, serviceError(404, '000', 'Unknown 3-D Secure session'));
      }
      const fields = { MD: form.get('MD')!, PaRes: `pares-${form.get('MD')!}` };
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return void response.end(
        `<form method="post" action="${attribute(redirect.returnUrl)}">` +
          Object.entries(fields)
            .map(([name, value]) => `<input type="hidden" name="${name}" value="${attribute(value)}">`)
            .join('') +
          '</form>',
      );
    }

    const found = request.method === 'POST' ? route(path) : null;
    if (!found) return void send(404, serviceError(404, '000', 'Not found'));
    if (request.headers['x-api-key'] !== apiKey)
      return void send(401, serviceError(401, '000', 'HTTP Status Response - Unauthorized'));
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return void send(400, serviceError(400, '702', 'Structure of the request is invalid'));
    }
    const header = request.headers['idempotency-key'];
    const idempotencyKey = typeof header === 'string' ? header : null;
    received.push({ operation: found.operation, path, idempotencyKey, body });

    const fault = operationFaults.get(found.operation) ?? faults.shift();
    operationFaults.delete(found.operation);
    if (fault === 'fail') return void send(500, serviceError(500, '905', 'Payment details are not supported'));

    const storeKey = idempotencyKey === null ? null : `${found.operation}:${path}:${idempotencyKey}`;
    const bodyHash = createHash('sha256').update(raw).digest('hex');
    const stored = storeKey === null ? undefined : answersByKey.get(storeKey);
    let outcome: { status: number; answer: Record<string, unknown> };
    if (stored) {
      // Adyen: the same key with another body is refused; with the same body, the first answer again.
      if (stored.bodyHash !== bodyHash) {
        return void send(
          422,
          serviceError(422, '704', 'Request already processed or in progress with a different body'),
        );
      }
      outcome = { status: stored.status, answer: stored.answer };
    } else {
      outcome = perform(found, body, idempotencyKey);
      performed.push({ operation: found.operation, idempotencyKey });
      if (storeKey !== null && outcome.status < 500) answersByKey.set(storeKey, { bodyHash, ...outcome });
    }
    if (fault === 'hang') return;
    if (fault === 'reset') return void request.socket.destroy();
    send(outcome.status, outcome.answer);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((err: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify(serviceError(500, '000', String(err))));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}`;

  return {
    url,
    port,
    apiKey,
    merchantAccount,
    hmacKey,
    received,
    disputesUrl: `${url}${disputeServicePrefix}`,
    disputeDesk,
    faultOn: (operation, fault) => void operationFaults.set(operation, fault),
    sent(idempotencyKey) {
      const request = received.find((entry) => entry.idempotencyKey === idempotencyKey);
      if (!request) throw new Error(`The stand-in received nothing with Idempotency-Key ${idempotencyKey}`);
      return request.body;
    },
    count: (operation, idempotencyKey) =>
      performed.filter(
        (entry) =>
          entry.operation === operation && (idempotencyKey === undefined || entry.idempotencyKey === idempotencyKey),
      ).length,
    capturedCharges: () => [...charges],
    failNext: (calls) => faults.push(...Array<Fault>(calls).fill('fail')),
    hangNext: (calls) => faults.push(...Array<Fault>(calls).fill('hang')),
    resetNext: (calls) => faults.push(...Array<Fault>(calls).fill('reset')),
    notificationItem: (fields, options) => signedNotificationItem(fields, { merchantAccount, hmacKey, ...options }),
    notificationBody,
    notify: (target, fields, options) =>
      postNotification(
        target,
        notificationBody([signedNotificationItem(fields, { merchantAccount, hmacKey, ...options })]),
      ),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
