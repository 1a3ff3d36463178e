-- Test-mode fast-forward (issue 12): each wait of a delivery's retry schedule is divided by this
-- factor when its next attempt time is computed; 1 is the schedule (docs/webhooks.md#acknowledgement-and-retries) as written.
ALTER TABLE webhook_deliveries ADD COLUMN time_factor integer NOT NULL DEFAULT 1;
