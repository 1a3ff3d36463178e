-- tessera:no-transaction
-- A processor's dispute notification names the payment by the processor's reference (Stripe's
-- PaymentIntent); only live payments have one. payments is a large table, so the index is built
-- CONCURRENTLY: payments go on while it builds (src/db/migrate.ts runs this file outside a
-- transaction, as CONCURRENTLY requires).
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_processor_reference
  ON payments (processor_reference) WHERE processor_reference IS NOT NULL;
