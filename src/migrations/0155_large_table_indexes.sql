-- tessera:no-transaction
-- Indexes on the tables that grow with traffic (payments, refunds, events, webhook_deliveries,
-- idempotency_keys, scheduled_jobs), built CONCURRENTLY so that writes go on while they build
-- (docs/decisions/0011-shared-rate-limits.md; src/db/migrate.ts runs this file outside a transaction, statement by statement).
-- They were plain CREATE INDEX statements inside 0003, 0012, 0042, 0080, 0095, 0100 and 0115,
-- which blocked every write to their table while they built on a large table. A database that
-- applied those files as they were has these indexes already, with these definitions, and IF NOT
-- EXISTS makes each statement a no-op for it. test/migrations.test.ts refuses a new plain CREATE
-- INDEX on these tables.

-- A build that was interrupted (a process that died half-way) leaves an invalid index of its name,
-- which IF NOT EXISTS would keep: it is dropped, so that this file, run again, builds it whole.
DO $$
DECLARE
  invalid text;
BEGIN
  FOR invalid IN
    SELECT class.relname FROM pg_index AS ix JOIN pg_class AS class ON class.oid = ix.indexrelid
    WHERE NOT ix.indisvalid AND class.relname IN (
    'payments_order_no_lookup',
    'payments_processing',
    'payments_status_list',
    'payments_payment_method',
    'payments_customer',
    'refunds_payment',
    'refunds_status',
    'events_type',
    'events_object',
    'webhook_deliveries_list',
    'webhook_deliveries_status',
    'webhook_deliveries_endpoint',
    'events_created',
    'webhook_deliveries_finished',
    'payments_checkout_session',
    'scheduled_jobs_locked_by',
    'idempotency_keys_claimed_by',
    'webhook_deliveries_endpoint_due'
    )
  LOOP
    EXECUTE format('DROP INDEX %I', invalid);
  END LOOP;
END $$;

-- GET /payment?orderNo=…: the unique index payments_order_no covers only payments that may still
-- succeed, and the list must find failed and canceled ones too. The list indexes (docs/performance.md
-- "Flat cost", 0080): the filter's column first, then the list's order.
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_status_list ON payments (status, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_customer ON payments (customer_id, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_order_no_lookup ON payments (order_no, merchant_id, mode, created_at DESC, id DESC)
  WHERE order_no IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS refunds_payment ON refunds (payment_id, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS refunds_status ON refunds (status, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_type ON events (type, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_object ON events (object_id, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_list ON webhook_deliveries (merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_status ON webhook_deliveries (status, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_created ON events (created_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_finished ON webhook_deliveries (created_at) WHERE status <> 'pending';

-- Payments claimed for an authorization whose answer was never recorded (the process died
-- between the two) are found by the reconciliation sweep through this index.
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_processing
  ON payments (updated_at) WHERE status = 'processing' AND processor_reference IS NULL;
-- The dashboard's payment search by payment method (0042).
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_payment_method ON payments (payment_method_id);
-- A checkout session is paid at most once: of the payments of one session, at most one may still
-- succeed (or has) (0095, src/payments/checkout-hook.ts).
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS payments_checkout_session ON payments (checkout_session_id)
  WHERE checkout_session_id IS NOT NULL AND status NOT IN ('failed', 'canceled');

-- The claims a dead process still holds, found without reading whole tables: only rows under a
-- lease are in these indexes, and a lease ends (locked_until NULL) when its work is recorded (0100).
-- webhook_deliveries has none since 0150 (a lease is written without touching an index): a dead
-- process's deliveries are found among the pending ones.
CREATE INDEX CONCURRENTLY IF NOT EXISTS scheduled_jobs_locked_by
  ON scheduled_jobs (locked_by) WHERE locked_until IS NOT NULL AND done_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS idempotency_keys_claimed_by
  ON idempotency_keys (claimed_by) WHERE status_code IS NULL;

-- nextAttemptAt: an endpoint's earliest pending delivery, without scanning other endpoints'
-- backlogs (0115).
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_endpoint_due
  ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
