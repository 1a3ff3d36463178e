-- A payment's write checks no foreign key but its deliveries' event
-- (docs/decisions/0032-kept-rows-instead-of-hot-foreign-keys.md). Each of the five keys below made
-- every MIT payment lock the row it names (FOR KEY SHARE: a WAL record and a dirtied page each, and
-- on PostgreSQL a multixact on the merchant's or the endpoint's row while payments run at once).
-- The rows they name are never deleted and their ids never change: that is now the rule the
-- database holds, for every row of the four tables, at no cost to an insert.
ALTER TABLE payments
  DROP CONSTRAINT IF EXISTS payments_merchant_id_fkey,
  DROP CONSTRAINT IF EXISTS payments_customer_id_fkey,
  DROP CONSTRAINT IF EXISTS payments_payment_method_id_fkey;
ALTER TABLE events DROP CONSTRAINT IF EXISTS events_merchant_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_endpoint_id_fkey;

-- Merchants, customers, payment methods and webhook endpoints are kept for ever (a detached method,
-- a deleted customer or endpoint keep their rows, marked): a DELETE of any of their rows, or a
-- changed id, is refused.
CREATE OR REPLACE FUNCTION tessera_rows_are_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'rows of % are never deleted and keep their id: payments, events and deliveries refer to them', TG_TABLE_NAME
    USING ERRCODE = 'restrict_violation', TABLE = TG_TABLE_NAME;
END
$$;

CREATE TRIGGER merchants_rows_kept BEFORE DELETE ON merchants
  FOR EACH STATEMENT EXECUTE FUNCTION tessera_rows_are_kept();
CREATE TRIGGER merchants_ids_kept BEFORE UPDATE OF id ON merchants
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION tessera_rows_are_kept();
CREATE TRIGGER customers_rows_kept BEFORE DELETE ON customers
  FOR EACH STATEMENT EXECUTE FUNCTION tessera_rows_are_kept();
CREATE TRIGGER customers_ids_kept BEFORE UPDATE OF id ON customers
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION tessera_rows_are_kept();
CREATE TRIGGER payment_methods_rows_kept BEFORE DELETE ON payment_methods
  FOR EACH STATEMENT EXECUTE FUNCTION tessera_rows_are_kept();
CREATE TRIGGER payment_methods_ids_kept BEFORE UPDATE OF id ON payment_methods
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION tessera_rows_are_kept();
CREATE TRIGGER webhook_endpoints_rows_kept BEFORE DELETE ON webhook_endpoints
  FOR EACH STATEMENT EXECUTE FUNCTION tessera_rows_are_kept();
CREATE TRIGGER webhook_endpoints_ids_kept BEFORE UPDATE OF id ON webhook_endpoints
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION tessera_rows_are_kept();
