import type { MerchantContext } from '../core/merchant-context.js';
import type { App } from './app-types.js';

/**
 * What the HTTP layer knows of a finished merchant API request (never its URL, query or body): what
 * it hands to the request log (src/request-logs/service.ts, which the composition root passes in).
 */
export interface ApiRequestRecord {
  merchant: MerchantContext;
  method: string;
  /** The route pattern, e.g. /api/services/v1/payments/:id: a card number typed into a path is not in it. */
  route: string;
  statusCode: number;
  latencyMs: number;
  traceId: string;
}

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
