import type { Db } from '../db/db.js';
import { schemaStatus } from '../db/migrate.js';

/** Where a process is in its life: readiness is false in all but `ready`. */
export type Phase = 'starting' | 'ready' | 'stopping';

export interface HealthCheck {
  status: 'ok' | 'failing';
  /** What failed, for the operator: never a secret, never card data. */
  detail?: string;
}

export interface HealthReport {
  /** `ok`, or why the process should get no traffic: `starting`, `stopping` or `unavailable`. */
  status: 'ok' | 'starting' | 'stopping' | 'unavailable';
  checks: Record<string, HealthCheck>;
}

export interface Health {
  /** GET /health/live: the process runs and its event loop turns. */
  live(): HealthReport;
  /** GET /health/ready (and /health): the database answers within 1 s, the schema is current, not stopping. */
  ready(): Promise<HealthReport>;
}

/** docs/operations.md#health: the database must answer within this, or the process is not ready. */
export const databaseCheckTimeoutMs = 1000;

/**
 * Liveness and readiness (docs/operations.md#health), for a load balancer (HAProxy's `option httpchk`), an
 * orchestrator's probes, and `tessera worker`'s health port. Ready needs the database to answer
 * a query within a second, every migration this code knows to be applied (a `--no-migrate` start
 * before `tessera migrate` is not ready), and the process not to be stopping.
 */
export function createHealth(options: { db: Db; knownMigrations: readonly string[]; phase: () => Phase }): Health {
  const { db, knownMigrations, phase } = options;
  return {
    live() {
      return { status: 'ok', checks: { process: { status: 'ok' } } };
    },

    async ready() {
      const current = phase();
      const checks: Record<string, HealthCheck> = {
        process:
          current === 'ready'
            ? { status: 'ok' }
            : { status: 'failing', detail: current === 'starting' ? 'starting' : 'stopping' },
      };
      if (current === 'stopping') return { status: 'stopping', checks };
      const database = await withTimeout(schemaStatus(db, knownMigrations), databaseCheckTimeoutMs);
      if (database.kind === 'timeout') {
        checks.database = { status: 'failing', detail: `no answer within ${databaseCheckTimeoutMs} ms` };
      } else if (database.kind === 'error') {
        checks.database = { status: 'failing', detail: 'cannot be reached' };
      } else {
        checks.database = { status: 'ok' };
        // A schema newer than this code is not a failure here: during a deploy, `tessera migrate`
        // runs before the processes are replaced, and migrations are additive, so the running
        // processes keep serving (a new start of this version is refused, src/db/migrate.ts).
        const { pending } = database.value;
        checks.schema =
          pending.length > 0
            ? { status: 'failing', detail: `migrations not applied: ${pending.join(', ')} (run tessera migrate)` }
            : { status: 'ok' };
      }
      const failing = Object.values(checks).some((check) => check.status === 'failing');
      if (current === 'starting') return { status: 'starting', checks };
      return { status: failing ? 'unavailable' : 'ok', checks };
    },
  };
}

type Outcome<T> = { kind: 'value'; value: T } | { kind: 'error'; error: unknown } | { kind: 'timeout' };

async function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<Outcome<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Outcome<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs);
  });
  try {
    return await Promise.race([
      work.then(
        (value): Outcome<T> => ({ kind: 'value', value }),
        (error: unknown): Outcome<T> => ({ kind: 'error', error }),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
