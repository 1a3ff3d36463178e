-- Payments (docs/api.md#tokenization-rules, docs/api.md#states): what the payment flow keeps beyond the columns of 0001_core.

-- The result of the hosted 3-D Secure page ('passed' | 'failed'), so that a payment confirmed
-- manually after passing it is authorized as authenticated instead of being challenged again.
ALTER TABLE payments ADD COLUMN three_d_secure text CHECK (three_d_secure IN ('passed', 'failed'));

-- A storing payment that settles later binds its payment method only once it has succeeded; until
-- then the network token the processor provisioned waits here, encrypted by the vault (context =
-- the payment id), and is cleared when the payment settles.
ALTER TABLE payments ADD COLUMN network_token_encrypted text;

-- GET /payment?orderNo=…: the unique index payments_order_no covers only payments that may still
-- succeed, and the list must find failed and canceled ones too.
-- payments_order_no_lookup: built CONCURRENTLY by 0155_large_table_indexes.sql (docs/operations.md#topology: no write blocked while it builds).
