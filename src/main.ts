import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTessera, type Tessera } from './app.js';
import type { Config } from './config.js';
import { hashKey } from './http/auth.js';
import { apiBasePath } from './http/server.js';

/**
 * `tessera start`: the service, its background jobs, and — outside production — a ready sandbox
 * merchant so that a newcomer can make a first call at once.
 */
export async function start(config: Config): Promise<Tessera> {
  const tessera = await createTessera({ config });
  await tessera.server.listen({ port: config.port, host: config.host });
  tessera.jobs.start();

  const baseUrl = `${tessera.publicUrl()}${apiBasePath}`;
  const lines = [
    `Tessera is listening on ${tessera.publicUrl()}`,
    `  API base URL:   ${baseUrl}`,
    `  API reference:  ${tessera.publicUrl()}/docs`,
  ];
  lines.push(`  Storage:        ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`}`);
  if (tessera.operatorKey.created) {
    lines.push(
      `  Operator key (shown once; kept in ${path.join(config.dataDir, 'admin.key')}): ${tessera.operatorKey.value}`,
    );
  }
  if (config.nodeEnv !== 'production' && !config.dataDir.startsWith('memory://')) {
    const sandbox = await sandboxMerchant(tessera, config);
    lines.push(
      `  Sandbox merchant ${sandbox.id} (tokenization and MIT on), private key: ${sandbox.privateKey}`,
      '',
      'Try it:',
      `  curl -s -X POST ${baseUrl}/customers/create -H 'Authorization: Bearer ${sandbox.privateKey}' -H 'Content-Type: application/json' -d '{"firstName":"Ada","lastName":"Lovelace","email":"ada@example.com"}'`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return tessera;
}

/**
 * Development only: the sandbox merchant's key is kept in the data folder (like the generated
 * master key) so that every start can print it; a production service never does this.
 */
async function sandboxMerchant(tessera: Tessera, config: Config): Promise<{ id: string; privateKey: string }> {
  const file = path.join(config.dataDir, 'sandbox-merchant.json');
  try {
    const saved = JSON.parse(await readFile(file, 'utf8')) as { id: string; privateKey: string };
    if (await tessera.merchants.keyLookup.findMerchantByKeyHash(hashKey(saved.privateKey))) return saved;
  } catch {
    // No saved merchant yet, or its database is gone: make a new one.
  }
  const merchant = await tessera.merchants.create({ name: 'Sandbox merchant', tokenization: true, mit: true });
  const saved = { id: merchant.id, privateKey: merchant.keys.privateKey, publicKey: merchant.keys.publicKey };
  await writeFile(file, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  return saved;
}
