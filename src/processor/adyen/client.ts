/**
 * The one place that talks HTTP to Adyen's Checkout API (docs/processors-adyen.md). Every call
 * carries the account's API key and the caller's idempotency key, so that a call asked again after
 * an unknown outcome returns Adyen's first answer instead of moving money twice.
 */

import type { Pool } from 'undici';

/** What the connector needs to reach one Adyen account. */
export interface AdyenClientOptions {
  apiKey: string;
  /** The Checkout API's root including its version, e.g. `https://checkout-test.adyen.com/v71`. */
  baseUrl: string;
  timeoutMs: number;
}

/**
 * Adyen could not be asked or did not answer in a way the connector understands: the outcome is
 * unknown. The message names the operation, the HTTP status and Adyen's errorCode only, never a
 * request's content, a card or a key.
 */
export class AdyenRequestFailed extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly errorCode: string | null,
  ) {
    super(message);
    this.name = 'AdyenRequestFailed';
  }

  /**
   * Adyen refused the request itself (a key without the right role, a request it finds invalid):
   * nothing was done, and the same request would be refused again (docs/processors.md, Never
   * twice). Not a timeout or a key in use (408, 409, 429), and not errorCode 704, a replay whose
   * body differs from the first: that first request may have been done.
   */
  get refusedOutright(): boolean {
    const status = this.status;
    return (
      status !== null && status >= 400 && status < 500 && ![408, 409, 429].includes(status) && this.errorCode !== '704'
    );
  }
}

export type AdyenAnswer = Record<string, unknown>;

export interface AdyenClient {
  /** POSTs `body` to `path` (below the base URL) and answers the parsed 2xx body; throws AdyenRequestFailed otherwise. */
  post(path: string, body: Record<string, unknown>, idempotencyKey: string): Promise<AdyenAnswer>;
}

/**
 * One connection pool per client, and one client per account and version (the registry keeps
 * them, docs/processors.md): connections to Adyen are kept alive between payments, and a request
 * costs no WHATWG fetch machinery (docs/decisions/0051-connector-overhead.md). The processor
 * timeout bounds the connection, the wait for the answer's head and each pause in its body.
 */
export function createAdyenClient({ apiKey, baseUrl, timeoutMs }: AdyenClientOptions): AdyenClient {
  const root = new URL(baseUrl.replace(/\/+$/, ''));
  const prefix = root.pathname === '/' ? '' : root.pathname;
  // undici is loaded with the first request, not at start (docs/performance.md#test-suite-time,
  // "What a start loads"): most processes never talk to Adyen.
  let pool: Promise<Pool> | undefined;
  const poolOf = () =>
    (pool ??= import('undici').then(
      (undici) => new undici.Pool(root.origin, { connect: { timeout: timeoutMs }, keepAliveTimeout: 4_000 }),
    ));
  return {
    async post(path, body, idempotencyKey) {
      const operation = `Adyen POST ${path}`;
      let status: number;
      let text: string;
      try {
        const response = await (
          await poolOf()
        ).request({
          path: `${prefix}${path}`,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'x-api-key': apiKey,
            'idempotency-key': idempotencyKey,
          },
          body: JSON.stringify(body),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        status = response.statusCode;
        text = await response.body.text();
      } catch (err) {
        // A timeout, a refused or reset connection: the request may or may not have reached Adyen.
        throw new AdyenRequestFailed(`${operation} failed without an answer (${failureName(err)})`, null, null);
      }
      const parsed = parseObject(text);
      if (status < 200 || status > 299) {
        // Adyen's ServiceError: {status, errorCode, message, errorType, pspReference}. Only the
        // status and the code are kept: the message may repeat what was sent.
        const errorCode = typeof parsed?.errorCode === 'string' ? parsed.errorCode : null;
        const errorType = typeof parsed?.errorType === 'string' ? ` ${parsed.errorType}` : '';
        throw new AdyenRequestFailed(
          `${operation} answered HTTP ${status}${errorType} (errorCode ${errorCode ?? 'none'})`,
          status,
          errorCode,
        );
      }
      if (parsed === null) {
        throw new AdyenRequestFailed(
          `${operation} answered HTTP ${status} with a body that is not a JSON object`,
          status,
          null,
        );
      }
      return parsed;
    },
  };
}

function parseObject(text: string): AdyenAnswer | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as AdyenAnswer) : null;
  } catch {
    return null;
  }
}

const timeoutCodes = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** The kind of failure only (TimeoutError, a socket error's code): an error's message may quote the URL. */
function failureName(err: unknown): string {
  if (!(err instanceof Error)) return 'unknown error';
  const own = (err as { code?: unknown }).code;
  const cause = (err as { cause?: { code?: unknown } }).cause;
  const code = typeof own === 'string' ? own : typeof cause?.code === 'string' ? cause.code : null;
  if (code !== null && timeoutCodes.has(code)) return `TimeoutError: ${code}`;
  return code === null ? err.name : `${err.name}: ${code}`;
}
