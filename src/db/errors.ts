/** True when `err` is PostgreSQL's unique_violation on the named constraint or index. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const candidate = err as { code?: string; constraint?: string; message?: string } | null;
  if (candidate?.code !== '23505') return false;
  return candidate.constraint === constraint || (candidate.message ?? '').includes(`"${constraint}"`);
}
