/**
 * Masks card data in text that is logged or answered but was written by the caller: a request's
 * URL, a field name. A card number is found by its shape alone (12 to 19 digits, maybe split by
 * spaces, dashes, '+' or '%20'), since a typed-in number need not pass the Luhn check. Digits
 * right after a letter or '_' are an id (`pay_` + 19 digits), not a card number.
 */
const cardLikeRun = /(?<![\w%])\d(?:(?:[ +-]|%20)?\d){11,18}(?![\d])/g;

/** Query parameters whose value is a secret: the 3-D Secure page's and hosted pages' links. */
const secretQueryParameters = new Set(['secret', 'token', 'clientsecret', 'client_secret']);

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
      const secret = secretQueryParameters.has(safeDecode(name).toLowerCase());
      return `${maskCardNumbers(name)}=${secret ? '[redacted]' : maskCardNumbers(pair.slice(equals + 1))}`;
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
