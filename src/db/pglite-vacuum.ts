import type { PGlite } from '@electric-sql/pglite';

/*
 * PGlite's single-user PostgreSQL has no autovacuum either: without one, the space of updated and
 * deleted rows (webhook deliveries' leases and records, retention's deletions) was never reclaimed,
 * indexes kept an entry for every row ever deleted, and no row was ever frozen — past two billion
 * transactions, single-user PostgreSQL does not stop, and the oldest rows would seem to vanish.
 * This is that autovacuum, run by the database thread between two requests, with PostgreSQL's own
 * thresholds (autovacuum_vacuum_*, autovacuum_vacuum_insert_*, autovacuum_freeze_max_age): every
 * few seconds it looks for the table that needs a VACUUM most, and vacuums that one (docs/decisions/0031).
 */

export interface VacuumStats {
  /** Tables vacuumed by this thread, and vacuums that failed. */
  vacuums: number;
  vacuumFailures: number;
  /** Time spent in them (the database answers nothing else meanwhile). */
  vacuumSeconds: number;
}

/** How often the tables' counts of changed rows are looked at while none needs a vacuum. */
const lookEveryMs = 2000;
/** After a vacuum another table may be due: looked at again this soon. */
const lookAgainMs = 1000;

/**
 * The table most in need, as PostgreSQL's autovacuum decides (its `relation_needs_vacanalyze`,
 * without the ANALYZE part: PGlite's plans stay those without statistics): the freeze age first,
 * then the dead rows, then rows inserted since the last vacuum (which it marks visible and frozen).
 * A table whose `autovacuum_enabled` storage parameter is off is vacuumed for its freeze age only,
 * as PostgreSQL does.
 */
const neediestTable = `
  SELECT format('%I.%I', s.schemaname, s.relname) AS name
    FROM pg_stat_user_tables s
    JOIN pg_class c ON c.oid = s.relid
   CROSS JOIN LATERAL (SELECT greatest(c.reltuples, 0) AS tuples, age(c.relfrozenxid) AS xid_age) t
   CROSS JOIN LATERAL (
     SELECT coalesce(bool_and(lower(split_part(option, '=', 2)) NOT IN ('off', 'false', 'no', '0')), true) AS enabled
       FROM unnest(c.reloptions) AS option WHERE split_part(option, '=', 1) = 'autovacuum_enabled'
   ) a
   WHERE t.xid_age > current_setting('autovacuum_freeze_max_age')::float8
      OR a.enabled AND s.n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8
           + current_setting('autovacuum_vacuum_scale_factor')::float8 * t.tuples
      OR a.enabled AND s.n_ins_since_vacuum > current_setting('autovacuum_vacuum_insert_threshold')::float8
           + current_setting('autovacuum_vacuum_insert_scale_factor')::float8 * t.tuples
   ORDER BY t.xid_age > current_setting('autovacuum_freeze_max_age')::float8 DESC,
            s.n_dead_tup DESC, s.n_ins_since_vacuum DESC
   LIMIT 1`;

export function createVacuumer(lite: PGlite) {
  let nextLookAt = Date.now() + lookEveryMs;
  const stats: VacuumStats = { vacuums: 0, vacuumFailures: 0, vacuumSeconds: 0 };

  return {
    /** Vacuums the neediest table if one needs it. Called with no transaction open and no request running. */
    async runIfDue(): Promise<void> {
      const now = Date.now();
      if (now < nextLookAt) return;
      nextLookAt = now + lookEveryMs;
      // A database that cannot answer this fails the requests themselves, which say why.
      const [table] = (await lite.query<{ name: string }>(neediestTable).catch(() => undefined))?.rows ?? [];
      if (!table) return;
      const started = performance.now();
      try {
        await lite.exec(`VACUUM ${table.name}`);
        stats.vacuums += 1;
        nextLookAt = Date.now() + lookAgainMs;
      } catch {
        // Looked at again later; failures are counted on /metrics.
        stats.vacuumFailures += 1;
      } finally {
        stats.vacuumSeconds += (performance.now() - started) / 1000;
      }
    },

    stats(): VacuumStats {
      return { ...stats };
    },
  };
}
