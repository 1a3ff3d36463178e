-- Checkout sessions (issue 14, docs/checkout.md): what a store plugin asks to be paid, the hosted page
-- that takes the card, and the one payment that pays it. The request's fields are kept as sent
-- (details, jsonb) because the payment is created from them when the shopper pays.
CREATE TABLE checkout_sessions (
  id            text PRIMARY KEY,
  merchant_id   text NOT NULL REFERENCES merchants (id),
  mode          text NOT NULL CHECK (mode IN ('test', 'live')),
  status        text NOT NULL CHECK (status IN ('open', 'complete', 'expired')),
  amount_total  bigint NOT NULL CHECK (amount_total >= 0),
  currency      text NOT NULL,
  customer_id   text,
  details       jsonb NOT NULL,
  -- Set once, by the conditional claim of the payment that pays the session (at most one).
  payment_id    text UNIQUE,
  -- The hosted page's attempt under way (docs/checkout.md: paid at most once): a form post holds the
  -- session until attempt_until, and a payment awaiting 3-D Secure is named here until it ends.
  attempt_until       timestamptz,
  pending_payment_id  text,
  expires_at    timestamptz NOT NULL,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL
);
CREATE INDEX checkout_sessions_list ON checkout_sessions (merchant_id, mode, created_at DESC, id DESC);
