-- Issue 20 / docs/decisions/0014-legacy-opt-in-and-sequence.md: the legacy notification kind (plain event code, docs/webhooks.md#what-is-sent) is opt-in for
-- endpoints created from now on, the dynamic notifyUrl endpoint of new merchants included. Existing
-- endpoints keep the value they have: only the default changes, no row is updated.
ALTER TABLE webhook_endpoints ALTER COLUMN legacy_notifications SET DEFAULT false;
