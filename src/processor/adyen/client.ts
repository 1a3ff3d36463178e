/**
 * The one place that talks HTTP to Adyen's Checkout API (docs/processors-adyen.md). Every call
 * carries the account's API key and the caller's idempotency key, so that a call asked again after
 * an unknown outcome returns Adyen's first answer instead of moving money twice.
 */

/** What the connector needs to reach one Adyen account. */
export interface AdyenClientOptions {
  apiKey: string;
  /** The Checkout API's root including its version, e.g. `https://checkout-test.adyen.com/v71`. */
  baseUrl: string;
  timeoutMs: number;
  fetch?: typeof fetch;
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

export function createAdyenClient({
  apiKey,
  baseUrl,
  timeoutMs,
  fetch: send = fetch,
}: AdyenClientOptions): AdyenClient {
  const root = baseUrl.replace(/\/+$/, '');
  return {
    async post(path, body, idempotencyKey) {
      const operation = `Adyen POST ${path}`;
      let response: Response;
      let text: string;
      try {
        response = await send(`${root}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'x-api-key': apiKey,
            'idempotency-key': idempotencyKey,
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await response.text();
      } catch (err) {
        // A timeout, a refused or reset connection: the request may or may not have reached Adyen.
        throw new AdyenRequestFailed(`${operation} failed without an answer (${failureName(err)})`, null, null);
      }
      const parsed = parseObject(text);
      if (response.status < 200 || response.status > 299) {
        // Adyen's ServiceError: {status, errorCode, message, errorType, pspReference}. Only the
        // status and the code are kept: the message may repeat what was sent.
        const errorCode = typeof parsed?.errorCode === 'string' ? parsed.errorCode : null;
        const errorType = typeof parsed?.errorType === 'string' ? ` ${parsed.errorType}` : '';
        throw new AdyenRequestFailed(
          `${operation} answered HTTP ${response.status}${errorType} (errorCode ${errorCode ?? 'none'})`,
          response.status,
          errorCode,
        );
      }
      if (parsed === null) {
        throw new AdyenRequestFailed(
          `${operation} answered HTTP ${response.status} with a body that is not a JSON object`,
          response.status,
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

/** The kind of failure only (TimeoutError, a socket error's code): an error's message may quote the URL. */
function failureName(err: unknown): string {
  if (!(err instanceof Error)) return 'unknown error';
  const cause = (err as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === 'string' ? `: ${cause.code}` : '';
  return `${err.name}${code}`;
}
