import { createHmac, createPublicKey, verify } from 'node:crypto';
import { isoTimestamp } from '../../time.js';
import { signStandardWebhook, standardWebhookKey } from '../signature.js';
import { bodyChanged, findHeader, type Candidate, type Key } from './doctor-kit.js';
import type { DoctorFinding } from './doctor-schemas.js';

/*
 * The doctor for Standard Webhooks headers (docs/webhooks.md#standard-webhooks-format, docs/decisions/0015 and 0026): the same
 * questions as for the headers (docs/webhooks.md#what-is-sent) — which header is missing, is the time acceptable, which key
 * and which body the signature matches — plus the three ways receivers of this format usually fail:
 * the `whsec_` prefix (the key is the bytes its base64 part decodes to), the 5-minute tolerance of
 * `webhook-timestamp` (Unix seconds), and the signature list (space-separated `v1,`/`v1a,` entries,
 * one matching is enough).
 */

/** The Standard Webhooks libraries' default tolerance, either way. */
const toleranceSeconds = 300;
const standardHeaders = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/** Whether the notification was sent in the standard format: any of its headers, in any letter case. */
export function hasStandardHeaders(pairs: Array<[string, string]>): boolean {
  return standardHeaders.some((name) => findHeader(pairs, name) !== null);
}

interface Entry {
  version: string;
  encoded: string;
  text: string;
}

function entriesOf(header: string): Entry[] {
  return header
    .trim()
    .split(/\s+/)
    .filter((text) => text !== '')
    .map((text) => {
      const comma = text.indexOf(',');
      return comma < 0
        ? { version: '', encoded: '', text }
        : { version: text.slice(0, comma), encoded: text.slice(comma + 1), text };
    });
}

function timestampFindings(timestamp: string, now: Date): DoctorFinding[] {
  if (!/^\d{1,12}$/.test(timestamp)) {
    const milliseconds = /^\d{13,}$/.test(timestamp);
    return [
      {
        code: 'malformed_webhook_timestamp',
        severity: 'problem',
        message:
          `webhook-timestamp ${JSON.stringify(timestamp)} is not Unix seconds` +
          (milliseconds ? ' (it looks like milliseconds)' : '') +
          ': Tessera sends whole seconds since 1970 (UTC), and signs that text as it is.',
      },
    ];
  }
  const skew = Math.round(now.getTime() / 1000 - Number(timestamp));
  if (Math.abs(skew) <= toleranceSeconds) return [];
  return [
    {
      code: 'clock_skew',
      severity: 'problem',
      message:
        `webhook-timestamp is ${Math.abs(skew)} s ${skew > 0 ? 'behind' : 'ahead of'} Tessera's clock ` +
        `(${isoTimestamp(now)}); Standard Webhooks libraries accept 5 minutes either way. It is Unix seconds: ` +
        'compare it with seconds, not milliseconds (Date.now() / 1000), keep the receiver clock synchronised ' +
        '(NTP), and if this request was captured a while ago, try a fresh one.',
    },
  ];
}

/** Whether `entry` is the signature `key` makes over `signed` (a public key `whpk_` verifies `v1a,`). */
function entryMatches(entry: Entry, key: Key, id: string, timestamp: string, text: string): boolean {
  if (key.secret.startsWith('whpk_')) {
    if (entry.version !== 'v1a') return false;
    const raw = Buffer.from(key.secret.slice('whpk_'.length), 'base64');
    const signature = Buffer.from(entry.encoded, 'base64');
    if (raw.length !== 32 || signature.length !== 64) return false;
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
      format: 'jwk',
    });
    return verify(null, Buffer.from(`${id}.${timestamp}.${text}`, 'utf8'), publicKey, signature);
  }
  // HMAC and ed25519 signatures are both deterministic: signing again gives the same text.
  return signStandardWebhook([key.secret], id, Number(timestamp), text) === entry.text;
}

/** How receivers that mishandle the `whsec_` prefix sign, so a merchant can compare with what theirs computed. */
function prefixFinding(token: string, id: string, timestamp: string, body: string): DoctorFinding {
  const signed = `${id}.${timestamp}.${body}`;
  const start = (key: Buffer | string) => createHmac('sha256', key).update(signed).digest('base64').slice(0, 12);
  const afterPrefix = token.startsWith('whsec_') ? token.slice('whsec_'.length) : token;
  const hex = createHmac('sha256', standardWebhookKey(token)).update(signed).digest('hex').slice(0, 12);
  return {
    code: 'secret_prefix',
    severity: 'info',
    message:
      'The key of a `v1,` signature is the bytes the base64 text after `whsec_` decodes to, not the text: ' +
      `keyed with the whole token as text the signature would begin ${start(token)}…, with the text after ` +
      `whsec_ undecoded ${start(afterPrefix)}…, and as hex instead of base64 it would begin ${hex}…. If your ` +
      'verifier computed one of these, strip `whsec_` and base64-decode the rest (Standard Webhooks libraries ' +
      'do: new Webhook(token)).',
  };
}

