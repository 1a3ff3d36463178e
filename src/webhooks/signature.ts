import { createHmac, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

/** docs/webhooks.md#what-is-sent `request-time`: UTC, `yyyy-MM-dd'T'HH:mm:ss`. */
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
 * docs/webhooks.md#what-is-sent: HMAC-SHA256 keyed with the endpoint's token over `<request-time>.<raw body>`, sent as
 * hex in the endpoint's letter case (docs/webhooks.md#what-is-sent): upper by default, as the sample (docs/webhooks.md#what-is-sent) and the
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

/** docs/webhooks.md#standard-webhooks-format: how an endpoint's notifications are signed and which headers carry it. */
export const webhookFormats = ['moneycollect', 'standard'] as const;
export type WebhookFormat = (typeof webhookFormats)[number];

const standardSecretPrefix = 'whsec_';

/**
 * Standard Webhooks (docs/webhooks.md#standard-webhooks-format): the secret `whsec_<base64>`
 * keys the HMAC with the bytes its base64 part decodes to. An endpoint token is `whsec_` and 48
 * base62 characters, all of them base64 characters (48 = 36 bytes, no padding), so the token a
 * merchant already has is a valid Standard Webhooks secret as it is: changing an endpoint's format
 * keeps its token, and a Standard Webhooks library takes it unchanged.
 */
export function standardWebhookKey(token: string): Buffer {
  const encoded = token.startsWith(standardSecretPrefix) ? token.slice(standardSecretPrefix.length) : token;
  return Buffer.from(encoded, 'base64');
}

/** docs/webhooks.md#standard-webhooks-format / docs/decisions/0026: how a standard-format endpoint signs, as Svix offers. */
export const signatureAlgorithms = ['hmac-sha256', 'ed25519'] as const;
export type SignatureAlgorithm = (typeof signatureAlgorithms)[number];

/** Standard Webhooks' prefixes of an ed25519 key pair: the secret key Tessera keeps, the public key it shows. */
const ed25519SecretPrefix = 'whsk_';
const ed25519PublicPrefix = 'whpk_';

/** The algorithm a stored token signs with, told by its prefix (`whsk_`: ed25519; else HMAC). */
export function tokenAlgorithm(token: string): SignatureAlgorithm {
  return token.startsWith(ed25519SecretPrefix) ? 'ed25519' : 'hmac-sha256';
}

/**
 * A new ed25519 key pair as Standard Webhooks writes it (and as Svix does): the secret key
 * `whsk_` + base64 of the 32-byte seed followed by the 32-byte public key, the public key `whpk_` +
 * base64 of its 32 bytes.
 */
export function generateEd25519KeyPair(): { secretKey: string; publicKey: string } {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  const seed = Buffer.from(jwk.d ?? '', 'base64url');
  const publicKey = Buffer.from(jwk.x ?? '', 'base64url');
  return {
    secretKey: `${ed25519SecretPrefix}${Buffer.concat([seed, publicKey]).toString('base64')}`,
    publicKey: `${ed25519PublicPrefix}${publicKey.toString('base64')}`,
  };
}

/** The private key of a `whsk_` secret, parsed once per secret (signing is then about 50 µs). */
const privateKeys = new Map<string, KeyObject>();
const maxPrivateKeys = 10_000;

function ed25519PrivateKey(secretKey: string): KeyObject {
  const known = privateKeys.get(secretKey);
  if (known) return known;
  const bytes = Buffer.from(secretKey.slice(ed25519SecretPrefix.length), 'base64');
  const key = createPrivateKey({
    key: {
      kty: 'OKP',
      crv: 'Ed25519',
      d: bytes.subarray(0, 32).toString('base64url'),
      x: bytes.subarray(32, 64).toString('base64url'),
    },
    format: 'jwk',
  });
  if (privateKeys.size >= maxPrivateKeys) privateKeys.clear();
  privateKeys.set(secretKey, key);
  return key;
}

/**
 * Standard Webhooks `webhook-signature`: one signature per key, separated by spaces — `v1,` + base64
 * HMAC-SHA256 for a `whsec_` token, `v1a,` + base64 ed25519 for a `whsk_` secret key, both over
 * `<id>.<timestamp>.<body>` (docs/webhooks.md#standard-webhooks-format: during a roll's grace period the new and the old key both
 * sign, so a receiver verifying with either accepts the notification, even across a change of
 * algorithm).
 */
export function signStandardWebhook(
  tokens: readonly string[],
  messageId: string,
  timestampSeconds: number,
  body: string,
): string {
  const signed = `${messageId}.${timestampSeconds}.${body}`;
  return tokens
    .map((token) =>
      tokenAlgorithm(token) === 'ed25519'
        ? `v1a,${sign(null, Buffer.from(signed, 'utf8'), ed25519PrivateKey(token)).toString('base64')}`
        : `v1,${createHmac('sha256', standardWebhookKey(token)).update(signed).digest('base64')}`,
    )
    .join(' ');
}
