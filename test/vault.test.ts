import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { manualClock } from '../src/clock.js';
import { openDb, type Db } from '../src/db/db.js';
import { migrate } from '../src/db/migrate.js';
import { newId } from '../src/ids.js';
import { openVault, type Vault } from '../src/vault/vault.js';
import { migratedPgliteTemplate } from './helpers/templates.js';

const cardNumber = '4242424242424242';
const securityCode = '737';
const clock = manualClock(new Date('2026-06-15T12:00:00.000Z'));
const masterKey = randomBytes(32);
const foreignMasterKey = randomBytes(32);

/** A new PGlite, a copy of one with every migration applied (./helpers/templates.ts). */
async function freshDb(): Promise<Db> {
  const db = await openDb({ pgliteTemplate: await migratedPgliteTemplate() });
  await migrate(db);
  return db;
}

async function keyIds(db: Db): Promise<Array<{ id: string; active: boolean }>> {
  return db.query<{ id: string; active: boolean }>('SELECT id, active FROM vault_keys ORDER BY created_at, id');
}

// Starting PGlite takes a second, so the tests that need a vault of their own share these two:
// twinDb is opened under the same master key as the main vault, foreignDb under another one.
let twinDb: Db;
let foreignDb: Db;
before(async () => {
  twinDb = await freshDb();
  foreignDb = await freshDb();
});
after(() => Promise.all([twinDb.close(), foreignDb.close()]));

describe('vault', () => {
  let db: Db;
  let vault: Vault;
  before(async () => {
    db = await freshDb();
    vault = await openVault({ db, masterKey, clock });
  });
  after(() => db.close());

  test('creates exactly one active data key when the vault is new, and reuses it on reopening', async () => {
    const [first, ...others] = await keyIds(db);
    assert.equal(others.length, 0);
    assert.equal(first?.active, true);
    const reopened = await openVault({ db, masterKey, clock });
    assert.deepEqual(await keyIds(db), [first]);
    assert.ok(reopened.encrypt('x', 'ctx').startsWith(`${first?.id}:`));
  });

  test('creates one key when two processes open a new vault at once', async () => {
    const vaults = await Promise.all([1, 2, 3].map(() => openVault({ db: twinDb, masterKey, clock })));
    assert.equal((await keyIds(twinDb)).length, 1);
    const sealed = vaults[0]!.encrypt(cardNumber, 'pm_1');
    for (const each of vaults) assert.equal(await each.decrypt(sealed, 'pm_1'), cardNumber);
  });

  test('decrypts what it encrypted in the same context', async () => {
    const sealed = vault.encrypt(cardNumber, 'pm_1000000000000000001');
    assert.equal(await vault.decrypt(sealed, 'pm_1000000000000000001'), cardNumber);
    assert.equal(await vault.decrypt(vault.encrypt('', 'empty'), 'empty'), '');
  });

  test('writes ciphertexts as <keyId>:<iv>:<tag>:<ciphertext> in base64url, fresh every time', async () => {
    const [active] = await keyIds(db);
    const sealed = vault.encrypt(cardNumber, 'pm_1');
    const parts = sealed.split(':');
    assert.equal(parts.length, 4);
    assert.equal(parts[0], active?.id);
    for (const part of parts.slice(1)) assert.match(part, /^[A-Za-z0-9_-]+$/);
    assert.notEqual(vault.encrypt(cardNumber, 'pm_1'), sealed);
  });

  test('refuses to decrypt in another context, so a ciphertext copied to another row is useless', async () => {
    const sealed = vault.encrypt(cardNumber, 'pm_1000000000000000001');
    await assert.rejects(vault.decrypt(sealed, 'pm_1000000000000000002'), (err: Error) => {
      assert.ok(!err.message.includes(cardNumber));
      return true;
    });
  });

  test('refuses a ciphertext that was altered', async () => {
    const sealed = vault.encrypt(cardNumber, 'pm_1');
    const parts = sealed.split(':');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0] = body[0]! ^ 1;
    const altered = [...parts.slice(0, 3), body.toString('base64url')].join(':');
    await assert.rejects(vault.decrypt(altered, 'pm_1'));
    const shortTag = [parts[0], parts[1], parts[2]!.slice(0, 8), parts[3]].join(':');
    await assert.rejects(vault.decrypt(shortTag, 'pm_1'));
    await assert.rejects(vault.decrypt('not a ciphertext', 'pm_1'));
  });

  test('never lets the plaintext show in the ciphertext, in any encoding', async () => {
    const sealed = vault.encrypt(cardNumber, 'pm_1');
    for (const form of [
      cardNumber,
      Buffer.from(cardNumber).toString('base64url'),
      Buffer.from(cardNumber).toString('hex'),
    ]) {
      assert.ok(!sealed.includes(form));
      assert.ok(!sealed.includes(form.slice(0, 8)));
    }
    // The key id in front is decimal digits that have nothing to do with the card (it held 4242 by
    // chance once); the last four must not show in what the card became.
    const [keyId, ...cipherParts] = sealed.split(':');
    assert.match(keyId!, /^vk_\d+$/);
    assert.ok(!cipherParts.join(':').includes(cardNumber.slice(-4)));
  });

  test('gives a card the same fingerprint within a merchant and a different one at another merchant', () => {
    const first = vault.fingerprint('mer_1000000000000000001', cardNumber);
    assert.equal(first, vault.fingerprint('mer_1000000000000000001', cardNumber));
    assert.match(first, /^[A-Za-z0-9_-]{32}$/);
    assert.notEqual(first, vault.fingerprint('mer_1000000000000000002', cardNumber));
    assert.notEqual(first, vault.fingerprint('mer_1000000000000000001', '5555555555554444'));
    assert.ok(!first.includes(cardNumber.slice(-4)));
  });

  test('keys fingerprints and derived keys to the master key', async () => {
    const otherVault = await openVault({ db: foreignDb, masterKey: foreignMasterKey, clock });
    assert.notEqual(otherVault.fingerprint('mer_1', cardNumber), vault.fingerprint('mer_1', cardNumber));
    assert.notDeepEqual(otherVault.deriveKey('webhook-tokens'), vault.deriveKey('webhook-tokens'));
    // Another database under the same master key: fingerprints do not depend on the data keys.
    const twin = await openVault({ db: twinDb, masterKey, clock });
    assert.equal(twin.fingerprint('mer_1', cardNumber), vault.fingerprint('mer_1', cardNumber));
    assert.deepEqual(twin.deriveKey('webhook-tokens'), vault.deriveKey('webhook-tokens'));
  });

  test('derives a stable 32-byte key per purpose and keeps the vault’s own keys out of reach', () => {
    const key = vault.deriveKey('webhook-tokens');
    assert.equal(key.length, 32);
    assert.deepEqual(vault.deriveKey('webhook-tokens'), key);
    assert.notDeepEqual(vault.deriveKey('session-cookies'), key);
    assert.throws(() => vault.deriveKey('tessera.vault.card-fingerprint'));
    assert.throws(() => vault.deriveKey(''));
  });

  test('refuses to open with a wrong master key, saying so', async () => {
    await assert.rejects(
      openVault({ db, masterKey: randomBytes(32), clock }),
      /^ConfigError: TESSERA_MASTER_KEY does not match the key that encrypted this vault \(during a master-key rotation, set TESSERA_PREVIOUS_MASTER_KEY to the old key\)$/,
    );
    await assert.rejects(openVault({ db, masterKey: randomBytes(16), clock }), /32 bytes/);
  });
});

