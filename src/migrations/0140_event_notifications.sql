-- Issue 18 / docs/operations.md#event-stream: GET /events/stream (and `tessera listen`) sees the events of every
-- process. A statement-level trigger on events sends their ids with NOTIFY on the channel
-- tessera_events; PostgreSQL delivers a notification when (and only if) the transaction that
-- recorded the events commits, so a stream never sees an event that was rolled back. Each process
-- with an open stream LISTENs on one connection, fetches the events by id and hands them to its
-- streams (src/events/feed.ts).
--
-- A NOTIFY serializes the commits of the transactions that send one (PostgreSQL keeps its queue in
-- commit order), so it is sent only while some process has a stream open: that process marks its
-- row in tessera_processes (listens_events), and a process that dies loses its row to the
-- heartbeats (src/ops/heartbeat.ts). Without an open stream the trigger costs one look at that
-- small table per statement that records events.
ALTER TABLE tessera_processes ADD COLUMN listens_events boolean NOT NULL DEFAULT false;

-- The payload is ids only, separated by commas: 250 ids of 23 characters fit the 8000-byte
-- limit of a notification with room to spare, so a statement recording more sends several.
CREATE FUNCTION tessera_notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids text;
BEGIN
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

CREATE TRIGGER events_notify AFTER INSERT ON events
  REFERENCING NEW TABLE AS recorded
  FOR EACH STATEMENT EXECUTE FUNCTION tessera_notify_events();
