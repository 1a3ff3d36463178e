-- The dashboard's payment search (issue 11): by status, and by the e-mail address of the
-- payment's customer or of its payment method's billing details.

CREATE INDEX payments_status_list ON payments (merchant_id, mode, status, created_at DESC, id DESC);
CREATE INDEX payments_payment_method ON payments (payment_method_id);
CREATE INDEX customers_email ON customers (merchant_id, mode, lower(email)) WHERE email IS NOT NULL;
CREATE INDEX payment_methods_billing_email ON payment_methods (merchant_id, mode, lower(billing_details ->> 'email'))
  WHERE billing_details ->> 'email' IS NOT NULL;
