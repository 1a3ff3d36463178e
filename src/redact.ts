/**
 * Masks card data in text that is logged or answered but was written by the caller: a request's
 * URL, a field name. A card number is found by its shape alone (12 to 19 digits, maybe split by
 * spaces, dashes, '+' or '%20'), since a typed-in number need not pass the Luhn check. Digits
 * right after a letter or '_' are an id (`pay_` + 19 digits), not a card number.
 */
const cardLikeRun = /(?<![\w%])\d(?:(?:[ +-]|%20)?\d){11,18}(?![\d])/g;

/**
 * The one list of what names a secret (docs/security.md, "Secrets in logs"): a URL query parameter,
 * a header or a field of a logged object whose name contains any of these words, in any case, has
 * its value replaced by `[redacted]`. A name is a secret's by what it says, not by being listed
 * one by one: `payment_client_secret`, `X-Api-Key`, `webhookToken` and `password` all are.
 */
export const secretNameWords = [
  'secret',
  'token',
  'password',
  'passwd',
  'key',
  'signature',
  'authorization',
  'cookie',
  'credential',
] as const;

export const redacted = '[redacted]';

export function isSecretName(name: string): boolean {
  const folded = name.toLowerCase();
  return secretNameWords.some((word) => folded.includes(word));
}

export const maskedCardNumber = '[card number]';

export function looksLikeCardNumber(text: string): boolean {
  return new RegExp(cardLikeRun.source).test(text);
}

export function maskCardNumbers(text: string): string {
  return text.replace(cardLikeRun, maskedCardNumber);
}

/** A request URL fit for a log line: card numbers masked, the values of secret parameters dropped. */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart < 0) return maskCardNumbers(url);
  const query = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals < 0) return maskCardNumbers(pair);
      const name = pair.slice(0, equals);
      const secret = isSecretName(safeDecode(name));
      return `${maskCardNumbers(name)}=${secret ? redacted : maskCardNumbers(pair.slice(equals + 1))}`;
    })
    .join('&');
  return `${maskCardNumbers(url.slice(0, queryStart))}?${query}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

const maxLoggedDepth = 6;

const isPlainObject = (value: object) => {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
};

/**
 * The fields of a log line as written (the logger's `formatters.log`, src/logger.ts): the value
 * of every field whose name is a secret's is `[redacted]`, and every text that is a URL with a query
 * goes through redactUrl. Only plain objects and arrays are walked (a request or reply object has
 * its own serializer); the originals are not changed.
 */
export function redactLogFields(fields: Record<string, unknown>): Record<string, unknown> {
  return redactValue(fields, 0) as Record<string, unknown>;
}

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string')
    return value.includes('?') && /^(?:[a-z][a-z0-9+.-]*:\/\/|\/)/i.test(value) ? redactUrl(value) : value;
  if (value === null || typeof value !== 'object' || depth >= maxLoggedDepth) return value;
  if (Array.isArray(value)) return value.map((child) => redactValue(child, depth + 1));
  if (!isPlainObject(value)) return value;
  const result: Record<string, unknown> = {};
  for (const [name, child] of Object.entries(value)) {
    result[name] =
      child !== undefined && child !== null && isSecretName(name) ? redacted : redactValue(child, depth + 1);
  }
  return result;
}
