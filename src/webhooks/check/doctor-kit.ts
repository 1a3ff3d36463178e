import { isDeepStrictEqual } from 'node:util';
import { createHmac } from 'node:crypto';
import type { DoctorBody, DoctorFinding } from './doctor-schemas.js';

/*
 * What both doctors (docs/webhooks.md#what-is-sent headers in doctor.ts, Standard Webhooks in doctor-standard.ts) share:
 * the keys tried, the bodies tried, header lookup and the "body changed" finding.
 */

const excerptRadius = 24;

export interface Key {
  label: string;
  kind: 'given' | 'endpoint' | 'legacy';
  endpointId?: string;
  secret: string;
}

export interface Candidate {
  label: string;
  text: string;
}

/** Header lines or an object as [name, value] pairs, names as given. */
export function headerPairs(headers: DoctorBody['headers']): Array<[string, string]> {
  if (typeof headers !== 'string') {
    return Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? (value[0] ?? '') : value]);
  }
  const pairs: Array<[string, string]> = [];
  for (const line of headers.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    // The request line (POST /… HTTP/1.1) and blank lines have no header name.
    if (colon <= 0 || /\s/.test(line.slice(0, colon))) continue;
    pairs.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  return pairs;
}

/** The header's value, and whether it carried exactly the capitalisation Tessera sends (docs/webhooks.md#what-is-sent). */
export function findHeader(
  pairs: Array<[string, string]>,
  name: string,
): { value: string; exact: boolean; as: string } | null {
  const exact = pairs.find(([key]) => key === name);
  if (exact) return { value: exact[1], exact: true, as: name };
  const loose = pairs.find(([key]) => key.toLowerCase() === name.toLowerCase());
  return loose ? { value: loose[1], exact: false, as: loose[0] } : null;
}

export function hmacHex(secret: string, requestTime: string, body: string): string {
  return createHmac('sha256', secret).update(`${requestTime}.${body}`).digest('hex');
}

export function firstDifference(a: string, b: string): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index++;
  return index;
}

export function around(text: string, position: number): string {
  return JSON.stringify(text.slice(Math.max(0, position - excerptRadius), position + excerptRadius));
}

export function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function bodyChanged(received: string, original: Candidate): DoctorFinding {
  const position = firstDifference(received, original.text);
  const sameJson = parsed(received) !== undefined && isDeepStrictEqual(parsed(received), parsed(original.text));
  const how = sameJson
    ? 'the same JSON in other bytes: it was re-encoded (white space, escaping, number form or key order)'
    : 'its content differs';
  return {
    code: 'body_changed',
    severity: 'problem',
    message:
      `The body is not the one Tessera signed (${original.label}): ${how}. First difference at position ` +
      `${position}: received ${around(received, position)}, signed ${around(original.text, position)}. ` +
      'Verify over the raw body exactly as received, before parsing or re-encoding it.',
    position,
    received: received.slice(Math.max(0, position - excerptRadius), position + excerptRadius),
    sent: original.text.slice(Math.max(0, position - excerptRadius), position + excerptRadius),
  };
}
