/**
 * The one closed catalog of error codes (DESIGN §2) and the HTTP status each is answered with.
 * Every failure the API returns carries one of these codes in the SPEC §7 envelope.
 */
export const errorStatus = {
  invalid_request: 400,
  idempotency_error: 400,
  payment_method_not_bound: 400,
  payment_method_bound_elsewhere: 400,
  duplicate_order: 400,
  invalid_state: 400,
  /** A refund of more than is left to refund on its payment (DESIGN §4); `data` says what is left. */
  amount_too_large: 400,
  authentication_error: 401,
  permission_denied: 403,
  tokenization_not_enabled: 403,
  mit_not_enabled: 403,
  resource_missing: 404,
  /** An operation that needs an enabled webhook endpoint (recover) on a disabled one: enable it first. */
  endpoint_disabled: 409,
  /** Live keys, or a live payment, without an enabled live processor account (docs/processors.md). */
  no_live_processor: 409,
  /** A second enabled processor account for the same merchant and mode: disable the first one. */
  processor_account_exists: 409,
  /** A payout in a currency without a bank account: the Owner or the operator adds one first (docs/balances.md). */
  bank_account_missing: 409,
  /** A payout the bank rail has taken (in_transit or later) cannot be canceled; `data.status` says its status. */
  payout_not_cancelable: 409,
  rate_limited: 429,
  internal_error: 500,
  /** Something the request needs does not answer (the database, the rate limit's store) or the process is stopping: nothing was done; retry (Retry-After). */
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorDetails {
  /** The request field at fault, in dotted form (`card.cardNo`, `lineItems[0].name`). */
  param?: string;
  [key: string]: unknown;
}

/** A failure meant for the client: its message is safe to show and never holds card data. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails | null = null,
    /** What the server log says beyond the answer (why a URL was refused, say); never answered. */
    readonly logDetail?: string,
  ) {
    super(message);
  }

  get status(): number {
    return errorStatus[this.code];
  }

  /**
   * The status under the name Fastify's errors use, so that an error handler of a page scope
   * (hosted invoice and checkout pages) that reads `statusCode` answers a refusal as one, not 500.
   */
  get statusCode(): number {
    return this.status;
  }

  /**
   * Fastify sets `statusCode` on a validation error it wraps (400); the status of an ApiError is
   * its code's (errorStatus), so the assignment is taken and ignored rather than thrown on.
   */
  set statusCode(_ignored: number) {}
}

export const invalidField = (param: string, message: string, rule?: string) =>
  new ApiError('invalid_request', message, rule ? { param, rule } : { param });

/** A well-formed id is echoed; anything else is not, since a path can carry arbitrary text. */
export const notFound = (what: string, id: string) =>
  new ApiError('resource_missing', /^[a-z]+_\d{19}$/.test(id) ? `No such ${what}: '${id}'` : `No such ${what}`, {
    param: 'id',
  });
