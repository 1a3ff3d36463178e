import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import { isUniqueViolation } from '../db/errors.js';
import { newId } from '../ids.js';
import { dataKeyLength, hkdf, open, parseCiphertext, seal, unwrapWithAny, wrapKey } from './cipher.js';
import { secretTables, type SecretTable } from './secrets-at-rest.js';

export interface Vault {
  /**
   * AES-256-GCM with the active data key; `context` (e.g. the payment method id) is bound as
   * additional authenticated data, so a ciphertext copied to another record does not decrypt.
   * Returns '<keyId>:<iv>:<tag>:<ciphertext>' (base64url parts).
   */
  encrypt(plaintext: string, context: string): string;
  /**
   * Async because it may reload the keys from the database when another process rotated. The
   * reload reads through `source` (the database by default): a caller inside a transaction passes
   * the transaction, so that the reload needs no second connection (PGlite has one; a pool may be
   * exhausted by transactions waiting like this one).
   */
  decrypt(ciphertext: string, context: string, source?: Queryable): Promise<string>;
  /**
   * Keyed hash of a card number, scoped to the merchant: the same card at the same merchant gives
   * the same value, at another merchant a different one. base64url, 32 characters.
   */
  fingerprint(merchantId: string, cardNumber: string): string;
  /** A stable 32-byte secret derived from the master key for another purpose (HKDF, info = purpose). */
  deriveKey(purpose: string): Buffer;
  /**
   * Makes a new data key active, re-encrypts every ciphertext at rest (secrets-at-rest.ts) that uses another key
   * (retired keys stay, wrapped, so that a straggler written with one by another process still decrypts).
   */
  rotateKey(): Promise<{ activeKeyId: string; reencrypted: number }>;
  /**
   * Re-wraps every data key and the derivation seed under the current master key (TESSERA_MASTER_KEY),
   * opening what the previous one (TESSERA_PREVIOUS_MASTER_KEY) wrapped: the second step of a
   * master-key rotation (docs/operations.md). Nothing encrypted with a data key changes.
   */
  rotateMasterKey(): Promise<{ masterKeyId: string; rewrapped: number }>;
  /** A public name of the current master key (not the key): which key a process runs with. */
  readonly masterKeyId: string;
}

const masterKeyLength = 32;
const reencryptBatchSize = 500;
const rotationAttempts = 5;

/** HKDF info strings of the vault's own keys; deriveKey refuses them so that no caller can obtain one. */
const reservedPurposePrefix = 'tessera.vault.';
const wrappingPurpose = `${reservedPurposePrefix}key-wrapping`;
const fingerprintPurpose = `${reservedPurposePrefix}card-fingerprint`;

const rootPurpose = `${reservedPurposePrefix}root-seed`;
const masterKeyIdPurpose = `${reservedPurposePrefix}master-key-id`;

const keyIdOf = (column: string) => `split_part(${column}, ':', 1)`;

/**
 * Opens the card vault: loads and unwraps the data keys, creating the first one when the vault is
 * new. Data keys are random and stored wrapped under a key derived from the master key, so that
 * rotating a data key never needs the master key to change, and a wrong master key is detected
 * when the first key fails to unwrap rather than by producing garbage later.
 */
