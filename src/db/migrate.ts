import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Db } from './db.js';

// Migrations live in src/migrations and are copied beside the compiled code by the build.
const migrationsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'migrations');

/**
 * Applies every migration not applied yet, in file-name order, each in its own transaction.
 * An advisory lock keeps two processes starting at once from applying the same file twice.
 * `dir` is for tests; the service always runs its own migrations.
 */
export async function migrate(db: Db, dir = migrationsDir): Promise<string[]> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort();
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(7412001)');
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((row) => row.version),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(path.join(dir, file), 'utf8');
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
      applied.push(file);
    }
  });
  return applied;
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
