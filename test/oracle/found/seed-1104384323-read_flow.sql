-- flownode oracle: seed 1104384323, failure read_flow of flow f1 at step two sessions
-- shrunk to 7 steps (22 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1104384323 --cases 1
-- or run this script as a superuser with psql -X -f on a server with
-- shared_preload_libraries = 'flownode' (\! lines need pg_ctl, pg_dump, PGDATA).
-- Database names below are those of the oracle's run.
\set VERBOSITY verbose
SET timezone = 'UTC';

-- [0] extensions
CREATE EXTENSION flownode;
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;


-- [1] source table
CREATE TABLE src (id bigint NOT NULL, t date NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id, t)) PARTITION BY RANGE (t);
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM ('2024-02-23') TO ('2024-03-08');
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM ('2024-03-08') TO ('2024-03-22');
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM ('2024-03-22') TO ('2024-04-05');
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (2, 'H1', NULL, false), (4, 'h3', NULL, false), (5, 'h3', 'r2', true), (6, 'h0', 'r2', false), (7, 'h1', NULL, true), (8, 'h1', 'r1', false);


-- [3] savepoint rolled back
BEGIN;
COPY src (id, t, host, k, v, f, b) FROM STDIN;
102	2024-03-14	h3	3	9	-96.5	true
103	2024-03-18	H1	4	-47	80	true
\.
SAVEPOINT s1;
MERGE INTO src s USING (VALUES
  (35::bigint, '2024-03-14'::date, 'h2'::text, 4::int, 23::int, 63.5::float8, true::bool),
  (104::bigint, '2024-03-20'::date, 'h0'::text, 7::int, -35::int, 41.75::float8, false::bool),
  (75::bigint, '2024-03-28'::date, 'h4'::text, 2::int, -13::int, -77.75::float8, NULL::bool)) AS x(id, t, host, k, v, f, b) ON s.id = x.id
WHEN MATCHED AND x.v > 0 THEN UPDATE SET t = x.t, v = x.v, host = x.host
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED THEN INSERT (id, t, host, k, v, f, b) VALUES (x.id, x.t, x.host, x.k, x.v, x.f, x.b);
ROLLBACK TO SAVEPOINT s1;
UPDATE src SET t = '2024-03-23' WHERE id = 45;
COMMIT;

-- [4] create_flow f1 or_replace
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_trunc('milliseconds', s.t) AS w, s.k AS k, (s.v % 3) AS vmod, sum(s.f) AS sf FROM src s GROUP BY 1, 2, 3 HAVING max(s.f) IS NOT NULL$q$,
  or_replace => true) > 0 AS created;

-- [5] alter column type
ALTER TABLE src ALTER COLUMN k TYPE int USING (k + 1) % 10;

-- [6] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('A', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (124, '2024-03-12', 'h2', 5, 3, 90, NULL),
  (125, '2024-03-14', '', 6, 3, -40.5, true),
  (126, '2024-03-12', 'h2', 3, -44, -27.75, NULL);$dbl$);
SELECT dblink_exec('B', $dbl$UPDATE src SET t = t + (-1) WHERE id % 2 = 1 AND id % 3 = 0;$dbl$);
SELECT dblink_exec('B', $dbl$UPDATE src SET t = t + (1) WHERE id % 2 = 1 AND id % 3 = 2;$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "k" AS "k", "vmod" AS "vmod", to_char("sf"::float8, '9.99999999EEEE') AS "sf" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "k" AS "k", "vmod" AS "vmod", to_char("sf"::float8, '9.99999999EEEE') AS "sf" FROM (SELECT * FROM (SELECT date_trunc('milliseconds', s.t) AS w, s.k AS k, (s.v % 3) AS vmod, sum(s.f) AS sf FROM src s GROUP BY 1, 2, 3 HAVING max(s.f) IS NOT NULL) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "k" AS "k", "vmod" AS "vmod", to_char("sf"::float8, '9.99999999EEEE') AS "sf" FROM (SELECT * FROM (SELECT date_trunc('milliseconds', s.t) AS w, s.k AS k, (s.v % 3) AS vmod, sum(s.f) AS sf FROM src s GROUP BY 1, 2, 3 HAVING max(s.f) IS NOT NULL) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "k" AS "k", "vmod" AS "vmod", to_char("sf"::float8, '9.99999999EEEE') AS "sf" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|2024-03-14 00:00:00+00|4|0|-9.65000000e+01
--   +|2024-03-18 00:00:00+00|5|-2| 8.00000000e+01
--   -|2024-03-14 00:00:00+00|3|0|-9.65000000e+01
--   -|2024-03-18 00:00:00+00|4|-2| 8.00000000e+01
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');
