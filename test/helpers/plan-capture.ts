import type { Queryable } from '../../src/db/db.js';

export interface CapturedStatement {
  sql: string;
  params: readonly unknown[];
}

/**
 * Runs `use` against a stand-in database that records each statement it is given, so that the
 * plan test explains the exact SQL text a query function sends. Every statement "finds" one row
 * with `created_at` (what selectPage's cursor lookup reads), so a paged query goes on to its page.
 */
export async function captureStatements(use: (db: Queryable) => Promise<unknown>): Promise<CapturedStatement[]> {
  const statements: CapturedStatement[] = [];
  const recorder: Queryable = {
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
      statements.push({ sql, params });
      return [{ created_at: new Date('2026-01-01T12:00:00Z') }] as Row[];
    },
    async execute(sql: string, params: readonly unknown[] = []): Promise<void> {
      statements.push({ sql, params });
    },
  };
  await use(recorder);
  return statements;
}

/** A parameter as an SQL literal for EXECUTE (text, timestamps, numbers and arrays of text). */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (value instanceof Date) return `'${value.toISOString()}'`;
  if (Array.isArray(value)) return sqlLiteral(`{${value.map((item) => `"${String(item)}"`).join(',')}}`);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return `'${String(value).replace(/'/g, "''")}'`;
}
