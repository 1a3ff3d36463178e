import { ownRowCondition } from '../../db/by-id.js';
import type { Queryable } from '../../db/db.js';
import { selectPage, type PageRequest } from '../../db/pagination.js';
import type { SignatureAlgorithm, WebhookFormat } from '../signature.js';

export interface WebhookEndpointRow {
  id: string;
  merchant_id: string;
  mode: string;
  kind: 'static' | 'dynamic';
  url: string | null;
  description: string | null;
  enabled_events: string[];
  legacy_notifications: boolean;
  status: 'enabled' | 'disabled';
  signature_case: 'upper' | 'lower';
  /** docs/webhooks.md#standard-webhooks-format: docs/webhooks.md#what-is-sent headers (`moneycollect`) or Standard Webhooks headers (`standard`). */
  format: WebhookFormat;
  /** docs/decisions/0026: `ed25519` (standard format only) signs `v1a,` with the key pair whose public half is public_key. */
  signature_algorithm: SignatureAlgorithm;
  /** `whpk_…` for an ed25519 endpoint (no secret); null for HMAC. */
  public_key: string | null;
  created_at: Date;
  /** Endpoint health (docs/decisions/0016); absent on a row not yet written. */
  failing_since?: Date | null;
  last_error?: string | null;
  disabled_reason?: 'failing' | 'gone' | null;
  /** The earliest pending delivery's next attempt, computed when read. */
  next_attempt_at?: Date | null;
}

// The token ciphertext is not among the columns: it is read only by the statements that need it,
// so that an endpoint row passed around the code never carries it.
const columns =
  'id, merchant_id, mode, kind, url, description, enabled_events, legacy_notifications, status, created_at, signature_case, format, ' +
  'signature_algorithm, public_key';

/**
 * What a read answers besides the stored fields: health, and the next attempt of the endpoint's
 * earliest pending delivery (the partial index webhook_deliveries_endpoint_due).
 */
const readColumns = `${columns}, failing_since, last_error, disabled_reason,
  (SELECT min(d.next_attempt_at) FROM webhook_deliveries d
    WHERE d.endpoint_id = webhook_endpoints.id AND d.status = 'pending') AS next_attempt_at`;

const scope = 'merchant_id = $1 AND mode = $2 AND deleted_at IS NULL';
/** The live endpoint with id $3 of merchant $1 in mode $2, found by its primary key (db/by-id.ts). */
const ownEndpoint = `${ownRowCondition('webhook_endpoints', '$3', '$1', '$2')} AND deleted_at IS NULL`;

export async function insertWebhookEndpoint(
  db: Queryable,
  row: WebhookEndpointRow,
  tokenEncrypted: string,
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_endpoints (${columns}, token_encrypted, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $10)`,
    [...endpointValues(row), tokenEncrypted],
  );
}

/**
 * The built-in dynamic endpoint, unless the merchant already has one: the partial unique index
 * webhook_endpoints_one_dynamic lets exactly one of two concurrent inserts win. Its
 * legacy_notifications is the merchant's legacy_notifications_default (migration 0160: true for
 * merchants that existed before the opt-in), `row`'s value only if the merchant row is missing.
 * The row as inserted when this insert won, undefined otherwise.
 */
export async function insertDynamicEndpointIfMissing(
  db: Queryable,
  row: WebhookEndpointRow,
  tokenEncrypted: string,
): Promise<WebhookEndpointRow | undefined> {
  const [inserted] = await db.query<{ legacy_notifications: boolean }>(
    `INSERT INTO webhook_endpoints (${columns}, token_encrypted, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7,
       COALESCE((SELECT legacy_notifications_default FROM merchants WHERE id = $2), $8::boolean),
       $9, $10, $11, $12, $13, $14, $15, $10)
     ON CONFLICT DO NOTHING RETURNING legacy_notifications`,
    [...endpointValues(row), tokenEncrypted],
  );
  return inserted ? { ...row, legacy_notifications: inserted.legacy_notifications } : undefined;
}

function endpointValues(row: WebhookEndpointRow): unknown[] {
  return [
    row.id,
    row.merchant_id,
    row.mode,
    row.kind,
    row.url,
    row.description,
    JSON.stringify(row.enabled_events),
    row.legacy_notifications,
    row.status,
    row.created_at,
    row.signature_case,
    row.format,
    row.signature_algorithm,
    row.public_key,
  ];
}

export async function selectWebhookEndpoint(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db.query<WebhookEndpointRow>(
    `SELECT ${readColumns} FROM webhook_endpoints WHERE ${ownEndpoint}`,
    [merchantId, mode, id],
  );
  return row;
}

export async function selectDynamicEndpoint(
  db: Queryable,
  merchantId: string,
  mode: string,
): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db.query<WebhookEndpointRow>(
    `SELECT ${columns} FROM webhook_endpoints WHERE ${scope} AND kind = 'dynamic'`,
    [merchantId, mode],
  );
  return row;
}

/**
 * Writes every changeable field; the service has merged the change into the current row. No row
 * when the endpoint is gone, or when the change would leave an ed25519 endpoint outside the
 * standard format (checked here too, so that a roll to ed25519 racing a change of format cannot
 * combine them).
 */
export async function updateWebhookEndpoint(
  db: Queryable,
  row: WebhookEndpointRow,
  now: Date,
): Promise<WebhookEndpointRow | undefined> {
  const [updated] = await db.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints SET url = $4, description = $5, enabled_events = $6, legacy_notifications = $7,
       status = $8, updated_at = $9, signature_case = $10, format = $11
     WHERE ${ownEndpoint} AND ($11 = 'standard' OR signature_algorithm = 'hmac-sha256')
     RETURNING ${readColumns}`,
    [
      row.merchant_id,
      row.mode,
      row.id,
      row.url,
      row.description,
      JSON.stringify(row.enabled_events),
      row.legacy_notifications,
      row.status,
      now,
      row.signature_case,
      row.format,
    ],
  );
  return updated;
}

