/**
 * CORS for the routes a public key may call (docs/api.md#base-url-and-authentication): a customer's browser or app calls them
 * from the merchant's page, whatever its origin. No cookie ever authenticates a call (the key and
 * the clientSecret are headers the page sets), so any origin may be allowed.
 */

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The public-key routes, by URL (as registered, with `:id`), and their methods. */
export type PublicRoutes = Map<string, Set<string>>;

/** What those calls send: the key, a JSON body, the payment's secret, and a retry key. */
export const allowedRequestHeaders = ['Authorization', 'Content-Type', 'clientSecret', 'Idempotency-Key'];

const preflightMaxAgeSeconds = 600;

/** Preflights are answered outside the key-authenticated scope: a browser sends them without the key. */
export function answerPreflights(app: FastifyInstance, routes: PublicRoutes): void {
  for (const [url, methods] of routes) {
    app.options(url, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .code(204)
        .header('Access-Control-Allow-Origin', '*')
        .header('Access-Control-Allow-Methods', [...methods].join(', '))
        .header('Access-Control-Allow-Headers', allowedRequestHeaders.join(', '))
        .header('Access-Control-Max-Age', String(preflightMaxAgeSeconds))
        .send(),
    );
  }
}

/** Answers of public-key routes, errors included, are readable by the page that called them. */
export function allowOrigin(request: FastifyRequest, reply: FastifyReply): void {
  if (!request.routeOptions.config.publicKeyAllowed) return;
  reply.header('Access-Control-Allow-Origin', '*');
  reply.header('Access-Control-Expose-Headers', 'X-TraceId');
}
