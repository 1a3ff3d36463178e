-- Rate limits shared by every process (docs/decisions/0011-shared-rate-limits.md): the token buckets of the
-- public-key routes and the hosted forms live here, so that N processes allow what one does.
-- A bucket holds `tokens` as of `updated_at` and refills at its capacity per minute.
CREATE TABLE rate_limit_buckets (
  name        text PRIMARY KEY,
  tokens      double precision NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX rate_limit_buckets_updated ON rate_limit_buckets (updated_at);

-- Takes one token from each named bucket, or none when any has less than one: one statement, so
-- one round trip per request. The rows are locked in name order, so that two requests naming the
-- same buckets cannot deadlock. Answers 0 when the tokens were taken, else the milliseconds until
-- every bucket has a token again.
CREATE FUNCTION tessera_take_tokens(names text[], capacities double precision[], at timestamptz)
RETURNS double precision
LANGUAGE plpgsql AS $$
DECLARE
  wait_ms double precision := 0;
  bucket record;
BEGIN
  INSERT INTO rate_limit_buckets (name, tokens, updated_at)
    SELECT i.name, i.capacity, at FROM unnest(names, capacities) AS i (name, capacity)
    ORDER BY i.name
    ON CONFLICT (name) DO NOTHING;
  FOR bucket IN
    SELECT b.name, i.capacity,
           LEAST(i.capacity, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM (at - b.updated_at)) * 1000) * i.capacity / 60000) AS level
    FROM rate_limit_buckets b JOIN unnest(names, capacities) AS i (name, capacity) ON i.name = b.name
    ORDER BY b.name
    FOR UPDATE OF b
  LOOP
    IF bucket.level < 1 THEN
      wait_ms := GREATEST(wait_ms, (1 - bucket.level) * 60000 / bucket.capacity);
    END IF;
  END LOOP;
  IF wait_ms > 0 THEN
    RETURN wait_ms;
  END IF;
  UPDATE rate_limit_buckets b
    SET tokens = LEAST(i.capacity, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM (at - b.updated_at)) * 1000) * i.capacity / 60000) - 1,
        updated_at = GREATEST(b.updated_at, at)
    FROM unnest(names, capacities) AS i (name, capacity)
    WHERE b.name = i.name;
  RETURN 0;
END;
$$;
