/**
 * What the HTTP modules share without importing the server (src/http/server.ts), so that no module
 * the server imports imports it back: the base paths and the Fastify instance type.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

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
