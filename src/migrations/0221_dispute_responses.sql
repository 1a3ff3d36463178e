-- A live dispute's response sent to its processor (docs/disputes.md, Live; docs/decisions/0044-disputes.md):
-- response_sending marks a submission or acceptance written before the processor is called and
-- cleared in the transaction that records its outcome, so that a request retried after a failure
-- sends again with the same idempotency key (the submission count only grows on success).
ALTER TABLE disputes ADD COLUMN response_sending text CHECK (response_sending IN ('submit', 'accept'));
-- The processor's own reference of the dispute for its dispute API, when it differs from the one
-- notifications find it by (Adyen: the chargeback's pspReference; the dispute is found by the payment's).
ALTER TABLE disputes ADD COLUMN processor_response_reference text;
-- Adyen's Disputes API is a service apart from Checkout: its root, when not the default of the mode.
ALTER TABLE processor_accounts ADD COLUMN disputes_base_url text;
