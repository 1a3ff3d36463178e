-- A payment made on a checkout session's hosted page names its session (issue 14, DESIGN §9), so
-- that the session is completed in the transaction that records the payment's success
-- (src/payments/checkout-hook.ts): no crash can leave a paid session open.
ALTER TABLE payments ADD COLUMN checkout_session_id text;
-- Paid at most once: of the payments of one session, at most one may still succeed (or has).
CREATE UNIQUE INDEX payments_checkout_session ON payments (checkout_session_id)
  WHERE checkout_session_id IS NOT NULL AND status NOT IN ('failed', 'canceled');
