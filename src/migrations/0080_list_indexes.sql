-- Flat cost (issue 13, docs/performance.md#lists-at-any-size): every list filter has an index that
-- holds, in the list's order (created_at DESC, id DESC), exactly the rows of one filter value of
-- one merchant in one mode, so a page reads its rows and no others.
--
-- Without planner statistics (PGlite never gathers them; PostgreSQL not before its first ANALYZE)
-- the planner guesses that `merchant_id = $1 AND mode = $2` keeps almost no row, so every index
-- that starts with (merchant_id, mode) looks as cheap as the list's own, and one was chosen and
-- walked whole (PostgreSQL 18's skip scan even used a filter's index for the unfiltered list). The
-- filter's column therefore comes first: an index whose first column is unconstrained is not a
-- candidate for the other lists, and for its own filter it matches one equality more than the
-- list index. test/query-plans.test.ts explains every list query on a seeded database.

DROP INDEX IF EXISTS payments_status_list;
DROP INDEX IF EXISTS payments_customer;
DROP INDEX IF EXISTS payments_order_no_lookup;
DROP INDEX customers_email;
DROP INDEX IF EXISTS refunds_payment;
DROP INDEX IF EXISTS refunds_status;
DROP INDEX invoices_customer;
DROP INDEX invoices_status;
DROP INDEX IF EXISTS events_object;
DROP INDEX IF EXISTS webhook_deliveries_merchant;
DROP INDEX webhook_checks_endpoint;
DROP INDEX team_members_merchant;
-- A prefix of audit_log_merchant_recent.
DROP INDEX audit_log_merchant;

CREATE INDEX customers_email ON customers (lower(email), merchant_id, mode, created_at DESC, id DESC)
  WHERE email IS NOT NULL;
-- customers_merchant_user (unique) keeps the id unique; this one lists in order.
CREATE INDEX customers_merchant_user_list ON customers (merchant_user_id, merchant_id, mode, created_at DESC, id DESC)
  WHERE merchant_user_id IS NOT NULL;
CREATE INDEX invoices_customer ON invoices (customer_id, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX invoices_status ON invoices (status, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX checkout_sessions_status ON checkout_sessions (status, merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX webhook_checks_endpoint ON webhook_checks (endpoint_id, merchant_id, mode, created_at DESC, id DESC);
-- The team list (members not removed, oldest first): without the predicate, team_members_email's
-- (removed_at IS NULL) was chosen and every merchant's members were read.
CREATE INDEX team_members_merchant ON team_members (merchant_id, created_at, id) WHERE removed_at IS NULL;
-- The status class filter (2xx … 5xx) is written `status_code / 100 = $n` to match this expression.
CREATE INDEX api_request_logs_status ON api_request_logs ((status_code / 100), merchant_id, mode, created_at DESC, id DESC);

-- The indexes of this file on payments, refunds, events and webhook_deliveries (the lists', and
-- retention's: the prune job reads the oldest events and finished deliveries) are built
-- CONCURRENTLY by 0155_large_table_indexes.sql (docs/operations.md#topology: no write blocked while they build);
-- the DROPs above take their lock for a moment only.
