-- A payment made on a checkout session's hosted page names its session (issue 14, docs/checkout.md), so
-- that the session is completed in the transaction that records the payment's success
-- (src/payments/checkout-hook.ts): no crash can leave a paid session open.
ALTER TABLE payments ADD COLUMN checkout_session_id text;
-- Paid at most once: of the payments of one session, at most one may still succeed (or has).
-- The unique index payments_checkout_session is built CONCURRENTLY by 0155_large_table_indexes.sql
-- (docs/operations.md#topology: no write to payments blocked while it builds).
