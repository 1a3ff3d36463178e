-- Issue 21, DESIGN §10: a payment answers `paymentMethodDetails`, the card as the payment used it
-- (src/payments/rules.ts withMethodDetails keeps it in payments.details from now on). Payments made
-- before carry the card of their payment method as it is now; those without a method carry none.
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
WHERE method.id = payments.payment_method_id AND NOT (payments.details ? 'paymentMethodDetails');
