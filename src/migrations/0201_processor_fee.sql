-- The fee a real processor reported for a payment (minor units of its currency), when it did:
-- the ledger's payment entry takes it instead of the merchant's fee schedule (docs/balances.md,
-- docs/processors.md).
ALTER TABLE payments ADD COLUMN processor_fee bigint;
