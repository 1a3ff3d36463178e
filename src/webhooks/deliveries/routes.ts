import type { FastifyRequest } from 'fastify';
import { envelope, listOf, ok } from '../../http/envelope.js';
import { merchantOf, type App } from '../../http/server.js';
import {
  DeliveryParams,
  EventDeliveriesParams,
  ListDeliveriesQuery,
  ListEventDeliveriesQuery,
  ResendEventBody,
  WebhookAttempt,
  WebhookDelivery,
} from './schemas.js';
import type { WebhookDeliveryService } from './service.js';

const tags = ['Webhook deliveries'];

/** A resend's body is optional (docs/api.md#responses names `POST /events/{id}/resend` alone): no body is `{}`. */
async function emptyBodyIsEmptyObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}

// docs/dashboard.md#roles: like endpoints, deliveries are for Owner, Administrator and Developer;
// the private key acts for them and a public key is refused before these handlers run.
export function webhookDeliveryRoutes(deliveries: WebhookDeliveryService) {
  return (app: App) => {
    app.get(
      '/events/:id/deliveries',
      {
        schema: {
          tags,
          description:
            'The deliveries of an event, newest first: one per target and notification kind (docs/webhooks.md#what-is-sent), ' +
            'plus those made by resend; `status=failed` lists those given up.',
          params: EventDeliveriesParams,
          querystring: ListEventDeliveriesQuery,
          response: { 200: listOf(WebhookDelivery) },
        },
      },
      async (request) => ok(await deliveries.listForEvent(merchantOf(request), request.params.id, request.query)),
    );
    app.get(
      '/events/:id/attempts',
      {
        schema: {
          tags,
          description:
            'Every attempt of every delivery of the event, first first (at most 1000): time, duration, HTTP ' +
            'status, the first 1 KiB of the response and the error.',
          params: EventDeliveriesParams,
          response: { 200: listOf(WebhookAttempt) },
        },
      },
      async (request) => ok(await deliveries.listEventAttempts(merchantOf(request), request.params.id)),
    );
    app.post(
      '/events/:id/resend',
      {
        preValidation: emptyBodyIsEmptyObject,
        schema: {
          tags,
          description:
            'Sends the event again, with the same bodies, as new deliveries: to every current target of the ' +
            'event (subscribed enabled endpoints and the payment notifyUrl), or only to `endpointId`. ' +
            'Answers the new deliveries.',
          params: EventDeliveriesParams,
          body: ResendEventBody,
          response: { 200: listOf(WebhookDelivery) },
        },
      },
      async (request) => ok(await deliveries.resend(merchantOf(request), request.params.id, request.body)),
    );
    app.get(
      '/webhook_deliveries',
      {
        schema: {
          tags,
          description: 'Deliveries of every event, newest first; `status=failed` lists those given up.',
          querystring: ListDeliveriesQuery,
          response: { 200: listOf(WebhookDelivery) },
        },
      },
      async (request) => ok(await deliveries.list(merchantOf(request), request.query)),
    );
    app.get(
      '/webhook_deliveries/:id',
      { schema: { tags, params: DeliveryParams, response: { 200: envelope(WebhookDelivery) } } },
      async (request) => ok(await deliveries.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/webhook_deliveries/:id/attempts',
      {
        schema: {
          tags,
          description:
            'Every attempt of the delivery, first first: time, duration, HTTP status, the first 1 KiB of the ' +
            'response and the error.',
          params: DeliveryParams,
          response: { 200: listOf(WebhookAttempt) },
        },
      },
      async (request) => ok(await deliveries.listAttempts(merchantOf(request), request.params.id)),
    );
    app.post(
      '/webhook_deliveries/:id/resend',
      {
        schema: {
          tags,
          description:
            'Sends this delivery again by hand (e.g. one given up after the last retry): a new delivery of the ' +
            "same kind with the same body, signed with the endpoint's current token, to its current url. " +
            'Answers the new delivery.',
          params: DeliveryParams,
          response: { 200: envelope(WebhookDelivery) },
        },
      },
      async (request) => ok(await deliveries.resendDelivery(merchantOf(request), request.params.id)),
    );
  };
}
