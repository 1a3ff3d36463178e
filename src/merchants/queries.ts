import type { Queryable } from '../db/db.js';
import type { MerchantContext } from '../core/merchant-context.js';

export interface MerchantRow {
  id: string;
  name: string;
  tokenization_enabled: boolean;
  mit_enabled: boolean;
  /** Origins whose pages may frame the card field (issue 14), e.g. `https://shop.example`. */
  website_origins: string[];
  /** The hosted pages' colour (`#rrggbb`) and logo (https URL), issue 22; null: none. */
  brand_color: string | null;
  logo_url: string | null;
  created_at: Date;
}

const columns = 'id, name, tokenization_enabled, mit_enabled, website_origins, brand_color, logo_url, created_at';

export async function insertMerchant(db: Queryable, row: MerchantRow): Promise<void> {
  await db.query(
    `INSERT INTO merchants (id, name, tokenization_enabled, mit_enabled, website_origins, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)`,
    [row.id, row.name, row.tokenization_enabled, row.mit_enabled, JSON.stringify(row.website_origins), row.created_at],
  );
}

export async function updateMerchant(
  db: Queryable,
  id: string,
  changes: {
    name?: string;
    tokenization?: boolean;
    mit?: boolean;
    websiteOrigins?: string[];
    brandColor?: string | null;
    logoUrl?: string | null;
  },
  now: Date,
): Promise<MerchantRow | undefined> {
  const origins = changes.websiteOrigins === undefined ? null : JSON.stringify(changes.websiteOrigins);
  // The branding may be set to null (removed), so "not given" is a flag of its own, not a NULL.
  const [row] = await db.query<MerchantRow>(
    `UPDATE merchants SET name = COALESCE($2, name), tokenization_enabled = COALESCE($3, tokenization_enabled),
       mit_enabled = COALESCE($4, mit_enabled), website_origins = COALESCE($5::jsonb, website_origins), updated_at = $6,
       brand_color = CASE WHEN $7::boolean THEN $8::text ELSE brand_color END,
       logo_url = CASE WHEN $9::boolean THEN $10::text ELSE logo_url END
     WHERE id = $1 RETURNING ${columns}`,
    [
      id,
      changes.name ?? null,
      changes.tokenization ?? null,
      changes.mit ?? null,
      origins,
      now,
      changes.brandColor !== undefined,
      changes.brandColor ?? null,
      changes.logoUrl !== undefined,
      changes.logoUrl ?? null,
    ],
  );
  return row;
}

export async function selectMerchant(db: Queryable, id: string): Promise<MerchantRow | undefined> {
  const [row] = await db.query<MerchantRow>(`SELECT ${columns} FROM merchants WHERE id = $1`, [id]);
  return row;
}

export async function selectMerchants(db: Queryable): Promise<MerchantRow[]> {
  return db.query<MerchantRow>(`SELECT ${columns} FROM merchants ORDER BY created_at DESC, id DESC`);
}

export async function insertApiKey(
  db: Queryable,
  key: {
    id: string;
    merchantId: string;
    mode: 'test' | 'live';
    kind: 'private' | 'public';
    keyHash: string;
    keyHint: string;
    now: Date;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO api_keys (id, merchant_id, mode, kind, key_hash, key_hint, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [key.id, key.merchantId, key.mode, key.kind, key.keyHash, key.keyHint, key.now],
  );
}

export async function revokeApiKeys(
  db: Queryable,
  merchantId: string,
  mode: 'test' | 'live',
  now: Date,
): Promise<void> {
  await db.query('UPDATE api_keys SET revoked_at = $3 WHERE merchant_id = $1 AND mode = $2 AND revoked_at IS NULL', [
    merchantId,
    mode,
    now,
  ]);
}

export async function selectMerchantByKeyHash(db: Queryable, keyHash: string): Promise<MerchantContext | null> {
  const [row] = await db.query<{
    merchant_id: string;
    mode: 'test' | 'live';
    kind: 'private' | 'public';
    tokenization_enabled: boolean;
    mit_enabled: boolean;
    processor_account_id: string | null;
  }>(
    // The enabled processor account of the key's mode takes the merchant's new payments (at most one: an index).
    `SELECT k.merchant_id, k.mode, k.kind, m.tokenization_enabled, m.mit_enabled, pa.id AS processor_account_id
     FROM api_keys k JOIN merchants m ON m.id = k.merchant_id
     LEFT JOIN processor_accounts pa ON pa.merchant_id = k.merchant_id AND pa.mode = k.mode AND pa.status = 'enabled'
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [keyHash],
  );
  if (!row) return null;
  return {
    merchantId: row.merchant_id,
    mode: row.mode,
    keyKind: row.kind,
    tokenizationEnabled: row.tokenization_enabled,
    mitEnabled: row.mit_enabled,
    processorAccountId: row.processor_account_id,
  };
}
