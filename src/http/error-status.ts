/**
 * The edge's half of the error catalog (src/core/errors.ts): the HTTP status of each kind of
 * domain error, one exhaustive table, so that a new kind fails to compile until it has a status.
 */
import { DomainError, errorCatalog, type ErrorCode, type ErrorKind } from '../core/errors.js';

const kindStatus: Record<ErrorKind, number> = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

/** The status an error code is answered with. */
export const statusOfCode = (code: ErrorCode): number => kindStatus[errorCatalog[code]];

/** The status a domain error is answered with. */
export const statusOf = (error: DomainError): number => kindStatus[error.kind];

/** Every code of the catalog with its status, in the catalog's order (the API reference's table). */
export const codeStatuses = (Object.keys(errorCatalog) as ErrorCode[]).map(
  (code) => [code, statusOfCode(code)] as const,
);

/**
 * The status of anything a page's error handler catches (hosted checkout and invoice pages, the
 * dashboard): a domain error's by its kind, a Fastify refusal's by its `statusCode`, else 500.
 */
export function statusOfThrown(error: unknown): number {
  if (error instanceof DomainError) return statusOf(error);
  const statusCode = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof statusCode === 'number' ? statusCode : 500;
}
