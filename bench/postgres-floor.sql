-- What PostgreSQL alone does on this machine for a payment's two statements, driven by pgbench (a C
-- client) with no HTTP and no application code: a primary-key read, then one statement inserting a
-- row into each of two tables with three indexes each. The tables and the commands: postgres-floor-setup.sql.
\set id random(1, 1000000000000)
SELECT 1 FROM floor_method WHERE id = 1;
WITH payment AS (INSERT INTO floor_payment (id, merchant_id, created_at, customer_id, body) VALUES (:id, 1, now(), 1, repeat('x', 600)) ON CONFLICT DO NOTHING)
INSERT INTO floor_event (id, merchant_id, created_at, object_id, body) VALUES (:id, 1, now(), :id, repeat('y', 1200)) ON CONFLICT DO NOTHING;
