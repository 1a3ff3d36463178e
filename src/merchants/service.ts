import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import { hashKey, type KeyLookup, type MerchantContext } from '../core/merchant-context.js';
import { DomainError, notFound } from '../core/errors.js';
import { newId } from '../ids.js';
import { isoTimestamp } from '../time.js';
import * as queries from './queries.js';
import { checkBrandColor, checkLogoUrl } from './branding.js';
import { checkWebsiteOrigins } from './origins.js';
import type { CreateMerchantBody, Merchant, MerchantWithKeys, UpdateMerchantBody } from './schemas.js';
import { createFinanceSettings, hasFinanceChanges } from '../ledger/settings.js';
import type { FinanceSettings } from '../ledger/settings-schemas.js';
import type { Vault } from '../vault/vault.js';

const base62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 40 base62 characters: about 238 bits, so a plain SHA-256 of the key is a safe thing to store. */
function generateKey(prefix: string): string {
  const bytes = randomBytes(40);
  let text = '';
  for (const byte of bytes) text += base62[byte % 62];
  return `${prefix}${text}`;
}

function toMerchant(row: queries.MerchantRow, finance: FinanceSettings): Merchant {
  return {
    id: row.id,
    name: row.name,
    tokenization: row.tokenization_enabled,
    mit: row.mit_enabled,
    websiteOrigins: row.website_origins,
    brandColor: row.brand_color ?? null,
    logoUrl: row.logo_url ?? null,
    ...finance,
    created: isoTimestamp(row.created_at),
  };
}

/** How long one process trusts what it read about an API key (see keyLookup). */
export const keyCacheTtlMs = 1000;
const maxCachedKeys = 10_000;

