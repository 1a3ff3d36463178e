/**
 * Verifies a Tessera webhook notification in a merchant's server, in either format of the endpoint:
 * `moneycollect` (docs/webhooks.md#what-is-sent: `request-time` and `signature` headers) or `standard` (Standard
 * Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`), told apart by the headers.
 * Dependency-free: copy this file, or import it from the SDK package (`@tessera/node` or
 * `@tessera/node/webhook`).
 *
 *   const event = verifyWebhook({ headers: req.headers, rawBody, token: process.env.TESSERA_WEBHOOK_TOKEN });
 *
 * Verify over the raw body exactly as received, before any JSON parsing.
 */
import { createHmac, createPublicKey, timingSafeEqual, verify, type KeyObject } from 'node:crypto';

export type WebhookVerificationReason =
  | 'missing_request_time'
  | 'missing_signature'
  | 'malformed_request_time'
  | 'stale_request_time'
  | 'future_request_time'
  | 'bad_signature'
  | 'malformed_body'
  | 'missing_webhook_id'
  | 'malformed_webhook_timestamp';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

export interface WebhookEvent<Data = Record<string, unknown>> {
  id: string;
  apiVersion: string;
  type: string;
  created: string;
  /** Grows with each event of the same object: an event with a lower one than already processed is stale. */
  sequence?: number;
  data: Data;
}

export interface VerifyWebhookOptions {
  /** Request headers; any capitalisation, as Node gives them (`req.headers`) or a plain object / Headers. */
  headers: Record<string, string | string[] | undefined> | { get(name: string): string | null };
  /** The body exactly as received: a string or the raw bytes. */
  rawBody: string | Uint8Array;
  /**
   * The endpoint's webhook token (dashboard → Webhook → endpoint → reveal): `whsec_…`, or for an
   * ed25519 endpoint its public key `whpk_…`, which verifies the `v1a,` signatures.
   */
  token: string;
  /**
   * Accepted distance between the sending time and now, either way: default 180 s for `request-time`
   * (docs/webhooks.md#what-is-sent advises 3 minutes), 300 s for `webhook-timestamp` (the Standard Webhooks default).
   */
  toleranceSeconds?: number;
  /** For tests: the current time. */
  now?: Date;
}

function header(headers: VerifyWebhookOptions['headers'], name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/** Returns the parsed event when the signature and the time check pass; throws WebhookVerificationError otherwise. */
export function verifyWebhook<Data = Record<string, unknown>>(options: VerifyWebhookOptions): WebhookEvent<Data> {
  if (header(options.headers, 'webhook-signature') !== undefined) return verifyStandardWebhook<Data>(options);
  const { token } = options;
  const requestTime = header(options.headers, 'request-time')?.trim();
  if (!requestTime) throw new WebhookVerificationError('missing_request_time', 'The request-time header is missing');
  const signature = header(options.headers, 'signature')?.trim();
  if (!signature) throw new WebhookVerificationError('missing_signature', 'The signature header is missing');

  // request-time is UTC without a zone designator: yyyy-MM-dd'T'HH:mm:ss.
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(requestTime);
  if (!match) throw new WebhookVerificationError('malformed_request_time', "request-time is not yyyy-MM-dd'T'HH:mm:ss");
  const sentAtMs = Date.UTC(+match[1]!, +match[2]! - 1, +match[3]!, +match[4]!, +match[5]!, +match[6]!);
  requireWithinTolerance('request-time', sentAtMs, options, 180);

  const body = bodyBytes(options.rawBody);
  const expected = createHmac('sha256', token)
    .update(Buffer.concat([Buffer.from(`${requestTime}.`, 'utf8'), body]))
    .digest();
  const given = /^[0-9a-fA-F]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
  // Constant-time comparison of the decoded bytes, so upper- and lower-case hex both pass.
  if (!sameBytes(given, expected)) {
    throw new WebhookVerificationError('bad_signature', 'The signature does not match this token and body');
  }
  return parseEvent<Data>(body);
}

/**
 * The one check of a sending time, for both formats: `sentAtMs` within the tolerance of now, either
 * way (`defaultToleranceSeconds` when the caller gives none).
 */
function requireWithinTolerance(
  name: 'request-time' | 'webhook-timestamp',
  sentAtMs: number,
  options: VerifyWebhookOptions,
  defaultToleranceSeconds: number,
): void {
  const { toleranceSeconds = defaultToleranceSeconds, now = new Date() } = options;
  const skewSeconds = (now.getTime() - sentAtMs) / 1000;
  if (skewSeconds > toleranceSeconds) {
    throw new WebhookVerificationError('stale_request_time', `${name} is more than ${toleranceSeconds}s in the past`);
  }
  if (skewSeconds < -toleranceSeconds) {
    throw new WebhookVerificationError(
      'future_request_time',
      `${name} is more than ${toleranceSeconds}s in the future`,
    );
  }
}

function bodyBytes(rawBody: string | Uint8Array): Buffer {
  return typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
}

function sameBytes(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The `whsec_…` token as a Standard Webhooks key: the bytes its base64 part decodes to. */
function standardKey(token: string): Buffer {
  return Buffer.from(token.startsWith('whsec_') ? token.slice('whsec_'.length) : token, 'base64');
}

/** An ed25519 endpoint's `whpk_…` public key (base64 of its 32 bytes) as a key object. */
function ed25519PublicKey(token: string): KeyObject | undefined {
  const bytes = Buffer.from(token.slice('whpk_'.length), 'base64');
  if (bytes.length !== 32) return undefined;
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: bytes.toString('base64url') }, format: 'jwk' });
}

