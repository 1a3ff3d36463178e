-- Refunds (docs/api.md#refunds): money given back from a payment that received it, in one or more parts.

CREATE TABLE refunds (
  id                   text PRIMARY KEY,
  merchant_id          text NOT NULL REFERENCES merchants (id),
  mode                 text NOT NULL,
  payment_id           text NOT NULL REFERENCES payments (id),
  -- Minor units of the payment's currency.
  amount               bigint NOT NULL CHECK (amount > 0),
  currency             text NOT NULL,
  reason               text CHECK (reason IN ('duplicate', 'fraudulent', 'requested_by_customer', 'other')),
  note                 text,
  -- The merchant's text, as given (a number or false from existing clients is kept as text).
  description          text,
  metadata             jsonb,
  status               text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  failure_reason       text,
  -- The processor's reference of the refund; null until the processor has accepted it.
  processor_reference  text,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL
);
CREATE INDEX refunds_list ON refunds (merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX refunds_payment ON refunds (merchant_id, mode, payment_id, created_at DESC, id DESC);
CREATE INDEX refunds_status ON refunds (merchant_id, mode, status, created_at DESC, id DESC);

-- What the payment has given back (succeeded refunds) and promised to give back (pending ones).
-- The database enforces the limit, so that refunds racing on one payment can never together
-- exceed what it received: the claim is a conditional UPDATE, and this CHECK is its backstop.
ALTER TABLE payments ADD COLUMN amount_refunded bigint NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0);
ALTER TABLE payments ADD COLUMN amount_refund_pending bigint NOT NULL DEFAULT 0 CHECK (amount_refund_pending >= 0);
ALTER TABLE payments ADD CONSTRAINT payments_refunds_within_received
  CHECK (amount_refunded + amount_refund_pending <= amount_received);

-- An event about one object may be sent to the notifyUrl of another (a refund's events go to its
-- payment's notifyUrl, docs/webhooks.md#acknowledgement-and-retries): the address is kept with the event, so that a resend finds it.
ALTER TABLE events ADD COLUMN notify_url text;
