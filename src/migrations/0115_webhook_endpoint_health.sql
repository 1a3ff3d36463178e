-- Endpoint health (issue 20, docs/webhooks.md#endpoint-health, docs/decisions/0016): what the delivery engine learns of
-- an endpoint from its attempts, kept on the endpoint so that the API, the CLI and the dashboard
-- read it without scanning attempts.
--   failing_since    the first failed attempt since the last successful one; NULL while healthy.
--   last_error       why the newest failed attempt failed, while failing.
--   last_success_at  the newest successful attempt, written at most about once a minute while
--                    healthy (so that a busy endpoint's row is not rewritten by every attempt).
--   alerted_at       the last "endpoint failing" e-mail (one an hour after failing_since, then daily).
--   disabled_reason  why Tessera disabled it: 'failing' (five days of nothing but failures) or
--                    'gone' (HTTP 410); NULL when enabled, or disabled by a person.
ALTER TABLE webhook_endpoints ADD COLUMN failing_since timestamptz;
ALTER TABLE webhook_endpoints ADD COLUMN last_error text;
ALTER TABLE webhook_endpoints ADD COLUMN last_success_at timestamptz;
ALTER TABLE webhook_endpoints ADD COLUMN alerted_at timestamptz;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason text CHECK (disabled_reason IN ('failing', 'gone'));
ALTER TABLE webhook_endpoints ADD COLUMN disabled_at timestamptz;

-- The health sweep looks only at failing endpoints.
CREATE INDEX webhook_endpoints_failing ON webhook_endpoints (failing_since)
  WHERE failing_since IS NOT NULL AND deleted_at IS NULL;
-- nextAttemptAt's index (an endpoint's earliest pending delivery) is built CONCURRENTLY by
-- 0155_large_table_indexes.sql: webhook_deliveries is the largest table of a busy service.
