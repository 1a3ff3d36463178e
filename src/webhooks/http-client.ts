import { performance } from 'node:perf_hooks';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { Agent, buildConnector, Dispatcher } from 'undici';
import { refusedAddressKind, type AddressPolicy } from './url-safety.js';
import { connectThroughProxy, EgressProxyError, sourceAddressRotation } from './egress/connector.js';
import type { EgressProxy } from '../config-egress.js';

/*
 * The webhook HTTP client (Svix's `webhook_http_client`): one POST per attempt, no redirects
 * followed (undici's request follows none unless told to), one deadline for connect, headers and
 * body, and in production the SSRF guard at connect time.
 */

/**
 * What the receiver answered, or why nothing usable came back, and how long the exchange took: from
 * the request's dispatch to its answer (or failure), so that loading the client for the first
 * attempt of a process is not counted in it.
 */
export type WebhookPostOutcome = PostAnswer & { durationMs: number };

type PostAnswer =
  | {
      ok: true;
      status: number;
      /** The start of the response body as text, enough to tell `success` from anything else. */
      body: string;
      /** The first 1 KiB of the response body as text (docs/webhooks.md#acknowledgement-and-retries attempt log). */
      excerpt: string;
    }
  | { ok: false; error: string };

export interface WebhookHttpClient {
  /** Sends `body` with exactly the header names given (their case is kept on the wire). */
  post(url: string, headers: Record<string, string>, body: string): Promise<WebhookPostOutcome>;
  close(): Promise<void>;
}

export interface WebhookHttpClientOptions {
  /** docs/webhooks.md#acknowledgement-and-retries: an attempt that has not been fully answered within this time fails. */
  timeoutMs: number;
  /**
   * NODE_ENV=production: connect only to public addresses. The address is checked when the name
   * is resolved for the connection and again on the connected socket, so a DNS answer that
   * changed since the URL was saved (rebinding) cannot reach loopback, private or metadata hosts.
   */
  production: boolean;
  /**
   * Outside production, TESSERA_WEBHOOK_ALLOW_PRIVATE=on: private addresses besides loopback may be
   * reached. Cloud metadata and link-local addresses never are, in any mode (url-safety.ts).
   */
  allowPrivate?: boolean;
  /** Resolves a host name for a connection (all addresses); the system resolver by default. For tests. */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
  /** docs/webhooks.md#sending-addresses-allow-lists: every connection goes through this HTTP CONNECT proxy (TESSERA_WEBHOOK_PROXY). */
  proxy?: EgressProxy;
  /** docs/webhooks.md#sending-addresses-allow-lists: connections leave from these local addresses, in turn (TESSERA_WEBHOOK_SOURCE_ADDRESSES). */
  sourceAddresses?: readonly string[];
}

export const responseExcerptBytes = 1024;
/** `success` with any white space around it is far shorter; a longer answer is not read further. */
const maxBodyBytes = 64 * 1024;

export class ForbiddenAddressError extends Error {
  override readonly name = 'ForbiddenAddressError';
  readonly code = 'ERR_FORBIDDEN_ADDRESS';
  constructor(production: boolean) {
    // The address itself is not named: it would tell a merchant how Tessera's network resolves names.
    super(
      production
        ? 'The endpoint resolves to an address that is not public, which is refused in production'
        : 'The endpoint resolves to a cloud metadata, link-local or private address, which webhooks may not reach (TESSERA_WEBHOOK_ALLOW_PRIVATE=on allows private ones outside production)',
    );
  }
}

