-- Issue 20 item 5 / docs/decisions/0026: Standard Webhooks `v1a,` (ed25519) signatures as an option
-- of the standard format. The endpoint's token column then holds the vault-encrypted secret key
-- (`whsk_…`); the public key (`whpk_…`) is no secret and is kept in the clear, so that every read of
-- the endpoint can show it. An HMAC endpoint has no public key; an ed25519 one is always standard.
ALTER TABLE webhook_endpoints ADD COLUMN signature_algorithm text NOT NULL DEFAULT 'hmac-sha256'
  CHECK (signature_algorithm IN ('hmac-sha256', 'ed25519'));
ALTER TABLE webhook_endpoints ADD COLUMN public_key text;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_ed25519_public_key
  CHECK ((signature_algorithm = 'ed25519') = (public_key IS NOT NULL));
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_ed25519_standard
  CHECK (signature_algorithm = 'hmac-sha256' OR format = 'standard');
