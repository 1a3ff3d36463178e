import { envelope, listOf, ok } from '../http/envelope.js';
import { merchantOf, type App } from '../http/server.js';
import {
  CheckoutSession,
  CheckoutSessionParams,
  CreateCheckoutSessionBody,
  ListCheckoutSessionsQuery,
} from './schemas.js';
import type { CheckoutService } from './service.js';

const tags = ['Checkout sessions'];

/** docs/api.md#operations, docs/checkout.md: the checkout session routes the provider's store plugins call. */
export function checkoutRoutes(sessions: CheckoutService) {
  return (app: App) => {
    app.post(
      '/checkout/session/create',
      {
        schema: {
          tags,
          description:
            "Opens a checkout session: send the shopper to `data.url`, the hosted payment page, which takes the card, runs 3-D Secure, creates the payment with the session's fields and returns the shopper to `returnUrl` with `payment_id` added. Open for 24 hours unless `expiresAt` says less.",
          body: CreateCheckoutSessionBody,
          response: { 200: envelope(CheckoutSession) },
        },
      },
      async (request) => ok(await sessions.create(merchantOf(request), request.body)),
    );
    app.get(
      '/checkout/session/:id',
      {
        schema: {
          tags,
          description: 'A checkout session: its status and, once complete, the `paymentId` that paid it.',
          params: CheckoutSessionParams,
          response: { 200: envelope(CheckoutSession) },
        },
      },
      async (request) => ok(await sessions.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/checkout/session',
      {
        schema: {
          tags,
          description: 'Checkout sessions, newest first. Filter: status.',
          querystring: ListCheckoutSessionsQuery,
          response: { 200: listOf(CheckoutSession) },
        },
      },
      async (request) => ok(await sessions.list(merchantOf(request), request.query)),
    );
    app.post(
      '/checkout/session/:id/expire',
      {
        schema: {
          tags,
          description:
            'Expires an open session at once: its page can no longer be paid. A complete or expired session answers `invalid_state`.',
          params: CheckoutSessionParams,
          response: { 200: envelope(CheckoutSession) },
        },
      },
      async (request) => ok(await sessions.expire(merchantOf(request), request.params.id)),
    );
  };
}