describe('vault key rotation', () => {
  let db: Db;
  let vault: Vault;
  const merchantId = newId('mer');

  before(async () => {
    db = await freshDb();
    vault = await openVault({ db, masterKey, clock });
    await db.query('INSERT INTO merchants (id, name, created_at, updated_at) VALUES ($1, $2, $3, $3)', [
      merchantId,
      'Rotation test',
      clock.now(),
    ]);
  });
  after(() => db.close());

  async function insertMethod(number: string, code: string | null, networkToken: string | null): Promise<string> {
    const id = newId('pm');
    await db.query(
      `INSERT INTO payment_methods (id, merchant_id, mode, type, card_brand, card_country, card_exp_month,
         card_exp_year, card_last4, card_fingerprint, card_number_encrypted, security_code_encrypted,
         network_token_encrypted, created_at, updated_at)
       VALUES ($1, $2, 'test', 'card', 'visa', 'US', '04', '2030', $3, $4, $5, $6, $7, $8, $8)`,
      [
        id,
        merchantId,
        number.slice(-4),
        vault.fingerprint(merchantId, number),
        vault.encrypt(number, id),
        code === null ? null : vault.encrypt(code, id),
        networkToken === null ? null : vault.encrypt(networkToken, id),
        clock.now(),
      ],
    );
    return id;
  }

  type SecretRow = {
    id: string;
    card_number_encrypted: string;
    security_code_encrypted: string | null;
    network_token_encrypted: string | null;
    updated_at: Date;
  };
  async function secrets(id: string): Promise<SecretRow> {
    const [row] = await db.query<SecretRow>(
      `SELECT id, card_number_encrypted, security_code_encrypted, network_token_encrypted, updated_at
         FROM payment_methods WHERE id = $1`,
      [id],
    );
    assert.ok(row);
    return row;
  }

  test('re-encrypts every ciphertext with the new key, retires the old key, and the cards still decrypt', async () => {
    const [oldKey] = await keyIds(db);
    const full = await insertMethod(cardNumber, securityCode, '4111222233334444');
    const numberOnly = await insertMethod('5555555555554444', null, null);
    const before = await secrets(full);

    const result = await vault.rotateKey();

    assert.notEqual(result.activeKeyId, oldKey?.id);
    assert.equal(result.reencrypted, 4);
    const keysAfter = await keyIds(db);
    assert.equal(keysAfter.filter((key) => key.active).length, 1);
    assert.ok(keysAfter.some((key) => key.id === result.activeKeyId && key.active));
    assert.ok(keysAfter.some((key) => key.id === oldKey?.id && !key.active));
    const [usingOld] = await db.query<{ count: string }>(
      `SELECT count(*) AS count FROM payment_methods WHERE split_part(card_number_encrypted, ':', 1) = $1`,
      [oldKey?.id],
    );
    assert.equal(usingOld?.count, '0');

    const after = await secrets(full);
    for (const ciphertext of [
      after.card_number_encrypted,
      after.security_code_encrypted,
      after.network_token_encrypted,
    ]) {
      assert.ok(ciphertext?.startsWith(`${result.activeKeyId}:`));
    }
    assert.equal(await vault.decrypt(after.card_number_encrypted, full), cardNumber);
    assert.equal(await vault.decrypt(after.security_code_encrypted!, full), securityCode);
    assert.equal(await vault.decrypt(after.network_token_encrypted!, full), '4111222233334444');
    assert.deepEqual(after.updated_at, before.updated_at);

    const other = await secrets(numberOnly);
    assert.ok(other.card_number_encrypted.startsWith(`${result.activeKeyId}:`));
    assert.equal(other.security_code_encrypted, null);
    assert.equal(await vault.decrypt(other.card_number_encrypted, numberOnly), '5555555555554444');

    // The retired key stays readable: a straggler written with it by another process still decrypts.
    assert.equal(await vault.decrypt(before.card_number_encrypted, full), cardNumber);
    assert.ok(vault.encrypt('x', 'ctx').startsWith(`${result.activeKeyId}:`));
  });

  test('lets a vault opened before the rotation read the rotated rows after reopening', async () => {
    const id = await insertMethod(cardNumber, securityCode, null);
    const { activeKeyId } = await vault.rotateKey();
    const reopened = await openVault({ db, masterKey, clock });
    const row = await secrets(id);
    assert.ok(row.card_number_encrypted.startsWith(`${activeKeyId}:`));
    assert.equal(await reopened.decrypt(row.card_number_encrypted, id), cardNumber);
  });

  test('lets a vault that missed a rotation read the new key, also inside a transaction on the one connection', async () => {
    // As another process would be: its keys in memory predate the rotation.
    const stale = await openVault({ db, masterKey, clock });
    const id = await insertMethod(cardNumber, securityCode, null);
    const { activeKeyId } = await vault.rotateKey();
    const row = await secrets(id);
    assert.ok(row.card_number_encrypted.startsWith(`${activeKeyId}:`));
    // The reload goes through the transaction: on PGlite (one connection) or a full pool, a read
    // on the database itself would wait for this transaction to end.
    const read = await db.transaction(async (tx) => {
      await tx.query('SELECT id FROM payment_methods WHERE id = $1 FOR UPDATE', [id]);
      return stale.decrypt(row.card_number_encrypted, id, tx);
    });
    assert.equal(read, cardNumber);
  });

  test('re-encrypts more rows than one batch holds', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 520; index += 1) ids.push(await insertMethod(cardNumber, null, null));
    const [stored] = await db.query<{ count: string }>(
      `SELECT count(card_number_encrypted) + count(security_code_encrypted) + count(network_token_encrypted) AS count
         FROM payment_methods`,
    );
    const result = await vault.rotateKey();
    assert.equal(result.reencrypted, Number(stored?.count));
    assert.ok(result.reencrypted > 520);
    const [stale] = await db.query<{ count: string }>(
      `SELECT count(*) FROM payment_methods WHERE split_part(card_number_encrypted, ':', 1) <> $1`,
      [result.activeKeyId],
    );
    assert.equal(Number(stale?.count), 0);
    const last = await secrets(ids[ids.length - 1]!);
    assert.equal(await vault.decrypt(last.card_number_encrypted, last.id), cardNumber);
  });

  test('rotates a vault with no payment methods and makes only the new key active', async () => {
    const empty = await openVault({ db: foreignDb, masterKey: foreignMasterKey, clock });
    const result = await empty.rotateKey();
    assert.equal(result.reencrypted, 0);
    assert.deepEqual(
      (await keyIds(foreignDb)).filter((key) => key.active),
      [{ id: result.activeKeyId, active: true }],
    );
  });
});
