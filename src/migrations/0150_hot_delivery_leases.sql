-- tessera:no-transaction
-- Issue 19 (docs/performance.md#the-webhook-engine): a claim writes only locked_until and
-- locked_by, and a hand-back only locked_until. While an index names either column (as its key or
-- in its predicate) every such write is a full new row version entered in every index it matches
-- (ten of webhook_deliveries' eleven for a pending row). Without that index, and with room left on
-- each page for a new version, PostgreSQL writes a lease as a heap-only (HOT) update: no index entry
-- at all (a claim's cost to PostgreSQL per delivery fell by about 40 %).
--
-- The index served one statement: releasing the leases of a process that stopped beating
-- (src/ops/heartbeat.ts), which runs only in the beat that finds a process dead. It now reads the
-- pending deliveries instead (through a partial index of pending rows), in that beat only.
DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_locked_by;
-- New pages keep 30 % free for lease updates on the same page (rows of about 1.6 kB: three fit,
-- and two new versions beside them). Pages already written keep their rows as they are.
ALTER TABLE webhook_deliveries SET (fillfactor = 70);
