import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { ConfigError } from '../config-rules.js';
import type { Db, Queryable } from './db.js';

// Migrations live in src/migrations and are copied beside the compiled code by the build.
const migrationsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'migrations');

/** The advisory lock that keeps two processes from applying the same migration at once. */
const migrationLock = 7412001;

/**
 * A migration file whose first line is this runs statement by statement outside a transaction,
 * for what PostgreSQL refuses in one: `CREATE INDEX CONCURRENTLY`, which builds an index on a large
 * table without blocking its writes. Its statements must be safe to run again (`IF NOT EXISTS`),
 * since a process that dies half-way leaves the file unrecorded and the next start runs it again.
 */
export const noTransactionMarker = '-- tessera:no-transaction';

/** The migration files this code knows, in the order they apply. */
export async function knownMigrations(dir = migrationsDir): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort();
}

/** Why this process may not run against the database's schema. */
export class SchemaVersionError extends ConfigError {}

/**
 * What the database's schema is compared with this code: `newer` lists the applied migrations this
 * code does not know (a newer version migrated the database), `pending` those not applied yet.
 */
export async function schemaStatus(
  db: Queryable,
  known: readonly string[],
): Promise<{ latestApplied: string | null; latestKnown: string | null; newer: string[]; pending: string[] }> {
  const exists = await db.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
  const applied = exists[0]?.present
    ? (await db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).map(
        (row) => row.version,
      )
    : [];
  const knownSet = new Set(known);
  const appliedSet = new Set(applied);
  return {
    latestApplied: applied.at(-1) ?? null,
    latestKnown: known.at(-1) ?? null,
    newer: applied.filter((version) => !knownSet.has(version)),
    pending: known.filter((version) => !appliedSet.has(version)),
  };
}

/**
 * Refuses, in one line naming both versions, a database migrated by a newer version of Tessera:
 * this code does not know what the newer schema means (a column it never fills, a table it never
 * reads) and could break guarantees silently. Deploy the newer version everywhere instead.
 */
export async function refuseNewerSchema(db: Queryable, known: readonly string[]): Promise<void> {
  const status = await schemaStatus(db, known);
  if (status.newer.length === 0) return;
  throw new SchemaVersionError(
    `The database schema is at ${status.latestApplied}, newer than this Tessera knows (its latest migration is ${status.latestKnown}; unknown: ${status.newer.join(', ')}): run the newer version of Tessera, or restore a backup taken before that migration`,
  );
}

/**
 * Applies every migration not applied yet, in file-name order, each in its own transaction (a
 * file marked no-transaction runs statement by statement). Each file takes an advisory lock and
 * looks again whether it is applied, so two processes starting at once never apply one file twice.
 * A database migrated by a newer version is refused before anything runs. `dir` is for tests.
 */
export async function migrate(db: Db, dir = migrationsDir): Promise<string[]> {
  const files = await knownMigrations(dir);
  await db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(${migrationLock})`);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
  });
  await refuseNewerSchema(db, files);
  const applied: string[] = [];
  for (const file of files) {
    const sql = await readFile(path.join(dir, file), 'utf8');
    const ran = sql.startsWith(noTransactionMarker)
      ? await applyWithoutTransaction(db, file, sql)
      : await db.transaction(async (tx) => {
          await tx.query(`SELECT pg_advisory_xact_lock(${migrationLock})`);
          if (await isApplied(tx, file)) return false;
          for (const statement of splitStatements(sql)) await tx.query(statement);
          await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
          return true;
        });
    if (ran) applied.push(file);
  }
  return applied;
}

async function isApplied(source: Queryable, file: string): Promise<boolean> {
  return (await source.query('SELECT 1 FROM schema_migrations WHERE version = $1', [file])).length > 0;
}

/**
 * A no-transaction file: each statement commits alone (CREATE INDEX CONCURRENTLY cannot run in a
 * transaction, and waits for every transaction open when it starts, so no lock is held around it).
 */
async function applyWithoutTransaction(db: Db, file: string, sql: string): Promise<boolean> {
  if (await isApplied(db, file)) return false;
  for (const statement of splitStatements(sql)) await db.query(statement);
  const inserted = await db.query(
    'INSERT INTO schema_migrations (version) VALUES ($1) ON CONFLICT (version) DO NOTHING RETURNING version',
    [file],
  );
  return inserted.length > 0;
}

/**
 * Splits a migration into statements at the semicolons that end one, as psql does: a semicolon
 * inside a quoted literal or identifier, a dollar-quoted body (`$$ … $$`, `$fn$ … $fn$`) or a
 * comment is text. Each statement goes alone, since PGlite's query takes one statement at a time.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let index = 0;
  while (index < sql.length) {
    const end = endOfQuoted(sql, index);
    if (end > index) {
      index = end;
    } else if (sql[index] === ';') {
      statements.push(sql.slice(start, index));
      start = ++index;
    } else {
      index++;
    }
  }
  statements.push(sql.slice(start));
  return statements.map(withoutComments).filter((statement) => statement.length > 0);
}

/** Where the literal, identifier or comment that starts at `index` ends; `index` itself if none does. */
function endOfQuoted(sql: string, index: number): number {
  const rest = sql.slice(index, index + 2);
  const closeAfter = (closing: string, from: number) => {
    const close = sql.indexOf(closing, from);
    return close < 0 ? sql.length : close + closing.length;
  };
  if (rest === '--') return closeAfter('\n', index);
  if (rest === '/*') return closeAfter('*/', index + 2);
  const char = sql[index];
  if (char === "'" || char === '"') {
    // A doubled quote is a quote inside: the scan simply goes on past it. E'…' strings may escape
    // a quote with a backslash.
    const escapes = char === "'" && /[eE]/.test(sql[index - 1] ?? '') && !/\w/.test(sql[index - 2] ?? '');
    let at = index + 1;
    while (at < sql.length) {
      if (escapes && sql[at] === '\\') at += 2;
      else if (sql[at] === char) return at + 1;
      else at++;
    }
    return sql.length;
  }
  if (char === '$' && !/[\w$]/.test(sql[index - 1] ?? '')) {
    const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(index))?.[0];
    if (tag) return closeAfter(tag, index + tag.length);
  }
  return index;
}

/** A statement without leading comment lines and surrounding space; empty when nothing else is left. */
function withoutComments(statement: string): string {
  let text = statement.trim();
  while (text.startsWith('--') || text.startsWith('/*')) {
    text = text.slice(endOfQuoted(text, 0)).trim();
  }
  return text;
}
