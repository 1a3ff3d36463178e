/**
 * The one HTTP path of the SDK: every call goes through `request` (or, for the one operation that
 * answers server-sent events, `stream`), which adds the key, an Idempotency-Key on POSTs (the same
 * one on each retry of a call, so a retried payment is never taken twice), retries what is safe to
 * retry, and turns every failure into a TesseraError.
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
  /** The key that makes a POST safe to repeat (docs/api.md#idempotency); one is generated per call when omitted. */
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

/** One server-sent event of a `text/event-stream` answer. */
export interface ServerSentEvent {
  /** The last `id:` field (GET /events/stream: the event id). */
  id: string | undefined;
  /** The `event:` field (GET /events/stream: the event code). */
  event: string | undefined;
  /** The `data:` lines, joined by line feeds. */
  data: string;
}

interface Answer {
  status: number;
  text: string;
  traceId: string | undefined;
  /** A `text/event-stream` answer, its body not read yet; `release` once done with it. */
  stream?: { body: ReadableStream<Uint8Array>; release: () => void };
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

  /**
   * Calls any merchant API operation: `request('post', '/payment/{id}/capture', { params: { id } })`.
   * GET /events/stream never ends: read it with `stream` (or `events.stream`).
   */
  async request<M extends Method, P extends ApiPath<M>>(
    method: M,
    path: P,
    parts: RequestParts<M, P> = {},
    options: RequestOptions = {},
  ): Promise<ResponseData<M, P>> {
    const url = this.#url(path, parts);
    const headers = this.#headers('application/json', options);
    let body: string | undefined;
    if (method === 'post') {
      headers['content-type'] = 'application/json';
      headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();
      body = JSON.stringify(parts.body ?? {});
    }
    const answer = await this.#send(method.toUpperCase(), url, headers, body, options);
    return parseAnswer(answer) as ResponseData<M, P>;
  }

  /**
   * Reads an operation that answers server-sent events (`text/event-stream`: GET /events/stream),
   * each event as it comes; the iteration lasts as long as the stream. Connecting is retried as
   * `request` retries, and a refusal (a 400 naming a field, a 401) is thrown as a TesseraError.
   * Once open, the stream is never opened again by the SDK: events sent while no stream is open are
   * not replayed, so a stream that breaks throws a TesseraConnectionError, and one the service ends
   * (as it does when it stops) ends the iteration. Aborting `options.signal`, or leaving the loop,
   * closes the connection and ends the iteration without an error. `timeoutMs` bounds the wait for
   * the answer's headers only.
   */
  async *stream<P extends ApiPath<'get'>>(
    path: P,
    parts: RequestParts<'get', P> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<ServerSentEvent, void, undefined> {
    if (options.signal?.aborted) return;
    const url = this.#url(path, parts);
    let answer: Answer;
    try {
      answer = await this.#send('GET', url, this.#headers('text/event-stream', options), undefined, options, true);
    } catch (error) {
      if (options.signal?.aborted) return;
      throw error;
    }
    if (!answer.stream) {
      parseAnswer(answer);
      throw new TesseraError({
        code: 'invalid_response',
        msg: `HTTP ${answer.status}: the answer is not a text/event-stream`,
        status: answer.status,
        traceId: answer.traceId,
      });
    }
    try {
      for await (const event of serverSentEvents(answer.stream.body)) {
        // Events already read when the signal aborted are not handed out after it.
        if (options.signal?.aborted) return;
        yield event;
      }
    } catch (error) {
      if (options.signal?.aborted) return;
      throw new TesseraConnectionError({
        code: 'connection_error',
        msg: `GET ${url.pathname}: the stream broke (${(error as Error).message})`,
        status: 0,
        traceId: answer.traceId,
        cause: error,
      });
    } finally {
      answer.stream.release();
    }
  }

  #url<M extends Method, P extends ApiPath<M>>(path: P, parts: RequestParts<M, P>): URL {
    const url = new URL(apiBasePath + fillPath(path, (parts.params ?? {}) as Record<string, string>), this.#origin);
    for (const [name, value] of Object.entries((parts.query ?? {}) as Record<string, unknown>)) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    return url;
  }

  #headers(accept: string, options: RequestOptions): Record<string, string> {
    return {
      authorization: `Bearer ${this.#apiKey}`,
      accept,
      'user-agent': 'tessera-node',
      ...options.headers,
    };
  }

  /** Sends, retrying network errors and 5xx with exponential backoff; the last answer or error wins. */
  async #send(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    options: RequestOptions,
    streaming = false,
  ): Promise<Answer> {
    const maxRetries = options.maxRetries ?? this.#options.maxRetries;
    for (let attempt = 0; ; attempt++) {
      let answer: Answer;
      try {
        answer = await this.#attempt(method, url, headers, body, options, streaming);
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

  /** One try; with `streaming`, a 200 `text/event-stream` answer comes back unread, still tied to `options.signal`. */
  async #attempt(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    options: RequestOptions,
    streaming: boolean,
  ): Promise<Answer> {
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new Error('timed out')),
      options.timeoutMs ?? this.#options.timeoutMs,
    );
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let open = false;
    try {
      const response = await this.#options.fetch(url, { method, headers, body, signal: controller.signal });
      const traceId = response.headers.get('x-traceid') ?? undefined;
      const type = response.headers.get('content-type') ?? '';
      if (streaming && response.status === 200 && response.body && type.startsWith('text/event-stream')) {
        open = true;
        const release = () => options.signal?.removeEventListener('abort', onAbort);
        return { status: response.status, text: '', traceId, stream: { body: response.body, release } };
      }
      const text = await response.text();
      return { status: response.status, text, traceId };
    } finally {
      clearTimeout(timer);
      if (!open) options.signal?.removeEventListener('abort', onAbort);
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

/**
 * The events of a `text/event-stream` body, as the HTML standard reads them: lines end with CRLF,
 * LF or CR, `:` starts a comment (the service's `: keep-alive`), a blank line ends an event, and an
 * event left unfinished when the body ends is dropped. Leaving the loop cancels the body.
 */
async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let id: string | undefined;
  let event: string | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A CR at the end may be the first half of a CRLF: it waits for the next chunk.
      const end = !done && buffer.endsWith('\r') ? buffer.length - 1 : buffer.length;
      const lines = buffer.slice(0, end).split(/\r\n|\n|\r/);
      buffer = lines.pop()! + buffer.slice(end);
      for (const line of lines) {
        if (line === '') {
          if (data.length > 0) yield { id, event, data: data.join('\n') };
          data = [];
          event = undefined;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const text = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(text);
        else if (field === 'event') event = text;
        else if (field === 'id' && !text.includes('\0')) id = text;
      }
      if (done) return;
    }
  } finally {
    // Leaving early (a `break`, an abort, an error) closes the connection; after the end it is a no-op.
    await reader.cancel().catch(() => undefined);
  }
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
