import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../core/errors.js';
import { hashKey, type KeyLookup, type MerchantContext } from '../core/merchant-context.js';

const keyForm = /^(test|live)_(pr|pu)_[A-Za-z0-9]{32,64}$/;

/** The key (or operator key) the request presents; refused when absent or malformed. */
export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header)
    throw new DomainError(
      'authentication_error',
      'Missing Authorization header: send "Authorization: Bearer <private key>"',
    );
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1])
    throw new DomainError('authentication_error', 'The Authorization header must be "Bearer <private key>"');
  return match[1];
}

export async function authenticateMerchant(request: FastifyRequest, keys: KeyLookup): Promise<MerchantContext> {
  const token = bearerToken(request);
  // The key itself is never echoed: a mistyped key may still be a real secret.
  const invalid = () => new DomainError('authentication_error', 'Invalid API key');
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
    throw new DomainError('authentication_error', 'Invalid operator key');
  }
}
