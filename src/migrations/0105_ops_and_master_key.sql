-- docs/operations.md#metrics: the database-wide gauges of GET /metrics (pending deliveries, the oldest one's age,
-- endpoints by health), computed by one process at a time under an advisory lock and read by
-- the others from here, so that N processes scraped every few seconds cost one computation.
CREATE TABLE ops_gauges (
  name         text PRIMARY KEY,
  value        jsonb NOT NULL,
  computed_at  timestamptz NOT NULL
);

-- Master-key rotation (docs/operations.md): the secret that card fingerprints, payment client
-- secrets and invoice page tokens are derived from. It was the master key itself before the first
-- rotation; kept here, wrapped under the current master key, it outlives every rotation, so that
-- a card keeps its fingerprint and a sent invoice link keeps working. One row.
CREATE TABLE vault_root (
  id            integer PRIMARY KEY CHECK (id = 1),
  wrapped_seed  text NOT NULL,
  updated_at    timestamptz NOT NULL
);
