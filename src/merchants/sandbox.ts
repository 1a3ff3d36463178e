import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import { hashKey } from '../core/merchant-context.js';
import { sandboxKeysContext } from '../vault/secrets-at-rest.js';
import type { Vault } from '../vault/vault.js';
import type { MerchantService } from './service.js';

export interface SandboxKeys {
  id: string;
  privateKey: string;
  publicKey: string;
}

interface SandboxDeps {
  db: Db;
  vault: Vault;
  clock: Clock;
  merchants: MerchantService;
}

/**
 * Development only: the sandbox merchant `tessera start` prints, one per database. Its keys are
 * kept in the database, sealed by the vault, so every start finds the same merchant again, with or
 * without a data folder. A new one is made only when there is none yet or its keys were rolled.
 */
export async function sandboxMerchant(deps: SandboxDeps): Promise<SandboxKeys> {
  const saved = await readSandbox(deps);
  if (saved && (await deps.merchants.keyLookup.findMerchantByKeyHash(hashKey(saved.privateKey)))) return saved;
  const merchant = await deps.merchants.create({ name: 'Sandbox merchant', tokenization: true, mit: true });
  const keys = { id: merchant.id, privateKey: merchant.keys.privateKey, publicKey: merchant.keys.publicKey };
  const sealed = deps.vault.encrypt(JSON.stringify(keys), sandboxKeysContext(keys.id));
  await deps.db.transaction(async (tx) => {
    if (saved) await tx.query('DELETE FROM sandbox_merchant WHERE merchant_id = $1', [saved.id]);
    // Two starts at once on one PostgreSQL: the first to commit is the sandbox merchant of both.
    await tx.query(
      'INSERT INTO sandbox_merchant (merchant_id, keys_encrypted, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [keys.id, sealed, deps.clock.now()],
    );
  });
  return (await readSandbox(deps)) ?? keys;
}

/** The sandbox merchant's dashboard Owner, made with the first sign-in link (src/team/service.ts). */
export const sandboxOwnerEmail = 'owner@sandbox.localhost';

/** The sandbox merchant's id, when `tessera start` has made one on this database. */
export async function sandboxMerchantId(db: Db): Promise<string | undefined> {
  const [row] = await db.query<{ merchant_id: string }>('SELECT merchant_id FROM sandbox_merchant');
  return row?.merchant_id;
}

async function readSandbox({ db, vault }: SandboxDeps): Promise<SandboxKeys | undefined> {
  const [row] = await db.query<{ merchant_id: string; keys_encrypted: string }>(
    'SELECT merchant_id, keys_encrypted FROM sandbox_merchant',
  );
  if (!row) return undefined;
  return JSON.parse(await vault.decrypt(row.keys_encrypted, sandboxKeysContext(row.merchant_id))) as SandboxKeys;
}

/**
 * A copy of the keys in `<data folder>/sandbox-merchant.json`, for scripts (the README's reads it
 * with jq). The folder is made when missing; when it cannot be, the answer says why, for the banner.
 */
export async function writeSandboxFile(dataDir: string, keys: SandboxKeys): Promise<{ file: string; error?: string }> {
  const file = path.join(dataDir, 'sandbox-merchant.json');
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await writeFile(file, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
    return { file };
  } catch (err) {
    return { file, error: (err as NodeJS.ErrnoException).code ?? String(err) };
  }
}
