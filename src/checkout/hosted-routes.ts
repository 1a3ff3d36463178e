import type { FastifyReply } from 'fastify';
import type { RateLimiter } from '../http/rate-limit.js';
import type { App } from '../http/server.js';
import { checkoutPageHeaders, renderCheckoutMessage, renderCheckoutPage } from './hosted-page.js';
import {
  checkoutPage,
  payOnCheckoutPage,
  returnFromChallenge,
  type HostedCheckoutDeps,
  type HostedCheckoutResult,
} from './hosted-payment.js';

function sendPage(reply: FastifyReply, status: number, html: string, returnUrl?: string) {
  return reply.code(status).headers(checkoutPageHeaders(returnUrl)).send(html);
}

const notFoundPage = () => renderCheckoutMessage('Not found', 'This checkout page does not exist.');

function answer(reply: FastifyReply, result: HostedCheckoutResult) {
  switch (result.kind) {
    case 'not_found':
      return sendPage(reply, 404, notFoundPage());
    case 'page':
      return sendPage(
        reply,
        result.status,
        renderCheckoutPage(result.view, result.state),
        result.view.session.details.returnUrl,
      );
    case 'redirect':
      return reply.code(303).header('cache-control', 'no-store').redirect(result.location, 303);
  }
}

/**
 * The hosted checkout page (DESIGN §9), outside the key-authenticated API: the shopper's browser
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
      scope.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
        if ((error.statusCode ?? 500) < 500) {
          return sendPage(reply, 400, renderCheckoutMessage('Bad request', 'The form could not be read.'));
        }
        request.log.error({ err: error }, 'hosted checkout page failed');
        return sendPage(
          reply,
          500,
          renderCheckoutMessage('Something went wrong', 'Nothing was charged twice. Reload the checkout page.'),
        );
      });

      scope.get('/checkout/:id', { schema: { hide: true } }, async (request, reply) => {
        const view = await checkoutPage(deps, (request.params as { id: string }).id);
        if (!view) return sendPage(reply, 404, notFoundPage());
        return sendPage(reply, 200, renderCheckoutPage(view), view.session.details.returnUrl);
      });

      scope.post('/checkout/:id/pay', { schema: { hide: true } }, async (request, reply) => {
        const id = (request.params as { id: string }).id;
        const decision = limiter
          ? await limiter.take([`address:${request.ip}`, `checkout:${id}`]).catch(() => 'unavailable' as const)
          : { allowed: true as const };
        // A limit that cannot be counted lets nothing through (DESIGN §11).
        if (decision === 'unavailable') {
          return sendPage(
            reply,
            503,
            renderCheckoutMessage('Please try again', 'The payment page is briefly unavailable. Nothing was charged.'),
          );
        }
        if (!decision.allowed) {
          reply.header('Retry-After', String(decision.retryAfterSeconds));
          return sendPage(
            reply,
            429,
            renderCheckoutMessage(
              'Too many attempts',
              `Too many card attempts on this checkout page; go back and try again in ${decision.retryAfterSeconds} seconds.`,
            ),
          );
        }
        const form = request.body;
        const fields = form && typeof form === 'object' ? (form as Record<string, unknown>) : {};
        return answer(reply, await payOnCheckoutPage(deps, id, fields));
      });

      scope.get('/checkout/:id/return', { schema: { hide: true } }, async (request, reply) =>
        answer(reply, await returnFromChallenge(deps, (request.params as { id: string }).id)),
      );

      // "Cancel" goes back to the shop's cancelUrl; the session stays open until it expires.
      scope.get('/checkout/:id/cancel', { schema: { hide: true } }, async (request, reply) => {
        const view = await checkoutPage(deps, (request.params as { id: string }).id);
        if (!view) return sendPage(reply, 404, notFoundPage());
        const target = view.session.details.cancelUrl ?? `/checkout/${view.session.id}`;
        return reply.code(303).header('cache-control', 'no-store').redirect(target, 303);
      });
    });
  };
}
