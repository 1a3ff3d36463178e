import type { ApiRequestRecord } from '../core/api-request-record.js';
import type { App } from './app-types.js';

/**
 * Hands every finished merchant API request to the request log (issue 11). onResponse runs after
 * the answer is sent, so the request's own time does not include it; the route pattern is taken,
 * never the URL (a path or a query may carry a card number), and no body.
 */
export function logApiRequests(api: App, record: (entry: ApiRequestRecord) => void): void {
  api.addHook('onResponse', async (request, reply) => {
    // Without a valid key there is no merchant to show the request to.
    if (!request.merchant) return;
    record({
      merchant: request.merchant,
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      statusCode: reply.statusCode,
      latencyMs: Math.round(reply.elapsedTime),
      traceId: request.id,
    });
  });
}
