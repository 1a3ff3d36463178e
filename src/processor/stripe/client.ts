/**
 * The official Stripe client, set up the way Tessera's connector needs it
 * (docs/processors-stripe.md): no retries of its own, since the reconciliation sweep replays an
 * unknown outcome with the same idempotency key; the processor timeout; and a base URL that may
 * point at the test stand-in.
 */

import Stripe from 'stripe';

export const stripePublicApiUrl = 'https://api.stripe.com';

export interface StripeAddress {
  host: string;
  port: number;
  protocol: 'http' | 'https';
}

/**
 * A processor account's `baseUrl` as the client's host, port and protocol. The client always asks
 * for `/v1/…` at the root, so a URL with a path, query or credentials cannot be honoured.
 */
export function parseStripeBaseUrl(baseUrl: string): StripeAddress {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error('The Stripe baseUrl is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error('The Stripe baseUrl must be http or https');
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    throw new Error('The Stripe baseUrl must not have a path, query or fragment');
  }
  if (url.username !== '' || url.password !== '') throw new Error('The Stripe baseUrl must not carry credentials');
  const protocol = url.protocol === 'https:' ? 'https' : 'http';
  // URL keeps an IPv6 literal in brackets; the HTTP client wants the bare address.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? (protocol === 'https' ? 443 : 80) : Number(url.port);
  return { host, port, protocol };
}

export function createStripeClient({
  secretKey,
  baseUrl = stripePublicApiUrl,
  timeoutMs,
}: {
  secretKey: string;
  baseUrl?: string;
  timeoutMs: number;
}): Stripe {
  const address = parseStripeBaseUrl(baseUrl);
  return new Stripe(secretKey, {
    // The version the client's types describe, so that the objects read are the objects typed.
    apiVersion: Stripe.API_VERSION,
    // Tessera's own sweep replays an unknown outcome with the same key; a retry inside the
    // client would only hold the payment's caller longer (docs/processors-stripe.md, Never twice).
    maxNetworkRetries: 0,
    timeout: timeoutMs,
    host: address.host,
    port: address.port,
    protocol: address.protocol,
    telemetry: false,
  });
}

/**
 * Starts a call of the client without the call-site stack it captures for every request (`new
 * Error().stack` in StripeResource._makeRequest, before its first await): Tessera never reads it
 * (stripeFailure keeps the status and codes only), and formatting it cost a quarter of a
 * millisecond per payment (docs/decisions/0051-connector-overhead.md). The limit is restored
 * before anything else runs, since the capture happens while `start` runs synchronously.
 */
export function withoutCallSite<T>(start: () => Promise<T>): Promise<T> {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return start();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Stripe's error as an exception Tessera can log: the HTTP status, Stripe's error type and code,
 * the parameter and the request id. Never Stripe's message, which can quote a request's values,
 * and never the request itself (the card) or the secret key.
 */
export function stripeFailure(operation: string, caught: unknown): Error {
  if (caught instanceof Stripe.errors.StripeError) {
    const parts = [
      `status ${caught.statusCode ?? 'none'}`,
      `type ${caught.rawType || caught.type}`,
      caught.code ? `code ${caught.code}` : null,
      caught.param ? `param ${caught.param}` : null,
      caught.requestId ? `request ${caught.requestId}` : null,
    ].filter((part) => part !== null);
    if (caught instanceof Stripe.errors.StripeConnectionError) {
      const timedOut = /timeout/i.test(caught.message);
      parts.splice(1, 0, timedOut ? 'timed out' : 'connection failed');
    }
    return new Error(`Stripe ${operation} failed: ${parts.join(', ')}`);
  }
  const name = caught instanceof Error ? caught.name : typeof caught;
  return new Error(`Stripe ${operation} failed: ${name}`);
}