export async function openVault(options: {
  db: Db;
  masterKey: Buffer;
  /** During a master-key rotation, the key being replaced (config previousMasterKey). */
  previousMasterKey?: Buffer | undefined;
  clock: Clock;
}): Promise<Vault> {
  const { db, masterKey, previousMasterKey, clock } = options;
  for (const key of [masterKey, previousMasterKey]) {
    if (key && key.length !== masterKeyLength) throw new Error(`The vault master key must be ${masterKeyLength} bytes`);
  }
  const wrappingKey = hkdf(masterKey, wrappingPurpose);
  // What the current key cannot open, the previous one may have wrapped (a rotation under way).
  const wrappingKeys = [wrappingKey, ...(previousMasterKey ? [hkdf(previousMasterKey, wrappingPurpose)] : [])];
  const unwrapAny = (keyId: string, wrapped: string) => unwrapWithAny(wrappingKeys, keyId, wrapped);

  const dataKeys = new Map<string, Buffer>();
  let activeKeyId: string | null = null;

  /** Reads every data key into memory; returns the id of the active one, null when there is none. */
  async function loadKeys(source: Queryable): Promise<string | null> {
    const rows = await source.query<{ id: string; wrapped_key: string; active: boolean }>(
      'SELECT id, wrapped_key, active FROM vault_keys ORDER BY created_at, id',
    );
    let active: string | null = null;
    for (const row of rows) {
      if (!dataKeys.has(row.id)) dataKeys.set(row.id, unwrapAny(row.id, row.wrapped_key).key);
      if (row.active) active = row.id;
    }
    if (active !== null) activeKeyId = active;
    return active;
  }

  async function insertKey(source: Queryable, id: string, key: Buffer, onConflict: '' | 'ON CONFLICT DO NOTHING') {
    return source.query(
      `INSERT INTO vault_keys (id, wrapped_key, active, created_at) VALUES ($1, $2, true, $3) ${onConflict}`,
      [id, wrapKey(wrappingKey, id, key), clock.now()],
    );
  }

  // A new vault gets its first key. Two processes opening it at once both try; the partial unique
  // index vault_keys_one_active lets exactly one insert win and the other adopts its key.
  if ((await loadKeys(db)) === null) {
    await insertKey(db, newId('vk'), randomBytes(dataKeyLength), 'ON CONFLICT DO NOTHING');
    if ((await loadKeys(db)) === null) throw new Error('The vault could not create its first data key');
  }

  // The secret other keys are derived from (fingerprints, client secrets, invoice page tokens) must
  // not change with the master key: it is the master key of the vault's first days, kept wrapped.
  const seed = await openSeed();
  const fingerprintKey = hkdf(seed, fingerprintPurpose);

  async function openSeed(): Promise<Buffer> {
    const [row] = await db.query<{ wrapped_seed: string }>('SELECT wrapped_seed FROM vault_root WHERE id = 1');
    if (row) return unwrapAny(rootPurpose, row.wrapped_seed).key;
    // Before the first rotation the seed is the master key that wrapped the data keys, which is
    // kept, wrapped under that same key, so that a process still without the new key keeps working.
    const [first] = await db.query<{ id: string; wrapped_key: string }>(
      'SELECT id, wrapped_key FROM vault_keys ORDER BY created_at, id LIMIT 1',
    );
    const at = first ? unwrapAny(first.id, first.wrapped_key).at : 0;
    const original = at === 0 ? masterKey : (previousMasterKey ?? masterKey);
    await db.query(
      'INSERT INTO vault_root (id, wrapped_seed, updated_at) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING',
      [wrapKey(wrappingKeys[at] ?? wrappingKey, rootPurpose, original), clock.now()],
    );
    const [stored] = await db.query<{ wrapped_seed: string }>('SELECT wrapped_seed FROM vault_root WHERE id = 1');
    if (!stored) throw new Error('The vault could not store its root seed');
    return unwrapAny(rootPurpose, stored.wrapped_seed).key;
  }

  // Reloads triggered by concurrent decrypts share one query.
  let reloading: Promise<unknown> | null = null;
  function reloadKeys(source: Queryable): Promise<unknown> {
    // Only reloads through the database itself are shared: a transaction's cannot wait for another.
    if (source !== db) return loadKeys(source);
    reloading ??= loadKeys(db).finally(() => {
      reloading = null;
    });
    return reloading;
  }

  /** The key of a ciphertext, reloading once when another process may have created it. */
  async function keyFor(keyId: string, source: Queryable): Promise<Buffer> {
    let key = dataKeys.get(keyId);
    if (key === undefined) {
      await reloadKeys(source);
      key = dataKeys.get(keyId);
    }
    if (key === undefined) throw new Error(`The vault has no data key ${keyId}`);
    return key;
  }

  function currentKey(): { id: string; key: Buffer } {
    const key = activeKeyId === null ? undefined : dataKeys.get(activeKeyId);
    if (activeKeyId === null || key === undefined) throw new Error('The vault has no active data key');
    return { id: activeKeyId, key };
  }

  /** Makes a new key the only active one; another rotation running at once makes this one retry. */
  async function activateNewKey(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const id = newId('vk');
      const key = randomBytes(dataKeyLength);
      try {
        await db.transaction(async (tx) => {
          await tx.query('UPDATE vault_keys SET active = false WHERE active');
          await insertKey(tx, id, key, '');
        });
        dataKeys.set(id, key);
        activeKeyId = id;
        return;
      } catch (err) {
        if (!isUniqueViolation(err, 'vault_keys_one_active') || attempt >= rotationAttempts) throw err;
      }
    }
  }

  /** The active key, read again in the transaction (another process may have rotated since). */
  async function activeTarget(tx: Queryable): Promise<{ id: string; key: Buffer }> {
    const [active] = await tx.query<{ id: string }>('SELECT id FROM vault_keys WHERE active');
    if (!active) throw new Error('The vault has no active data key');
    if (!dataKeys.has(active.id)) await loadKeys(tx);
    const activeKey = dataKeys.get(active.id);
    if (activeKey === undefined) throw new Error(`The vault has no data key ${active.id}`);
    activeKeyId = active.id;
    return { id: active.id, key: activeKey };
  }

  /** One ciphertext under the target key; what the rotation cannot read stops it, naming where. */
  async function reseal(
    tx: Queryable,
    target: { id: string; key: Buffer },
    ciphertext: string,
    context: string,
    where: string,
  ): Promise<string> {
    const { keyId } = parseCiphertext(ciphertext);
    if (!dataKeys.has(keyId)) await loadKeys(tx);
    const key = dataKeys.get(keyId);
    if (key === undefined) throw new Error(`${where} uses the missing vault data key ${keyId}`);
    let plaintext: string;
    try {
      plaintext = open(key, ciphertext, context);
    } catch {
      throw new Error(`${where} does not decrypt; the rotation stopped`);
    }
    return seal(target, plaintext, context);
  }

  /**
   * Re-encrypts one batch of one table's rows that use a key other than the active one. The active
   * key is read again in each batch's transaction so that two rotations running at once converge
   * on the later key instead of converting each other's rows back and forth. The rows are locked,
   * so a concurrent update of a row cannot be overwritten with an older value.
   */
  async function reencryptBatch(spec: SecretTable): Promise<{ rows: number; ciphertexts: number; keyId: string }> {
    return db.transaction(async (tx) => {
      const target = await activeTarget(tx);
      const usesOtherKey = spec.secretColumns.map((column) => `${keyIdOf(column)} <> $1`).join(' OR ');
      const rows = await tx.query<Record<string, string | null>>(
        `SELECT ${[...spec.keyColumns, ...spec.secretColumns].join(', ')} FROM ${spec.table}
          WHERE ${usesOtherKey} ORDER BY ${spec.keyColumns.join(', ')} LIMIT ${reencryptBatchSize} FOR UPDATE`,
        [target.id],
      );
      let ciphertexts = 0;
      for (const row of rows) {
        const names = Object.fromEntries(spec.keyColumns.map((column) => [column, row[column] ?? '']));
        const context = spec.context(names);
        const updated = spec.secretColumns.map((column) => row[column] ?? null);
        for (const [index, column] of spec.secretColumns.entries()) {
          const ciphertext = updated[index];
          if (ciphertext === null || ciphertext === undefined || parseCiphertext(ciphertext).keyId === target.id)
            continue;
          const where = `The ${column} of ${spec.table} ${Object.values(names).join('/')}`;
          updated[index] = await reseal(tx, target, ciphertext, context, where);
          ciphertexts += 1;
        }
        // Re-encryption changes no detail, so updated_at stays as it was.
        const sets = spec.secretColumns.map((column, index) => `${column} = $${index + 1}`);
        const keys = spec.keyColumns.map((column, index) => `${column} = $${spec.secretColumns.length + index + 1}`);
        await tx.query(`UPDATE ${spec.table} SET ${sets.join(', ')} WHERE ${keys.join(' AND ')}`, [
          ...updated,
          ...spec.keyColumns.map((column) => row[column]),
        ]);
      }
      return { rows: rows.length, ciphertexts, keyId: target.id };
    });
  }

  return {
    encrypt(plaintext, context) {
      return seal(currentKey(), plaintext, context);
    },

    async decrypt(ciphertext, context, source = db) {
      const { keyId } = parseCiphertext(ciphertext);
      const key = await keyFor(keyId, source);
      try {
        return open(key, ciphertext, context);
      } catch {
        // The reason GCM refused is deliberately not passed on: it says nothing useful and the
        // message must never carry any part of the secret.
        throw new Error('The ciphertext does not decrypt in this context: it was altered or belongs to another record');
      }
    },

    fingerprint(merchantId, cardNumber) {
      return createHmac('sha256', fingerprintKey)
        .update(`${merchantId}:${cardNumber}`)
        .digest('base64url')
        .slice(0, 32);
    },

    deriveKey(purpose) {
      if (purpose.length === 0) throw new Error('deriveKey needs a purpose');
      if (purpose.startsWith(reservedPurposePrefix))
        throw new Error(`The purpose ${purpose} is reserved for the vault`);
      return hkdf(seed, purpose);
    },

    masterKeyId: hkdf(masterKey, masterKeyIdPurpose).subarray(0, 8).toString('hex'),

    async rotateMasterKey() {
      // One transaction, rows locked: a data-key rotation at the same time waits, and no process
      // ever sees some keys re-wrapped and others not.
      const rewrapped = await db.transaction(async (tx) => {
        let count = 0;
        const rows = await tx.query<{ id: string; wrapped_key: string }>(
          'SELECT id, wrapped_key FROM vault_keys ORDER BY created_at, id FOR UPDATE',
        );
        for (const row of rows) {
          const opened = unwrapAny(row.id, row.wrapped_key);
          if (opened.at === 0) continue;
          await tx.query('UPDATE vault_keys SET wrapped_key = $1 WHERE id = $2', [
            wrapKey(wrappingKey, row.id, opened.key),
            row.id,
          ]);
          count += 1;
        }
        const [root] = await tx.query<{ wrapped_seed: string }>(
          'SELECT wrapped_seed FROM vault_root WHERE id = 1 FOR UPDATE',
        );
        if (root && unwrapAny(rootPurpose, root.wrapped_seed).at !== 0) {
          await tx.query('UPDATE vault_root SET wrapped_seed = $1, updated_at = $2 WHERE id = 1', [
            wrapKey(wrappingKey, rootPurpose, seed),
            clock.now(),
          ]);
          count += 1;
        }
        return count;
      });
      return { masterKeyId: hkdf(masterKey, masterKeyIdPurpose).subarray(0, 8).toString('hex'), rewrapped };
    },

    async rotateKey() {
      await activateNewKey();
      let reencrypted = 0;
      let finalKeyId = activeKeyId ?? '';
      for (const spec of secretTables) {
        for (;;) {
          const batch = await reencryptBatch(spec);
          reencrypted += batch.ciphertexts;
          finalKeyId = batch.keyId;
          if (batch.rows < reencryptBatchSize) break;
        }
      }
      // Retired keys are kept, wrapped: another process sharing the database may still encrypt
      // with the old key until it notices the rotation, and what it writes must stay readable.
      // Running the rotation again re-encrypts such stragglers.
      return { activeKeyId: finalKeyId, reencrypted };
    },
  };
}
