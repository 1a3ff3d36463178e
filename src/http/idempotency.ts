import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/db.js';
import { newId, type IdPrefix } from '../ids.js';
import { DomainError } from '../core/errors.js';
import type { MerchantContext } from '../core/merchant-context.js';
import type { ReservedId } from '../core/reserved-id.js';

export const idempotencyWindowMs = 24 * 60 * 60 * 1000;

interface Claim {
  merchant: MerchantContext;
  key: string;
  /**
   * The 19 digits of the id reserved for the object the request creates (its prefix is the
   * route's), drawn with the claim or kept from the claim it took over; null only for a claim
   * written before reservations existed.
   */
  objectNumber: string | null;
  takenOver: boolean;
}

/** 19 random digits as in newId, without a prefix: the claim does not know what it will create. */
const newObjectNumber = () => newId('pt').slice('pt_'.length);

/** A claim without an answer holds its key this long unless set otherwise (docs/decisions/0003). */
export const defaultLeaseMs = 60_000;

/**
 * docs/api.md#idempotency `Idempotency-Key`: the first request with a key claims it; its response (anything but
 * a 5xx) is stored and replayed for a later request with the same key and body. The claim is
 * written before the work, so two concurrent requests with one key never both run. The claim is a
 * lease (docs/decisions/0003): while it runs, a request with the key is refused; after it, the
 * process that claimed it is taken to have died and a retry takes the claim over and runs again,
 * reusing the object id the first attempt reserved (reserveObjectId), so that what the first
 * attempt created is answered instead of created twice.
 */
/** Whose key a stored answer belongs to: its seal is bound to all three. */
export interface KeyOwner {
  merchantId: string;
  mode: string;
  key: string;
}

/**
 * Stored answers can hold personal data and secrets (webhook tokens): they are kept encrypted,
 * each bound to its owner (the vault's idempotencySealer, src/vault/secrets-at-rest.ts).
 */
export interface ResponseSealer {
  seal(plaintext: string, owner: KeyOwner): string;
  open(ciphertext: string, owner: KeyOwner): Promise<string>;
}

/**
 * The heartbeat's liveness rule (src/ops/heartbeat.ts): a process that has not beaten for
 * `staleAfterMs` is dead, and each beats every `beatEveryMs`.
 */
export interface Liveness {
  staleAfterMs: number;
  beatEveryMs: number;
}

