import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { bearerToken } from '../http/auth.js';
import type { Health, HealthReport } from './health.js';
import type { Metrics } from './metrics.js';
import { hashKey } from '../core/merchant-context.js';

export interface OpsRouteOptions {
  health: Health;
  metrics: Metrics;
  /** Hash of the operator key (hashKey): its Bearer may read /metrics. */
  operatorKeyHash: string;
  /** TESSERA_METRICS_TOKEN: a Bearer that may read /metrics and nothing else; unset, none. */
  metricsToken: string | undefined;
}

/**
 * What operators and their tools watch (docs/operations.md#metrics): liveness, readiness (`/health` is readiness,
 * as it always was) and the Prometheus metrics. Served by the API server and by `tessera worker`'s
 * health port. Not part of the merchant API, so not in its OpenAPI document (docs/operations.md).
 */
export function opsRoutes(options: OpsRouteOptions) {
  const { health, metrics } = options;
  const allowedHashes = [options.operatorKeyHash, ...(options.metricsToken ? [hashKey(options.metricsToken)] : [])].map(
    (hash) => Buffer.from(hash, 'hex'),
  );
  const send = (reply: FastifyReply, report: HealthReport) =>
    reply
      .code(report.status === 'ok' ? 200 : 503)
      .header('Cache-Control', 'no-store')
      .send(report);

  return (app: FastifyInstance) => {
    app.get('/health/live', { schema: { hide: true } }, async (_request, reply) => send(reply, health.live()));
    app.get('/health/ready', { schema: { hide: true } }, async (_request, reply) => send(reply, await health.ready()));
    app.get('/health', { schema: { hide: true } }, async (_request, reply) => send(reply, await health.ready()));
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      let given: Buffer | undefined;
      try {
        given = Buffer.from(hashKey(bearerToken(request)), 'hex');
      } catch {
        given = undefined;
      }
      if (!given || !allowedHashes.some((hash) => timingSafeEqual(given, hash))) {
        return reply.code(401).header('WWW-Authenticate', 'Bearer realm="metrics"').send({
          code: 'authentication_error',
          msg: 'GET /metrics needs the operator key or TESSERA_METRICS_TOKEN as a Bearer token',
          data: null,
        });
      }
      const { contentType, body } = await metrics.render();
      return reply.header('Content-Type', contentType).header('Cache-Control', 'no-store').send(body);
    });
  };
}
