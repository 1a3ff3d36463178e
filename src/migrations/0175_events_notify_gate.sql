-- Issue 19 (docs/decisions/0033-pglite-work-not-done.md): the events_notify trigger (migration
-- 0140) runs its PL/pgSQL function once per statement that records events, and the function looks
-- at tessera_processes for a process that listens — on PGlite 4 % of the database thread during
-- MIT payments, for a look whose answer the process already knows: PGlite's database has one
-- session, so the only possible listener is that session itself.
--
-- The session says so in the setting tessera.listening: PGlite's session (src/db/db.ts) sets it
-- to off while it LISTENs on nothing, and the function then returns before it looks. Nothing else
-- sets it: on PostgreSQL (several sessions, several processes) it is never set, a setting that is
-- not set is not 'off', and the function looks as before. (A WHEN condition on the trigger would
-- also spare PGlite the function's call, but PostgreSQL prepares a trigger's WHEN again for every
-- statement: it cost PostgreSQL's MIT payments 3-5 %.)
CREATE OR REPLACE FUNCTION tessera_notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids text;
BEGIN
  IF current_setting('tessera.listening', true) = 'off' THEN
    RETURN NULL;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM tessera_processes WHERE listens_events) THEN
    RETURN NULL;
  END IF;
  FOR ids IN
    SELECT string_agg(id, ',' ORDER BY n) FROM (
      SELECT id, row_number() OVER () AS n FROM recorded
    ) AS numbered GROUP BY (n - 1) / 250 ORDER BY (n - 1) / 250
  LOOP
    PERFORM pg_notify('tessera_events', ids);
  END LOOP;
  RETURN NULL;
END
$$;
