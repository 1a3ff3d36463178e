import type { FastifyReply, FastifyRequest } from 'fastify';
import { envelope, listOf, ok } from '../http/envelope.js';
import { merchantOf, type App } from '../http/server.js';
import {
  CancelPaymentBody,
  CapturePaymentBody,
  ConfirmPaymentBody,
  CreatePaymentBody,
  ListPaymentsQuery,
  Payment,
  PaymentParams,
  UpdatePaymentBody,
} from './schemas.js';
import type { PaymentService } from './service.js';
import {
  pageHeaders,
  renderBadRequestPage,
  renderChallengePage,
  renderNotFoundPage,
  renderResultPage,
} from './three-d-secure-page.js';

const tags = ['Payments'];

/** Actions whose every field is optional may be posted without any body, like an empty JSON object. */
async function emptyBodyIsEmptyObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}

export function paymentRoutes(payments: PaymentService) {
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
      async (request) => ok(await payments.create(merchantOf(request), request.body)),
    );
    app.get(
      '/payment/:id',
      { schema: { tags, params: PaymentParams, response: { 200: envelope(Payment) } } },
      async (request) => ok(await payments.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/payment',
      {
        schema: {
          tags,
          description: 'Newest first. Filters: customerId, orderNo, created[gt|gte|lt|lte] (ISO 8601).',
          querystring: ListPaymentsQuery,
          response: { 200: listOf(Payment) },
        },
      },
      async (request) => ok(await payments.list(merchantOf(request), request.query)),
    );
    app.post(
      '/payment/:id/update',
      {
        preValidation: emptyBodyIsEmptyObject,
        schema: {
          tags,
          description:
            'Only while the payment is requires_payment_method or requires_confirmation. Every rule is checked again, those of a recurring series (`recurring`) included.',
          params: PaymentParams,
          body: UpdatePaymentBody,
          response: { 200: envelope(Payment) },
        },
      },
      async (request) => ok(await payments.update(merchantOf(request), request.params.id, request.body)),
    );
    app.post(
      '/payment/:id/confirm',
      {
        preValidation: emptyBodyIsEmptyObject,
        schema: {
          tags,
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
        preValidation: emptyBodyIsEmptyObject,
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
        preValidation: emptyBodyIsEmptyObject,
        schema: {
          tags,
          description:
            'Allowed while requires_payment_method, requires_confirmation, requires_action or requires_capture.',
          params: PaymentParams,
          body: CancelPaymentBody,
          response: { 200: envelope(Payment) },
        },
      },
      async (request) => ok(await payments.cancel(merchantOf(request), request.params.id, request.body)),
    );
  };
}

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(pageHeaders).send(html);
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * The hosted 3-D Secure page (DESIGN §4), outside the key-authenticated API: the customer's
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
        const secret = text((request.query as Record<string, unknown>).secret);
        const found = await payments.challengePage(paymentId, secret);
        if (!found) return sendPage(reply, 404, renderNotFoundPage());
        if (found.status !== 'requires_action') {
          return sendPage(
            reply,
            200,
            renderResultPage({
              paymentId,
              status: found.status,
              message: 'This payment does not need authentication any more',
            }),
          );
        }
        return sendPage(reply, 200, renderChallengePage(found.view));
      });

      scope.post('/3ds/:paymentId', { schema: { hide: true } }, async (request, reply) => {
        const { paymentId } = request.params as { paymentId: string };
        const form = (request.body ?? {}) as Record<string, unknown>;
        const outcome = text(form.outcome);
        if (outcome !== 'pass' && outcome !== 'fail') {
          return sendPage(reply, 400, renderBadRequestPage('Choose Pass or Fail.'));
        }
        const completed = await payments.completeChallenge(paymentId, text(form.secret), outcome);
        if (!completed) return sendPage(reply, 404, renderNotFoundPage());
        const { payment, returnUrl } = completed;
        if (returnUrl !== null) {
          // DESIGN §4: back to the merchant with payment_id added to the return address's query.
          const target = new URL(returnUrl);
          target.searchParams.set('payment_id', payment.id);
          return reply.code(303).header('cache-control', 'no-store').redirect(target.toString(), 303);
        }
        const message =
          payment.status === 'succeeded' || payment.status === 'requires_capture' || payment.status === 'processing'
            ? 'Authentication complete'
            : payment.status === 'requires_confirmation'
              ? 'Authentication complete; the merchant will confirm the payment'
              : 'The payment was not completed';
        return sendPage(reply, 200, renderResultPage({ paymentId: payment.id, status: payment.status, message }));
      });
    });
  };
}
