-- Go-live checks (issue 12, docs/webhooks.md#go-live-check): a series of test deliveries to an endpoint's URL and the
-- verdict per case. Kept so that a merchant can see, per endpoint, when its receiver last passed.
CREATE TABLE webhook_checks (
  id           text PRIMARY KEY,
  merchant_id  text NOT NULL REFERENCES merchants (id),
  mode         text NOT NULL,
  endpoint_id  text NOT NULL REFERENCES webhook_endpoints (id),
  -- The URL the test deliveries went to (the endpoint's, or the one given for the dynamic endpoint).
  url          text NOT NULL,
  passed       boolean NOT NULL,
  -- [{name, passed, reason, httpStatus, latencyMs}] in the order the cases were sent.
  cases        jsonb NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX webhook_checks_endpoint ON webhook_checks (merchant_id, mode, endpoint_id, created_at DESC, id DESC);
