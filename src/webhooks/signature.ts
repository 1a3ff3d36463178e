import { createHmac } from 'node:crypto';

/** SPEC §6.3 `request-time`: UTC, `yyyy-MM-dd'T'HH:mm:ss`. */
export function formatRequestTime(date: Date): string {
  // Every attempt of the same second has the same text: formatted once per second.
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastText = date.toISOString().slice(0, 19);
  }
  return lastText;
}

let lastSecond = Number.NaN;
let lastText = '';

export type SignatureCase = 'upper' | 'lower';

/**
 * SPEC §6.3: HMAC-SHA256 keyed with the endpoint's token over `<request-time>.<raw body>`, sent as
 * hex in the endpoint's letter case (DESIGN §5): upper by default, as SPEC §6.3's sample and the
 * provider's PHP SDK; lower for verifiers that compare case-sensitively with lower-case hex (its Java SDK).
 */
export function signWebhook(
  token: string,
  requestTime: string,
  body: string,
  letterCase: SignatureCase = 'upper',
): string {
  const hex = createHmac('sha256', token).update(`${requestTime}.${body}`).digest('hex');
  return letterCase === 'upper' ? hex.toUpperCase() : hex;
}

/** DESIGN §12: how an endpoint's notifications are signed and which headers carry it. */
export const webhookFormats = ['moneycollect', 'standard'] as const;
export type WebhookFormat = (typeof webhookFormats)[number];

const standardSecretPrefix = 'whsec_';

/**
 * Standard Webhooks (https://www.standardwebhooks.com, DESIGN §12): the secret `whsec_<base64>`
 * keys the HMAC with the bytes its base64 part decodes to. An endpoint token is `whsec_` and 48
 * base62 characters, all of them base64 characters (48 = 36 bytes, no padding), so the token a
 * merchant already has is a valid Standard Webhooks secret as it is: changing an endpoint's format
 * keeps its token, and a Standard Webhooks library takes it unchanged.
 */
export function standardWebhookKey(token: string): Buffer {
  const encoded = token.startsWith(standardSecretPrefix) ? token.slice(standardSecretPrefix.length) : token;
  return Buffer.from(encoded, 'base64');
}

/**
 * Standard Webhooks `webhook-signature`: `v1,` + base64 HMAC-SHA256 over `<id>.<timestamp>.<body>`,
 * one per key, separated by spaces (DESIGN §12: during a roll's grace period the new and the old
 * token both sign, so a receiver verifying with either accepts the notification).
 */
export function signStandardWebhook(
  tokens: readonly string[],
  messageId: string,
  timestampSeconds: number,
  body: string,
): string {
  const signed = `${messageId}.${timestampSeconds}.${body}`;
  return tokens
    .map((token) => `v1,${createHmac('sha256', standardWebhookKey(token)).update(signed).digest('base64')}`)
    .join(' ');
}
