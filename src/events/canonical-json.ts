/**
 * docs/webhooks.md#what-is-sent: the one form in which event bodies are stored, signed and sent. Verifiers that
 * re-encode the parsed body (PHP: json_encode(json_decode($body, true), JSON_UNESCAPED_SLASHES))
 * must get the same bytes back, so: compact, '/' not escaped, every non-ASCII character escaped
 * as \u with four lower-case hex digits, no empty objects (PHP turns {} into []), and numbers in
 * the form PHP writes them back (see encodeNumber).
 */
export function canonicalJson(value: unknown): string {
  return encode(value) ?? 'null';
}

function encode(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return encodeString(value);
    case 'number':
      return encodeNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  // Built by concatenation: an event is encoded in every payment's transaction (hot path).
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ',';
      out += encode(value[index]) ?? 'null';
    }
    return `${out}]`;
  }
  if (value instanceof Date) return encodeString(value.toISOString());
  const object = value as Record<string, unknown>;
  let out = '';
  for (const key of Object.keys(object)) {
    const encoded = encode(object[key]);
    if (encoded === undefined) continue;
    out += `${out === '' ? '{' : ','}${encodeKey(key)}:${encoded}`;
  }
  // An empty object would come back from a PHP round trip as [], so it is sent as null.
  return out === '' ? 'null' : `${out}}`;
}

/** Member names repeat from event to event: each is encoded once. */
const encodedKeys = new Map<string, string>();
const maxEncodedKeys = 10_000;

function encodeKey(key: string): string {
  let encoded = encodedKeys.get(key);
  if (encoded === undefined) {
    encoded = encodeString(key);
    if (encodedKeys.size < maxEncodedKeys) encodedKeys.set(key, encoded);
  }
  return encoded;
}

/** PHP decodes integers up to 64 bits as integers; anything else becomes a float. */
const phpIntegerLimit = 2 ** 63;

/**
 * PHP keeps a JSON integer that fits in 64 bits as an integer and writes it back as it was, which
 * is what JSON.stringify writes. Every other number comes back as PHP writes a float with
 * serialize_precision -1 (php_gcvt in mode 0): the shortest round-trip digits, in fixed notation
 * unless the decimal point falls more than three places left of them (below 1e-4) or more than
 * 17 places right (1e17 and up), where it writes d.ddde±x with at least one digit after the point
 * ("1.0e-5", "-2.5e-7", "1.0e+21") — unlike JavaScript's "0.00001", "-2.5e-7" and "1e+21".
 */
function encodeNumber(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError('canonicalJson: numbers must be finite');
  if (Number.isInteger(value) && Math.abs(value) < phpIntegerLimit) return JSON.stringify(value);
  const [significand = '0', exponentPart = '0'] = Math.abs(value).toExponential().split('e');
  const exponent = Number(exponentPart);
  // In php_gcvt's terms the value is 0.<digits> × 10^point, so point = exponent + 1.
  const point = exponent + 1;
  const fixed = point < 0 ? point >= -3 : point <= 17;
  if (fixed) return JSON.stringify(value);
  const [lead = '0', fraction = ''] = significand.split('.');
  const sign = value < 0 ? '-' : '';
  return `${sign}${lead}.${fraction === '' ? '0' : fraction}e${exponent < 0 ? '-' : '+'}${Math.abs(exponent)}`;
}

/** Whether JSON.stringify or the non-ASCII rule would change anything: a control character, a quote, a backslash or non-ASCII. */
function needsEscaping(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || code >= 0x80) return true;
  }
  return false;
}

function encodeString(text: string): string {
  if (!needsEscaping(text)) return `"${text}"`;
  // JSON.stringify escapes quotes, backslashes and control characters as PHP does (\n, \u001f),
  // and lone surrogates as \udxxx; what remains is to escape every other non-ASCII UTF-16 unit,
  // including both halves of a pair. DEL (\u007f) is ASCII and stays as it is, as PHP leaves it.
  return JSON.stringify(text).replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
