-- The dashboard's payment search (issue 11): by status, and by the e-mail address of the
-- payment's customer or of its payment method's billing details.

-- payments_status_list and payments_payment_method: built CONCURRENTLY by
-- 0155_large_table_indexes.sql (docs/operations.md#topology: no write to payments blocked while they build).
CREATE INDEX customers_email ON customers (merchant_id, mode, lower(email)) WHERE email IS NOT NULL;
CREATE INDEX payment_methods_billing_email ON payment_methods (merchant_id, mode, lower(billing_details ->> 'email'))
  WHERE billing_details ->> 'email' IS NOT NULL;
