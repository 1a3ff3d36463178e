-- Payments claimed for an authorization whose answer was never recorded (the process died
-- between the two) are found by the reconciliation sweep through this index.
CREATE INDEX payments_processing ON payments (updated_at) WHERE status = 'processing' AND processor_reference IS NULL;
