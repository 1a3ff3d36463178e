-- Money a merchant can account for (docs/balances.md, docs/decisions/0043-ledger.md): the ledger of
-- balance transactions, each merchant's fee schedule, payout schedule and bank account, and payouts.

-- Immutable rows: a merchant's balance is the sum of their nets, never a counter kept beside them.
-- No foreign keys: a row is written in the transaction of the payment or refund that causes it,
-- which must lock nothing more (docs/decisions/0032-kept-rows-instead-of-hot-foreign-keys.md).
CREATE TABLE balance_transactions (
  id                  text PRIMARY KEY,
  merchant_id         text NOT NULL,
  mode                text NOT NULL,
  type                text NOT NULL CHECK (type IN ('payment', 'refund', 'refund_failure', 'dispute',
                        'dispute_reversal', 'payout', 'payout_failure', 'adjustment')),
  -- The object that moved the money (pt_, re_, po_ …).
  source              text NOT NULL,
  -- Minor units, signed: what entered (+) or left (-) the balance before fees.
  amount              bigint NOT NULL,
  fee                 bigint NOT NULL,
  fee_details         jsonb NOT NULL,
  net                 bigint NOT NULL,
  currency            text NOT NULL,
  available_on        timestamptz NOT NULL,
  -- The automatic payout that settled it; null until one does.
  payout_id           text,
  reporting_category  text NOT NULL,
  created_at          timestamptz NOT NULL,
  CONSTRAINT balance_transactions_net CHECK (net = amount - fee)
);
-- Nothing is counted twice: one row of each type per object (a payment is captured once, a refund
-- fails once, a payout fails once).
CREATE UNIQUE INDEX balance_transactions_once ON balance_transactions (source, type);
CREATE INDEX balance_transactions_list ON balance_transactions (merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX balance_transactions_payout ON balance_transactions (payout_id, created_at, id)
  WHERE payout_id IS NOT NULL;
-- What the next payout may settle.
CREATE INDEX balance_transactions_unsettled ON balance_transactions (merchant_id, mode, currency, available_on)
  WHERE payout_id IS NULL;

-- The operator's settings of a merchant's money; a merchant without a row has the defaults.
CREATE TABLE merchant_finance (
  merchant_id                     text PRIMARY KEY REFERENCES merchants (id),
  fee_percent_basis_points        integer NOT NULL DEFAULT 290 CHECK (fee_percent_basis_points BETWEEN 0 AND 10000),
  -- {"USD": 30, "EUR": 25}: the fixed part per currency, minor units.
  fee_fixed                       jsonb NOT NULL DEFAULT '{}',
  availability_days               integer NOT NULL DEFAULT 2 CHECK (availability_days BETWEEN 0 AND 365),
  payout_interval                 text NOT NULL DEFAULT 'daily'
                                    CHECK (payout_interval IN ('daily', 'weekly', 'monthly', 'manual')),
  payout_weekly_anchor            text,
  payout_monthly_anchor           integer,
  bank_holder_name                text,
  -- Sealed by the vault (context bank_account:<merchant id>); only the last four digits are shown.
  bank_account_number_encrypted   text,
  bank_account_last4              text,
  bank_routing_number             text,
  bank_iban_encrypted             text,
  bank_iban_last4                 text,
  bank_currency                   text,
  updated_at                      timestamptz NOT NULL
);

CREATE TABLE payouts (
  id                  text PRIMARY KEY,
  merchant_id         text NOT NULL REFERENCES merchants (id),
  mode                text NOT NULL,
  amount              bigint NOT NULL CHECK (amount > 0),
  currency            text NOT NULL,
  status              text NOT NULL CHECK (status IN ('pending', 'in_transit', 'paid', 'failed', 'canceled')),
  automatic           boolean NOT NULL,
  -- An automatic payout's day (UTC): at most one per merchant, mode and currency, however many
  -- processes run the schedule at once.
  scheduled_for       date,
  bank_account_last4  text NOT NULL,
  failure_code        text,
  failure_message     text,
  arrival_date        timestamptz,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL
);
CREATE UNIQUE INDEX payouts_one_per_day ON payouts (merchant_id, mode, currency, scheduled_for)
  WHERE scheduled_for IS NOT NULL;
CREATE INDEX payouts_list ON payouts (merchant_id, mode, created_at DESC, id DESC);
