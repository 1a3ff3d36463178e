-- Development only: the sandbox merchant that `tessera start` prints at every start, one per
-- database. Its keys are kept sealed by the vault (context `sandbox:<merchant id>`), so that each
-- start can print them again whether or not there is a data folder: with DATABASE_URL and both
-- secrets in the environment, none is needed, and a start must neither fail nor make another one.
CREATE TABLE sandbox_merchant (
  merchant_id     text PRIMARY KEY REFERENCES merchants (id),
  keys_encrypted  text NOT NULL,
  created_at      timestamptz NOT NULL
);
CREATE UNIQUE INDEX sandbox_merchant_one ON sandbox_merchant ((true));
