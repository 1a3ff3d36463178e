/**
 * Migrated databases to copy, so that a test's new database does not run initdb and every
 * migration again (docs/performance.md#test-suite-time). Each is made once per set of
 * migrations, by whichever test process asks first, and named by a hash of the migrations (and,
 * for PGlite, of its version), so that a changed or added migration makes a new one:
 * - PGlite: a tar of a migrated data folder (PGlite's dumpDataDir) in the system's temporary
 *   folder, which the service loads through TESSERA_TEST_PGLITE_TEMPLATE (tests only) into a
 *   database in memory; and a migrated data folder, which a test copies into the data folder of a
 *   `tessera start` it spawns (migratedPgliteFolder);
 * - PostgreSQL: a database `tessera_template_<hash>` that CREATE DATABASE … TEMPLATE copies.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';

const migrationsDir = path.resolve('src/migrations');

/** The migrations' names and contents, and `extra`, hashed. */
function migrationsHash(extra: string): string {
  const hash = createHash('sha256').update(extra);
  for (const name of readdirSync(migrationsDir).sort()) {
    if (name.endsWith('.sql')) hash.update(`${name}\n`).update(readFileSync(path.join(migrationsDir, name)));
  }
  return hash.digest('hex').slice(0, 16);
}

// Its package.json is not among the package's exports: read from the file (tests run at the root).
const pgliteVersion: string = JSON.parse(
  readFileSync(path.resolve('node_modules/@electric-sql/pglite/package.json'), 'utf8'),
).version;
let pgliteTemplate: Promise<string> | undefined;

/** The path of a tar of a PGlite data folder with every migration applied; made when missing. */
export function migratedPgliteTemplate(): Promise<string> {
  pgliteTemplate ??= makePgliteTemplate();
  return pgliteTemplate;
}

async function makePgliteTemplate(): Promise<string> {
  const file = path.join(tmpdir(), `tessera-test-pglite-${pgliteVersion}-${migrationsHash(pgliteVersion)}.tar`);
  return madeOnce(file, async () => {
    const lite = await PGlite.create();
    await migrate(pgliteDb(lite), migrationsDir);
    const dump = await lite.dumpDataDir('none');
    await lite.close();
    // Written under another name and renamed, so that no process reads half a file.
    const partial = `${file}.${process.pid}.partial`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
  });
}

let pgliteFolder: Promise<string> | undefined;

/**
 * Copies a migrated PGlite data folder into `dataDir` (an empty folder), for a `tessera start` that
 * a test spawns on it: that start finds every migration applied, as every start of an install after
 * its first does, and skips initdb and the migrations (3–4 s of CPU). The folder copied is made once
 * per set of migrations and PGlite version, in the system's temporary folder.
 */
export async function migratedPgliteFolder(dataDir: string): Promise<void> {
  pgliteFolder ??= makePgliteFolder();
  cpSync(await pgliteFolder, dataDir, { recursive: true });
}

async function makePgliteFolder(): Promise<string> {
  const folder = path.join(tmpdir(), `tessera-test-pglite-folder-${pgliteVersion}-${migrationsHash(pgliteVersion)}`);
  return madeOnce(folder, async () => {
    // Made beside it and renamed when complete, so that no process copies half a folder.
    const partial = mkdtempSync(`${folder}.partial-`);
    const lite = await PGlite.create(partial);
    await migrate(pgliteDb(lite), migrationsDir);
    await lite.close();
    renameSync(partial, folder);
  });
}

/** `target` (a file or folder), made by `make` when missing, by one test process at a time. */
async function madeOnce(target: string, make: () => Promise<void>): Promise<string> {
  if (existsSync(target)) return target;
  // Test files start at once: the first makes it while the others wait for it.
  const lock = `${target}.lock`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (existsSync(target)) return target;
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch {
      // A lock left by a process that died is old: taken over after two minutes.
      if (Date.now() > deadline || Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0) > 120_000) {
        rmSync(lock, { force: true });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    if (!existsSync(target)) await make();
    return target;
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Just enough of Db over an in-process PGlite for migrate(). */
function pgliteDb(lite: PGlite): Db {
  const rows = async (target: Pick<PGlite, 'query'>, sql: string, params?: readonly unknown[]) =>
    (await target.query<any>(sql, params as unknown[] | undefined)).rows;
  return {
    kind: 'pglite',
    query: (sql, params) => rows(lite, sql, params),
    execute: async (sql, params) => void (await rows(lite, sql, params)),
    transaction: (fn) =>
      lite.transaction((tx) =>
        fn({
          query: (sql, params) => rows(tx, sql, params),
          execute: async (sql, params) => void (await rows(tx, sql, params)),
        }),
      ),
    listen: () => Promise.reject(new Error('Not used by migrate()')),
    close: () => lite.close(),
  };
}

const postgresTemplates = new Map<string, Promise<string>>();

/**
 * The name of a database on the server of `adminUrl` with every migration applied, to be copied
 * with CREATE DATABASE … TEMPLATE; made when missing. An advisory lock keeps two test processes
 * from making it at once, and it gets its name only once complete.
 */
export function migratedPostgresTemplate(adminUrl: string): Promise<string> {
  let template = postgresTemplates.get(adminUrl);
  if (!template) {
    template = makePostgresTemplate(adminUrl);
    postgresTemplates.set(adminUrl, template);
  }
  return template;
}

async function makePostgresTemplate(adminUrl: string): Promise<string> {
  const name = `tessera_template_${migrationsHash('postgres')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = async () =>
      (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (await exists()) return name;
    await admin.query('SELECT pg_advisory_lock(7412002)');
    try {
      if (await exists()) return name;
      const building = `tessera_building_${randomBytes(6).toString('hex')}`;
      await admin.query(`CREATE DATABASE ${building}`);
      const url = new URL(adminUrl);
      url.pathname = `/${building}`;
      const { openDb } = await import('../../src/db/db.js');
      const db = await openDb({ databaseUrl: url.toString(), poolSize: 1 });
      try {
        await migrate(db, migrationsDir);
      } finally {
        await db.close();
      }
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      return name;
    } finally {
      await admin.query('SELECT pg_advisory_unlock(7412002)');
    }
  } finally {
    await admin.end();
  }
}
