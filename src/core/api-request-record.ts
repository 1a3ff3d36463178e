import type { MerchantContext } from './merchant-context.js';

/**
 * A finished merchant API request as the HTTP edge hands it to the request log (src/http/request-log.ts
 * makes it, src/request-logs/service.ts stores it): never its URL, query or body.
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
