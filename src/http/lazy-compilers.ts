/**
 * Route schemas compiled on a route's first request rather than when the server starts. Fastify
 * compiles every route's validators (Ajv) and response serializers (fast-json-stringify) before
 * it listens: about 8 of the 11 CPU seconds a start took, for some 200 schemas of which a process
 * often uses a handful (a worker, a CLI command, a test file). Compiled once, then kept; the
 * compiled code is the same as at start. test/api-reference.test.ts and the route tests call every
 * route, so a schema that would not compile still fails a test, not a merchant's request.
 *
 * What is compiled is kept for the whole process, not only for the server that made it: a process
 * that builds several servers (the tests build one or more per file, several files per process)
 * compiles each schema once (docs/performance.md#test-suite-time); validation.ts does the same for validators.
 */
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/** `make` on the first call only; the function it made from then on. */
export function compiledOnFirstUse<A extends unknown[], R>(make: () => (...args: A) => R): (...args: A) => R {
  let compiled: ((...args: A) => R) | undefined;
  return (...args) => (compiled ??= make())(...args);
}

type Serializer = (data: unknown) => string;

/**
 * What this process has made for a schema, by everything the made function depends on, as JSON
 * (Fastify hands each server its own copy of a route's schema, so not by the object). Bounded,
 * although a process has a few hundred such schemas.
 */
export function madeOnce<T>(): (key: string, make: () => T) => T {
  const made = new Map<string, T>();
  return (key, make) => {
    let found = made.get(key);
    if (found === undefined) {
      found = make();
      if (made.size < 2_000) made.set(key, found);
    }
    return found;
  };
}

const serializers = madeOnce<Serializer>();

/**
 * Fastify's own serializer factory (fast-json-stringify), each route's serializer made on first use
 * and shared by every server of the process whose schema, shared schemas, serializer options and
 * status are the same.
 */
export const lazySerializerFactory: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  const context = JSON.stringify([externalSchemas, options]);
  return (route) =>
    serializers(`${route.httpStatus} ${JSON.stringify(route.schema)} ${context}`, () =>
      compiledOnFirstUse(() => compile(route) as Serializer),
    );
};
