-- Webhook engine (docs/webhooks.md#what-is-sent, docs/webhooks.md, docs/webhooks.md#acknowledgement-and-retries): endpoints and their tokens, one delivery per event,
-- target and kind, and every attempt.

-- Tokens must be revealable, so they are encrypted by the vault (context = the endpoint id),
-- not hashed. The merchant's legacy signing key signs the plain-code notifications (docs/webhooks.md#what-is-sent).
ALTER TABLE merchants ADD COLUMN legacy_signing_key_encrypted text;

CREATE TABLE webhook_endpoints (
  id                     text PRIMARY KEY,
  merchant_id            text NOT NULL REFERENCES merchants (id),
  mode                   text NOT NULL,
  -- 'static': configured by the merchant; 'dynamic': the built-in endpoint whose token signs
  -- deliveries to a payment's notifyUrl (it has no url of its own).
  kind                   text NOT NULL CHECK (kind IN ('static', 'dynamic')),
  url                    text,
  description            text,
  enabled_events         jsonb NOT NULL,
  legacy_notifications   boolean NOT NULL DEFAULT true,
  status                 text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  token_encrypted        text NOT NULL,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL,
  deleted_at             timestamptz
);
CREATE INDEX webhook_endpoints_merchant ON webhook_endpoints (merchant_id, mode, created_at DESC, id DESC);
CREATE UNIQUE INDEX webhook_endpoints_one_dynamic ON webhook_endpoints (merchant_id, mode) WHERE kind = 'dynamic';

CREATE TABLE webhook_deliveries (
  id               text PRIMARY KEY,
  event_id         text NOT NULL REFERENCES events (id),
  merchant_id      text NOT NULL,
  mode             text NOT NULL,
  -- The endpoint whose token signs it (the dynamic endpoint for a notifyUrl delivery).
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id),
  url              text NOT NULL,
  -- 'endpoint': type endpoint_<group>.<group>_<action>, signed with the endpoint token;
  -- 'legacy': the plain code, signed with the merchant's legacy key (docs/webhooks.md#what-is-sent).
  kind             text NOT NULL CHECK (kind IN ('endpoint', 'legacy')),
  -- The exact bytes sent on every attempt (canonical JSON, docs/webhooks.md#acknowledgement-and-retries).
  body             text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,
  locked_until     timestamptz,
  last_attempt_at  timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- A worker refills the slots of one target (url) without scanning other targets' backlogs.
CREATE INDEX webhook_deliveries_target_due ON webhook_deliveries (url, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id, created_at);
CREATE INDEX webhook_deliveries_merchant ON webhook_deliveries (merchant_id, mode, status, created_at DESC, id DESC);

CREATE TABLE webhook_attempts (
  id                text PRIMARY KEY,
  delivery_id       text NOT NULL REFERENCES webhook_deliveries (id),
  attempt_number    integer NOT NULL,
  attempted_at      timestamptz NOT NULL,
  duration_ms       integer NOT NULL,
  http_status       integer,
  -- The first 1 KiB of the response body.
  response_excerpt  text,
  error             text,
  succeeded         boolean NOT NULL,
  created_at        timestamptz NOT NULL
);
CREATE UNIQUE INDEX webhook_attempts_number ON webhook_attempts (delivery_id, attempt_number);

-- Who did what to a secret (docs/webhooks.md#endpoints-and-tokens, docs/dashboard.md#roles, docs/webhooks.md#what-is-sent: every reveal is audit-logged).
CREATE TABLE audit_log (
  id           bigserial PRIMARY KEY,
  merchant_id  text NOT NULL,
  mode         text NOT NULL,
  action       text NOT NULL,
  object_id    text,
  actor        text NOT NULL,
  trace_id     text,
  created_at   timestamptz NOT NULL
);
CREATE INDEX audit_log_merchant ON audit_log (merchant_id, created_at DESC);
