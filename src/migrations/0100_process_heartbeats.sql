-- Process heartbeats (docs/decisions/0010-process-heartbeats.md, docs/decisions/0010): every API and worker process has a row it
-- refreshes every few seconds, on the database's clock. A claim (an Idempotency-Key, a delivery
-- lease, a job lease) names the process that holds it, so that once that process's heartbeat is
-- stale (killed, crashed, cut off) another process takes the claim over at once rather than after
-- the whole lease.
CREATE TABLE tessera_processes (
  id            text PRIMARY KEY,
  kind          text NOT NULL CHECK (kind IN ('api', 'worker')),
  host          text NOT NULL,
  pid           integer NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  heartbeat_at  timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE idempotency_keys ADD COLUMN claimed_by text;
ALTER TABLE webhook_deliveries ADD COLUMN locked_by text;
ALTER TABLE scheduled_jobs ADD COLUMN locked_by text;

-- The indexes of the claims a dead process still holds are built CONCURRENTLY by
-- 0155_large_table_indexes.sql: these three tables are large on a busy service, and a plain
-- CREATE INDEX here would block their writes while it builds (docs/operations.md#topology).
