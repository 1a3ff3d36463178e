-- Issue 19 item 4 (docs/decisions/0035-delivery-bodies-from-events.md): a delivery keeps no body of
-- its own. Both kinds' bytes are made from the event's stored body (src/webhooks/deliveries/
-- bodies.ts): the legacy kind sends it as stored, the endpoint kind with its type in the
-- `endpoint_` form. Each payment event with an endpoint wrote its 1.4 kB body three times (the
-- event, and each of its two deliveries); a delivery's row was then rewritten whole by its lease and
-- by its record (1.6 kB each time, three rows to a page). Deliveries planned from now on store NULL
-- and are sent with the body made from their event; rows stored before keep their bytes.
ALTER TABLE webhook_deliveries ALTER COLUMN body DROP NOT NULL;

-- A process of an older version reads a delivery's body from its row and cannot send one without.
-- Each process of this version marks its heartbeat row; while the row of a process without the mark
-- is there (an older process still running during a rolling upgrade: none can start once this file
-- is applied), new deliveries are planned with their bodies as before (src/ops/heartbeat.ts).
ALTER TABLE tessera_processes ADD COLUMN sends_event_bodies boolean NOT NULL DEFAULT false;

-- What a delivery sends is its event's stored body, so that body never changes once written (an
-- event with deliveries is also never deleted: their event_id refers to it).
CREATE OR REPLACE FUNCTION tessera_event_bodies_are_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'an event''s body never changes: its webhook deliveries send it as stored'
    USING ERRCODE = 'restrict_violation', TABLE = TG_TABLE_NAME, COLUMN = 'body';
END
$$;
CREATE TRIGGER events_bodies_kept BEFORE UPDATE OF body, type ON events
  FOR EACH ROW WHEN (OLD.body IS DISTINCT FROM NEW.body OR OLD.type IS DISTINCT FROM NEW.type)
  EXECUTE FUNCTION tessera_event_bodies_are_kept();
