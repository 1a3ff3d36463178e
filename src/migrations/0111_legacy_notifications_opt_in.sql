-- Issue 20 / DESIGN §12: the legacy notification kind (plain event code, SPEC §6.4) is opt-in for
-- endpoints created from now on, the dynamic notifyUrl endpoint of new merchants included. Existing
-- endpoints keep the value they have: only the default changes, no row is updated.
ALTER TABLE webhook_endpoints ALTER COLUMN legacy_notifications SET DEFAULT false;
