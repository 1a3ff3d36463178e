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
  SELECT c.oid::regclass::text AS name
    FROM pg_class c
   CROSS JOIN LATERAL (
     SELECT greatest(c.reltuples, 0) AS tuples, age(c.relfrozenxid) AS xid_age,
            coalesce(bool_and(lower(split_part(option, '=', 2)) NOT IN ('off', 'false', 'no', '0')), true) AS enabled
       FROM unnest(c.reloptions) AS option
      WHERE split_part(option, '=', 1) = 'autovacuum_enabled'
   ) t
   WHERE c.relkind IN ('r', 'm')
     AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
     AND (t.xid_age > current_setting('autovacuum_freeze_max_age')::float8
      OR t.enabled AND pg_stat_get_dead_tuples(c.oid) > current_setting('autovacuum_vacuum_threshold')::float8
           + current_setting('autovacuum_vacuum_scale_factor')::float8 * t.tuples
      OR t.enabled AND pg_stat_get_ins_since_vacuum(c.oid) > current_setting('autovacuum_vacuum_insert_threshold')::float8
           + current_setting('autovacuum_vacuum_insert_scale_factor')::float8 * t.tuples)
   ORDER BY t.xid_age > current_setting('autovacuum_freeze_max_age')::float8 DESC,
            pg_stat_get_dead_tuples(c.oid) DESC, pg_stat_get_ins_since_vacuum(c.oid) DESC
   LIMIT 1`;
/**
 * The look is prepared once (planned each time it costs the thread about 2 ms, executed 0.4 ms);
 * a database put back to its template (tests: DISCARD ALL) has lost it and gets it again.
 */
const lookStatement = 'tessera_vacuum_look';

export function createVacuumer(lite: PGlite) {
  let nextLookAt = Date.now() + lookEveryMs;
  const stats: VacuumStats = { vacuums: 0, vacuumFailures: 0, vacuumSeconds: 0 };
  let prepared = false;

  async function neediest(): Promise<string | undefined> {
    if (!prepared) {
      const known = await lite.query('SELECT 1 FROM pg_prepared_statements WHERE name = $1', [lookStatement]);
      if (known.rows.length === 0) await lite.exec(`PREPARE ${lookStatement} AS ${neediestTable}`);
      prepared = true;
    }
    try {
      return (await lite.query<{ name: string }>(`EXECUTE ${lookStatement}`)).rows[0]?.name;
    } catch (err) {
      prepared = false;
      throw err;
    }
  }

  return {
    /** Vacuums the neediest table if one needs it. Called with no transaction open and no request running. */
    async runIfDue(): Promise<void> {
      const now = Date.now();
      if (now < nextLookAt) return;
      nextLookAt = now + lookEveryMs;
      // A database that cannot answer this fails the requests themselves, which say why.
      const table = await neediest().catch(() => undefined);
      if (!table) return;
      const started = performance.now();
      try {
        await lite.exec(`VACUUM ${table}`);
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
