import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';

/** The database-wide figures of GET /metrics (docs/operations.md#metrics). */
export interface DatabaseGauges {
  pendingDeliveries: number;
  /** When the oldest pending delivery was planned; null when none is pending. */
  oldestPendingAt: string | null;
  /** Webhook endpoints by health (`healthy`, `failing`, `disabled`). */
  endpoints: Record<string, number>;
}

/** Figures younger than this are used as they are; older ones are computed again by one process. */
export const gaugesMaxAgeMs = 10_000;
/** The advisory lock whose holder computes the figures; the other processes read its row. */
const gaugesLock = 7412002;

/** Pending deliveries and the oldest one: an index-only scan of webhook_deliveries_pending_created. */
const pendingDeliveriesSql = `SELECT count(*) AS pending, min(created_at) AS oldest
    FROM webhook_deliveries
   WHERE status = 'pending'`;

/**
 * The database-wide gauges, computed by one process at a time (docs/operations.md#metrics): a process whose
 * figures are older than gaugesMaxAgeMs reads the shared row; if that is old too, whoever takes the
 * advisory lock computes the figures and writes the row, and the others use the row they read. A
 * transaction-level lock, so that it also works through PgBouncer in transaction mode.
 */
export function createDatabaseGauges({
  db,
  clock,
  endpointsByHealth,
}: {
  db: Db;
  clock: Clock;
  /**
   * Webhook endpoints by health, read through `source` (the computing transaction): the endpoint
   * health service's count (src/webhooks/health/), the one place that says what each health means.
   */
  endpointsByHealth: (source: Queryable) => Promise<Record<string, number>>;
}) {
  let cached: { gauges: DatabaseGauges; at: number } | undefined;

  async function compute(source: Queryable): Promise<DatabaseGauges> {
    const [pending] = await source.query<{ pending: string; oldest: Date | null }>(pendingDeliveriesSql);
    const endpoints = await endpointsByHealth(source);
    return {
      pendingDeliveries: Number(pending?.pending ?? 0),
      oldestPendingAt: pending?.oldest ? new Date(pending.oldest).toISOString() : null,
      endpoints,
    };
  }

  async function shared(): Promise<DatabaseGauges> {
    const now = clock.now();
    const fresh = (at: Date) => now.getTime() - at.getTime() < gaugesMaxAgeMs;
    const read = async () =>
      (
        await db.query<{ value: DatabaseGauges; computed_at: Date }>(
          "SELECT value, computed_at FROM ops_gauges WHERE name = 'database'",
        )
      )[0];
    const row = await read();
    if (row && fresh(new Date(row.computed_at))) return row.value;
    const won = await db.transaction(async (tx) => {
      const [lock] = await tx.query<{ taken: boolean }>(`SELECT pg_try_advisory_xact_lock(${gaugesLock}) AS taken`);
      if (!lock?.taken) return undefined;
      const gauges = await compute(tx);
      await tx.query(
        `INSERT INTO ops_gauges (name, value, computed_at) VALUES ('database', $1, $2)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value, computed_at = excluded.computed_at`,
        [JSON.stringify(gauges), now],
      );
      return gauges;
    });
    // Another process is computing them: its previous figures serve this scrape.
    return won ?? row?.value ?? (await compute(db));
  }

  return {
    /** The figures, at most gaugesMaxAgeMs old (the first scrape after a start may compute them). */
    async read(): Promise<DatabaseGauges> {
      const now = clock.now().getTime();
      if (cached && now - cached.at < gaugesMaxAgeMs / 2) return cached.gauges;
      const gauges = await shared();
      cached = { gauges, at: now };
      return gauges;
    },
  };
}

export type DatabaseGaugeSource = ReturnType<typeof createDatabaseGauges>;
