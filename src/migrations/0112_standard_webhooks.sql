-- Issue 20 / DESIGN §12: Standard Webhooks as a per-endpoint format. `moneycollect` (SPEC §6.3
-- headers) stays the default; `standard` sends webhook-id, webhook-timestamp and webhook-signature.
ALTER TABLE webhook_endpoints ADD COLUMN format text NOT NULL DEFAULT 'moneycollect'
  CHECK (format IN ('moneycollect', 'standard'));

-- A roll with a grace period (standard format): the token it replaced keeps signing, beside the
-- new one, until previous_token_expires_at; NULL when the last roll had none.
ALTER TABLE webhook_endpoints ADD COLUMN previous_token_encrypted text;
ALTER TABLE webhook_endpoints ADD COLUMN previous_token_expires_at timestamptz;
