-- The tables bench/postgres-floor.sql writes to, in a database of their own:
--   createdb -h 127.0.0.1 -U postgres tessera_floor
--   psql -h 127.0.0.1 -U postgres -f bench/postgres-floor-setup.sql tessera_floor
--   pgbench -h 127.0.0.1 -U postgres -n -M prepared -c 32 -j 2 -T 10 -f bench/postgres-floor.sql tessera_floor
--   dropdb -h 127.0.0.1 -U postgres tessera_floor
CREATE TABLE floor_method (id int PRIMARY KEY);
INSERT INTO floor_method VALUES (1);
CREATE TABLE floor_payment (id bigint PRIMARY KEY, merchant_id int, created_at timestamptz, customer_id int, body text);
CREATE INDEX ON floor_payment (merchant_id, created_at, id);
CREATE INDEX ON floor_payment (customer_id, created_at);
CREATE TABLE floor_event (id bigint PRIMARY KEY, merchant_id int, created_at timestamptz, object_id bigint, body text);
CREATE INDEX ON floor_event (merchant_id, created_at, id);
CREATE INDEX ON floor_event (object_id, created_at);
