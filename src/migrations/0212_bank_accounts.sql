-- One bank account per currency (docs/balances.md, Bank accounts; docs/decisions/0050-ledger-additions.md):
-- a payout in a currency goes to the merchant's account in that currency, as Stripe's external
-- accounts do. The one account of 0210's merchant_finance row moves here.
CREATE TABLE bank_accounts (
  merchant_id               text NOT NULL REFERENCES merchants (id),
  currency                  text NOT NULL,
  holder_name               text NOT NULL,
  -- Sealed by the vault (context bank_account:<merchant id>); only the last four digits are shown.
  account_number_encrypted  text NOT NULL,
  account_last4             text NOT NULL,
  routing_number            text,
  iban_encrypted            text,
  iban_last4                text,
  created_at                timestamptz NOT NULL,
  updated_at                timestamptz NOT NULL,
  PRIMARY KEY (merchant_id, currency)
);

INSERT INTO bank_accounts (merchant_id, currency, holder_name, account_number_encrypted, account_last4,
                           routing_number, iban_encrypted, iban_last4, created_at, updated_at)
SELECT merchant_id, bank_currency, COALESCE(bank_holder_name, ''), bank_account_number_encrypted, bank_account_last4,
       bank_routing_number, bank_iban_encrypted, bank_iban_last4, updated_at, updated_at
FROM merchant_finance
WHERE bank_currency IS NOT NULL AND bank_account_number_encrypted IS NOT NULL;

ALTER TABLE merchant_finance
  DROP COLUMN bank_holder_name,
  DROP COLUMN bank_account_number_encrypted,
  DROP COLUMN bank_account_last4,
  DROP COLUMN bank_routing_number,
  DROP COLUMN bank_iban_encrypted,
  DROP COLUMN bank_iban_last4,
  DROP COLUMN bank_currency;
