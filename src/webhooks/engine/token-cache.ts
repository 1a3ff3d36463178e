import type { PreviousToken, WebhookEndpointService } from '../endpoints/service.js';
import type { ClaimedDelivery } from './queries.js';

/*
 * The newest stored (encrypted) token known for each endpoint, and when it was learnt. Every claim
 * reads the current one with its deliveries, and a roll in this process is told at once (rolled). An
 * attempt is signed with the newest, not with the one its delivery was claimed with, so a rolled
 * token also signs the notifications claimed before the roll (docs/webhooks.md#acknowledgement-and-retries: the old token stops
 * working at once).
 *
 * On PostgreSQL another process may roll a token (docs/operations.md#topology: an attempt that starts after the
 * roll's answer is signed with the new token, whichever process sends it): each attempt's token is
 * read again by a read that starts after the attempt did. The attempts that start while one such
 * read is under way share the next one, so a busy process makes about one read per database round
 * trip, whatever its number of attempts. PGlite's database belongs to this process: its rolls are
 * all told.
 *
 * With the newest token comes the one it replaced when the roll gave a grace period (docs/webhooks.md#standard-webhooks-format,
 * standard format): it signs too, beside the newest, until its expiry.
 *
 * `learnt` orders what is known: a number taken when a claim or read starts (startLearning), or
 * when a roll is told. A read that started before a roll was told may have seen the old token, so
 * it does not replace what the roll told.
 */

const maxTokens = 10_000;

export type TokenSource = Pick<WebhookEndpointService, 'decryptToken' | 'tokenCiphertexts' | 'legacyKeyFor'>;

interface KnownToken {
  ciphertext: string;
  previous: PreviousToken | null;
  learnt: number;
}

/** The token a roll replaced and kept signing until its expiry (a grace period), as stored; or none. */
function previousToken(ciphertext: string | null, expiresAt: Date | null): PreviousToken | null {
  return ciphertext !== null && expiresAt !== null ? { ciphertext, expiresAt } : null;
}

export interface TokenCacheOptions {
  /** Another process may roll a token (PostgreSQL): each attempt reads its endpoint's token again. */
  readBeforeEachAttempt: boolean;
}

export function createTokenCache(webhookEndpoints: TokenSource, options: TokenCacheOptions) {
  const latestTokens = new Map<string, KnownToken>();
  let learning = 0;
  /** Decrypted tokens by ciphertext: decrypted once, whichever deliveries they sign. */
  const decrypted = new Map<string, Promise<string>>();
  /** The read of tokens under way, and the endpoints of the one that starts when it ends. */
  let reading: Promise<void> = Promise.resolve();
  let nextRead: { endpointIds: Set<string>; done: Promise<void> } | undefined;

  function learn(endpointId: string, ciphertext: string, learnt: number, previous: PreviousToken | null = null): void {
    const known = latestTokens.get(endpointId);
    if (known && known.learnt > learnt) return;
    if (!known && latestTokens.size >= maxTokens) latestTokens.clear();
    latestTokens.set(endpointId, { ciphertext, previous, learnt });
  }

  function decrypt(endpointId: string, ciphertext: string): Promise<string> {
    const known = decrypted.get(ciphertext);
    if (known) return known;
    const token = webhookEndpoints.decryptToken(endpointId, ciphertext);
    if (decrypted.size >= maxTokens) decrypted.clear();
    decrypted.set(ciphertext, token);
    // A failed decryption is not kept: the next attempt tries again.
    token.catch(() => {
      if (decrypted.get(ciphertext) === token) decrypted.delete(ciphertext);
    });
    return token;
  }

  async function read(endpointIds: ReadonlySet<string>): Promise<void> {
    const learnt = ++learning;
    const stored = await webhookEndpoints.tokenCiphertexts([...endpointIds]);
    for (const [endpointId, row] of stored) {
      learn(
        endpointId,
        row.token_encrypted,
        learnt,
        previousToken(row.previous_token_encrypted, row.previous_token_expires_at),
      );
    }
  }

  /** Settles once a read of this endpoint's token that started after this call has ended. */
  function readAgain(endpointId: string): Promise<void> {
    if (!nextRead) {
      const endpointIds = new Set<string>();
      // Starts once the read under way has ended (and, at the soonest, after the attempts started in
      // this turn of the event loop have joined it).
      const done = reading.then(() => {
        nextRead = undefined;
        return read(endpointIds);
      });
      reading = done.catch(() => {});
      nextRead = { endpointIds, done };
    }
    nextRead.endpointIds.add(endpointId);
    return nextRead.done;
  }

  return {
    learn,

    /** Learns the tokens a claim read with its deliveries. */
    learnClaimed(delivery: ClaimedDelivery, learnt: number): void {
      const previous = previousToken(delivery.previous_token_ciphertext, delivery.previous_token_expires_at);
      learn(delivery.endpoint_id, delivery.token_ciphertext, learnt, previous);
    },

    /** The `learnt` number of a claim or read that starts now. */
    startLearning(): number {
      return ++learning;
    },

    /** A roll of an endpoint's token has committed in this process: attempts from now on use it. */
    rolled(endpointId: string, ciphertext: string, previous: PreviousToken | null = null): void {
      learn(endpointId, ciphertext, ++learning, previous);
    },

    /**
     * The key that signs an attempt starting now: its endpoint's newest token (read again first when
     * another process may have rolled it), or the merchant's legacy key.
     */
    async signingKeyOf(delivery: ClaimedDelivery): Promise<string> {
      if (delivery.kind === 'legacy') return webhookEndpoints.legacyKeyFor(delivery.merchant_id);
      if (options.readBeforeEachAttempt) await readAgain(delivery.endpoint_id);
      const ciphertext = latestTokens.get(delivery.endpoint_id)?.ciphertext ?? delivery.token_ciphertext;
      return decrypt(delivery.endpoint_id, ciphertext);
    },

    /** The replaced token that still signs beside the newest at `at` (a roll's grace period), or null. */
    async previousKeyOf(delivery: ClaimedDelivery, at: Date): Promise<string | null> {
      if (delivery.kind === 'legacy') return null;
      const previous = latestTokens.get(delivery.endpoint_id)?.previous;
      if (!previous || previous.expiresAt.getTime() <= at.getTime()) return null;
      return decrypt(delivery.endpoint_id, previous.ciphertext);
    },
  };
}

export type TokenCache = ReturnType<typeof createTokenCache>;
