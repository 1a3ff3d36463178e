import type { FastifyReply, FastifyRequest } from 'fastify';
import { markDatabaseUnavailable, unavailableRetryAfterSeconds } from '../http/error-responses.js';
import { statusOfThrown } from '../http/error-status.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { App } from '../http/server.js';
import { shopperLocale, type ShopperLocale } from '../shopper/locales.js';
import type { MessageKey } from '../shopper/messages.js';
import { checkoutPageHeaders, renderCheckoutMessage, renderCheckoutPage } from '../shopper/checkout-page.js';
import {
  checkoutPage,
  payOnCheckoutPage,
  returnFromChallenge,
  type HostedCheckoutDeps,
  type HostedCheckoutResult,
} from './hosted-payment.js';

/** The browser's languages; the session's `locale`, when set, comes first (docs/checkout.md#the-page). */
const acceptLanguage = (request: FastifyRequest) => request.headers['accept-language'];

function sendMessage(
  reply: FastifyReply,
  status: number,
  locale: ShopperLocale,
  title: MessageKey,
  text: MessageKey,
  values?: Record<string, string>,
) {
  const page = renderCheckoutMessage(locale, title, text, values);
  return reply.code(status).headers(checkoutPageHeaders(page, null)).send(page.text);
}

const notFound = (reply: FastifyReply, request: FastifyRequest) =>
  sendMessage(reply, 404, shopperLocale(null, acceptLanguage(request)), 'notFoundTitle', 'checkoutNotFound');

function answer(request: FastifyRequest, reply: FastifyReply, result: HostedCheckoutResult) {
  switch (result.kind) {
    case 'not_found':
      return notFound(reply, request);
    case 'page': {
      const { session, brand } = result.view;
      const locale = shopperLocale(session.details.locale, acceptLanguage(request));
      const page = renderCheckoutPage(locale, result.view, result.state);
      return reply
        .code(result.status)
        .headers(checkoutPageHeaders(page, brand, session.details.returnUrl))
        .send(page.text);
    }
    case 'redirect':
      return reply.code(303).header('cache-control', 'no-store').redirect(result.location, 303);
  }
}

/**
 * The hosted checkout page (docs/checkout.md), outside the key-authenticated API: the shopper's browser
 * holds no key, only the session's unguessable id in the address. Its card form is what a card
 * tester would post to, so each post takes a token from the client address's bucket (shared with
 * the public-key routes) and from the session's own (docs/checkout.md "Rate limits").
 */
export function hostedCheckoutRoutes(deps: HostedCheckoutDeps, limiter?: RateLimiter) {
  return (app: App) => {
    // Encapsulated, so that the form content type is accepted by these routes only.
    app.register(async (scope) => {
      scope.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: 8 * 1024 },
        (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
      );
      // A shopper's browser gets a page, never the API's JSON envelope; the log line carries no form field.
      scope.setErrorHandler((error: Error, request, reply) => {
        const locale = shopperLocale(null, acceptLanguage(request));
        if (statusOfThrown(error) < 500) return sendMessage(reply, 400, locale, 'badRequestTitle', 'badRequest');
        // A database outage is the database's state, not a bug: 503 and a retry, as the API answers.
        if (markDatabaseUnavailable(error, request, reply, 'hosted checkout page')) {
          return sendMessage(reply, 503, locale, 'unavailableTitle', 'unavailable');
        }
        request.log.error({ err: error }, 'hosted checkout page failed');
        return sendMessage(reply, 500, locale, 'errorTitle', 'errorText');
      });

      scope.get('/checkout/:id', { schema: { hide: true } }, async (request, reply) => {
        const view = await checkoutPage(deps, (request.params as { id: string }).id);
        if (!view) return notFound(reply, request);
        return answer(request, reply, { kind: 'page', status: 200, view });
      });

      scope.post('/checkout/:id/pay', { schema: { hide: true } }, async (request, reply) => {
        const id = (request.params as { id: string }).id;
        const decision = limiter
          ? await limiter.take([`address:${request.ip}`, `checkout:${id}`]).catch(() => 'unavailable' as const)
          : { allowed: true as const };
        // A limit that cannot be counted lets nothing through (docs/decisions/0011-shared-rate-limits.md).
        if (decision === 'unavailable') {
          reply.header('Retry-After', String(unavailableRetryAfterSeconds));
          return sendMessage(
            reply,
            503,
            shopperLocale(null, acceptLanguage(request)),
            'unavailableTitle',
            'unavailable',
          );
        }
        if (!decision.allowed) {
          reply.header('Retry-After', String(decision.retryAfterSeconds));
          const locale = shopperLocale(null, acceptLanguage(request));
          return sendMessage(reply, 429, locale, 'tooManyTitle', 'tooMany', {
            seconds: String(decision.retryAfterSeconds),
          });
        }
        const form = request.body;
        const fields = form && typeof form === 'object' ? (form as Record<string, unknown>) : {};
        return answer(request, reply, await payOnCheckoutPage(deps, id, fields));
      });

      scope.get('/checkout/:id/return', { schema: { hide: true } }, async (request, reply) =>
        answer(request, reply, await returnFromChallenge(deps, (request.params as { id: string }).id)),
      );

      // "Cancel" goes back to the shop's cancelUrl; the session stays open until it expires.
      scope.get('/checkout/:id/cancel', { schema: { hide: true } }, async (request, reply) => {
        const view = await checkoutPage(deps, (request.params as { id: string }).id);
        if (!view) return notFound(reply, request);
        const target = view.session.details.cancelUrl ?? `/checkout/${view.session.id}`;
        return reply.code(303).header('cache-control', 'no-store').redirect(target, 303);
      });
    });
  };
}