/** The first (body, entry, key) that match, bodies in the order given, then entries, then keys. */
function findMatch(entries: Entry[], keys: Key[], candidates: Candidate[], id: string, timestamp: string) {
  for (const candidate of candidates) {
    for (const [index, entry] of entries.entries()) {
      const key = keys.find((item) => entryMatches(entry, item, id, timestamp, candidate.text));
      if (key) return { candidate, index, entry, key };
    }
  }
  return undefined;
}

export function standardFindings(input: {
  pairs: Array<[string, string]>;
  body: string;
  keys: Key[];
  candidates: Candidate[];
  intended: Key | undefined;
  now: Date;
}): DoctorFinding[] {
  const { pairs, body, keys, candidates, intended, now } = input;
  const findings: DoctorFinding[] = [];
  const found = Object.fromEntries(standardHeaders.map((name) => [name, findHeader(pairs, name)]));
  for (const name of standardHeaders) {
    if (!found[name]) {
      findings.push({
        code: 'header_missing',
        severity: 'problem',
        message: `The ${name} header is missing (the standard format sends webhook-id, webhook-timestamp and webhook-signature).`,
      });
    }
  }
  const id = found['webhook-id']?.value.trim();
  const timestamp = found['webhook-timestamp']?.value.trim();
  const header = found['webhook-signature']?.value;
  if (timestamp !== undefined) findings.push(...timestampFindings(timestamp, now));
  if (id === undefined || timestamp === undefined || header === undefined || !/^\d{1,12}$/.test(timestamp)) {
    return findings;
  }

  const entries = entriesOf(header);
  const malformed = entries.filter(
    (entry) => !/^v1a?$/.test(entry.version) || !/^[A-Za-z0-9+/]+={0,2}$/.test(entry.encoded),
  );
  if (entries.length === 0 || malformed.length === entries.length) {
    findings.push({
      code: 'malformed_signature',
      severity: 'problem',
      message:
        'webhook-signature holds no `v1,<base64>` or `v1a,<base64>` entry: it is a space-separated list of ' +
        'version,signature pairs (a comma inside each entry, spaces between entries).',
    });
    return findings;
  }
  if (intended?.secret.startsWith('whpk_') && !entries.some((entry) => entry.version === 'v1a')) {
    findings.push({
      code: 'wrong_algorithm',
      severity: 'problem',
      message:
        'You gave a public key (whpk_…), but this notification carries only `v1,` (HMAC-SHA256) signatures: ' +
        'its endpoint signs with its whsec_ token (signatureAlgorithm hmac-sha256). Verify with that token.',
    });
  } else if (intended?.secret.startsWith('whsec_') && !entries.some((entry) => entry.version === 'v1')) {
    findings.push({
      code: 'wrong_algorithm',
      severity: 'problem',
      message:
        'This notification carries only `v1a,` (ed25519) signatures: its endpoint signs with ed25519 ' +
        "(signatureAlgorithm ed25519). Verify the v1a entries with the endpoint's publicKey (whpk_…), not a whsec_ token.",
    });
  }

  // The key the receiver means is looked for first: during a grace period another entry may match
  // the endpoint's newer key, which is no mistake of the receiver.
  const match =
    findMatch(entries, intended ? [intended] : [], candidates, id, timestamp) ??
    findMatch(entries, keys, candidates, id, timestamp);
  if (match) {
    const { candidate, index, entry, key } = match;
    if (candidate.text !== body) findings.push(bodyChanged(body, candidate));
    if (intended && key.secret !== intended.secret) {
      findings.push({
        code: 'wrong_token',
        severity: 'problem',
        message: `Signed with ${key.label}, not with ${intended.label}. Verify with the key of the endpoint that sent it.`,
      });
    }
    if (entries.length > 1) {
      findings.push({
        code: 'signature_list',
        severity: index > 0 ? 'warning' : 'info',
        message:
          `webhook-signature holds ${entries.length} signatures separated by spaces (a roll's grace period, ` +
          `or HMAC beside ed25519); entry ${index + 1} matches. Split the header on spaces, strip each ` +
          '`v1,`/`v1a,` prefix and accept when any one matches: comparing the whole header, splitting on ' +
          'commas, or checking only the first entry fails.',
      });
    }
    if (entry.version === 'v1') findings.push(prefixFinding(key.secret, id, timestamp, candidate.text));
    return findings;
  }
  const stored = candidates.find((item) => item.label.startsWith('event '));
  if (stored) findings.push(bodyChanged(body, stored));
  findings.push({
    code: 'no_key_matches',
    severity: 'problem',
    message:
      `No webhook-signature entry matches ${keys.map((item) => item.label).join(', ')}, over ` +
      `${candidates.map((item) => item.label).join(', ')}, with webhook-id and webhook-timestamp as given ` +
      '(both are part of the signed text `id.timestamp.body`). The key may have been rolled, the body changed ' +
      'beyond recognition, or the headers may belong to another request.',
  });
  return findings;
}
