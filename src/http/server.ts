import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ApiError, errorStatus, type ErrorCode } from './errors.js';
import { authenticateMerchant, authenticateOperator, type KeyLookup, type MerchantContext } from './auth.js';
import type { Idempotency } from './idempotency.js';
import { dropNulls, validatorCompiler } from './validation.js';
import { ErrorEnvelope } from './envelope.js';

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
    /** The route may be called with a public key (`test_pu_…`), from a customer's browser. */
    publicKeyAllowed?: boolean;
  }
}

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
  isReady: () => boolean;
}

/** The `request.merchant` of a route behind merchant authentication. */
export function merchantOf(request: FastifyRequest): MerchantContext {
  if (!request.merchant) throw new ApiError('authentication_error', 'Missing API key');
  return request.merchant;
}

export async function buildServer(options: ServerOptions): Promise<App> {
  const app = Fastify({
    loggerInstance: options.logger,
    genReqId: () => randomBytes(12).toString('hex'),
    requestIdLogLabel: 'traceId',
    bodyLimit: 1024 * 1024,
    // Query strings like created[gte]=… stay flat keys; the list routes read them as such.
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  app.setValidatorCompiler(validatorCompiler);
  app.decorateRequest('merchant', null);

  // Liberal in what we accept: an empty body is an empty object, and null means "not given".
  const defaultJsonParser = app.getDefaultJsonParser('error', 'ignore');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, {});
    defaultJsonParser(request, body as string, done);
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-TraceId', request.id);
  });
  app.addHook('preValidation', async (request) => {
    if (request.body !== undefined) request.body = dropNulls(request.body);
  });

  app.setErrorHandler((error: FastifyError | ApiError | Error, request, reply) => {
    const { status, body } = toErrorResponse(error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: body.code, param: body.data?.param }, 'request refused');
    return reply.code(status).type('application/json; charset=utf-8').send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({
      code: 'resource_missing',
      msg: `Unrecognized request: ${request.method} ${request.url.split('?')[0]}`,
      data: null,
    }),
  );

  app.addSchema(ErrorEnvelope);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Tessera API',
        version: 'v1',
        description:
          'Payment tokenization and webhook notification service. Every response is the envelope {code, msg, data}. ' +
          'Authenticate with "Authorization: Bearer <private key>".',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          privateKey: { type: 'http', scheme: 'bearer', description: 'A private key: test_pr_…' },
          operatorKey: { type: 'http', scheme: 'bearer', description: 'The operator key (TESSERA_ADMIN_KEY)' },
        },
      },
      security: [{ privateKey: [] }],
    },
  });

  app.get('/health', { schema: { hide: true } }, async (_request, reply) =>
    options.isReady() ? { status: 'ok' } : reply.code(503).send({ status: 'starting' }),
  );

  await app.register(
    async (scope) => {
      const api = scope as unknown as App;
      api.addHook('preHandler', async (request, reply) => {
        const merchant = await authenticateMerchant(request, options.keys);
        if (merchant.keyKind === 'public' && !request.routeOptions.config.publicKeyAllowed) {
          throw new ApiError('permission_denied', 'A public key can only create payment methods; use a private key');
        }
        request.merchant = merchant;
        await options.idempotency.begin(request, reply, merchant);
      });
      api.addHook('onSend', async (request, reply, payload) => {
        await options.idempotency.finish(request, reply.statusCode, payload);
        return payload;
      });
      for (const register of options.merchantRoutes) register(api);
    },
    { prefix: apiBasePath },
  );

  await app.register(
    async (scope) => {
      const admin = scope as unknown as App;
      admin.addHook('preHandler', async (request) => authenticateOperator(request, options.operatorKeyHash));
      for (const register of options.operatorRoutes) register(admin);
    },
    { prefix: adminBasePath },
  );

  for (const register of options.publicRoutes) register(app);
  app.get(`${apiBasePath}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());

  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  return app;
}

interface ErrorBody {
  code: ErrorCode;
  msg: string;
  data: { param?: string; [key: string]: unknown } | null;
}

function toErrorResponse(error: FastifyError | ApiError | Error): { status: number; body: ErrorBody } {
  if (error instanceof ApiError) {
    return { status: error.status, body: { code: error.code, msg: error.message, data: error.details } };
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    return { status: 400, body: { code: 'invalid_request', msg: 'The request is not valid', data: null } };
  }
  const status = fastifyError.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // Fastify's own refusals (unsupported media type, malformed JSON, body too large): the
    // message is ours, since Fastify's may quote parts of the body.
    const message =
      {
        FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Content-Type must be application/json',
        FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
        FST_ERR_CTP_BODY_TOO_LARGE: 'The request body is larger than 1 MiB',
        FST_ERR_CTP_INVALID_JSON_BODY: 'The request body is not valid JSON',
      }[fastifyError.code] ??
      (error instanceof SyntaxError ? 'The request body is not valid JSON' : 'The request is not valid');
    return { status: 400, body: { code: 'invalid_request', msg: message, data: { param: 'body' } } };
  }
  return {
    status: errorStatus.internal_error,
    body: {
      code: 'internal_error',
      msg: "An internal error occurred; it has been logged with this request's X-TraceId",
      data: null,
    },
  };
}