export function createWebhookHttpClient({
  timeoutMs,
  production,
  allowPrivate = false,
  resolve,
  proxy,
  sourceAddresses = [],
}: WebhookHttpClientOptions): WebhookHttpClient {
  const connectOptions: ConnectOptions = {
    timeoutMs,
    policy: { production, allowPrivate },
    resolve,
    nextSource: sourceAddressRotation(sourceAddresses),
  };
  // undici is loaded with the first attempt, not at every start: a process that sends nothing (a
  // worker without endpoints, a start that only serves the API) does not pay for its import, about
  // a sixth of a start's CPU (docs/performance.md#test-suite-time). An attempt's deadline and
  // its `durationMs` run from when it is sent, so neither counts the loading.
  let agent: Agent | undefined;
  let loading: Promise<Agent> | undefined;
  const loadAgent = () =>
    (loading ??= import('undici').then(
      (undici) =>
        (agent = new undici.Agent({
          connect: proxy ? proxiedConnect(proxy, connectOptions) : directConnect(undici.buildConnector, connectOptions),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          keepAliveTimeout: 30_000,
        })),
    ));

  // One reason for every timeout of this client: building an Error (and its stack) per attempt
  // costs more than the attempt's own bookkeeping, and almost no attempt times out.
  const timeout = new WebhookTimeoutError(timeoutMs);

  return {
    post(url, headers, body) {
      if (agent) return attempt(agent, url, headers, body);
      return loadAgent().then(
        (loaded) => attempt(loaded, url, headers, body),
        (err: unknown): WebhookPostOutcome => ({ ok: false, error: describeError(err), durationMs: 0 }),
      );
    },
    close: async () => {
      await loading?.then(
        (loaded) => loaded.close(),
        () => undefined,
      );
    },
  };

  function attempt(
    through: Agent,
    url: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<WebhookPostOutcome> {
    return new Promise<WebhookPostOutcome>((resolve) => {
      // undici's dispatch with a handler of its own rather than request(): no AbortController,
      // response stream or promise wrapper per attempt (the drain's hot path), and the same
      // deadline over connect, headers and body.
      const chunks: Buffer[] = [];
      let length = 0;
      let status = 0;
      /** The answer reached maxBodyBytes: what came is kept and the rest is not read. */
      let enough = false;
      let controller: Dispatcher.DispatchController | undefined;
      let settled = false;
      const sentAt = performance.now();
      const settle = (answer: PostAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(Object.assign(answer, { durationMs: Math.round(performance.now() - sentAt) }));
      };
      const answered = () => {
        const bytes = Buffer.concat(chunks, length).subarray(0, maxBodyBytes);
        settle({
          ok: true,
          status,
          body: bytes.toString('utf8'),
          excerpt: textExcerpt(bytes, responseExcerptBytes),
        });
      };
      const timer = setTimeout(() => {
        settle({ ok: false, error: timeout.message });
        // Before the request has a connection there is nothing to abort yet: onRequestStart does it.
        controller?.abort(timeout);
      }, timeoutMs);
      let target: DispatchTarget;
      try {
        target = targetOf(url);
      } catch (err) {
        settle({ ok: false, error: describeError(err) });
        return;
      }
      try {
        through.dispatch(
          { origin: target.origin, path: target.path, method: 'POST', headers, body },
          {
            onRequestStart(started) {
              controller = started;
              if (settled) started.abort(timeout);
            },
            onResponseStart(_controller, statusCode) {
              status = statusCode;
            },
            onResponseData(current, chunk) {
              if (enough) return;
              chunks.push(chunk);
              length += chunk.length;
              if (length >= maxBodyBytes) {
                enough = true;
                current.abort(new Error('The answer is longer than Tessera reads'));
              }
            },
            onResponseEnd: answered,
            onResponseError(_controller, err) {
              if (enough) return answered();
              settle(
                err === timeout ? { ok: false, error: timeout.message } : { ok: false, error: describeError(err) },
              );
            },
          },
        );
      } catch (err) {
        settle({ ok: false, error: describeError(err) });
      }
    });
  }
}

interface DispatchTarget {
  origin: string;
  path: string;
}

/** Parsed URLs by their text: a drain sends thousands of attempts a second to a few URLs. */
const targets = new Map<string, DispatchTarget>();
const maxTargets = 10_000;

/** The origin and path of a URL, parsed once per URL (throws for a URL that does not parse). */
function targetOf(url: string): DispatchTarget {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (targets.size >= maxTargets) targets.clear();
    targets.set(url, target);
  }
  return target;
}

interface ConnectOptions {
  timeoutMs: number;
  policy: AddressPolicy;
  resolve: ((hostname: string) => Promise<LookupAddress[]>) | undefined;
  nextSource: () => string | undefined;
}

/** A connection straight to the receiver, from the next source address when there are any. */
function directConnect(
  build: typeof buildConnector,
  { timeoutMs, policy, resolve, nextSource }: ConnectOptions,
): buildConnector.connector {
  // Every mode judges addresses: outside production too, cloud metadata is never reached.
  const lookup = guardedLookup(policy, resolve);
  const connector = build({ timeout: timeoutMs, lookup });
  // undici passes a localAddress of its own (none) with every call, so the rotation sets it per call.
  const fromSource: buildConnector.connector = (options, callback) =>
    connector({ ...options, localAddress: nextSource() ?? null }, callback);
  const refused = (ip: string) => refusedAddressKind(ip, policy) !== null;
  return (options, callback) => {
    // An IP literal is never looked up, so it is judged here.
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0 && refused(host)) return callback(new ForbiddenAddressError(policy.production), null);
    fromSource(options, (err, socket) => {
      if (err) return callback(err, null);
      // The address actually connected to: the last word, whatever resolved it.
      const remote = socket.remoteAddress;
      if (remote === undefined || refused(remote)) {
        socket.destroy();
        return callback(new ForbiddenAddressError(policy.production), null);
      }
      return callback(null, socket);
    });
  };
}

