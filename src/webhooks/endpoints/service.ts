import type { Clock } from '../../clock.js';
import type { Db, Queryable } from '../../db/db.js';
import type { MerchantContext } from '../../core/merchant-context.js';
import type { Page } from '../../core/page.js';
import { DomainError, invalidField, notFound } from '../../core/errors.js';
import { newId } from '../../ids.js';
import { isoTimestamp } from '../../time.js';
import type { Vault } from '../../vault/vault.js';
import * as queries from './queries.js';
import { normalizeEnabledEvents, toWebhookEndpoint } from './view.js';
import {
  type CreateWebhookEndpointBody,
  type ListWebhookEndpointsQuery,
  type RolledWebhookEndpointToken,
  type RollTokenBody,
  type UpdateWebhookEndpointBody,
  type WebhookEndpoint,
  type WebhookEndpointToken,
  type WebhookEndpointWithToken,
} from './schemas.js';
import { checkWebhookUrl } from '../url-safety.js';
import { newSigningSecret } from './secrets.js';
import { createEngineReads, type MerchantScope } from './engine-reads.js';

/*
 * Webhook endpoints and their secrets (docs/webhooks.md#endpoints-and-tokens, docs/webhooks.md#acknowledgement-and-retries; docs/webhooks.md#what-is-sent):
 * - a static endpoint is configured by the merchant (url, subscribed events, legacy on/off);
 * - each merchant and mode has one dynamic endpoint, created on first use, whose token signs
 *   deliveries to a payment's notifyUrl; it has no url and cannot be deleted;
 * - tokens are random, stored encrypted by the vault with the endpoint id as context (they must
 *   be revealable, so they cannot be hashed), answered only by create, reveal and roll; every
 *   reveal and roll writes an audit_log row;
 * - the merchant's legacy key signs the plain-code notifications (docs/webhooks.md#what-is-sent); it is never shown.
 */

const ed25519NeedsStandard =
  'ed25519 signatures are a Standard Webhooks option (`v1a,` in webhook-signature): the endpoint needs format standard';

/** Who acts, for audit_log: the merchant API key stands for an Owner, Administrator or Developer (docs/dashboard.md#roles). */
export interface Actor {
  /** The X-TraceId of the request, so that an audit row leads to the request's log lines. */
  traceId: string;
  /** A dashboard team member (`member:tm_…`); the API key's kind otherwise. */
  member?: string;
  /** Where the request came from (the audit log's "from where"). */
  clientAddress?: string;
}

export interface WebhookEndpointServiceDeps {
  db: Db;
  clock: Clock;
  vault: Vault;
  /** NODE_ENV=production: endpoint URLs must resolve to public addresses (issue 3). */
  production: boolean;
  /** Outside production: TESSERA_WEBHOOK_ALLOW_PRIVATE=on (url-safety.ts, AddressPolicy). */
  allowPrivate?: boolean;
  /** DNS resolution for the URL check; injectable for tests. */
  lookup?: (hostname: string) => Promise<string[]>;
}

/**
 * Told after a roll has committed: the endpoint's new token, as stored (encrypted), and when the
 * token it replaced stops signing (a grace period, docs/webhooks.md#standard-webhooks-format), or null when it stopped at once.
 */
export type TokenRolledListener = (endpointId: string, ciphertext: string, previous: PreviousToken | null) => void;

/** The token a roll replaced, still signing until `expiresAt` (docs/webhooks.md#standard-webhooks-format grace period), as stored. */
export interface PreviousToken {
  ciphertext: string;
  expiresAt: Date;
}

