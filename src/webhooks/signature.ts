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
