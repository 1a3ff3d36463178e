import type { WebhookHttpClient, WebhookPostOutcome } from '../http-client.js';
import {
  formatRequestTime,
  signStandardWebhook,
  signWebhook,
  type SignatureCase,
  type WebhookFormat,
} from '../signature.js';

/*
 * The attempt (Svix's worker "call"): sign one delivery, POST it, classify the answer. It touches no
 * database and keeps no state, so it can be tried against any local receiver; what it returns is a
 * value the recorder turns into the attempt's row and the delivery's next state.
 */

/** What one attempt needs to know of its delivery. */
export interface AttemptRequest {
  /** Only an enabled endpoint's deliveries are sent. */
  endpointState: 'enabled' | 'disabled' | 'deleted';
  url: string;
  body: string;
  /** The endpoint's hex letter case for the Signature header (docs/webhooks.md#what-is-sent). */
  signatureCase: SignatureCase;
  /** The attempt's time: its Request-Time header. */
  attemptedAt: Date;
  /** The signing key: the endpoint's newest token, or the merchant's legacy key for the legacy kind. */
  signingKey: () => Promise<string>;
  /**
   * docs/decisions/0014-legacy-opt-in-and-sequence.md: `standard` sends Standard Webhooks headers (the endpoint kind only; the legacy kind
   * is always sent as docs/webhooks.md#what-is-sent writes). Default `moneycollect`.
   */
  format?: WebhookFormat;
  /** The event id: `webhook-id` in the standard format. */
  eventId?: string;
  /** Standard format, during a roll's grace period: the replaced token, which signs beside the newest. */
  previousSigningKey?: () => Promise<string | null>;
}

/** How an attempt ended. */
export interface AttemptResult {
  /** docs/webhooks.md#acknowledgement-and-retries: delivered, a 2xx answer whose body is `success`. */
  succeeded: boolean;
  /** Not sent and not to be tried again, whatever the retry schedule says (endpoint disabled or deleted). */
  giveUp: boolean;
  httpStatus: number | null;
  responseExcerpt: string | null;
  /** Why the attempt failed, in the merchant's terms; null when it succeeded. */
  error: string | null;
  /** The HTTP exchange's duration; 0 when nothing was sent. */
  durationMs: number;
  /** The signing key could not be read (an internal error, for the log; the error above says so). */
  keyError?: unknown;
}

const notSent = { succeeded: false, giveUp: false, httpStatus: null, responseExcerpt: null, durationMs: 0 } as const;

/** Signs and sends one delivery and classifies the answer. Never throws for a receiver's fault. */
export async function attemptDelivery(httpClient: WebhookHttpClient, request: AttemptRequest): Promise<AttemptResult> {
  // A delivery planned before its endpoint was disabled or deleted is ended, not sent.
  if (request.endpointState !== 'enabled') {
    return { ...notSent, giveUp: true, error: `Not sent: the webhook endpoint was ${request.endpointState}` };
  }
  let signingKey: string;
  let previousKey: string | null = null;
  try {
    signingKey = await request.signingKey();
    if (request.format === 'standard') previousKey = (await request.previousSigningKey?.()) ?? null;
  } catch (err) {
    return { ...notSent, error: 'Not sent: Tessera could not read the signing key (internal error)', keyError: err };
  }
  const headers =
    request.format === 'standard'
      ? standardHeaders(request, previousKey === null ? [signingKey] : [signingKey, previousKey])
      : moneycollectHeaders(request, signingKey);
  const outcome = await httpClient.post(request.url, headers, request.body);
  return classifyAnswer(outcome, outcome.durationMs);
}

/** docs/webhooks.md#what-is-sent with the capitalisations (docs/webhooks.md#acknowledgement-and-retries), which PHP verifiers read case-sensitively. */
function moneycollectHeaders(request: AttemptRequest, signingKey: string): Record<string, string> {
  const requestTime = formatRequestTime(request.attemptedAt);
  return {
    'Content-Type': 'application/json',
    'Request-Time': requestTime,
    Signature: signWebhook(signingKey, requestTime, request.body, request.signatureCase),
  };
}

/** Standard Webhooks (docs/webhooks.md#standard-webhooks-format): the event id, Unix seconds, and one `v1,` signature per signing token. */
function standardHeaders(request: AttemptRequest, signingKeys: readonly string[]): Record<string, string> {
  const messageId = request.eventId ?? '';
  const timestamp = Math.floor(request.attemptedAt.getTime() / 1000);
  return {
    'Content-Type': 'application/json',
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook(signingKeys, messageId, timestamp, request.body),
  };
}

/** docs/webhooks.md#acknowledgement-and-retries: delivered only when a 2xx answer says `success`; anything else fails. */
export function classifyAnswer(outcome: WebhookPostOutcome, durationMs: number): AttemptResult {
  if (!outcome.ok) return { ...notSent, durationMs, error: outcome.error };
  const is2xx = outcome.status >= 200 && outcome.status < 300;
  const succeeded = is2xx && outcome.body.trim() === 'success';
  const error = succeeded
    ? null
    : is2xx
      ? 'The response body is not "success"'
      : `The endpoint answered HTTP ${outcome.status}, not 2xx`;
  return {
    succeeded,
    giveUp: false,
    httpStatus: outcome.status,
    responseExcerpt: outcome.excerpt,
    error,
    durationMs,
  };
}
