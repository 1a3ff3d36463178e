/**
 * DESIGN §5: the one form in which event bodies are stored, signed and sent. Verifiers that
 * re-encode the parsed body (PHP: json_encode(json_decode($body, true), JSON_UNESCAPED_SLASHES))
 * must get the same bytes back, so: compact, '/' not escaped, every non-ASCII character escaped
 * as \u with four lower-case hex digits, no empty objects (PHP turns {} into []), and numbers as
 * integers or shortest decimals.
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
      if (!Number.isFinite(value)) throw new TypeError('canonicalJson: numbers must be finite');
      return JSON.stringify(value);
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

function encodeString(text: string): string {
  // JSON.stringify escapes quotes, backslashes and control characters as PHP does (\n, \u001f);
  // what remains is to escape every non-ASCII UTF-16 unit, including both halves of a pair.
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (char) => {
    if (char === '\u007f') return char;
    return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}
