-- docs/webhooks.md#what-is-sent: the provider's PHP SDK compares the Signature header with an upper-case HMAC, its
-- Java SDK with a lower-case one, both case-sensitively; each endpoint says which it gets.
ALTER TABLE webhook_endpoints ADD COLUMN signature_case text NOT NULL DEFAULT 'upper' CHECK (signature_case IN ('upper', 'lower'));
