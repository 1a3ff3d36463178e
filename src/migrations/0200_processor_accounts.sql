-- Live processing (docs/processors.md): the processor accounts an operator connects for a merchant,
-- the notifications they send, and which account a payment went through.
CREATE TABLE processor_accounts (
  id                     text PRIMARY KEY,
  merchant_id            text NOT NULL REFERENCES merchants (id),
  processor              text NOT NULL CHECK (processor IN ('adyen', 'stripe')),
  mode                   text NOT NULL CHECK (mode IN ('test', 'live')),
  status                 text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  -- The credentials as JSON, sealed by the vault (never shown again); their last 4 characters apart.
  credentials_encrypted  text NOT NULL,
  credentials_hint       text NOT NULL,
  base_url               text,
  last_notification_at   timestamptz,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL
);
CREATE INDEX processor_accounts_merchant ON processor_accounts (merchant_id, mode, created_at);
-- At most one enabled account per merchant and mode: that one takes the mode's payments.
CREATE UNIQUE INDEX processor_accounts_enabled ON processor_accounts (merchant_id, mode) WHERE status = 'enabled';

-- A notification is applied once, whichever of it and the API's answer comes first, and however
-- often the processor sends it.
CREATE TABLE processor_notifications (
  account_id       text NOT NULL REFERENCES processor_accounts (id),
  notification_id  text NOT NULL,
  kind             text NOT NULL,
  received_at      timestamptz NOT NULL,
  PRIMARY KEY (account_id, notification_id)
);

-- The account a payment was sent through (null: the built-in sandbox), the processor's own decline
-- reason, and a processor's 3-D Secure step (next_action, from 0001) while the shopper is away.
ALTER TABLE payments ADD COLUMN processor_account_id text;
ALTER TABLE payments ADD COLUMN processor_reason text;
