-- A payout canceled before the bank rail took it (docs/balances.md, Payouts;
-- docs/decisions/0050-ledger-additions.md): its `payout_cancel` entry returns the money, as Stripe's
-- balance transaction of that type does. The list of types is 0210's with it added.
ALTER TABLE balance_transactions DROP CONSTRAINT balance_transactions_type_check;
ALTER TABLE balance_transactions ADD CONSTRAINT balance_transactions_type_check
  CHECK (type IN ('payment', 'refund', 'refund_failure', 'dispute', 'dispute_reversal', 'payout',
                  'payout_failure', 'payout_cancel', 'adjustment'));
