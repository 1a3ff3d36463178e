import { randomHex } from '../ids.js';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import { DomainError } from '../core/errors.js';
import { statusOfCode } from './error-status.js';
import type { KeyLookup, MerchantContext } from '../core/merchant-context.js';
import {
  errorResponses,
  rateLimitedResponse,
  unavailableRetryAfterSeconds,
  toErrorResponse,
  withoutCardNumbers,
  type ErrorBody,
} from './error-responses.js';
import { authenticateMerchant, authenticateOperator } from './auth.js';
import type { Idempotency } from './idempotency.js';
import { dropNulls, findUnacceptableValue, validatorCompiler } from './validation.js';
import { lazySerializerFactory } from './lazy-compilers.js';
import { ErrorEnvelope } from './envelope.js';
import { parseFormBody } from './form-body.js';
import { isEmptyBody, shapeRequest } from './request-shapes.js';
import { answerPreflights, allowOrigin, type PublicRoutes } from './cors.js';
import { limitPublicKeyRequest, type RateLimiter } from './rate-limit.js';
import { Type } from 'typebox';
import { logApiRequests } from './request-log.js';
import type { ApiRequestRecord } from '../core/api-request-record.js';
import { maskCardNumbers } from '../redact.js';
import { answerClientError } from './client-errors.js';
import { bodyText } from './body-text.js';
import { apiIntro } from './openapi-intro.js';
import { documentOperations, splitDocument, type OpenApiDocument } from './openapi-docs.js';
import { referencePath, registerApiReference } from './api-reference.js';

import { adminBasePath, apiBasePath, type App } from './app-types.js';

export { adminBasePath, apiBasePath, type App };

export interface ServerOptions {
  logger: FastifyBaseLogger;
  keys: KeyLookup;
  operatorKeyHash: string;
  idempotency: Idempotency;
  /** Routes of the merchant API, registered under /api/services/v1 behind key authentication. */
  merchantRoutes: Array<(app: App) => void>;
  /** Routes of the operator API, registered under /admin/v1 behind the operator key. */
  operatorRoutes: Array<(app: App) => void>;
  /** Pages and endpoints without key authentication (health, hosted 3-D Secure page). */
  publicRoutes: Array<(app: App) => void>;
  /**
   * True once the process stops (SIGTERM): a request that arrives then is answered 503
   * `service_unavailable` with `Connection: close` (the balancer sends it elsewhere); the health
   * routes still answer, saying so. Requests already under way finish.
   */
  isStopping: () => boolean;
  /**
   * True from SIGTERM on, through the delay before `isStopping`: every answer then carries
   * `Connection: close`, so that no client sends its next request on a connection the process is
   * about to close (http/connections.ts).
   */
  isDraining: () => boolean;
  /** Receives every answered request with its route pattern (metrics); must not throw. */
  observeRequest?: (method: string, route: string, status: number, seconds: number) => void;
  /** docs/api.md#base-url-and-authentication: the per-key and per-address limit of public-key requests; unset, none. */
  publicKeyLimiter?: RateLimiter;
  /** Proxies whose X-Forwarded-For names the client (config trustProxy); unset, none. */
  trustProxy?: string;
  /**
   * The public URL is https: every answer carries Strict-Transport-Security, so that a browser
   * that once reached the service never again asks for it over plain http (docs/security.md).
   */
  strictTransportSecurity?: boolean;
  /** Receives each finished merchant API request (the request log); must not block or throw. */
  recordApiRequest?: (entry: ApiRequestRecord) => void;
}

/** The `request.merchant` of a route behind merchant authentication. */
export function merchantOf(request: FastifyRequest): MerchantContext {
  if (!request.merchant) throw new DomainError('authentication_error', 'Missing API key');
  return request.merchant;
}

