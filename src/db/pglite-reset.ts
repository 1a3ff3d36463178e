import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { PGlite } from '@electric-sql/pglite';

/**
 * Tests only: a PGlite database in memory that started from a migrated template (a dumpDataDir tar,
 * TESSERA_TEST_PGLITE_TEMPLATE, which a production Tessera refuses) is put back to the template's
 * state when its Tessera closes, so that the test process's next Tessera takes it instead of loading
 * the template again (0.7–1.1 s of CPU for the 42 MB tar and PostgreSQL's start, against about 0.1 s
 * for this; docs/performance.md#test-suite-time).
 *
 * Put back means: the session's state dropped (DISCARD ALL: prepared statements, LISTEN, advisory
 * locks, temporary tables, settings), every table but the migrations' emptied with its sequences
 * restarted, and then a fingerprint of everything a test could have changed beyond rows (relations,
 * columns, constraints, indexes, functions, triggers, roles, databases, extensions, settings,
 * sequences, the migrations applied) compared with the template's own. A database whose fingerprint
 * differs is not used again.
 */

/** Everything but the rows of the tables, as one digest. */
const fingerprintSql = `
SELECT md5(string_agg(part, E'\\n' ORDER BY part)) AS fingerprint FROM (
  SELECT 'rel ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text AS part
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  UNION ALL
  SELECT 'col ' || a.attrelid::regclass::text || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
         || ' ' || a.attnotnull::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT 'con ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
   WHERE connamespace NOT IN (SELECT oid FROM pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema'))
  UNION ALL
  SELECT 'idx ' || pg_get_indexdef(i.indexrelid)
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  UNION ALL
  SELECT 'fn ' || n.nspname || '.' || p.proname || ' ' || md5(p.prosrc)
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
  UNION ALL
  SELECT 'trg ' || tgrelid::regclass::text || ' ' || tgname || ' ' || tgenabled::text FROM pg_trigger WHERE NOT tgisinternal
  UNION ALL
  SELECT 'seq ' || c.oid::regclass::text || ' ' || coalesce(pg_sequence_last_value(c.oid)::text, 'unused')
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind = 'S' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  UNION ALL SELECT 'role ' || rolname || ' ' || rolsuper::text FROM pg_roles
  UNION ALL SELECT 'db ' || datname FROM pg_database
  UNION ALL SELECT 'ext ' || extname || ' ' || extversion FROM pg_extension
  UNION ALL SELECT 'set ' || coalesce(array_to_string(setconfig, ','), '') FROM pg_db_role_setting
  UNION ALL SELECT 'migrations ' || md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM schema_migrations t
) parts`;

const tablesSql = `
SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
   AND NOT (n.nspname = 'public' AND c.relname = 'schema_migrations')`;

async function fingerprint(lite: PGlite): Promise<string> {
  const { rows } = await lite.query<{ fingerprint: string }>(fingerprintSql);
  return rows[0]!.fingerprint;
}

/**
 * The template's fingerprint, taken from a database just loaded from it: computed once per template
 * and kept beside its tar (written under another name and renamed, so no process reads half of it).
 */
export async function templateFingerprint(lite: PGlite, template: string): Promise<string> {
  // Named by the fingerprint's own text too: a changed fingerprint is never compared with an old one.
  const file = `${template}.${createHash('sha256').update(fingerprintSql).digest('hex').slice(0, 12)}.fingerprint`;
  const kept = await readFile(file, 'utf8').catch(() => undefined);
  if (kept) return kept;
  const computed = await fingerprint(lite);
  const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(partial, computed);
  await rename(partial, file);
  return computed;
}

/** Puts the database back to the template's state; answers whether it is that state now. */
export async function resetToTemplate(lite: PGlite, expected: string): Promise<boolean> {
  // Outside any transaction: DISCARD ALL may not run in one.
  await lite.exec('DISCARD ALL');
  // DISCARD ALL ended every LISTEN and reset every setting: listening on nothing (migration 0175).
  await lite.exec('SET tessera.listening = off');
  const { rows } = await lite.query<{ name: string }>(tablesSql);
  if (rows.length > 0) await lite.exec(`TRUNCATE ${rows.map((row) => row.name).join(', ')} RESTART IDENTITY`);
  return (await fingerprint(lite)) === expected;
}
