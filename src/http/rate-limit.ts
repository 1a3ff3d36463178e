/**
 * The rate limit of the public-key routes (DESIGN §2): card testing (trying stolen card numbers
 * one after another through a shop's public key) is the main abuse of routes a browser may call,
 * so each public key and each client address has a token bucket. A request takes one token from
 * both; when either is empty it is refused with 429 `rate_limited` and `Retry-After`, and takes
 * nothing. Private keys are not limited here.
 *
 * The buckets live in this process's memory (docs/checkout.md#rate-limits): N processes behind one
 * load balancer allow up to N times the limits, and a restart refills every bucket.
 */

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { bearerToken, hashKey, type MerchantContext } from './auth.js';
import { ApiError } from './errors.js';

export interface PublicKeyLimits {
  /** Requests one public key may make per minute (and at once, after a quiet minute). */
  perKeyPerMinute: number;
  /** Requests one client address may make per minute with public keys, all keys together. */
  perAddressPerMinute: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Above this many buckets, those that have refilled (and so say nothing) are dropped, at most once
 * a second, so that many addresses (IPv6 makes them cheap) cost memory for a minute only and never
 * a sweep on every request.
 */
const sweepAboveBuckets = 10_000;
const sweepEveryMs = 1000;

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export function createRateLimiter(clock: Clock, limits: PublicKeyLimits) {
  const buckets = new Map<string, Bucket>();
  let sweptAtMs = 0;
  const capacityOf = (name: string) => (name.startsWith('key:') ? limits.perKeyPerMinute : limits.perAddressPerMinute);

  /** The bucket's tokens now: it refills at capacity per minute, up to capacity. */
  function level(name: string, nowMs: number): number {
    const capacity = capacityOf(name);
    const bucket = buckets.get(name);
    if (!bucket) return capacity;
    return Math.min(capacity, bucket.tokens + ((nowMs - bucket.at) * capacity) / 60_000);
  }

  function sweep(nowMs: number) {
    if (buckets.size <= sweepAboveBuckets || nowMs - sweptAtMs < sweepEveryMs) return;
    sweptAtMs = nowMs;
    for (const name of buckets.keys()) if (level(name, nowMs) >= capacityOf(name)) buckets.delete(name);
  }

  return {
    /** Takes one token from each named bucket, or none when any is empty. */
    take(names: string[]): RateDecision {
      const nowMs = clock.now().getTime();
      const levels = names.map((name) => level(name, nowMs));
      const waitsMs = names.map((name, index) => ((1 - levels[index]!) * 60_000) / capacityOf(name));
      const longestWaitMs = Math.max(0, ...waitsMs);
      if (longestWaitMs > 0) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(longestWaitMs / 1000)) };
      sweep(nowMs);
      names.forEach((name, index) => buckets.set(name, { tokens: levels[index]! - 1, at: nowMs }));
      return { allowed: true };
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/**
 * Refuses a public-key request over either limit (called once the key is known). The key is
 * identified by its hash, never kept as presented; the address is Fastify's `request.ip`, which
 * is the proxy's unless TESSERA_TRUST_PROXY names it.
 */
export function limitPublicKeyRequest(
  limiter: RateLimiter,
  merchant: MerchantContext,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (merchant.keyKind !== 'public') return;
  const decision = limiter.take([`key:${hashKey(bearerToken(request))}`, `address:${request.ip}`]);
  if (decision.allowed) return;
  reply.header('Retry-After', String(decision.retryAfterSeconds));
  throw new ApiError(
    'rate_limited',
    `Too many requests with a public key from this key or address; retry after ${decision.retryAfterSeconds} seconds`,
    { retryAfter: decision.retryAfterSeconds },
  );
}
