-- Issue 20 / docs/webhooks.md#standard-webhooks-format: Standard Webhooks as a per-endpoint format. `moneycollect` (docs/webhooks.md#what-is-sent
-- headers) stays the default; `standard` sends webhook-id, webhook-timestamp and webhook-signature.
ALTER TABLE webhook_endpoints ADD COLUMN format text NOT NULL DEFAULT 'moneycollect'
  CHECK (format IN ('moneycollect', 'standard'));

-- A roll with a grace period (standard format): the token it replaced keeps signing, beside the
-- new one, until previous_token_expires_at; NULL when the last roll had none.
ALTER TABLE webhook_endpoints ADD COLUMN previous_token_encrypted text;
ALTER TABLE webhook_endpoints ADD COLUMN previous_token_expires_at timestamptz;
