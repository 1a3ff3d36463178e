/** True when `err` is PostgreSQL's unique_violation on the named constraint or index. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const candidate = err as { code?: string; constraint?: string; message?: string } | null;
  if (candidate?.code !== '23505') return false;
  return candidate.constraint === constraint || (candidate.message ?? '').includes(`"${constraint}"`);
}

/** Error codes of a database that cannot be reached or does not take connections now. */
const unavailableCodes = new Set([
  // Node's socket errors.
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // PostgreSQL's connection_exception class, admin_shutdown, crash_shutdown, cannot_connect_now,
  // too_many_connections, and a database that refuses connections (ALLOW_CONNECTIONS false).
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/** The messages node-postgres gives a lost or never-made connection, which carry no code. */
const unavailableMessages = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection terminated unexpectedly',
  'The database is closed',
  'is not currently accepting connections',
];

/**
 * True when `err` says the database could not be reached (an outage, a restart, a shutdown), not
 * that a statement was wrong: the request that met it is answered 503 `service_unavailable` and may
 * be retried, and nothing it did was committed.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const candidate = err as { code?: unknown; message?: unknown; cause?: unknown } | null;
  if (!candidate || typeof candidate !== 'object') return false;
  if (typeof candidate.code === 'string' && unavailableCodes.has(candidate.code)) return true;
  const message = typeof candidate.message === 'string' ? candidate.message : '';
  if (unavailableMessages.some((text) => message.includes(text))) return true;
  return candidate.cause !== undefined && candidate.cause !== err && isDatabaseUnavailable(candidate.cause);
}
/** The error of a commit that PostgreSQL answered with ROLLBACK (a statement of it had failed), on both stores. */
export const abortedCommit = 'The transaction was rolled back: one of its statements had failed';

/**
 * The log level of a background task's failure: a database outage is a warning (the task runs
 * again when the database is back, and /health/ready already says so), anything else an error.
 */
export function failureLevel(err: unknown): 'warn' | 'error' {
  return isDatabaseUnavailable(err) ? 'warn' : 'error';
}

/**
 * The first line of an error's message: what the driver says went wrong, without a stack. A
 * connection to a name with several addresses (localhost) fails as an AggregateError without a
 * message of its own: the first address's error says it.
 */
export function firstLine(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const line = err.message.split('\n')[0];
  if (line) return line;
  const inner = (err as { errors?: unknown[] }).errors?.[0];
  if (inner instanceof Error && inner.message) return inner.message.split('\n')[0] ?? inner.message;
  return (err as { code?: string }).code ?? err.name;
}
