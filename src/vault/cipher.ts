/**
 * The vault's ciphers (AES-256-GCM): values sealed with a data key and bound to their context,
 * data keys wrapped under a key derived from the master key, and HKDF. No state and no database:
 * vault.ts decides which key seals and opens what.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { ConfigError } from '../config-rules.js';

export const dataKeyLength = 32;
const ivLength = 12;
// The full GCM tag is required: a shorter one would be accepted by Node and weaken authentication.
const tagLength = 16;
const cipherName = 'aes-256-gcm';

export const wrongMasterKeyMessage =
  'TESSERA_MASTER_KEY does not match the key that encrypted this vault (during a master-key rotation, set TESSERA_PREVIOUS_MASTER_KEY to the old key)';

export function hkdf(masterKey: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), info, 32));
}

export function seal(key: { id: string; key: Buffer }, plaintext: string, context: string): string {
  const iv = randomBytes(ivLength);
  const cipher = createCipheriv(cipherName, key.key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [key.id, ...[iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url'))].join(':');
}

/** Throws when the key, the context or any byte of the ciphertext is not the one it was sealed with. */
export function open(key: Buffer, ciphertext: string, context: string): string {
  const { iv, tag, body } = parseCiphertext(ciphertext);
  const decipher = createDecipheriv(cipherName, key, iv, { authTagLength: tagLength });
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
}

export function parseCiphertext(ciphertext: string): { keyId: string; iv: Buffer; tag: Buffer; body: Buffer } {
  const parts = ciphertext.split(':');
  const [keyId, iv, tag, body] = parts;
  if (parts.length !== 4 || !keyId || iv === undefined || tag === undefined || body === undefined) {
    throw new Error('The value is not a vault ciphertext');
  }
  return {
    keyId,
    iv: Buffer.from(iv, 'base64url'),
    tag: Buffer.from(tag, 'base64url'),
    body: Buffer.from(body, 'base64url'),
  };
}

/** Opens a wrapped key with the first wrapping key that fits; `at` says which (0: the current master key). */
export function unwrapWithAny(
  wrappingKeys: readonly Buffer[],
  keyId: string,
  wrapped: string,
): { key: Buffer; at: number } {
  for (const [at, wrappingKey] of wrappingKeys.entries()) {
    try {
      return { key: unwrapKey(wrappingKey, keyId, wrapped), at };
    } catch (err) {
      if (at === wrappingKeys.length - 1) throw err;
    }
  }
  throw new ConfigError(wrongMasterKeyMessage);
}

/** A data key wrapped under the master key, with its id as additional data so keys cannot be swapped. */
export function wrapKey(wrappingKey: Buffer, keyId: string, key: Buffer): string {
  const iv = randomBytes(ivLength);
  const cipher = createCipheriv(cipherName, wrappingKey, iv);
  cipher.setAAD(Buffer.from(keyId, 'utf8'));
  const body = Buffer.concat([cipher.update(key), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join(':');
}

function unwrapKey(wrappingKey: Buffer, keyId: string, wrapped: string): Buffer {
  const [iv, tag, body] = wrapped.split(':');
  if (iv === undefined || tag === undefined || body === undefined)
    throw new Error(`Vault data key ${keyId} is malformed`);
  try {
    const decipher = createDecipheriv(cipherName, wrappingKey, Buffer.from(iv, 'base64url'), {
      authTagLength: tagLength,
    });
    decipher.setAAD(Buffer.from(keyId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const key = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
    if (key.length !== dataKeyLength) throw new Error('wrong length');
    return key;
  } catch {
    throw new ConfigError(wrongMasterKeyMessage);
  }
}
