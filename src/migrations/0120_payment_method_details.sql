-- tessera:no-transaction
-- Issue 21, docs/api.md#compatibility-with-existing-clients: a payment answers `paymentMethodDetails`, the card as the payment used it
-- (src/payments/rules.ts withMethodDetails keeps it in payments.details from now on). Payments made
-- before carry the card of their payment method as it is now; those without a method carry none.
-- Filled 1,000 payments at a time, in id order, each batch committed alone (COMMIT in a DO block
-- run outside a transaction), so that a payment's row is locked for one batch, not until every
-- payment is filled: captures, refunds and webhooks of other payments go on. Run again, it fills
-- only what is left.
DO $$
DECLARE
  last_id text := '';
  batch text[];
BEGIN
  LOOP
    SELECT array_agg(id ORDER BY id) INTO batch
    FROM (SELECT id FROM payments WHERE id > last_id ORDER BY id LIMIT 1000) AS next_batch;
    EXIT WHEN batch IS NULL;
    UPDATE payments
    SET details = payments.details || jsonb_build_object(
      'paymentMethodDetails',
      jsonb_build_object(
        'type', 'card',
        'card', jsonb_build_object(
          'brand', method.card_brand,
          'last4', method.card_last4,
          'expMonth', method.card_exp_month,
          'expYear', method.card_exp_year,
          'country', method.card_country,
          'fingerprint', method.card_fingerprint
        )
      )
    )
    FROM payment_methods AS method
    WHERE payments.id = ANY (batch)
      AND method.id = payments.payment_method_id
      AND NOT (payments.details ? 'paymentMethodDetails');
    last_id := batch[array_upper(batch, 1)];
    COMMIT;
  END LOOP;
END $$;