export function createWebhookEndpointService({
  db,
  clock,
  vault,
  production,
  allowPrivate = false,
  lookup,
}: WebhookEndpointServiceDeps) {
  const engine = createEngineReads({ db, clock, vault });
  const tokenRolledListeners: TokenRolledListener[] = [];

  async function load(source: Queryable, merchant: MerchantScope, id: string): Promise<queries.WebhookEndpointRow> {
    const row = await queries.selectWebhookEndpoint(source, merchant.merchantId, merchant.mode, id);
    if (!row) throw notFound('webhook endpoint', id);
    return row;
  }

  /** Refuses, naming `field`, a URL webhooks may not be sent to (docs/webhooks.md#what-is-sent; production rules). */
  async function requireAllowedUrl(url: string, field = 'url'): Promise<void> {
    const verdict = await checkWebhookUrl(url, { production, allowPrivate, lookup, field });
    if (!verdict.ok) {
      throw new DomainError('invalid_request', verdict.message, { param: field, rule: verdict.reason }, verdict.detail);
    }
  }

  function audit(merchant: MerchantContext, action: string, objectId: string, actor: Actor): queries.AuditEntry {
    return {
      merchantId: merchant.merchantId,
      mode: merchant.mode,
      action,
      objectId,
      actor: actor.member ?? `api_key:${merchant.keyKind}`,
      traceId: actor.traceId,
      clientAddress: actor.clientAddress ?? null,
      createdAt: clock.now(),
    };
  }

  return {
    /** A payment's notifyUrl is checked by the same rules as an endpoint's url. */
    requireAllowedUrl,

    /** The token is in this answer and never again, except through reveal_token. */
    async create(merchant: MerchantContext, input: CreateWebhookEndpointBody): Promise<WebhookEndpointWithToken> {
      const format = input.format ?? 'moneycollect';
      const algorithm = input.signatureAlgorithm ?? 'hmac-sha256';
      if (algorithm === 'ed25519' && format !== 'standard') {
        throw invalidField('signatureAlgorithm', ed25519NeedsStandard, 'standard_format_only');
      }
      await requireAllowedUrl(input.url);
      const secret = newSigningSecret(algorithm);
      const row: queries.WebhookEndpointRow = {
        id: newId('we'),
        merchant_id: merchant.merchantId,
        mode: merchant.mode,
        kind: 'static',
        url: input.url,
        description: input.description ?? null,
        enabled_events: normalizeEnabledEvents(input.enabledEvents),
        legacy_notifications: input.legacyNotifications ?? false,
        status: 'enabled',
        signature_case: input.signatureCase ?? 'upper',
        format,
        signature_algorithm: algorithm,
        public_key: secret.publicKey,
        created_at: clock.now(),
      };
      await queries.insertWebhookEndpoint(db, row, vault.encrypt(secret.stored, row.id));
      return { ...toWebhookEndpoint(row), token: secret.shown };
    },

    async retrieve(merchant: MerchantContext, id: string): Promise<WebhookEndpoint> {
      return toWebhookEndpoint(await load(db, merchant, id));
    },

    /** The dynamic endpoint is listed too, created here if need be, so that its token can be revealed. */
    async list(merchant: MerchantContext, query: ListWebhookEndpointsQuery): Promise<Page<WebhookEndpoint>> {
      await engine.ensureDynamicEndpoint(db, merchant);
      const { rows, hasMore } = await queries.selectWebhookEndpointPage(db, merchant.merchantId, merchant.mode, query);
      return { data: rows.map(toWebhookEndpoint), hasMore };
    },

    async update(merchant: MerchantContext, id: string, changes: UpdateWebhookEndpointBody): Promise<WebhookEndpoint> {
      const current = await load(db, merchant, id);
      if (current.kind === 'dynamic') {
        // The dynamic endpoint sends to each payment's notifyUrl, for every event of that payment.
        if (changes.url !== undefined)
          throw invalidField('url', "url cannot be set on the dynamic endpoint: it sends to each payment's notifyUrl");
        if (changes.enabledEvents !== undefined)
          throw invalidField(
            'enabledEvents',
            "enabledEvents cannot be set on the dynamic endpoint: it sends every event of a payment to the payment's notifyUrl",
          );
      }
      if (changes.format === 'moneycollect' && current.signature_algorithm === 'ed25519') {
        throw invalidField(
          'format',
          'format cannot be moneycollect while the endpoint signs with ed25519: roll its token with ' +
            'signatureAlgorithm hmac-sha256 first (POST /webhook_endpoints/{id}/roll_token)',
          'ed25519_needs_standard',
        );
      }
      if (changes.url !== undefined) await requireAllowedUrl(changes.url);
      const merged: queries.WebhookEndpointRow = {
        ...current,
        url: changes.url ?? current.url,
        description: changes.description ?? current.description,
        enabled_events:
          changes.enabledEvents === undefined ? current.enabled_events : normalizeEnabledEvents(changes.enabledEvents),
        legacy_notifications: changes.legacyNotifications ?? current.legacy_notifications,
        signature_case: changes.signatureCase ?? current.signature_case,
        // docs/webhooks.md#standard-webhooks-format: the token is kept; it is a valid Standard Webhooks secret as it is.
        format: changes.format ?? current.format,
        status: changes.status ?? current.status,
      };
      const reenabled = current.status === 'disabled' && merged.status === 'enabled';
      const updated = await db.transaction(async (tx) => {
        // Enabled again by a person: it starts healthy, and its failures are counted afresh.
        if (reenabled) await queries.clearHealthOnEnable(tx, merchant.merchantId, merchant.mode, id);
        return queries.updateWebhookEndpoint(tx, merged, clock.now());
      });
      if (!updated) {
        // A roll to ed25519 committed between the read above and this update (the statement refused it).
        const now = await queries.selectWebhookEndpoint(db, merchant.merchantId, merchant.mode, id);
        if (now?.signature_algorithm === 'ed25519') {
          throw invalidField(
            'format',
            'format cannot be moneycollect while the endpoint signs with ed25519',
            'ed25519_needs_standard',
          );
        }
        throw notFound('webhook endpoint', id);
      }
      return toWebhookEndpoint(updated);
    },

    /** A soft delete: deliveries already planned keep their endpoint row to sign with. */
    async delete(merchant: MerchantContext, id: string): Promise<{ id: string; deleted: true }> {
      const current = await load(db, merchant, id);
      if (current.kind === 'dynamic') {
        throw new DomainError(
          'invalid_state',
          "The dynamic endpoint cannot be deleted: it signs the deliveries to payments' notifyUrl",
          { param: 'id' },
        );
      }
      if (!(await queries.markWebhookEndpointDeleted(db, merchant.merchantId, merchant.mode, id, clock.now())))
        throw notFound('webhook endpoint', id);
      return { id, deleted: true };
    },

    /** docs/webhooks.md#endpoints-and-tokens reveal, audit-logged (docs/webhooks.md#what-is-sent): the row is written before the token is answered. */
    async revealToken(merchant: MerchantContext, id: string, actor: Actor): Promise<WebhookEndpointToken> {
      const stored = await queries.selectTokenCiphertext(db, merchant.merchantId, merchant.mode, id);
      if (stored === undefined) throw notFound('webhook endpoint', id);
      // An ed25519 endpoint's secret key is never shown: its public key is what receivers verify with.
      const token = stored.public_key ?? (await vault.decrypt(stored.token_encrypted, id));
      await queries.insertAuditEntry(db, audit(merchant, 'webhook_endpoint.token_revealed', id, actor));
      return { token };
    },

    /**
     * docs/webhooks.md#endpoints-and-tokens: a compromised token is replaced. The old one stops at once: this process's
     * delivery engine is told after the commit (onTokenRolled), also for the notifications it has
     * already claimed; other processes read the new token with their next claim or token refresh.
     */
    async rollToken(
      merchant: MerchantContext,
      id: string,
      actor: Actor,
      options: RollTokenBody = {},
    ): Promise<RolledWebhookEndpointToken> {
      const now = clock.now();
      const graceSeconds = options.expiresInSeconds ?? 0;
      const previousExpiresAt = graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null;
      // docs/decisions/0026: the new key is of the asked algorithm, else of the endpoint's current one.
      const algorithm =
        options.signatureAlgorithm ??
        (await queries.selectWebhookEndpoint(db, merchant.merchantId, merchant.mode, id))?.signature_algorithm ??
        'hmac-sha256';
      const secret = newSigningSecret(algorithm);
      const ciphertext = vault.encrypt(secret.stored, id);
      let previousCiphertext: string | null = null;
      await db.transaction(async (tx) => {
        const roll = {
          merchantId: merchant.merchantId,
          mode: merchant.mode,
          id,
          tokenEncrypted: ciphertext,
          signatureAlgorithm: algorithm,
          publicKey: secret.publicKey,
        };
        const result = await queries.updateTokenCiphertext(tx, { ...roll, previousExpiresAt, now });
        if (!result) throw notFound('webhook endpoint', id);
        if (!result.rolled && algorithm === 'ed25519') {
          throw invalidField('signatureAlgorithm', ed25519NeedsStandard, 'standard_format_only');
        }
        if (!result.rolled) {
          // docs/webhooks.md#standard-webhooks-format: only the standard format carries two signatures at once (webhook-signature);
          // the Signature (docs/webhooks.md#what-is-sent) header holds one, so a moneycollect roll is a cut-over.
          throw invalidField(
            'expiresInSeconds',
            'expiresInSeconds needs an endpoint in the standard format: the moneycollect Signature header carries one ' +
              'signature, so the old token stops at once (leave expiresInSeconds out, or set format to standard first)',
            'standard_format_only',
          );
        }
        previousCiphertext = result.previous_token_encrypted;
        await queries.insertAuditEntry(tx, audit(merchant, 'webhook_endpoint.token_rolled', id, actor));
      });
      const previous =
        previousExpiresAt === null || previousCiphertext === null
          ? null
          : { ciphertext: previousCiphertext, expiresAt: previousExpiresAt };
      for (const listener of tokenRolledListeners) listener(id, ciphertext, previous);
      return {
        token: secret.shown,
        previousTokenExpiresAt: previousExpiresAt === null ? null : isoTimestamp(previousExpiresAt),
      };
    },

    /**
     * Writes an audit_log row for an action on an endpoint (recover, say) done by another part of
     * webhooks, in that action's transaction (`on`) when it has one.
     */
    async recordAudit(
      merchant: MerchantContext,
      action: string,
      id: string,
      actor: Actor,
      on: Queryable = db,
    ): Promise<void> {
      await queries.insertAuditEntry(on, audit(merchant, action, id, actor));
    },

    /** Called after each committed roll of a token in this process (the delivery engine). */
    onTokenRolled(listener: TokenRolledListener): void {
      tokenRolledListeners.push(listener);
    },

    // For the delivery engine (engine-reads.ts): its targets, the dynamic endpoint, the signing keys.
    ...engine,
  };
}

export type WebhookEndpointService = ReturnType<typeof createWebhookEndpointService>;
