/**
 * The one HTTP path of the SDK: every call goes through `request`, which adds the key, an
 * Idempotency-Key on POSTs (the same one on each retry of a call, so a retried payment is never
 * taken twice), retries what is safe to retry, and turns every failure into a TesseraError.
 */
import { randomUUID } from 'node:crypto';
import { TesseraConnectionError, TesseraError } from './errors.js';
import {
  apiBasePath,
  type ApiPath,
  type Method,
  type PathParams,
  type QueryParams,
  type RequestBody,
} from './types.js';
import type { ResponseData } from './types.js';

export interface TesseraOptions {
  /** A private key (`test_pr_…` / `live_pr_…`). */
  apiKey: string;
  /** Where the service is: its origin (`http://127.0.0.1:8080`) or the API base URL it prints. */
  baseUrl?: string;
  /** Retries after a network error or a 5xx answer; 4xx answers are never retried. Default 2. */
  maxRetries?: number;
  /** Delay before the first retry; each later one doubles it (with jitter), at most 8 s. Default 500 ms. */
  retryDelayMs?: number;
  /** How long one attempt may take before it counts as a network error. Default 30 s. */
  timeoutMs?: number;
  /** Another fetch (a proxy agent, a test double). Default: the global fetch of Node.js 20. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /** The key that makes a POST safe to repeat (DESIGN §2); one is generated per call when omitted. */
  idempotencyKey?: string;
  maxRetries?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** More headers, e.g. `clientSecret` when confirming a payment with a public key. */
  headers?: Record<string, string>;
}

export interface RequestParts<M extends Method, P extends ApiPath<M>> {
  /** Path parameters, e.g. `{ id: 'pt_…' }`. */
  params?: PathParams<M, P>;
  query?: QueryParams<M, P>;
  body?: RequestBody<M, P>;
}

interface Answer {
  status: number;
  text: string;
  traceId: string | undefined;
}

const maxRetryDelayMs = 8000;

export class TesseraClient {
  readonly #apiKey: string;
  readonly #origin: string;
  readonly #options: Required<Omit<TesseraOptions, 'apiKey' | 'baseUrl'>>;

  constructor(options: TesseraOptions) {
    if (!options?.apiKey) throw new TypeError('Tessera: apiKey is required (a private key, test_pr_…)');
    this.#apiKey = options.apiKey;
    // The base URL printed by `tessera start` ends with the API base path; the origin is what counts.
    const base = (options.baseUrl ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    this.#origin = base.endsWith(apiBasePath) ? base.slice(0, -apiBasePath.length) : base;
    this.#options = {
      maxRetries: options.maxRetries ?? 2,
      retryDelayMs: options.retryDelayMs ?? 500,
      timeoutMs: options.timeoutMs ?? 30_000,
      fetch: options.fetch ?? globalThis.fetch,
    };
  }

  /** Calls any merchant API operation: `request('post', '/payment/{id}/capture', { params: { id } })`. */
  async request<M extends Method, P extends ApiPath<M>>(
    method: M,
    path: P,
    parts: RequestParts<M, P> = {},
    options: RequestOptions = {},
  ): Promise<ResponseData<M, P>> {
    const url = new URL(apiBasePath + fillPath(path, (parts.params ?? {}) as Record<string, string>), this.#origin);
    for (const [name, value] of Object.entries((parts.query ?? {}) as Record<string, unknown>)) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#apiKey}`,
      accept: 'application/json',
      'user-agent': 'tessera-node',
      ...options.headers,
    };
    let body: string | undefined;
    if (method === 'post') {
      headers['content-type'] = 'application/json';
      headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();
      body = JSON.stringify(parts.body ?? {});
    }
    const answer = await this.#send(method.toUpperCase(), url, headers, body, options);
    return parseAnswer(answer) as ResponseData<M, P>;
  }

  /** Sends, retrying network errors and 5xx with exponential backoff; the last answer or error wins. */
  async #send(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    options: RequestOptions,
  ): Promise<Answer> {
    const maxRetries = options.maxRetries ?? this.#options.maxRetries;
    for (let attempt = 0; ; attempt++) {
      let answer: Answer;
      try {
        answer = await this.#attempt(method, url, headers, body, options);
      } catch (error) {
        if (options.signal?.aborted || attempt >= maxRetries) {
          throw new TesseraConnectionError({
            code: 'connection_error',
            msg: `${method} ${url.pathname}: no answer (${(error as Error).message})`,
            status: 0,
            cause: error,
          });
        }
        await this.#backoff(attempt);
        continue;
      }
      if (answer.status < 500 || attempt >= maxRetries) return answer;
      await this.#backoff(attempt);
    }
  }

  async #attempt(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    options: RequestOptions,
  ): Promise<Answer> {
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new Error('timed out')),
      options.timeoutMs ?? this.#options.timeoutMs,
    );
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.#options.fetch(url, { method, headers, body, signal: controller.signal });
      const text = await response.text();
      return { status: response.status, text, traceId: response.headers.get('x-traceid') ?? undefined };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  #backoff(attempt: number): Promise<void> {
    const delay = Math.min(maxRetryDelayMs, this.#options.retryDelayMs * 2 ** attempt);
    // Jitter, so that many clients retrying after one outage do not all come back at once.
    return new Promise((resolve) => setTimeout(resolve, delay * (0.5 + Math.random() / 2)));
  }
}

/** `/payment/{id}/capture` with `{ id: 'pt_1' }` → `/payment/pt_1/capture`, each value escaped. */
function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined || value === '') throw new TypeError(`Tessera: path parameter ${name} is required`);
    return encodeURIComponent(value);
  });
}

/** The `data` of a `success` envelope, or the envelope's error as a TesseraError. */
function parseAnswer({ status, text, traceId }: Answer): unknown {
  let envelope: { code?: unknown; msg?: unknown; data?: unknown } | undefined;
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch {
    envelope = undefined;
  }
  if (!envelope || typeof envelope.code !== 'string') {
    throw new TesseraError({
      code: status >= 500 ? 'internal_error' : 'invalid_response',
      msg: `HTTP ${status}: the answer is not the {code, msg, data} envelope`,
      status,
      traceId,
    });
  }
  if (envelope.code === 'success' && status < 400) return envelope.data;
  throw new TesseraError({
    code: envelope.code,
    msg: typeof envelope.msg === 'string' ? envelope.msg : envelope.code,
    status,
    data: typeof envelope.data === 'object' ? (envelope.data as Record<string, unknown> | null) : null,
    traceId,
  });
}
