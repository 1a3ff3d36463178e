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

/**
 * SPEC §6.3: HMAC-SHA256 keyed with the endpoint's token over `<request-time>.<raw body>`,
 * sent as upper-case hex (DESIGN §5; verifiers compare without regard to case).
 */
export function signWebhook(token: string, requestTime: string, body: string): string {
  return createHmac('sha256', token).update(`${requestTime}.${body}`).digest('hex').toUpperCase();
}
