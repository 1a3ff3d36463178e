/**
 * What the HTTP modules share without importing the server (src/http/server.ts), so that no module
 * the server imports imports it back: the base paths, the Fastify instance type, and what our routes
 * add to Fastify's request and route config.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { MerchantContext } from '../core/merchant-context.js';

/** docs/api.md#base-url-and-authentication: the provider's base, so that its clients work by changing only the host. */
export const apiBasePath = '/api/services/v1';
export const adminBasePath = '/admin/v1';

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

declare module 'fastify' {
  interface FastifyRequest {
    merchant: MerchantContext | null;
  }
  interface FastifyContextConfig {
    /**
     * The route may be called with a public key (`test_pu_…`), from a customer's browser (docs/api.md#base-url-and-authentication):
     * it answers CORS preflights from any origin. A route may ask more of a public key (clientSecret).
     */
    publicKeyAllowed?: boolean;
    /**
     * Fields in which existing clients repeat the path parameter `param` (docs/api.md#compatibility-with-existing-clients): accepted when
     * equal (and then dropped), refused naming the field when different.
     */
    repeatedPathParam?: { param: string; body?: readonly string[]; query?: readonly string[] };
    /** Brings a body that existing clients send in another shape to the schema's shape (docs/api.md#compatibility-with-existing-clients). */
    reshapeBody?: (body: Record<string, unknown>) => Record<string, unknown>;
    /** False for a route whose every call must run (each token reveal is audit-logged): no replay. */
    idempotent?: boolean;
  }
}
