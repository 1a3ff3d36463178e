/** True when `err` is PostgreSQL's unique_violation on the named constraint or index. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const candidate = err as { code?: string; constraint?: string; message?: string } | null;
  if (candidate?.code !== '23505') return false;
  return candidate.constraint === constraint || (candidate.message ?? '').includes(`"${constraint}"`);
}

/** The error of a commit that PostgreSQL answered with ROLLBACK (a statement of it had failed), on both stores. */
export const abortedCommit = 'The transaction was rolled back: one of its statements had failed';
