-- API request logs (issue 11, docs/dashboard.md#roles "request logs"): one row per merchant API request, written
-- in batches off the request's path and kept 30 days. Never the raw URL (a query string or a path
-- may carry what must not be stored) and never a body: the route pattern only.
CREATE TABLE api_request_logs (
  id           text PRIMARY KEY,
  merchant_id  text NOT NULL REFERENCES merchants (id),
  mode         text NOT NULL CHECK (mode IN ('test', 'live')),
  method       text NOT NULL,
  -- The route as registered, e.g. /api/services/v1/payments/:id.
  route        text NOT NULL,
  status_code  integer NOT NULL,
  latency_ms   integer NOT NULL,
  trace_id     text NOT NULL,
  key_kind     text NOT NULL CHECK (key_kind IN ('private', 'public')),
  created_at   timestamptz NOT NULL
);
CREATE INDEX api_request_logs_list ON api_request_logs (merchant_id, mode, created_at DESC, id DESC);
-- The daily purge deletes by age across merchants.
CREATE INDEX api_request_logs_age ON api_request_logs (created_at);
