-- tessera:no-transaction
-- A recover sends its deliveries one after another (docs/decisions/0030-recover-in-order.md): each
-- delivery after the first names the one that must be answered first (`follows`) and has no
-- next_attempt_at, so no claim takes it; the statement that records the attempt of the delivery it
-- follows makes it due (src/webhooks/engine/queries.ts recordAttempts). No foreign key: a delivery
-- it follows may be pruned or deleted, and the sweep (src/webhooks/recover/queries.ts) then lets it go.
-- A column without a default is added without rewriting the table.
ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS follows text;

-- A build that was interrupted leaves an invalid index of its name, which IF NOT EXISTS would keep.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index AS ix JOIN pg_class AS class ON class.oid = ix.indexrelid
             WHERE NOT ix.indisvalid AND class.relname = 'webhook_deliveries_follows') THEN
    DROP INDEX webhook_deliveries_follows;
  END IF;
END $$;

-- Only deliveries waiting in a recover's chain are in it: each record looks its deliveries' followers
-- up here, and finds nothing at no cost when no recover is under way. Built CONCURRENTLY (docs/operations.md#topology).
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_follows
  ON webhook_deliveries (follows) WHERE follows IS NOT NULL AND status = 'pending';
