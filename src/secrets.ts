import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from './config.js';

/**
 * Development conveniences (README.md#running-it): without TESSERA_MASTER_KEY / TESSERA_ADMIN_KEY the
 * service generates them once into the data folder (mode 0600) and reuses them. In production
 * the master key must come from the environment; config.ts enforces that.
 */
export async function readOrCreateSecret(
  config: Config,
  fileName: string,
  generate: () => string,
): Promise<{ value: string; created: boolean }> {
  // In-memory mode keeps nothing on disk: a generated secret lives as long as the process.
  if (config.dataDir.startsWith('memory://')) return { value: generate(), created: true };
  const file = path.join(config.dataDir, fileName);
  try {
    return { value: (await readFile(file, 'utf8')).trim(), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const value = generate();
  try {
    await writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
    return { value, created: true };
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      return { value: (await readFile(file, 'utf8')).trim(), created: false };
    throw err;
  }
}

export async function resolveMasterKey(config: Config): Promise<Buffer> {
  if (config.masterKey) return config.masterKey;
  const { value } = await readOrCreateSecret(config, 'master.key', () => randomBytes(32).toString('hex'));
  return Buffer.from(value, 'hex');
}

export async function resolveAdminKey(config: Config): Promise<{ value: string; created: boolean }> {
  if (config.adminKey) return { value: config.adminKey, created: false };
  return readOrCreateSecret(config, 'admin.key', () => `tessera_admin_${randomBytes(24).toString('hex')}`);
}
