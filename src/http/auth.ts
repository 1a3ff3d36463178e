import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

/** Who is calling the merchant API: resolved from the key on every request. */
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

export interface KeyLookup {
  findMerchantByKeyHash(keyHash: string): Promise<MerchantContext | null>;
}

/** API keys are long random strings, so one round of SHA-256 is a sufficient, fast hash. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

const keyForm = /^(test|live)_(pr|pu)_[A-Za-z0-9]{32,64}$/;

/** The key (or operator key) the request presents; refused when absent or malformed. */
export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header)
    throw new ApiError(
      'authentication_error',
      'Missing Authorization header: send "Authorization: Bearer <private key>"',
    );
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1])
    throw new ApiError('authentication_error', 'The Authorization header must be "Bearer <private key>"');
  return match[1];
}

export async function authenticateMerchant(request: FastifyRequest, keys: KeyLookup): Promise<MerchantContext> {
  const token = bearerToken(request);
  // The key itself is never echoed: a mistyped key may still be a real secret.
  const invalid = () => new ApiError('authentication_error', 'Invalid API key');
  if (!keyForm.test(token)) throw invalid();
  const merchant = await keys.findMerchantByKeyHash(hashKey(token));
  if (!merchant) throw invalid();
  return merchant;
}

/** The operator ("account manager") API takes the one operator key. */
export function authenticateOperator(request: FastifyRequest, operatorKeyHash: string): void {
  const token = bearerToken(request);
  const given = Buffer.from(hashKey(token), 'hex');
  if (!timingSafeEqual(given, Buffer.from(operatorKeyHash, 'hex'))) {
    throw new ApiError('authentication_error', 'Invalid operator key');
  }
}