export function createMerchantService({ db, clock, vault }: { db: Db; clock: Clock; vault: Vault }) {
  const finance = createFinanceSettings({ vault });

  async function issueKeys(tx: Queryable, merchantId: string, now: Date, mode: 'test' | 'live' = 'test') {
    const privateKey = generateKey(`${mode}_pr_`);
    const publicKey = generateKey(`${mode}_pu_`);
    for (const [kind, key] of [
      ['private', privateKey],
      ['public', publicKey],
    ] as const) {
      await queries.insertApiKey(tx, {
        id: newId('key'),
        merchantId,
        mode,
        kind,
        keyHash: hashKey(key),
        keyHint: key.slice(0, 12),
        now,
      });
    }
    return { privateKey, publicKey };
  }

  /*
   * Every request resolves its key, so what a key answers is kept for a second (keyCacheTtlMs).
   * This process forgets everything at once when it rolls keys or changes a merchant; another
   * process sharing the database sees such a change within that second. Unknown keys are not
   * kept, so a new merchant's keys work at once everywhere.
   */
  const keyCache = new Map<string, { merchant: Readonly<MerchantContext>; until: number }>();
  // A read that began before a change is not kept, even when it ends after the change.
  let generation = 0;
  const forgetKeys = () => {
    generation += 1;
    keyCache.clear();
  };
  const keyLookup: KeyLookup = {
    async findMerchantByKeyHash(keyHash) {
      const startedAt = performance.now();
      const cached = keyCache.get(keyHash);
      if (cached && cached.until > startedAt) return cached.merchant;
      const readIn = generation;
      const merchant = await queries.selectMerchantByKeyHash(db, keyHash);
      if (merchant === null || readIn !== generation) return merchant;
      if (keyCache.size >= maxCachedKeys) keyCache.clear();
      keyCache.set(keyHash, { merchant, until: startedAt + keyCacheTtlMs });
      return merchant;
    },
  };

  async function update(id: string, input: UpdateMerchantBody): Promise<Merchant> {
    const { fees, availabilityDays, payoutSchedule, bankAccount, ...changes } = input;
    const financeChanges = { fees, availabilityDays, payoutSchedule, bankAccount };
    if (changes.websiteOrigins) checkWebsiteOrigins(changes.websiteOrigins);
    const checked = {
      ...changes,
      ...(changes.brandColor !== undefined ? { brandColor: checkBrandColor(changes.brandColor) } : {}),
      ...(changes.logoUrl !== undefined ? { logoUrl: checkLogoUrl(changes.logoUrl) } : {}),
    };
    // One transaction: a refused bank account (a 400 thrown before the write) leaves nothing half-changed.
    const updated = await db.transaction(async (tx) => {
      const now = clock.now();
      const row = await queries.updateMerchant(tx, id, checked, now);
      if (!row) throw notFound('merchant', id);
      const settings = hasFinanceChanges(financeChanges)
        ? await finance.change(tx, id, financeChanges, now)
        : await finance.view(tx, id);
      return toMerchant(row, settings);
    });
    forgetKeys();
    return updated;
  }

  return {
    keyLookup,
    /** What keys resolve to changed elsewhere (a processor account): every process re-reads within keyCacheTtlMs. */
    forgetKeys,

    /** With ownerEmail, `addOwner` makes the first dashboard Owner in the same transaction. */
    async create(
      input: CreateMerchantBody,
      addOwner?: (tx: Queryable, merchantId: string, email: string) => Promise<{ link: string }>,
    ): Promise<MerchantWithKeys> {
      const now = clock.now();
      const row: queries.MerchantRow = {
        id: newId('mer'),
        name: input.name,
        tokenization_enabled: input.tokenization ?? false,
        mit_enabled: input.mit ?? false,
        website_origins: [],
        brand_color: null,
        logo_url: null,
        created_at: now,
      };
      const { keys, owner } = await db.transaction(async (tx) => {
        await queries.insertMerchant(tx, row);
        const issued = await issueKeys(tx, row.id, now);
        const added = input.ownerEmail && addOwner ? await addOwner(tx, row.id, input.ownerEmail) : undefined;
        return { keys: issued, owner: added };
      });
      return {
        ...toMerchant(row, finance.defaults(row.id)),
        keys,
        ...(owner ? { ownerSetPasswordUrl: owner.link } : {}),
      };
    },

    update,

    async retrieve(id: string): Promise<Merchant> {
      const row = await queries.selectMerchant(db, id);
      if (!row) throw notFound('merchant', id);
      return toMerchant(row, await finance.view(db, id));
    },

    /** The dashboard's settings page: the hosted pages' colour and logo (null removes each). */
    async setBranding(id: string, branding: { brandColor: string | null; logoUrl: string | null }): Promise<Merchant> {
      return update(id, branding);
    },

    /** The dashboard's settings page: replaces the list (checked as the API checks it). */
    async setWebsiteOrigins(id: string, origins: string[]): Promise<Merchant> {
      return update(id, { websiteOrigins: origins });
    },

    async list(): Promise<Merchant[]> {
      const settings = await finance.viewAll(db);
      return (await queries.selectMerchants(db)).map((row) =>
        toMerchant(row, settings.get(row.id) ?? finance.defaults(row.id)),
      );
    },

    /**
     * The old keys of `mode` stop working at once; the new ones are shown only in this answer.
     * Live keys only while `liveAllowed` says the merchant has an enabled live processor account.
     */
    async rollKeys(
      id: string,
      mode: 'test' | 'live' = 'test',
      liveAllowed: () => Promise<boolean> = async () => false,
    ): Promise<MerchantWithKeys> {
      const now = clock.now();
      // Asked before the transaction: on PGlite a second query beside an open transaction waits for it.
      if (mode === 'live' && !(await liveAllowed())) {
        if (!(await queries.selectMerchant(db, id))) throw notFound('merchant', id);
        throw new DomainError(
          'no_live_processor',
          'Live keys need an enabled live processor account: connect one first (POST /admin/v1/merchants/{id}/processor_accounts/create)',
        );
      }
      const rolled = await db.transaction(async (tx) => {
        const row = await queries.selectMerchant(tx, id);
        if (!row) throw notFound('merchant', id);
        await queries.revokeApiKeys(tx, id, mode, now);
        return { ...toMerchant(row, await finance.view(tx, id)), keys: await issueKeys(tx, id, now, mode) };
      });
      forgetKeys();
      return rolled;
    },
  };
}

export type MerchantService = ReturnType<typeof createMerchantService>;