/**
 * Standard Webhooks: `webhook-signature` holds one or more space-separated signatures of
 * `<webhook-id>.<webhook-timestamp>.<body>` (two during a token roll's grace period); one matching
 * is enough. With a `whsec_…` token the `v1,` ones are checked (base64 HMAC-SHA256); with an ed25519
 * endpoint's `whpk_…` public key the `v1a,` ones (base64 ed25519). Other versions are skipped.
 */
function verifyStandardWebhook<Data>(options: VerifyWebhookOptions): WebhookEvent<Data> {
  const { token } = options;
  const id = header(options.headers, 'webhook-id');
  if (!id) throw new WebhookVerificationError('missing_webhook_id', 'The webhook-id header is missing');
  const timestamp = header(options.headers, 'webhook-timestamp')?.trim() ?? '';
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new WebhookVerificationError('malformed_webhook_timestamp', 'webhook-timestamp is not Unix seconds');
  }
  requireWithinTolerance('webhook-timestamp', Number(timestamp) * 1000, options, 300);

  const body = bodyBytes(options.rawBody);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
  const publicKey = token.startsWith('whpk_') ? ed25519PublicKey(token) : undefined;
  const expected = publicKey ? undefined : createHmac('sha256', standardKey(token)).update(signed).digest();
  const signatures = (header(options.headers, 'webhook-signature') ?? '').trim().split(/\s+/);
  const matches = signatures.some((versioned) => {
    const [version, encoded] = versioned.split(',', 2);
    if (encoded === undefined) return false;
    const given = Buffer.from(encoded, 'base64');
    if (publicKey) return version === 'v1a' && given.length === 64 && verify(null, signed, publicKey, given);
    return version === 'v1' && expected !== undefined && sameBytes(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('bad_signature', 'No webhook-signature matches this token and body');
  return parseEvent<Data>(body);
}

function parseEvent<Data>(body: Buffer): WebhookEvent<Data> {
  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('malformed_body', 'The body is not JSON');
  }
  const candidate = event as Partial<WebhookEvent>;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.id !== 'string' ||
    typeof candidate.type !== 'string' ||
    typeof candidate.apiVersion !== 'string' ||
    typeof candidate.created !== 'string' ||
    typeof candidate.data !== 'object'
  ) {
    throw new WebhookVerificationError(
      'malformed_body',
      'The body is not a webhook event {id, apiVersion, type, created, data}',
    );
  }
  return event as WebhookEvent<Data>;
}
