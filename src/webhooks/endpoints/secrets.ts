import { randomBytes } from 'node:crypto';
import { generateEd25519KeyPair, type SignatureAlgorithm } from '../signature.js';

/*
 * The secrets of webhook endpoints (docs/webhooks.md#endpoints-and-tokens, docs/webhooks.md#what-is-sent, docs/decisions/0026): tokens and the
 * merchant's legacy key are random base62 text with a prefix; an ed25519 endpoint's secret is a key
 * pair. They are stored encrypted by the vault (the endpoint service does that).
 */

const base62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const tokenPrefix = 'whsec_';
export const legacyKeyPrefix = 'whlegacy_';
const secretLength = 48;

/** 48 base62 characters, about 285 bits, without modulo bias (bytes ≥ 248 are drawn again). */
export function generateSecret(prefix: string): string {
  let text = '';
  while (text.length < secretLength) {
    for (const byte of randomBytes(secretLength)) {
      if (byte < 248 && text.length < secretLength) text += base62[byte % 62];
    }
  }
  return `${prefix}${text}`;
}

/**
 * A new signing secret of an endpoint: what is stored (encrypted) and what the merchant is shown.
 * HMAC: the token, both. ed25519 (docs/decisions/0026): the secret key `whsk_…` is kept and never
 * shown; the public key `whpk_…` is shown, in `token` and as the endpoint's `publicKey`.
 */
export function newSigningSecret(algorithm: SignatureAlgorithm): {
  stored: string;
  shown: string;
  publicKey: string | null;
} {
  if (algorithm === 'ed25519') {
    const pair = generateEd25519KeyPair();
    return { stored: pair.secretKey, shown: pair.publicKey, publicKey: pair.publicKey };
  }
  const token = generateSecret(tokenPrefix);
  return { stored: token, shown: token, publicKey: null };
}