export function createIdempotency({
  db,
  clock,
  sealer,
  leaseMs = defaultLeaseMs,
  answerDelayMs = 0,
  processId = null,
  liveness,
}: {
  db: Queryable;
  clock: Clock;
  sealer: ResponseSealer;
  leaseMs?: number;
  /**
   * This process's heartbeat id (src/ops/heartbeat.ts), written with each claim: a claim whose
   * process stopped beating is taken over at once, not after the lease. Without it, the lease alone.
   */
  processId?: string | null;
  liveness: Liveness;
  /** Tests only: a pause between the effect and storing the answer, to kill the process there. */
  answerDelayMs?: number;
}) {
  const ownerOf = (merchant: MerchantContext, key: string): KeyOwner => ({
    merchantId: merchant.merchantId,
    mode: merchant.mode,
    key,
  });
  const { staleAfterMs, beatEveryMs } = liveness;
  const claims = new WeakMap<FastifyRequest, Claim>();
  // A claim is taken over once its lease ends or its process has missed its heartbeats.
  const retryAfterSeconds = Math.ceil(Math.min(leaseMs, processId ? staleAfterMs + beatEveryMs : leaseMs) / 1000);

  async function begin(request: FastifyRequest, reply: FastifyReply, merchant: MerchantContext): Promise<boolean> {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined) return false;
    const key = Array.isArray(header) ? header[0] : header;
    if (!key || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
      throw new DomainError(
        'invalid_request',
        'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces',
        {
          param: 'Idempotency-Key',
        },
      );
    }
    const requestHash = createHash('sha256')
      .update(`${request.method} ${request.url}\n${sortedJson(request.body ?? null)}`)
      .digest('hex');
    const now = clock.now();
    const expiredBefore = new Date(now.getTime() - idempotencyWindowMs);
    // A key older than the window is free again: remove it and claim it in one statement.
    await db.query(
      'DELETE FROM idempotency_keys WHERE merchant_id = $1 AND mode = $2 AND key = $3 AND created_at < $4',
      [merchant.merchantId, merchant.mode, key, expiredBefore],
    );
    const claimedUntil = new Date(now.getTime() + leaseMs);
    const objectNumber = newObjectNumber();
    const claimed = await db.query(
      `INSERT INTO idempotency_keys (merchant_id, mode, key, request_hash, created_at, claimed_until, object_id, claimed_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (merchant_id, mode, key) DO NOTHING RETURNING key`,
      [merchant.merchantId, merchant.mode, key, requestHash, now, claimedUntil, objectNumber, processId],
    );
    if (claimed.length > 0) {
      claims.set(request, { merchant, key, objectNumber, takenOver: false });
      return false;
    }
    // A claim without an answer whose lease ran out, or whose process stopped beating (docs/decisions/0010-process-heartbeats.md; liveness on the database's clock, ops/heartbeat.ts): its process died. One retry
    // takes it over. A claim of this very process is never taken for dead.
    const [takenOver] = await db.query<{ object_id: string | null }>(
      `UPDATE idempotency_keys SET claimed_until = $6, claimed_by = $7
       WHERE merchant_id = $1 AND mode = $2 AND key = $3 AND request_hash = $4 AND status_code IS NULL
         AND (claimed_until IS NULL OR claimed_until <= $5
              OR (claimed_by IS NOT NULL AND claimed_by IS DISTINCT FROM $7
                  AND NOT EXISTS (SELECT 1 FROM tessera_processes p WHERE p.id = idempotency_keys.claimed_by
                                    AND p.heartbeat_at >= now() - $8 * interval '1 millisecond')))
       RETURNING object_id`,
      [merchant.merchantId, merchant.mode, key, requestHash, now, claimedUntil, processId, staleAfterMs],
    );
    if (takenOver) {
      claims.set(request, { merchant, key, objectNumber: takenOver.object_id, takenOver: true });
      return false;
    }
    const [existing] = await db.query<{
      request_hash: string;
      status_code: number | null;
      response_body: string | null;
    }>(
      'SELECT request_hash, status_code, response_body FROM idempotency_keys WHERE merchant_id = $1 AND mode = $2 AND key = $3',
      [merchant.merchantId, merchant.mode, key],
    );
    if (!existing) {
      throw new DomainError('idempotency_error', 'This Idempotency-Key was released while the request arrived; retry', {
        param: 'Idempotency-Key',
      });
    }
    if (existing.request_hash !== requestHash) {
      throw new DomainError(
        'idempotency_error',
        'This Idempotency-Key was already used with a different request; use a new key for a new request',
        { param: 'Idempotency-Key' },
      );
    }
    if (existing.status_code === null || existing.response_body === null) {
      throw new DomainError(
        'idempotency_error',
        `A request with this Idempotency-Key is still being processed; retry after ${retryAfterSeconds} seconds`,
        { param: 'Idempotency-Key' },
      );
    }
    await reply
      .code(existing.status_code)
      .header('Idempotent-Replayed', 'true')
      .type('application/json; charset=utf-8')
      .send(await sealer.open(existing.response_body, ownerOf(merchant, key)));
    return true;
  }

  /**
   * The id of the object this request creates, reserved with the claim (no extra statement): a
   * retry that took a claim over gets the same id as the attempt that died. Without a key, a new id.
   */
  async function reserveObjectId(request: FastifyRequest, prefix: IdPrefix): Promise<ReservedId> {
    const claim = claims.get(request);
    if (!claim) return { id: newId(prefix), earlier: false };
    if (claim.objectNumber === null) {
      claim.objectNumber = newObjectNumber();
      await db.query('UPDATE idempotency_keys SET object_id = $4 WHERE merchant_id = $1 AND mode = $2 AND key = $3', [
        claim.merchant.merchantId,
        claim.merchant.mode,
        claim.key,
        claim.objectNumber,
      ]);
      return { id: `${prefix}_${claim.objectNumber}`, earlier: false };
    }
    return { id: `${prefix}_${claim.objectNumber}`, earlier: claim.takenOver };
  }

  async function finish(request: FastifyRequest, statusCode: number, payload: unknown): Promise<void> {
    const claim = claims.get(request);
    if (!claim) return;
    claims.delete(request);
    if (answerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, answerDelayMs));
    const where = [claim.merchant.merchantId, claim.merchant.mode, claim.key];
    // A server error may not have done anything: free the key so that the client can retry.
    if (statusCode >= 500 || typeof payload !== 'string') {
      await db.query('DELETE FROM idempotency_keys WHERE merchant_id = $1 AND mode = $2 AND key = $3', where);
      return;
    }
    await db.query(
      'UPDATE idempotency_keys SET status_code = $4, response_body = $5 WHERE merchant_id = $1 AND mode = $2 AND key = $3',
      [...where, statusCode, sealer.seal(payload, ownerOf(claim.merchant, claim.key))],
    );
  }

  async function purgeExpired(): Promise<number> {
    const rows = await db.query('DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING key', [
      new Date(clock.now().getTime() - idempotencyWindowMs),
    ]);
    return rows.length;
  }

  return { begin, reserveObjectId, finish, purgeExpired };
}

export type Idempotency = ReturnType<typeof createIdempotency>;

/** JSON with object keys sorted: the same body with its fields in another order is the same request. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, child]) => `${JSON.stringify(key)}:${sortedJson(child)}`).join(',')}}`;
}
