import type { FastifyReply, FastifyRequest } from 'fastify';
import { envelope, listOf, ok } from '../http/envelope.js';
import { DomainError, invalidField } from '../core/errors.js';
import type { Idempotency } from '../http/idempotency.js';
import { randomHex } from '../ids.js';
import { withQueryParameters } from '../return-url.js';
import { merchantOf, type App } from '../http/server.js';
import { shopperLocale, type ShopperLocale } from '../shopper/locales.js';
import { CancelPaymentQuery, ListPaymentsQuery, PaymentParams } from './params-schemas.js';
import {
  CancelPaymentBody,
  CapturePaymentBody,
  ConfirmPaymentBody,
  CreatePaymentBody,
  UpdatePaymentBody,
  repeatedPaymentId,
} from './schemas.js';
import { Payment } from './payment-object.js';
import type { PaymentService } from './service.js';
import {
  challengePageHeaders,
  pageHeaders,
  processorRedirectHeaders,
  renderProcessorRedirectPage,
  renderBadRequestPage,
  renderChallengePage,
  renderNotFoundPage,
  renderResultPage,
} from '../shopper/three-d-secure-page.js';

const tags = ['Payments'];

/**
 * docs/api.md#base-url-and-authentication: a public key (a customer's browser or app) may confirm and read a payment only with
 * the payment's client secret in the `clientSecret` header. A private key needs none.
 */
function clientSecretForPublicKey(payments: PaymentService) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.merchant?.keyKind !== 'public') return;
    const given = request.headers.clientsecret;
    const { id } = request.params as { id: string };
    if (typeof given !== 'string' || !payments.clientSecretMatches(id, given)) {
      throw new DomainError(
        'permission_denied',
        "A public key needs the payment's client secret in the clientSecret header",
        { param: 'clientSecret' },
      );
    }
  };
}

/** docs/api.md#compatibility-with-existing-clients: the Java SDK filters by `customer`, docs/api.md#requests by `customerId`; both are taken. */
function customerFilter(query: ListPaymentsQuery): ListPaymentsQuery {
  const { customer, ...rest } = query;
  if (customer === undefined) return rest;
  if (rest.customerId !== undefined && rest.customerId !== customer) {
    throw invalidField('customer', 'customer and customerId name the same filter: send one, or both equal');
  }
  return { ...rest, customerId: customer };
}

/** docs/api.md#compatibility-with-existing-clients: the reason may come in the query string too; sent twice, it must agree. */
function cancellationOf(body: CancelPaymentBody, query: CancelPaymentQuery): CancelPaymentBody {
  const fromQuery = query.cancellationReason;
  if (fromQuery === undefined) return body;
  if (body.cancellationReason !== undefined && body.cancellationReason !== fromQuery) {
    throw invalidField(
      'cancellationReason',
      'cancellationReason is in both the body and the query string with different values',
    );
  }
  return { ...body, cancellationReason: fromQuery };
}

