/** The service of `npm run bench`: a fresh store (data folder or database) and the service started on it. */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import {
  Cleanup,
  childEnv,
  createDatabase,
  freePort,
  makeTempDir,
  repoRoot,
  startChild,
  type ChildServer,
} from './processes.js';
import type { Settings } from './run-settings.js';
import type { Backend } from './settings.js';

export interface Store {
  backend: Backend;
  dataDir: string;
  databaseUrl: string | undefined;
  adminKey: string;
  masterKey: string;
}

/** A fresh data folder (PGlite) or database (PostgreSQL), removed or dropped by the cleanup. */
export async function newStore(
  cleanup: Cleanup,
  settings: Pick<Settings, 'databaseServerUrl'>,
  backend: Backend,
): Promise<Store> {
  return {
    backend,
    dataDir: await makeTempDir(cleanup, `tessera-bench-${backend}-`),
    databaseUrl: backend === 'postgres' ? await createDatabase(cleanup, settings.databaseServerUrl) : undefined,
    adminKey: `bench_operator_${randomBytes(24).toString('hex')}`,
    masterKey: randomBytes(32).toString('hex'),
  };
}

export async function startService(
  cleanup: Cleanup,
  settings: Pick<Settings, 'databaseServerUrl' | 'cpuProfDir'>,
  backend: Backend,
  existing?: Store,
  /** The connector phase's service: other settings (NODE_ENV) and a profile of its own name. */
  overrides: { env?: Record<string, string>; profileName?: string } = {},
): Promise<{ service: ChildServer; adminKey: string }> {
  const store = existing ?? (await newStore(cleanup, settings, backend));
  const { dataDir, databaseUrl, adminKey } = store;
  const port = await freePort();
  const profileArgs =
    settings.cpuProfDir && !existing
      ? [
          '--cpu-prof',
          '--cpu-prof-dir',
          settings.cpuProfDir,
          '--cpu-prof-name',
          overrides.profileName ?? `service-${backend}.cpuprofile`,
        ]
      : [];
  // BENCH_SERVICE_NODE_FLAGS: V8 or Node flags for the service alone (e.g. "--trace-gc"), to compare
  // settings without editing anything.
  const nodeFlags = (process.env.BENCH_SERVICE_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
  const service = await startChild(cleanup, {
    name: `tessera (${backend})`,
    args: [...nodeFlags, ...profileArgs, path.join(repoRoot, 'dist', 'cli', 'index.js'), 'start'],
    env: childEnv({
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_ADMIN_KEY: adminKey,
      TESSERA_MASTER_KEY: store.masterKey,
      TESSERA_LOG_LEVEL: 'warn',
      // Passed on when set, to compare pool sizes or checkpoint distances without editing anything.
      TESSERA_DATABASE_POOL_SIZE: process.env.TESSERA_DATABASE_POOL_SIZE,
      TESSERA_PGLITE_CHECKPOINT_WAL_MB: process.env.TESSERA_PGLITE_CHECKPOINT_WAL_MB,
      TESSERA_WEBHOOK_DISPATCHER: process.env.TESSERA_WEBHOOK_DISPATCHER,
      // So that /metrics can be read during a run (its upkeep's timings beside a phase's latencies).
      TESSERA_METRICS_TOKEN: process.env.TESSERA_METRICS_TOKEN,
      ...overrides.env,
    }),
    port,
    logFile: path.join(dataDir, 'service.log'),
    healthPath: '/health',
  });
  return { service, adminKey };
}
