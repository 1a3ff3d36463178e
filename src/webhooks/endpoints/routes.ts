import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { envelope, listOf, ok } from '../../http/envelope.js';
import { merchantOf, type App } from '../../http/server.js';
import {
  CreateWebhookEndpointBody,
  DeletedWebhookEndpoint,
  ListWebhookEndpointsQuery,
  RolledWebhookEndpointToken,
  RollTokenBody,
  UpdateWebhookEndpointBody,
  WebhookEndpoint,
  WebhookEndpointParams,
  WebhookEndpointToken,
  WebhookEndpointWithToken,
} from './schemas.js';
import type { WebhookEndpointService } from './service.js';

const tags = ['Webhook endpoints'];

/** An answer that carries a token must not be kept by a browser or a proxy. */
function noStore(reply: FastifyReply): void {
  reply.header('Cache-Control', 'no-store');
}

// docs/dashboard.md#roles: webhooks are for Owner, Administrator and Developer. The private API key
// is the merchant's server acting for them; a public key is refused before these handlers run.
export function webhookEndpointRoutes(webhookEndpoints: WebhookEndpointService) {
  return (app: App) => {
    app.post(
      '/webhook_endpoints/create',
      {
        schema: {
          tags,
          description:
            'Creates an endpoint. The answer carries its token, shown only here; later, use reveal_token. ' +
            'In production the url must resolve to public addresses.',
          body: CreateWebhookEndpointBody,
          response: { 200: envelope(WebhookEndpointWithToken) },
        },
      },
      async (request, reply) => {
        noStore(reply);
        return ok(await webhookEndpoints.create(merchantOf(request), request.body));
      },
    );
    app.get(
      '/webhook_endpoints/:id',
      { schema: { tags, params: WebhookEndpointParams, response: { 200: envelope(WebhookEndpoint) } } },
      async (request) => ok(await webhookEndpoints.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/webhook_endpoints',
      {
        schema: {
          tags,
          description:
            "The merchant's endpoints, newest first, including the built-in dynamic endpoint that signs " +
            "deliveries to payments' notifyUrl.",
          querystring: ListWebhookEndpointsQuery,
          response: { 200: listOf(WebhookEndpoint) },
        },
      },
      async (request) => ok(await webhookEndpoints.list(merchantOf(request), request.query)),
    );
    app.post(
      '/webhook_endpoints/:id/update',
      {
        schema: {
          tags,
          description:
            'Of the dynamic endpoint only description, legacyNotifications, signatureCase and status can change.',
          params: WebhookEndpointParams,
          body: UpdateWebhookEndpointBody,
          response: { 200: envelope(WebhookEndpoint) },
        },
      },
      async (request) => ok(await webhookEndpoints.update(merchantOf(request), request.params.id, request.body)),
    );
    app.delete(
      '/webhook_endpoints/:id',
      {
        schema: {
          tags,
          description: 'The dynamic endpoint cannot be deleted (invalid_state); disable it instead.',
          params: WebhookEndpointParams,
          response: { 200: envelope(DeletedWebhookEndpoint) },
        },
      },
      async (request) => ok(await webhookEndpoints.delete(merchantOf(request), request.params.id)),
    );
    // docs/api.md#operations: GET reads, so the reveal is a GET; POST is kept for clients that post it.
    for (const method of ['GET', 'POST'] as const) {
      app.route({
        method,
        url: '/webhook_endpoints/:id/reveal_token',
        config: { idempotent: false },
        schema: {
          tags,
          description:
            "Answers the endpoint's current token (docs/webhooks.md#endpoints-and-tokens). Every reveal is written to the audit log.",
          params: WebhookEndpointParams,
          response: { 200: envelope(WebhookEndpointToken) },
        },
        handler: async (request, reply) => {
          noStore(reply);
          return ok(
            await webhookEndpoints.revealToken(merchantOf(request), request.params.id, { traceId: request.id }),
          );
        },
      });
    }
    app.post(
      '/webhook_endpoints/:id/roll_token',
      {
        schema: {
          tags,
          description:
            'Replaces the token (docs/webhooks.md#endpoints-and-tokens): the old one stops signing at once, including retries of earlier ' +
            'deliveries; or, for a standard-format endpoint with expiresInSeconds (up to 24 h), after that grace ' +
            'period, both signing meanwhile (docs/webhooks.md). Written to the audit log.',
          params: WebhookEndpointParams,
          body: Type.Optional(RollTokenBody),
          response: { 200: envelope(RolledWebhookEndpointToken) },
        },
      },
      async (request, reply) => {
        noStore(reply);
        const actor = { traceId: request.id };
        return ok(await webhookEndpoints.rollToken(merchantOf(request), request.params.id, actor, request.body ?? {}));
      },
    );
  };
}