/**
 * A person enabled the endpoint again: it starts healthy (docs/decisions/0016), and its next
 * failures are counted afresh. Only a row that was disabled is touched.
 */
export async function clearHealthOnEnable(db: Queryable, merchantId: string, mode: string, id: string): Promise<void> {
  await db.query(
    `UPDATE webhook_endpoints SET failing_since = NULL, last_error = NULL, alerted_at = NULL, disabled_reason = NULL,
       disabled_at = NULL
     WHERE ${ownEndpoint}`,
    [merchantId, mode, id],
  );
}

/** Soft delete of a static endpoint; the dynamic one is never deleted (deliveries sign with it). */
export async function markWebhookEndpointDeleted(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
  now: Date,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_endpoints SET deleted_at = $4, updated_at = $4
     WHERE ${ownEndpoint} AND kind = 'static' RETURNING id`,
    [merchantId, mode, id, now],
  );
  return rows.length > 0;
}

export async function selectWebhookEndpointPage(db: Queryable, merchantId: string, mode: string, page: PageRequest) {
  return selectPage<WebhookEndpointRow>(
    db,
    {
      table: 'webhook_endpoints',
      columns: readColumns,
      where: ['merchant_id = $1', 'mode = $2', 'deleted_at IS NULL'],
      params: [merchantId, mode],
    },
    page,
  );
}

/** docs/webhooks.md#what-is-sent: the merchant's enabled static endpoints subscribed to `eventType`. */
export async function selectTargets(
  db: Queryable,
  merchantId: string,
  mode: string,
  eventType: string,
): Promise<Array<Pick<WebhookEndpointRow, 'id' | 'url' | 'legacy_notifications'>>> {
  return db.query(
    `SELECT id, url, legacy_notifications FROM webhook_endpoints
     WHERE ${scope} AND kind = 'static' AND status = 'enabled' AND url IS NOT NULL
       AND (enabled_events @> '["*"]'::jsonb OR enabled_events @> $3::jsonb)
     ORDER BY created_at, id`,
    [merchantId, mode, JSON.stringify([eventType])],
  );
}

/** The token ciphertext of a live endpoint of the merchant, and its public key if ed25519 (for reveal_token). */
export async function selectTokenCiphertext(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<{ token_encrypted: string; public_key: string | null } | undefined> {
  const [row] = await db.query<{ token_encrypted: string; public_key: string | null }>(
    `SELECT token_encrypted, public_key FROM webhook_endpoints WHERE ${ownEndpoint}`,
    [merchantId, mode, id],
  );
  return row;
}

/**
 * The token ciphertext of any endpoint, deleted ones included: the delivery engine signs
 * deliveries that were planned before a deletion, and decides itself whether to send them.
 */
export async function selectTokenCiphertextById(db: Queryable, id: string): Promise<string | undefined> {
  const [row] = await db.query<{ token_encrypted: string }>(
    'SELECT token_encrypted FROM webhook_endpoints WHERE id = $1',
    [id],
  );
  return row?.token_encrypted;
}

/** An endpoint's stored tokens: the current one and, during a roll's grace period, the one it replaced. */
export interface TokenCiphertexts {
  id: string;
  token_encrypted: string;
  previous_token_encrypted: string | null;
  previous_token_expires_at: Date | null;
}

export function selectTokenCiphertextsByIds(db: Queryable, ids: readonly string[]): Promise<TokenCiphertexts[]> {
  return db.query(
    `SELECT id, token_encrypted, previous_token_encrypted, previous_token_expires_at
     FROM webhook_endpoints WHERE id = ANY($1::text[])`,
    [ids],
  );
}

/**
 * A roll: the new token, and the one it replaces kept until `previousExpiresAt` (docs/webhooks.md#standard-webhooks-format grace
 * period), or dropped at once when that is null; `signatureAlgorithm` and `publicKey` are the new
 * token's (docs/decisions/0026: a roll may change the algorithm). Answers the endpoint's format and
 * whether it rolled, undefined when there is no such endpoint. The format is checked in the same
 * statement, so that a grace period or an ed25519 key is only ever given to a standard-format
 * endpoint (a concurrent change of format cannot slip between a check and the roll).
 */
export async function updateTokenCiphertext(
  db: Queryable,
  roll: {
    merchantId: string;
    mode: string;
    id: string;
    tokenEncrypted: string;
    previousExpiresAt: Date | null;
    signatureAlgorithm: SignatureAlgorithm;
    publicKey: string | null;
    now: Date;
  },
): Promise<{ format: WebhookFormat; rolled: boolean; previous_token_encrypted: string | null } | undefined> {
  const [row] = await db.query<{ format: WebhookFormat; rolled: boolean; previous_token_encrypted: string | null }>(
    `WITH current AS (SELECT id, format FROM webhook_endpoints WHERE ${ownEndpoint}),
     rolled AS (
       UPDATE webhook_endpoints e SET token_encrypted = $4, updated_at = $5,
         previous_token_encrypted = CASE WHEN $6::timestamptz IS NULL THEN NULL ELSE e.token_encrypted END,
         previous_token_expires_at = $6, signature_algorithm = $7, public_key = $8
       FROM current WHERE e.id = current.id
         AND (($6::timestamptz IS NULL AND $7 = 'hmac-sha256') OR current.format = 'standard')
       RETURNING e.id, e.previous_token_encrypted
     )
     SELECT current.format, EXISTS (SELECT 1 FROM rolled) AS rolled,
       (SELECT previous_token_encrypted FROM rolled) AS previous_token_encrypted
     FROM current`,
    [
      roll.merchantId,
      roll.mode,
      roll.id,
      roll.tokenEncrypted,
      roll.now,
      roll.previousExpiresAt,
      roll.signatureAlgorithm,
      roll.publicKey,
    ],
  );
  return row;
}

/** undefined: no such merchant; null: the merchant has no legacy key yet. */
export async function selectLegacyKeyCiphertext(db: Queryable, merchantId: string): Promise<string | null | undefined> {
  const [row] = await db.query<{ legacy_signing_key_encrypted: string | null }>(
    'SELECT legacy_signing_key_encrypted FROM merchants WHERE id = $1',
    [merchantId],
  );
  return row === undefined ? undefined : row.legacy_signing_key_encrypted;
}

/**
 * Sets the legacy key only when the merchant has none: of two processes creating it at once, the
 * first write wins and the other reads it back, so every notification is signed with one key.
 */
export async function setLegacyKeyIfMissing(db: Queryable, merchantId: string, keyEncrypted: string): Promise<void> {
  await db.query(
    'UPDATE merchants SET legacy_signing_key_encrypted = $2 WHERE id = $1 AND legacy_signing_key_encrypted IS NULL',
    [merchantId, keyEncrypted],
  );
}

export interface AuditEntry {
  merchantId: string;
  mode: string;
  action: string;
  objectId: string | null;
  actor: string;
  traceId: string | null;
  clientAddress?: string | null;
  createdAt: Date;
}

export async function insertAuditEntry(db: Queryable, entry: AuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (merchant_id, mode, action, object_id, actor, trace_id, created_at, client_address)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      entry.merchantId,
      entry.mode,
      entry.action,
      entry.objectId,
      entry.actor,
      entry.traceId,
      entry.createdAt,
      entry.clientAddress ?? null,
    ],
  );
}
