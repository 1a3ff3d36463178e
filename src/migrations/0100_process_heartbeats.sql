-- Process heartbeats (DESIGN §11, docs/decisions/0010): every API and worker process has a row it
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

-- The claims a dead process still holds, found without reading whole tables: only rows under a
-- lease are in these indexes, and a lease ends (locked_until NULL) when its work is recorded.
CREATE INDEX webhook_deliveries_locked_by ON webhook_deliveries (locked_by) WHERE locked_until IS NOT NULL;
CREATE INDEX scheduled_jobs_locked_by ON scheduled_jobs (locked_by) WHERE locked_until IS NOT NULL AND done_at IS NULL;
CREATE INDEX idempotency_keys_claimed_by ON idempotency_keys (claimed_by) WHERE status_code IS NULL;
