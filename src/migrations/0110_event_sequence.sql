-- tessera:no-transaction
-- Issue 20 / docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one: every event carries `sequence`, an integer that grows with each event of
-- the same object (per merchant, mode and object id), so that a receiver can ignore a stale event
-- (docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one). One counter row per object: the event insert bumps it with
-- INSERT … ON CONFLICT DO UPDATE … RETURNING in the event's own transaction, and the row lock that
-- takes is held until commit, so two transactions changing one object get 1, 2 in commit order,
-- on any number of processes.
CREATE TABLE IF NOT EXISTS event_sequences (
  merchant_id  text NOT NULL,
  mode         text NOT NULL,
  object_id    text NOT NULL,
  last_value   bigint NOT NULL,
  PRIMARY KEY (merchant_id, mode, object_id)
);

-- Each statement commits alone (no-transaction): the ADD COLUMN (no default, so no rewrite) holds
-- its exclusive lock on events only for itself, not for the fill below. The fill is one statement,
-- since an object's events are numbered together; it locks the rows of events, which Tessera
-- never updates (events are written once), and the table only against schema changes, so
-- requests go on reading and inserting events while it runs. Only the retention purge's DELETE
-- of old events waits for it. Every statement may run again (a process that died half-way).
ALTER TABLE events ADD COLUMN IF NOT EXISTS sequence bigint;

-- Events recorded before this migration: numbered in the order they were recorded, and the
-- counters continue from there. Their stored bodies (already signed and sent) are not rewritten;
-- GET /events answers the number from this column.
UPDATE events SET sequence = numbered.sequence
FROM (
  SELECT id, row_number() OVER (PARTITION BY merchant_id, mode, object_id ORDER BY created_at, id) AS sequence
  FROM events WHERE object_id IS NOT NULL
) AS numbered
WHERE events.id = numbered.id AND events.sequence IS NULL;

INSERT INTO event_sequences (merchant_id, mode, object_id, last_value)
SELECT merchant_id, mode, object_id, max(sequence) FROM events WHERE object_id IS NOT NULL
GROUP BY merchant_id, mode, object_id
ON CONFLICT (merchant_id, mode, object_id) DO NOTHING;
