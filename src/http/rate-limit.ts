/**
 * The rate limit of the public-key routes (docs/api.md#base-url-and-authentication): card testing (trying stolen card numbers
 * one after another through a shop's public key) is the main abuse of routes a browser may call,
 * so each public key and each client address has a token bucket. A request takes one token from
 * both; when either is empty it is refused with 429 `rate_limited` and `Retry-After`, and takes
 * nothing. Private keys are not limited here.
 *
 * The buckets live in the database (docs/decisions/0011-shared-rate-limits.md), taken
 * from by one statement (the function tessera_take_tokens, migration 0101), so that any number of
 * processes on one PostgreSQL allow what one process does, and a restart refills nothing. When the
 * database cannot be asked, the request is refused with 503 `service_unavailable`: a limit that
 * cannot be counted lets nothing through.
 */

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/db.js';
import { bearerToken } from './auth.js';
import { hashKey, type MerchantContext } from '../core/merchant-context.js';
import { DomainError } from '../core/errors.js';

export interface PublicKeyLimits {
  /** Requests one public key may make per minute (and at once, after a quiet minute). */
  perKeyPerMinute: number;
  /** Requests one client address may make per minute with public keys, all keys together. */
  perAddressPerMinute: number;
}

/** A bucket untouched this long has refilled (every bucket refills fully within a minute). */
const fullAfterMs = 60_000;

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export function createRateLimiter(db: Queryable, clock: Clock, limits: PublicKeyLimits) {
  const capacityOf = (name: string) => (name.startsWith('key:') ? limits.perKeyPerMinute : limits.perAddressPerMinute);

  return {
    /**
     * Takes one token from each named bucket, or none when any is empty. Throws 503
     * `service_unavailable` when the buckets cannot be read (fails closed).
     */
    async take(names: string[]): Promise<RateDecision> {
      let waitMs: number;
      try {
        const [row] = await db.query<{ wait_ms: number }>(
          'SELECT tessera_take_tokens($1::text[], $2::float8[], $3) AS wait_ms',
          [names, names.map(capacityOf), clock.now()],
        );
        waitMs = Number(row!.wait_ms);
      } catch (err) {
        throw new DomainError(
          'service_unavailable',
          'The rate limit cannot be checked right now (its store does not answer), so the request was not run; retry shortly',
          null,
          `rate limit store: ${(err as Error).message}`,
        );
      }
      if (waitMs <= 0) return { allowed: true };
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    },

    /** Forgets the buckets that have refilled (they say nothing): a housekeeping job. */
    async purgeFull(): Promise<number> {
      const rows = await db.query('DELETE FROM rate_limit_buckets WHERE updated_at < $1 RETURNING name', [
        new Date(clock.now().getTime() - fullAfterMs),
      ]);
      return rows.length;
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/**
 * Refuses a public-key request over either limit (called once the key is known). The key is
 * identified by its hash, never kept as presented; the address is Fastify's `request.ip`, which
 * is the proxy's unless TESSERA_TRUST_PROXY names it.
 */
export async function limitPublicKeyRequest(
  limiter: RateLimiter,
  merchant: MerchantContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  if (merchant.keyKind !== 'public') return;
  const decision = await limiter.take([`key:${hashKey(bearerToken(request))}`, `address:${request.ip}`]);
  if (decision.allowed) return;
  reply.header('Retry-After', String(decision.retryAfterSeconds));
  throw new DomainError(
    'rate_limited',
    `Too many requests with a public key from this key or address; retry after ${decision.retryAfterSeconds} seconds`,
    { retryAfter: decision.retryAfterSeconds },
  );
}
