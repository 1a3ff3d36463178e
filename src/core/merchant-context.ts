import { createHash } from 'node:crypto';

/** Who is calling the merchant API: resolved from the key on every request (src/http/auth.ts). */
export interface MerchantContext {
  merchantId: string;
  mode: 'test' | 'live';
  keyKind: 'private' | 'public';
  tokenizationEnabled: boolean;
  mitEnabled: boolean;
  /**
   * The enabled processor account of this mode that takes the merchant's new payments
   * (docs/processors.md); null: the built-in sandbox in test mode, none at all in live mode.
   */
  processorAccountId?: string | null;
}

/** Finds the merchant context of an API key by the key's hash (the merchants service does). */
export interface KeyLookup {
  findMerchantByKeyHash(keyHash: string): Promise<MerchantContext | null>;
}

/**
 * How an API key is stored and looked up. API keys are long random strings, so one round of
 * SHA-256 is a sufficient, fast hash.
 */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