/** `ids` reserves a created payment's id with its Idempotency-Key claim (docs/decisions/0003). */
export function paymentRoutes(payments: PaymentService, ids: Pick<Idempotency, 'reserveObjectId'>) {
  return (app: App) => {
    app.post(
      '/payment/create',
      {
        schema: {
          tags,
          description:
            'Creates a payment; with `confirm` it is authorized at once. A decline is not an error: the payment is answered with status `failed`. `recurring: {initial: true}` starts a recurring series (a storing payment); `recurring: {initial: false, relationPaymentId}` is a merchant-initiated payment of the series on the customer and payment method of that earlier succeeded payment, which may then be omitted.',
          body: CreatePaymentBody,
          response: { 200: envelope(Payment) },
        },
      },
      async (request) =>
        ok(await payments.create(merchantOf(request), request.body, await ids.reserveObjectId(request, 'pt'))),
    );
    app.get(
      '/payment/:id',
      {
        config: { publicKeyAllowed: true },
        onRequest: clientSecretForPublicKey(payments),
        schema: {
          tags,
          description:
            "May be called with a public key (test_pu_…) and the payment's client secret in the `clientSecret` header.",
          params: PaymentParams,
          response: { 200: envelope(Payment) },
        },
      },
      async (request) => ok(await payments.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/payment',
      {
        schema: {
          tags,
          description:
            'Newest first. Filters: customerId (or customer), orderNo, created[gt|gte|lt|lte] (ISO 8601; created.gte is taken too).',
          querystring: ListPaymentsQuery,
          response: { 200: listOf(Payment) },
        },
      },
      async (request) => ok(await payments.list(merchantOf(request), customerFilter(request.query))),
    );
    // docs/api.md#compatibility-with-existing-clients: the Java SDK updates with POST /payment/{id}, an alias of /payment/{id}/update.
    for (const url of ['/payment/:id/update', '/payment/:id']) {
      app.post(
        url,
        {
          config: { repeatedPathParam: repeatedPaymentId },
          schema: {
            tags,
            description:
              (url === '/payment/:id' ? 'The same as POST /payment/{id}/update (as the Java SDK sends it). ' : '') +
              'Only while the payment is requires_payment_method or requires_confirmation. Every rule is checked again, those of a recurring series (`recurring`) included.',
            params: PaymentParams,
            body: UpdatePaymentBody,
            response: { 200: envelope(Payment) },
          },
        },
        async (request) => ok(await payments.update(merchantOf(request), request.params.id, request.body)),
      );
    }
    app.post(
      '/payment/:id/confirm',
      {
        config: { publicKeyAllowed: true, repeatedPathParam: repeatedPaymentId },
        onRequest: clientSecretForPublicKey(payments),
        schema: {
          tags,
          description:
            "May be called with a public key (test_pu_…) and the payment's client secret in the `clientSecret` header.",
          params: PaymentParams,
          body: ConfirmPaymentBody,
          response: { 200: envelope(Payment) },
        },
      },
      async (request) => ok(await payments.confirm(merchantOf(request), request.params.id, request.body)),
    );
    app.post(
      '/payment/:id/capture',
      {
        config: { repeatedPathParam: repeatedPaymentId },
        schema: {
          tags,
          description: 'Captures the full amount of a pre-authorization (status requires_capture).',
          params: PaymentParams,
          body: CapturePaymentBody,
          response: { 200: envelope(Payment) },
        },
      },
      async (request) => ok(await payments.capture(merchantOf(request), request.params.id)),
    );
    app.post(
      '/payment/:id/cancel',
      {
        config: { repeatedPathParam: repeatedPaymentId },
        schema: {
          tags,
          description:
            'Allowed while requires_payment_method, requires_confirmation, requires_action or requires_capture. The reason may be in the body or the query string.',
          params: PaymentParams,
          querystring: CancelPaymentQuery,
          body: CancelPaymentBody,
          response: { 200: envelope(Payment) },
        },
      },
      async (request) =>
        ok(await payments.cancel(merchantOf(request), request.params.id, cancellationOf(request.body, request.query))),
    );
  };
}

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(pageHeaders).send(html);
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * docs/api.md#states, docs/api.md#compatibility-with-existing-clients: the customer goes back to the merchant's returnUrl with `payment_id`,
 * `payment_client_secret` and `source_redirect_slug` (an opaque name of this redirect) added to
 * its query, after a `&` when it has one already; the rest of the URL is kept as the merchant wrote it.
 */
export function returnTarget(returnUrl: string, paymentId: string, clientSecret: string): string {
  return withQueryParameters(returnUrl, {
    payment_id: paymentId,
    payment_client_secret: clientSecret,
    source_redirect_slug: `src_${randomHex(12)}`,
  });
}

/**
 * The hosted 3-D Secure page (docs/api.md#states), outside the key-authenticated API: the customer's
 * browser holds no key, only the payment's client secret from nextAction.redirectToUrl.
 */
export function threeDSecureRoutes(payments: PaymentService) {
  return (app: App) => {
    // Encapsulated, so that the form content type is accepted by these two routes only.
    app.register(async (scope) => {
      scope.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: 8 * 1024 },
        (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
      );

      scope.get('/3ds/:paymentId', { schema: { hide: true } }, async (request, reply) => {
        const { paymentId } = request.params as { paymentId: string };
        // The hosted checkout hands on its session's locale; else the browser's language.
        const query = request.query as Record<string, unknown>;
        const locale = shopperLocale(text(query.locale), request.headers['accept-language']);
        const found = await payments.challengePage(paymentId, text(query.secret));
        if (!found) return sendPage(reply, 404, renderNotFoundPage(locale));
        if (found.status !== 'requires_action') {
          return sendPage(
            reply,
            200,
            renderResultPage({ paymentId, status: found.status, message: 'threeDsNotNeeded' }, locale),
          );
        }
        // A processor's own 3-D Secure step: the shopper is sent to it, and comes back to /return.
        const action = found.processorAction;
        if (action !== null && action.method === 'GET') {
          return reply.code(303).header('cache-control', 'no-store').redirect(action.url, 303);
        }
        if (action !== null) {
          return reply
            .code(200)
            .headers(processorRedirectHeaders(action))
            .send(renderProcessorRedirectPage(action, locale));
        }
        return reply
          .code(200)
          .headers(challengePageHeaders(found.view.returnUrl))
          .send(renderChallengePage(found.view, locale));
      });

      // The return from a processor's 3-D Secure page, by GET or by form post, with what the
      // processor gave the shopper to bring back (Adyen's redirectResult, say).
      const processorReturn = async (request: FastifyRequest, reply: FastifyReply) => {
        const { paymentId } = request.params as { paymentId: string };
        const query = request.query as Record<string, unknown>;
        const form = (request.body ?? {}) as Record<string, unknown>;
        const locale = shopperLocale(undefined, request.headers['accept-language']);
        const params: Record<string, string> = {};
        for (const [name, value] of Object.entries({ ...query, ...form })) {
          if (name !== 'secret' && typeof value === 'string') params[name] = value;
        }
        const completed = await payments.completeProcessorRedirect(paymentId, text(query.secret), params);
        if (!completed) return sendPage(reply, 404, renderNotFoundPage(locale));
        return answerCompleted(reply, completed, locale);
      };
      scope.get('/3ds/:paymentId/return', { schema: { hide: true } }, processorReturn);
      scope.post('/3ds/:paymentId/return', { schema: { hide: true } }, processorReturn);

      scope.post('/3ds/:paymentId', { schema: { hide: true } }, async (request, reply) => {
        const { paymentId } = request.params as { paymentId: string };
        const form = (request.body ?? {}) as Record<string, unknown>;
        const locale = shopperLocale(text(form.locale), request.headers['accept-language']);
        const outcome = text(form.outcome);
        if (outcome !== 'pass' && outcome !== 'fail') {
          return sendPage(reply, 400, renderBadRequestPage(locale));
        }
        const completed = await payments.completeChallenge(paymentId, text(form.secret), outcome);
        if (!completed) return sendPage(reply, 404, renderNotFoundPage(locale));
        return answerCompleted(reply, completed, locale);
      });
    });
  };
}

/** After 3-D Secure: back to the merchant's returnUrl (docs/api.md#states), or a page that says how it ended. */
function answerCompleted(
  reply: FastifyReply,
  { payment, returnUrl }: { payment: Payment; returnUrl: string | null },
  locale: ShopperLocale,
) {
  if (returnUrl !== null) {
    const target = returnTarget(returnUrl, payment.id, payment.clientSecret);
    return reply.code(303).header('cache-control', 'no-store').redirect(target, 303);
  }
  const message =
    payment.status === 'succeeded' || payment.status === 'requires_capture' || payment.status === 'processing'
      ? 'threeDsComplete'
      : payment.status === 'requires_confirmation'
        ? 'threeDsMerchantConfirms'
        : 'threeDsNotCompleted';
  return sendPage(reply, 200, renderResultPage({ paymentId: payment.id, status: payment.status, message }, locale));
}
