/** The error codes of the service's catalog (docs/api.md, "Error catalog"); other strings may be added later. */
export type TesseraErrorCode =
  | 'invalid_request'
  | 'idempotency_error'
  | 'payment_method_not_bound'
  | 'payment_method_bound_elsewhere'
  | 'duplicate_order'
  | 'invalid_state'
  | 'amount_too_large'
  | 'authentication_error'
  | 'permission_denied'
  | 'tokenization_not_enabled'
  | 'mit_not_enabled'
  | 'resource_missing'
  | 'endpoint_disabled'
  | 'no_live_processor'
  | 'processor_account_exists'
  | 'bank_account_missing'
  | 'payout_not_cancelable'
  | 'dispute_not_open'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable'
  | 'processor_error';

export interface TesseraErrorFields {
  code: TesseraErrorCode | 'connection_error' | 'invalid_response' | (string & {});
  msg: string;
  /** The HTTP status; 0 when no answer came (connection_error). */
  status: number;
  /** `data` of the error envelope: `param` and, for some codes, more (e.g. `amount_too_large` says what is left). */
  data?: Record<string, unknown> | null;
  /** The X-TraceId header of the answer: quote it when asking about a request. */
  traceId?: string;
  cause?: unknown;
}

/** A request the service refused or could not answer: the docs/api.md#responses envelope `{code, msg, data}` as an exception. */
export class TesseraError extends Error {
  override readonly name: string = 'TesseraError';
  readonly code: TesseraErrorFields['code'];
  readonly msg: string;
  readonly status: number;
  readonly data: Record<string, unknown> | null;
  /** The request field at fault (`data.param`), in dotted form: `card.cardNo`, `lineItems[0].name`. */
  readonly param: string | undefined;
  readonly traceId: string | undefined;

  constructor(fields: TesseraErrorFields) {
    super(`${fields.code}: ${fields.msg}`, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = fields.code;
    this.msg = fields.msg;
    this.status = fields.status;
    this.data = fields.data ?? null;
    this.param = typeof this.data?.param === 'string' ? this.data.param : undefined;
    this.traceId = fields.traceId;
  }
}

/** No answer came (refused connection, reset, timeout), after every retry: `code` is `connection_error`, `status` 0. */
export class TesseraConnectionError extends TesseraError {
  override readonly name = 'TesseraConnectionError';
}