export async function buildServer(options: ServerOptions): Promise<App> {
  const app = Fastify({
    loggerInstance: options.logger,
    genReqId: () => randomHex(12),
    // Each request's log lines carry its X-TraceId under that name.
    logController: new LogController({ requestIdLogLabel: 'traceId' }),
    bodyLimit: 1024 * 1024,
    // While stopping, the onRequest hook answers with the docs/api.md#responses envelope instead of Fastify's own 503.
    return503OnClosing: false,
    // request.ip is the connection's address unless it is a proxy named here (rate limits use it).
    trustProxy: options.trustProxy ?? false,
    clientErrorHandler: answerClientError(options.logger),
    // Query strings like created[gte]=… stay flat keys; the list routes read them as such.
    routerOptions: { ignoreTrailingSlash: true },
    // Response serializers made on a route's first answer, not at start (lazy-compilers.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } },
    // Refusals made before routing (a malformed percent-escape, an over-long path segment) get the
    // same envelope and X-TraceId as every other answer, not Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const body: ErrorBody = tooLong
        ? { code: 'resource_missing', msg: 'No such object: the id in the path is too long', data: { param: 'id' } }
        : { code: 'invalid_request', msg: 'The request path is not a valid URL', data: { param: 'path' } };
      request.log.info({ code: body.code, reason: error.code }, 'request refused');
      void (reply as FastifyReply)
        .code(statusOfCode(body.code))
        .header('X-TraceId', request.id)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(body));
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  app.setValidatorCompiler(validatorCompiler);
  app.decorateRequest('merchant', null);

  // Liberal in what we accept: an empty body is an empty object, and null means "not given".
  const defaultJsonParser = app.getDefaultJsonParser('error', 'ignore');
  // Only JSON is taken (docs/api.md#requests): without this, a text/plain body would reach validation as a string.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = bodyText(request, body as Buffer);
    } catch (err) {
      return done(err as Error, undefined);
    }
    if (text.trim() === '') return done(null, {});
    defaultJsonParser(request, text, done);
  });

  const strictTransportSecurity = options.strictTransportSecurity === true;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-TraceId', request.id);
    // docs/security.md, "Headers": on every answer, before any route sets its own. An API answer
    // may carry a key, token or client secret, so none is kept by a cache unless its route says
    // otherwise (the event stream's no-cache, say).
    reply.header('X-Content-Type-Options', 'nosniff');
    if (strictTransportSecurity) reply.header('Strict-Transport-Security', 'max-age=31536000');
    if (request.url.startsWith('/api/') || request.url.startsWith('/admin/')) reply.header('Cache-Control', 'no-store');
    if (options.isStopping() && !request.url.startsWith('/health')) {
      void reply.header('Connection', 'close');
      throw new DomainError('service_unavailable', 'The service is stopping; retry, another process will answer');
    }
  });
  // A connection kept alive would hold the stopping server open: each answer given from SIGTERM on
  // closes its connection, so the client's next request opens one, to another process once this
  // one stops accepting, and none is sent on a connection being closed (http/connections.ts).
  app.addHook('onSend', async (_request, reply, payload) => {
    if (options.isDraining()) void reply.header('Connection', 'close');
    return payload;
  });
  const observeRequest = options.observeRequest;
  if (observeRequest) {
    app.addHook('onResponse', async (request, reply) => {
      // The pattern, never the URL: ids in paths would make a series per object.
      observeRequest(
        request.method,
        request.routeOptions.url ?? 'unmatched',
        reply.statusCode,
        reply.elapsedTime / 1000,
      );
    });
  }
  app.addHook('preValidation', async (request) => {
    // Text the database cannot store, or a body nested deeper than any request, is refused here,
    // naming the field, rather than failing later as a 500.
    for (const [part, value] of [
      ['path', request.params],
      ['query', request.query],
      ['body', request.body],
    ] as const) {
      const unacceptable = findUnacceptableValue(value, part);
      if (unacceptable) {
        throw new DomainError('invalid_request', unacceptable.message, {
          param: unacceptable.param,
          rule: unacceptable.rule,
        });
      }
    }
    // A POST to the API without a body (`curl -X POST …/detach`) is an empty object, as an empty
    // JSON body is, and so are `null`, `[]` (PHP's empty array) and `""` (docs/api.md#compatibility-with-existing-clients).
    const api = isApiRoute(request);
    if (request.method === 'POST' && api && isEmptyBody(request.body)) request.body = {};
    if (request.body !== undefined) request.body = dropNulls(request.body);
    if (api) shapeRequest(request);
  });

  app.setErrorHandler((error: FastifyError | DomainError | Error, request, reply) => {
    const { status, body } = withoutCardNumbers(toErrorResponse(error));
    if (status === statusOfCode('service_unavailable')) {
      // An outage is logged once per request, without a stack: it is the database's state, not a bug.
      request.log.warn(
        { code: body.code, reason: (error as { code?: string }).code ?? error.message },
        'request failed',
      );
      void reply.header('Retry-After', String(unavailableRetryAfterSeconds));
    } else if (status >= 500) request.log.error({ err: error }, 'request failed');
    else {
      const detail = error instanceof DomainError ? error.logDetail : undefined;
      request.log.info({ code: body.code, param: body.data?.param, detail }, 'request refused');
    }
    return reply.code(status).type('application/json; charset=utf-8').send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({
      code: 'resource_missing',
      msg: `Unrecognized request: ${request.method} ${maskCardNumbers(request.url.split('?')[0] ?? '')}`,
      data: null,
    }),
  );

  app.addSchema(ErrorEnvelope);
  const publicKeyRoutes: PublicRoutes = new Map();
  // Every failure is the docs/api.md#responses envelope; it is written into each API route's responses, so that
  // the OpenAPI document (and tools that check answers against it) knows every status answered.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
    const api = route.url.startsWith(apiBasePath) || route.url.startsWith(adminBasePath);
    if (api && route.config?.publicKeyAllowed) {
      const methods = publicKeyRoutes.get(route.url) ?? new Set<string>();
      for (const method of [route.method].flat()) if (method !== 'HEAD') methods.add(method);
      publicKeyRoutes.set(route.url, methods);
    }
    if (!api || !schema || schema.hide) return;
    const limited = route.config?.publicKeyAllowed ? rateLimitedResponse : {};
    schema.response = { ...errorResponses, ...limited, ...schema.response };
    // docs/api.md#requests: an unknown field is refused, naming it; an action that takes no field (detach,
    // roll_keys) takes none, rather than ignoring whatever is sent.
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('POST') && !(route.schema as { body?: unknown }).body) {
      (route.schema as { body?: unknown }).body = NoFields;
    }
  });
  let operatorDocument: OpenApiDocument | undefined;
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Tessera API',
        version: 'v1',
        description: apiIntro,
      },
      servers: [{ url: '/' }],
      components: {
        // The merchant reference offers a merchant's two keys, never the operator key: splitDocument
        // keeps that one for the operator's document (/admin/v1/openapi.json) only.
        securitySchemes: {
          operatorKey: { type: 'http', scheme: 'bearer', description: 'The operator key (TESSERA_ADMIN_KEY)' },
          privateKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'A private key (`test_pr_…`, `live_pr_…`), for your server: every operation',
          },
          publicKey: {
            type: 'http',
            scheme: 'bearer',
            description:
              "A public key (`test_pu_…`, `live_pu_…`), for the customer's browser or app: creating and reading payment methods, and confirming or reading a payment with its `clientSecret` header",
          },
        },
      },
      security: [{ privateKey: [] }],
    },
    // A POST without a body is taken as `{}` (see preValidation), so a body is required only where
    // its schema requires a field. The merchant API takes the same fields as a form (docs/api.md#compatibility-with-existing-clients).
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapiObject } = document;
      for (const [path, item] of Object.entries(openapiObject.paths ?? {})) {
        const body = (item as { post?: { requestBody?: OpenApiBody } } | undefined)?.post?.requestBody;
        const json = body?.content?.['application/json'];
        const schema = json?.schema;
        if (body && schema && !(schema.required && schema.required.length > 0)) body.required = false;
        if (body?.content && json && path.startsWith(apiBasePath)) {
          body.content['application/x-www-form-urlencoded'] = json;
        }
      }
      // The operator API gets a document of its own (/admin/v1/openapi.json), out of the merchants' /docs.
      documentOperations(openapiObject as OpenApiDocument, publicKeyRoutes);
      const { merchant, admin } = splitDocument(openapiObject as OpenApiDocument);
      operatorDocument = admin;
      return merchant as typeof openapiObject;
    },
  });

  await app.register(
    async (scope) => {
      const api = scope as unknown as App;
      // docs/api.md#compatibility-with-existing-clients: the provider's Java SDK posts some actions as forms; they are validated as JSON is.
      api.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
        try {
          done(null, parseFormBody(bodyText(request, body as Buffer)));
        } catch (err) {
          done(err as Error, undefined);
        }
      });
      // The key is checked first, before the body is even parsed: a caller without a valid key
      // learns nothing about the request it sent (401/403, never a validation answer).
      api.addHook('onRequest', async (request, reply) => {
        const merchant = await authenticateMerchant(request, options.keys);
        if (merchant.keyKind === 'public' && !request.routeOptions.config.publicKeyAllowed) {
          throw new DomainError(
            'permission_denied',
            'A public key can only create and read payment methods, and confirm or read a payment with its clientSecret; use a private key',
          );
        }
        request.merchant = merchant;
        if (options.publicKeyLimiter) await limitPublicKeyRequest(options.publicKeyLimiter, merchant, request, reply);
      });
      api.addHook('preHandler', async (request, reply) => {
        if (request.routeOptions.config.idempotent === false) return;
        await options.idempotency.begin(request, reply, merchantOf(request));
      });
      api.addHook('onSend', async (request, reply, payload) => {
        await options.idempotency.finish(request, reply.statusCode, payload);
        allowOrigin(request, reply);
        return payload;
      });
      if (options.recordApiRequest) logApiRequests(api, options.recordApiRequest);
      for (const register of options.merchantRoutes) register(api);
    },
    { prefix: apiBasePath },
  );
  answerPreflights(app, publicKeyRoutes);

  await app.register(
    async (scope) => {
      const admin = scope as unknown as App;
      admin.addHook('onRequest', async (request) => authenticateOperator(request, options.operatorKeyHash));
      // docs/api.md#idempotency: Idempotency-Key on every POST, the operator's too (a retried merchant creation
      // must not make a second merchant). The operator's keys live in a scope of their own.
      admin.addHook('preHandler', async (request, reply) => {
        await options.idempotency.begin(request, reply, operatorScope);
      });
      admin.addHook('onSend', async (request, reply, payload) => {
        await options.idempotency.finish(request, reply.statusCode, payload);
        return payload;
      });
      for (const register of options.operatorRoutes) register(admin);
    },
    { prefix: adminBasePath },
  );

  for (const register of options.publicRoutes) register(app);
  app.get(`${apiBasePath}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
  app.get(`${adminBasePath}/openapi.json`, { schema: { hide: true } }, async () => {
    app.swagger();
    return operatorDocument;
  });
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect(referencePath, 302));
  registerApiReference(app, () => app.swagger());
  return app;
}

interface OpenApiBody {
  required?: boolean;
  content?: Record<string, { schema?: { required?: string[] } }>;
}

/** Whose Idempotency-Keys the operator's requests use: no merchant id has this form. */
const operatorScope: MerchantContext = {
  merchantId: 'operator',
  mode: 'test',
  keyKind: 'private',
  tokenizationEnabled: false,
  mitEnabled: false,
};

/** The body of a POST action without fields: an empty object and nothing else. */
const NoFields = Type.Object({}, { additionalProperties: false });

function isApiRoute(request: FastifyRequest): boolean {
  const url = request.routeOptions.url;
  return url !== undefined && (url.startsWith(apiBasePath) || url.startsWith(adminBasePath));
}
