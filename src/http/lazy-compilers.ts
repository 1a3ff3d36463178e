/**
 * Route schemas compiled on a route's first request rather than when the server starts. Fastify
 * compiles every route's validators (Ajv) and response serializers (fast-json-stringify) before
 * it listens: about 8 of the 11 CPU seconds a start took, for some 200 schemas of which a process
 * often uses a handful (a worker, a CLI command, a test file). Compiled once, then kept; the
 * compiled code is the same as at start. test/api-reference.test.ts and the route tests call every
 * route, so a schema that would not compile still fails a test, not a merchant's request.
 */
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/** `make` on the first call only; the function it made from then on. */
export function compiledOnFirstUse<A extends unknown[], R>(make: () => (...args: A) => R): (...args: A) => R {
  let compiled: ((...args: A) => R) | undefined;
  return (...args) => (compiled ??= make())(...args);
}

/** Fastify's own serializer factory (fast-json-stringify), each route's serializer made on first use. */
export const lazySerializerFactory: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => compiledOnFirstUse(() => compile(route));
};
