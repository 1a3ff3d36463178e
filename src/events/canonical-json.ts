/**
 * DESIGN §5: the one form in which event bodies are stored, signed and sent. Verifiers that
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
  if (Array.isArray(value)) return `[${value.map((item) => encode(item) ?? 'null').join(',')}]`;
  if (value instanceof Date) return encodeString(value.toISOString());
  const members: string[] = [];
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const encoded = encode(child);
    if (encoded !== undefined) members.push(`${encodeString(key)}:${encoded}`);
  }
  // An empty object would come back from a PHP round trip as [], so it is sent as null.
  return members.length === 0 ? 'null' : `{${members.join(',')}}`;
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

function encodeString(text: string): string {
  // JSON.stringify escapes quotes, backslashes and control characters as PHP does (\n, \u001f);
  // what remains is to escape every non-ASCII UTF-16 unit, including both halves of a pair.
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (char) => {
    if (char === '\u007f') return char;
    return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}
