-- Idempotency keys survive a crash (issue 13, docs/decisions/0003): a claim holds the key only
-- until claimed_until, after which a retry may take it over; object_id is the id the claim
-- reserved for the object it creates (its 19 digits; the route adds its prefix), so that a retry
-- reuses it and cannot create a second one.
ALTER TABLE idempotency_keys ADD COLUMN claimed_until timestamptz;
ALTER TABLE idempotency_keys ADD COLUMN object_id text;
