-- flownode oracle: seed 1532148873, failure read_flow of flow f1 at step two sessions
-- shrunk to 6 steps (19 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1532148873 --cases 1
-- or run this script as a superuser with psql -X -f on a server with
-- shared_preload_libraries = 'flownode' (\! lines need pg_ctl, pg_dump, PGDATA).
-- Database names below are those of the oracle's run.
\set VERBOSITY verbose
SET timezone = 'America/New_York';

-- [0] extensions
CREATE EXTENSION flownode;
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;


-- [1] source table
CREATE TABLE src (id bigint NOT NULL, t bigint NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id, t)) PARTITION BY RANGE (t);
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM (1708646400000) TO (1709856000000);
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM (1709856000000) TO (1711065600000);
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM (1711065600000) TO (1712275200000);
CREATE TABLE src_pdef PARTITION OF src DEFAULT;
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);
CREATE INDEX ON src (k);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, NULL, NULL, true), (1, 'h1', 'r1', true), (2, 'H1', NULL, false), (3, 'h0', NULL, false), (4, 'h3', 'r3', true), (6, 'H1', 'r1', true), (7, 'H1', NULL, true), (8, 'h0', 'r2', false), (9, 'H1', 'r1', false);


-- [3] create_flow f1 (agg_join)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('90 seconds', to_timestamp(s.t::float8 / 1000), timestamptz '2001-02-03 04:05:06.789+00') AS w, d.region AS region, count(s.f) AS nf, bool_and(s.b) AS ba FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2$q$,
  eval_interval => '500 milliseconds') > 0 AS created;

-- [4] upsert
INSERT INTO src AS s (id, t, host, k, v, f, b) VALUES
  (24, 1711045333283, 'h4', 4, -40, -29.25, false),
  (42, 1710252066142, 'h2', 4, -17, 81.5, NULL),
  (55, 1710400684000, NULL, 6, -2, -94, NULL),
  (63, 1710672511000, '', 6, 10, -44.75, true),
  (16, 646782891966, 'H1', 5, 39, -11.5, NULL)
ON CONFLICT (id, t) DO UPDATE SET v = s.v + EXCLUDED.v, host = EXCLUDED.host;

-- [5] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('A', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (64, 1710342023000, NULL, 7, -23, 75.25, true),
  (65, 1711849526536, 'h4', 5, 17, -30.25, false);$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "region" AS "region", "nf" AS "nf", "ba" AS "ba" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "region" AS "region", "nf" AS "nf", "ba" AS "ba" FROM (SELECT * FROM (SELECT date_bin('90 seconds', to_timestamp(s.t::float8 / 1000), timestamptz '2001-02-03 04:05:06.789+00') AS w, d.region AS region, count(s.f) AS nf, bool_and(s.b) AS ba FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "region" AS "region", "nf" AS "nf", "ba" AS "ba" FROM (SELECT * FROM (SELECT date_bin('90 seconds', to_timestamp(s.t::float8 / 1000), timestamptz '2001-02-03 04:05:06.789+00') AS w, d.region AS region, count(s.f) AS nf, bool_and(s.b) AS ba FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "region" AS "region", "nf" AS "nf", "ba" AS "ba" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1990-06-30 17:54:36.789-04||1|
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');
