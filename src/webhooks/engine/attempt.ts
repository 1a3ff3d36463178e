import { performance } from 'node:perf_hooks';
import type { WebhookHttpClient, WebhookPostOutcome } from '../http-client.js';
import { formatRequestTime, signWebhook, type SignatureCase } from '../signature.js';

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
  /** The endpoint's hex letter case for the Signature header (DESIGN §5). */
  signatureCase: SignatureCase;
  /** The attempt's time: its Request-Time header. */
  attemptedAt: Date;
  /** The signing key: the endpoint's newest token, or the merchant's legacy key for the legacy kind. */
  signingKey: () => Promise<string>;
}

/** How an attempt ended. */
export interface AttemptResult {
  /** SPEC §6.1.2 / DESIGN §5: delivered, a 2xx answer whose body is `success`. */
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
  try {
    signingKey = await request.signingKey();
  } catch (err) {
    return { ...notSent, error: 'Not sent: Tessera could not read the signing key (internal error)', keyError: err };
  }
  // SPEC §6.3 with DESIGN §5's capitalisations, which PHP verifiers read case-sensitively.
  const requestTime = formatRequestTime(request.attemptedAt);
  const sentAt = performance.now();
  const outcome = await httpClient.post(
    request.url,
    {
      'Content-Type': 'application/json',
      'Request-Time': requestTime,
      Signature: signWebhook(signingKey, requestTime, request.body, request.signatureCase),
    },
    request.body,
  );
  return classifyAnswer(outcome, Math.round(performance.now() - sentAt));
}

/** SPEC §6.1.2 / DESIGN §5: delivered only when a 2xx answer says `success`; anything else fails. */
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
