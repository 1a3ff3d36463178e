/**
 * The one closed catalog of error codes (docs/api.md, Error catalog) and the domain error every service
 * throws. A code names what went wrong; its kind says what sort of failure it is, in the domain's
 * own terms. Nothing here knows of HTTP: the edge maps each kind to a status and the error to the
 * response envelope (src/http/error-status.ts; docs/decisions/0046-layers.md).
 */

/** What sort of failure an error is; src/http/error-status.ts gives each one HTTP status. */
export type ErrorKind =
  | 'invalid_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'internal'
  | 'unavailable';

/** Every error code a client can be answered with, each with its kind. */
export const errorCatalog = {
  invalid_request: 'invalid_request',
  idempotency_error: 'invalid_request',
  payment_method_not_bound: 'invalid_request',
  payment_method_bound_elsewhere: 'invalid_request',
  duplicate_order: 'invalid_request',
  invalid_state: 'invalid_request',
  /** A refund of more than is left to refund on its payment (docs/api.md, Refunds); `data` says what is left. */
  amount_too_large: 'invalid_request',
  authentication_error: 'unauthenticated',
  permission_denied: 'forbidden',
  tokenization_not_enabled: 'forbidden',
  mit_not_enabled: 'forbidden',
  resource_missing: 'not_found',
  /** An operation that needs an enabled webhook endpoint (recover) on a disabled one: enable it first. */
  endpoint_disabled: 'conflict',
  /** Live keys, or a live payment, without an enabled live processor account (docs/processors.md). */
  no_live_processor: 'conflict',
  /** A second enabled processor account for the same merchant and mode: disable the first one. */
  processor_account_exists: 'conflict',
  /** A payout in a currency without a bank account: the Owner or the operator adds one first (docs/balances.md). */
  bank_account_missing: 'conflict',
  /** A payout the bank rail has taken (in_transit or later) cannot be canceled; `data.status` says its status. */
  payout_not_cancelable: 'conflict',
  /** Evidence or accept on a dispute that no longer takes them (closed, under review, past dueBy): `data` says its state. */
  dispute_not_open: 'conflict',
  rate_limited: 'rate_limited',
  internal_error: 'internal',
  /** Something the request needs does not answer (the database, the rate limit's store) or the process is stopping: nothing was done; retry (Retry-After). */
  service_unavailable: 'unavailable',
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof errorCatalog;

export interface ErrorDetails {
  /** The request field at fault, in dotted form (`card.cardNo`, `lineItems[0].name`). */
  param?: string;
  [key: string]: unknown;
}

/** A failure meant for the client: its message is safe to show and never holds card data. */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails | null = null,
    /** What the server log says beyond the answer (why a URL was refused, say); never answered. */
    readonly logDetail?: string,
  ) {
    super(message);
  }

  get kind(): ErrorKind {
    return errorCatalog[this.code];
  }
}

export const invalidField = (param: string, message: string, rule?: string) =>
  new DomainError('invalid_request', message, rule ? { param, rule } : { param });

/** A well-formed id is echoed; anything else is not, since a path can carry arbitrary text. */
export const notFound = (what: string, id: string) =>
  new DomainError('resource_missing', /^[a-z]+_\d{19}$/.test(id) ? `No such ${what}: '${id}'` : `No such ${what}`, {
    param: 'id',
  });
