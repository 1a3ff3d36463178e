-- tessera:no-transaction
-- The age of the oldest pending webhook delivery and their count (GET /metrics) read this index
-- alone. webhook_deliveries is the largest table of a busy service, so the index is built
-- CONCURRENTLY: writes go on while it builds (src/db/migrate.ts runs this file outside a
-- transaction, as CONCURRENTLY requires).
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_pending_created
  ON webhook_deliveries (created_at) WHERE status = 'pending';
