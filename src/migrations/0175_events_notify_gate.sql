-- Issue 19 (docs/decisions/0033-pglite-work-not-done.md): the events_notify trigger (migration
-- 0140) runs its PL/pgSQL function once per statement that records events, and the function looks
-- at tessera_processes for a process that listens — on PGlite 5 % of the database thread during
-- MIT payments, for a look whose answer the process already knows: PGlite's database has one
-- session, so the only possible listener is that session itself.
--
-- The session says so in the setting tessera.listening: PGlite's session (src/db/db.ts) sets it
-- to off while it LISTENs on nothing, and the trigger then does not run at all. Nothing else sets
-- it: on PostgreSQL (several sessions, several processes) it is never set, a setting that is not
-- set is not 'off', and the trigger runs and looks as before.
DROP TRIGGER events_notify ON events;
CREATE TRIGGER events_notify AFTER INSERT ON events
  REFERENCING NEW TABLE AS recorded
  FOR EACH STATEMENT
  WHEN (pg_catalog.current_setting('tessera.listening', true) IS DISTINCT FROM 'off')
  EXECUTE FUNCTION tessera_notify_events();
