-- Core schema: merchants and their keys, customers, payment methods, payments, events.
-- Every merchant-owned row carries merchant_id and mode ('test' | 'live'): a key sees only its own.

CREATE TABLE merchants (
  id                    text PRIMARY KEY,
  name                  text NOT NULL,
  tokenization_enabled  boolean NOT NULL DEFAULT false,
  mit_enabled           boolean NOT NULL DEFAULT false,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);

-- Keys are stored only as a SHA-256 hash; key_hint keeps the first characters for display.
CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  merchant_id  text NOT NULL REFERENCES merchants (id),
  mode         text NOT NULL CHECK (mode IN ('test', 'live')),
  kind         text NOT NULL CHECK (kind IN ('private', 'public')),
  key_hash     text NOT NULL UNIQUE,
  key_hint     text NOT NULL,
  created_at   timestamptz NOT NULL,
  revoked_at   timestamptz
);
CREATE INDEX api_keys_merchant ON api_keys (merchant_id);

CREATE TABLE customers (
  id                text PRIMARY KEY,
  merchant_id       text NOT NULL REFERENCES merchants (id),
  mode              text NOT NULL,
  merchant_user_id  text,
  email             text,
  first_name        text,
  last_name         text,
  phone             text,
  description       text,
  address           jsonb,
  shipping          jsonb,
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL,
  deleted_at        timestamptz
);
CREATE INDEX customers_list ON customers (merchant_id, mode, created_at DESC, id DESC);
-- docs/api.md#customers: a customer is bound to one user of the merchant's site.
CREATE UNIQUE INDEX customers_merchant_user ON customers (merchant_id, mode, merchant_user_id)
  WHERE merchant_user_id IS NOT NULL AND deleted_at IS NULL;

-- Data-encryption keys of the card vault, each wrapped (AES-256-GCM) with the master key.
CREATE TABLE vault_keys (
  id           text PRIMARY KEY,
  wrapped_key  text NOT NULL,
  active       boolean NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX vault_keys_one_active ON vault_keys (active) WHERE active;

CREATE TABLE payment_methods (
  id                       text PRIMARY KEY,
  merchant_id              text NOT NULL REFERENCES merchants (id),
  mode                     text NOT NULL,
  type                     text NOT NULL,
  -- The customer the method is attached to; set by a successful storing payment or by attach.
  customer_id              text REFERENCES customers (id),
  billing_details          jsonb,
  merchant_pay_site        text,
  card_brand               text NOT NULL,
  card_country             text NOT NULL,
  card_exp_month           text NOT NULL,
  card_exp_year            text NOT NULL,
  card_last4               text NOT NULL,
  card_fingerprint         text NOT NULL,
  -- Vault ciphertexts: '<key id>:<iv>:<tag>:<ciphertext>'. The security code is erased after
  -- the first authorization (docs/api.md#tokenization-rules).
  card_number_encrypted    text NOT NULL,
  security_code_encrypted  text,
  -- Stored credential (docs/api.md#tokenization-rules): set when a storing payment succeeds.
  token_type               text,
  network_token_encrypted  text,
  network_transaction_id   text,
  stored_at                timestamptz,
  detached_at              timestamptz,
  created_at               timestamptz NOT NULL,
  updated_at               timestamptz NOT NULL
);
CREATE INDEX payment_methods_customer ON payment_methods (customer_id, created_at DESC, id DESC);
CREATE INDEX payment_methods_vault_key ON payment_methods ((split_part(card_number_encrypted, ':', 1)));

CREATE TABLE payments (
  id                       text PRIMARY KEY,
  merchant_id              text NOT NULL REFERENCES merchants (id),
  mode                     text NOT NULL,
  customer_id              text REFERENCES customers (id),
  payment_method_id        text REFERENCES payment_methods (id),
  amount                   bigint NOT NULL CHECK (amount >= 0),
  currency                 text NOT NULL,
  status                   text NOT NULL,
  order_no                 text,
  confirmation_method      text NOT NULL,
  pre_auth                 text NOT NULL,
  setup_future_usage       text NOT NULL,
  subsequent_initial_type  text,
  -- The remaining request fields that are echoed back (description, ip, lineItems, …).
  details                  jsonb NOT NULL,
  amount_received          bigint NOT NULL DEFAULT 0,
  amount_capturable        bigint NOT NULL DEFAULT 0,
  risk_score               integer,
  risk_message             text,
  error_code               text,
  error_message            text,
  use_3d                   boolean NOT NULL DEFAULT false,
  next_action              jsonb,
  processor_reference      text,
  network_transaction_id   text,
  canceled_at              timestamptz,
  cancellation_reason      text,
  invoice_id               text,
  created_at               timestamptz NOT NULL,
  updated_at               timestamptz NOT NULL
);
CREATE INDEX payments_list ON payments (merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX payments_customer ON payments (customer_id, created_at DESC);
-- duplicate_order: an order number is in use while a payment for it may still succeed.
CREATE UNIQUE INDEX payments_order_no ON payments (merchant_id, mode, order_no)
  WHERE order_no IS NOT NULL AND status NOT IN ('failed', 'canceled');

-- Transactional outbox (docs/architecture.md#the-request-path): written in the same transaction as the change it reports.
-- body is the event exactly as it will be signed and sent: canonical JSON (docs/webhooks.md#what-is-sent).
CREATE TABLE events (
  id           text PRIMARY KEY,
  merchant_id  text NOT NULL REFERENCES merchants (id),
  mode         text NOT NULL,
  type         text NOT NULL,
  object_id    text,
  body         text NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX events_list ON events (merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX events_object ON events (object_id, created_at);

-- Idempotency-Key records (docs/api.md#idempotency), kept 24 hours.
CREATE TABLE idempotency_keys (
  merchant_id    text NOT NULL,
  mode           text NOT NULL,
  key            text NOT NULL,
  request_hash   text NOT NULL,
  status_code    integer,
  response_body  text,
  created_at     timestamptz NOT NULL,
  PRIMARY KEY (merchant_id, mode, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Work that falls due later: asynchronous settlement, after-the-fact reversal, pre-authorization
-- expiry. Claimed with FOR UPDATE SKIP LOCKED so that any number of processes can share it.
CREATE TABLE scheduled_jobs (
  id            bigserial PRIMARY KEY,
  kind          text NOT NULL,
  object_id     text NOT NULL,
  run_at        timestamptz NOT NULL,
  attempts      integer NOT NULL DEFAULT 0,
  locked_until  timestamptz,
  last_error    text,
  done_at       timestamptz
);
CREATE INDEX scheduled_jobs_due ON scheduled_jobs (run_at) WHERE done_at IS NULL;
