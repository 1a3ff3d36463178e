/**
 * The answers of failures (the envelope (docs/api.md#responses)): the error statuses every API route declares in the
 * OpenAPI document, and the mapping of any thrown error to a status and body, card numbers masked.
 */
import type { FastifyError } from 'fastify';
import { maskCardNumbers } from '../redact.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { DomainError, type ErrorCode } from '../core/errors.js';
import { statusOf, statusOfCode } from './error-status.js';

const errorResponse = (description: string) => ({ description, $ref: 'ErrorEnvelope#' });

/** An error answer a route declares beyond the common ones (a 409, say). */
export const errorResponseOf = errorResponse;

/** The error statuses of docs/api.md#base-url-and-authentication that any API route may answer (429: the public-key routes only). */
export const errorResponses = {
  400: errorResponse('invalid_request, idempotency_error or a tokenization rule; `data.param` names the field'),
  401: errorResponse('authentication_error: a missing or invalid key'),
  403: errorResponse('permission_denied, tokenization_not_enabled or mit_not_enabled'),
  404: errorResponse("resource_missing: no such object (another merchant's objects included)"),
  500: errorResponse('internal_error, logged with the X-TraceId of the request'),
  503: errorResponse(
    'service_unavailable: the database cannot be reached or the process is stopping; nothing was done, retry after `Retry-After` seconds',
  ),
};

/** Seconds a client is asked to wait before retrying a 503 (the database may be back by then). */
export const unavailableRetryAfterSeconds = 2;

/**
 * For the HTML pages' error handlers (hosted checkout, hosted invoice, dashboard): when `error` is
 * the database being out of reach — its state, not a bug — logs a warning naming the page and sets
 * Retry-After, as the API's 503 does, and answers true; the caller then sends its 503 page.
 */
export function markDatabaseUnavailable(
  error: unknown,
  request: { log: { warn(details: object, message: string): void } },
  reply: { header(name: string, value: string): unknown },
  page: string,
): boolean {
  if (!isDatabaseUnavailable(error)) return false;
  const { code, message } = error as { code?: string; message?: string };
  request.log.warn({ reason: code ?? message }, `${page} unavailable`);
  reply.header('Retry-After', String(unavailableRetryAfterSeconds));
  return true;
}

/** The answer to a request that met a database outage, or came while the process stops. */
export const serviceUnavailableBody = (msg: string): ErrorBody => ({ code: 'service_unavailable', msg, data: null });

/** docs/api.md#base-url-and-authentication: the public-key routes are rate limited per key and per client address. */
export const rateLimitedResponse = {
  429: errorResponse(
    'rate_limited: too many requests with a public key from this key or client address; `Retry-After` says in how many seconds to retry',
  ),
};

export interface ErrorBody {
  code: ErrorCode;
  msg: string;
  data: { param?: string; [key: string]: unknown } | null;
}

export function toErrorResponse(error: FastifyError | DomainError | Error): { status: number; body: ErrorBody } {
  if (error instanceof DomainError) {
    return { status: statusOf(error), body: { code: error.code, msg: error.message, data: error.details } };
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
        FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Content-Type must be application/json or application/x-www-form-urlencoded',
        FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
        FST_ERR_CTP_BODY_TOO_LARGE: 'The request body is larger than 1 MiB',
        FST_ERR_CTP_INVALID_JSON_BODY: 'The request body is not valid JSON',
      }[fastifyError.code] ??
      (error instanceof SyntaxError ? 'The request body is not valid JSON' : 'The request is not valid');
    return { status: 400, body: { code: 'invalid_request', msg: message, data: { param: 'body' } } };
  }
  if (isDatabaseUnavailable(error)) {
    return {
      status: statusOfCode('service_unavailable'),
      body: serviceUnavailableBody('The service cannot reach its database just now; nothing was done. Retry shortly.'),
    };
  }
  return {
    status: statusOfCode('internal_error'),
    body: {
      code: 'internal_error',
      msg: "An internal error occurred; it has been logged with this request's X-TraceId",
      data: null,
    },
  };
}

/**
 * A field name can be anything the caller sent, a card number included: where `param` holds one
 * (a key nested in metadata, say), it is masked there and in the message, which repeats it.
 */
export function withoutCardNumbers(response: { status: number; body: ErrorBody }): { status: number; body: ErrorBody } {
  const { body } = response;
  const param = body.data?.param;
  if (typeof param !== 'string' || maskCardNumbers(param) === param) return response;
  let msg = body.msg;
  for (const segment of param.split(/[.[\]]/)) if (segment) msg = msg.split(segment).join(maskCardNumbers(segment));
  return { ...response, body: { ...body, msg, data: { ...body.data, param: maskCardNumbers(param) } } };
}
