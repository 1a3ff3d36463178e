/**
 * The webhook endpoints as the delivery engine reads them (docs/webhooks.md#what-is-sent, docs/webhooks.md#acknowledgement-and-retries, docs/webhooks.md#what-is-sent): the static
 * endpoints an event goes to, the merchant's dynamic endpoint (created on first use) that signs
 * notifyUrl deliveries, the endpoints' tokens and the merchant's legacy key. The API's side of the
 * endpoints (create, update, reveal, roll) is service.ts, which hands these on as its own.
 */
import type { Clock } from '../../clock.js';
import type { Db, Queryable } from '../../db/db.js';
import { newId } from '../../ids.js';
import type { Vault } from '../../vault/vault.js';
import { legacyKeyContext } from '../../vault/secrets-at-rest.js';
import * as queries from './queries.js';
import { allEvents } from './schemas.js';
import { generateSecret, legacyKeyPrefix, tokenPrefix } from './secrets.js';

/** The delivery engine knows an event's merchant and mode as plain strings (RecordedEvent). */
export type MerchantScope = { merchantId: string; mode: string };

export function createEngineReads({ db, clock, vault }: { db: Db; clock: Clock; vault: Vault }) {
  // The legacy key never changes once committed (there is no roll for it), so a decrypted copy
  // read outside a transaction stays valid.
  const legacyKeys = new Map<string, string>();
  const legacyKeyCacheSize = 10_000;

  async function ensureDynamic(source: Queryable, merchant: MerchantScope): Promise<queries.WebhookEndpointRow> {
    const existing = await queries.selectDynamicEndpoint(source, merchant.merchantId, merchant.mode);
    if (existing) return existing;
    const row: queries.WebhookEndpointRow = {
      id: newId('we'),
      merchant_id: merchant.merchantId,
      mode: merchant.mode,
      kind: 'dynamic',
      url: null,
      description: null,
      enabled_events: [allEvents],
      // docs/decisions/0014-legacy-opt-in-and-sequence.md: opt-in for new merchants; the insert takes the merchant's own default (0160).
      legacy_notifications: false,
      status: 'enabled',
      signature_case: 'upper',
      format: 'moneycollect',
      signature_algorithm: 'hmac-sha256',
      public_key: null,
      created_at: clock.now(),
    };
    const token = vault.encrypt(generateSecret(tokenPrefix), row.id);
    const inserted = await queries.insertDynamicEndpointIfMissing(source, row, token);
    if (inserted) return inserted;
    // Another request created it first; ON CONFLICT waited for that insert to commit, so a new
    // statement sees it (READ COMMITTED).
    const created = await queries.selectDynamicEndpoint(source, merchant.merchantId, merchant.mode);
    if (!created) throw new Error(`The dynamic webhook endpoint of ${merchant.merchantId} could not be created`);
    return created;
  }

  return {
    /** Static endpoints of the merchant that are enabled, not deleted, and subscribed to `eventType`. */
    async targetsFor(
      tx: Queryable,
      merchant: MerchantScope,
      eventType: string,
    ): Promise<Array<{ id: string; url: string; legacyNotifications: boolean }>> {
      const rows = await queries.selectTargets(tx, merchant.merchantId, merchant.mode, eventType);
      return rows.map((row) => ({ id: row.id, url: row.url ?? '', legacyNotifications: row.legacy_notifications }));
    },

    /**
     * The built-in dynamic endpoint that signs notifyUrl deliveries, created on first use
     * (race-safe). `enabled` is false when the merchant has disabled it.
     */
    async ensureDynamicEndpoint(
      tx: Queryable,
      merchant: MerchantScope,
    ): Promise<{ id: string; legacyNotifications: boolean; enabled: boolean }> {
      const row = await ensureDynamic(tx, merchant);
      return { id: row.id, legacyNotifications: row.legacy_notifications, enabled: row.status === 'enabled' };
    },

    /**
     * The current token of an endpoint, deleted or not, read from the database each time (the
     * delivery engine keeps its own newest-known copy: decryptToken, tokenCiphertexts). `source`
     * defaults to the database; pass the open transaction when calling from inside one.
     */
    async tokenFor(endpointId: string, source: Queryable = db): Promise<string> {
      const ciphertext = await queries.selectTokenCiphertextById(source, endpointId);
      if (ciphertext === undefined) throw new Error(`No webhook endpoint ${endpointId}`);
      return vault.decrypt(ciphertext, endpointId, source);
    },

    /** An endpoint token from its stored form (the delivery engine reads that with each claim). */
    decryptToken(endpointId: string, ciphertext: string): Promise<string> {
      return vault.decrypt(ciphertext, endpointId);
    },

    /** The stored (encrypted) tokens of these endpoints, deleted or not, by endpoint id. */
    async tokenCiphertexts(endpointIds: readonly string[]): Promise<Map<string, queries.TokenCiphertexts>> {
      const rows = await queries.selectTokenCiphertextsByIds(db, endpointIds);
      return new Map(rows.map((row) => [row.id, row]));
    },

    /** The merchant's legacy signing key (docs/webhooks.md#what-is-sent), created on first use (race-safe). */
    async legacyKeyFor(merchantId: string, source: Queryable = db): Promise<string> {
      const cached = legacyKeys.get(merchantId);
      if (cached !== undefined) return cached;
      let ciphertext = await queries.selectLegacyKeyCiphertext(source, merchantId);
      if (ciphertext === undefined) throw new Error(`No merchant ${merchantId}`);
      if (ciphertext === null) {
        const created = vault.encrypt(generateSecret(legacyKeyPrefix), legacyKeyContext(merchantId));
        await queries.setLegacyKeyIfMissing(source, merchantId, created);
        // Read back: if another process set it first, its key is the one.
        ciphertext = await queries.selectLegacyKeyCiphertext(source, merchantId);
        if (!ciphertext) throw new Error(`The legacy signing key of ${merchantId} could not be created`);
      }
      const key = await vault.decrypt(ciphertext, legacyKeyContext(merchantId), source);
      // Inside a transaction the key may be one this transaction wrote and may yet roll back.
      if (source === db) {
        if (legacyKeys.size >= legacyKeyCacheSize) legacyKeys.clear();
        legacyKeys.set(merchantId, key);
      }
      return key;
    },
  };
}
