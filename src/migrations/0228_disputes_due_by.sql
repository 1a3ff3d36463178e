-- tessera:no-transaction
-- The dashboard's disputes list, soonest dueBy first (docs/disputes.md#dashboard); built
-- CONCURRENTLY so that disputes opening meanwhile are not blocked while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS disputes_due ON disputes (merchant_id, mode, due_by, id);