/**
 * A tunnel through the egress proxy. The receiver's address is resolved and judged here, before
 * the CONNECT, so that a destination the SSRF rules refuse never reaches the proxy.
 */
function proxiedConnect(proxy: EgressProxy, options: ConnectOptions): buildConnector.connector {
  const resolveAll = resolver(options.resolve);
  return (target, callback) => {
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    const tls = target.protocol === 'https:';
    const port = Number(target.port) || (tls ? 443 : 80);
    const chosen: Promise<string> =
      isIP(host) !== 0
        ? Promise.resolve(host)
        : resolveAll(host).then((found) => {
            const first = found[0];
            if (!first) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
            if (found.some((entry) => refusedAddressKind(entry.address, options.policy) !== null))
              throw new ForbiddenAddressError(options.policy.production);
            return first.address;
          });
    chosen.then(
      (address) => {
        if (refusedAddressKind(address, options.policy) !== null) {
          return callback(new ForbiddenAddressError(options.policy.production), null);
        }
        connectThroughProxy(
          proxy,
          { address, port, servername: host, tls, localAddress: options.nextSource(), timeoutMs: options.timeoutMs },
          callback,
        );
      },
      (err: Error) => callback(err, null),
    );
  };
}

function resolver(
  resolve: ((hostname: string) => Promise<LookupAddress[]>) | undefined,
): (hostname: string) => Promise<LookupAddress[]> {
  return (
    resolve ??
    ((hostname: string) =>
      new Promise<LookupAddress[]>((done, fail) =>
        dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? fail(err) : done(addresses))),
      ))
  );
}

class WebhookTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`No complete response within ${timeoutMs} ms`);
  }
}

/**
 * A net.connect lookup that resolves every address of the host and refuses the host when the
 * policy refuses any of them (as the check when the URL is saved does, in production).
 */
function guardedLookup(
  policy: AddressPolicy,
  resolve: ((hostname: string) => Promise<LookupAddress[]>) | undefined,
): LookupFunction {
  const resolveAll = resolver(resolve);
  return (hostname: string, options: LookupOptions, callback) => {
    resolveAll(hostname).then(
      (found) => {
        const addresses = found.filter((entry) => !options.family || entry.family === options.family);
        const first = addresses[0];
        if (!first) {
          const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
          return callback(err, '', 0);
        }
        if (addresses.some((entry) => refusedAddressKind(entry.address, policy) !== null)) {
          return callback(new ForbiddenAddressError(policy.production), '', 0);
        }
        if (options.all) return callback(null, addresses);
        return callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * The first `limit` bytes as text, cut before a character the limit would split, and without NUL
 * characters, which a PostgreSQL text column cannot hold.
 */
export function textExcerpt(bytes: Buffer, limit: number): string {
  let end = Math.min(bytes.length, limit);
  if (end < bytes.length) {
    // Step back over continuation bytes (10xxxxxx) to the start of the character that was cut.
    let start = end;
    while (start > 0 && start > end - 4 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start--;
    end = start;
  }
  return bytes.subarray(0, end).toString('utf8').replaceAll('\u0000', '\ufffd');
}

/** A sentence for the attempt log: what went wrong, in the terms a merchant's operator knows. */
function describeError(err: unknown): string {
  const error = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err instanceof ForbiddenAddressError || err instanceof EgressProxyError) return err.message;
  if (error.cause instanceof EgressProxyError || error.cause instanceof ForbiddenAddressError)
    return error.cause.message;
  const code = error.code ?? error.cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'Connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'The connection was closed before a complete response (reset)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'The host name does not resolve';
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'No complete response in time';
    case 'ERR_FORBIDDEN_ADDRESS':
      return new ForbiddenAddressError(true).message;
    case 'ERR_EGRESS_PROXY':
      return (error.message ?? error.cause?.message ?? 'The egress proxy failed').slice(0, 500);
    default:
      if (code?.startsWith('ERR_TLS') || code?.startsWith('CERT_') || code?.includes('SSL')) {
        return `TLS handshake failed (${code})`;
      }
      return `Request failed${code ? ` (${code})` : ''}: ${error.message ?? String(err)}`.slice(0, 500);
  }
}
