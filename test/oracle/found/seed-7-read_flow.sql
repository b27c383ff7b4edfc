-- flownode oracle: seed 7, failure read_flow of flow f2 at step two sessions
-- shrunk to 7 steps (30 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 7 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t date NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);


-- [2] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (11, '2024-03-11', 'h3', 7, -4, -10.75, false),
  (12, '2024-03-20', 'h3', 4, 13, -8, true),
  (13, '2024-03-27', NULL, 8, 2, -76.5, false),
  (14, '2024-03-09', 'h4', 6, 27, 32.5, NULL),
  (15, '2024-03-10', 'h2', 0, -41, 7.25, false),
  (16, '2024-04-01', 'H1', 5, -25, -64, true),
  (17, '2024-03-10', 'h2', 7, -18, -69.25, NULL),
  (18, '2024-03-11', 'h0', 8, -2, -22.25, NULL),
  (19, '2024-03-13', 'h1', 9, -29, 59, NULL),
  (20, '2024-03-08', 'h0', 6, 37, 92.75, false),
  (21, '2024-03-30', 'h4', 1, 23, 41.25, false),
  (22, '2024-03-10', 'h2', 6, -36, -45, false),
  (23, '2024-03-28', 'h0', 4, -37, -38.5, NULL),
  (24, '2024-03-24', 'h4', 2, -4, -73.75, true),
  (25, '-infinity', '', 8, 7, -15.75, NULL),
  (26, '1990-01-26', NULL, 0, 48, 57.5, NULL),
  (27, '2024-03-31', NULL, 1, 33, -8.25, true),
  (28, '2024-03-27', 'h3', 5, 22, 41.5, true),
  (29, '2024-03-14', 'h1', 3, 7, -89.25, true),
  (30, '2024-03-17', NULL, 8, -23, 97.25, true),
  (31, '2024-03-24', 'h4', 8, -39, 83.25, false),
  (32, '2024-03-18', 'H1', 6, 24, -74.25, NULL),
  (33, '2024-03-26', 'h1', 2, -31, 92.5, NULL);

-- [3] create_flow f2 (agg)
SELECT flownode.create_flow('f2',
  'f2_sink',
  $q$SELECT date_bin('1 day', s.t, timestamp '1970-01-01 00:00:00.5') AS w, s.host AS host, lower(s.host) AS lhost, s.k AS k, avg(s.f) AS af, min(s.host) AS mnh, bool_and(s.b) AS ba, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1, 2, 3, 4$q$,
  eval_interval => '1 hour',
  expire_after => '6000 days',
  backfill => 'background') > 0 AS created;

-- [4] delete
DELETE FROM src WHERE t < '2024-03-19' AND id % 2 = 0;

-- [5] alter column type
ALTER TABLE src ALTER COLUMN f TYPE float8 USING f * 2;

-- [6] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (59, '2024-03-09', 'h3', 9, -50, 94.25, NULL),
  (60, '2024-03-21', 'h3', 8, -41, 74.75, false);$dbl$);
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (61, '2024-03-21', 'h3', 4, -45, 48.25, false);$dbl$);
-- check: read_flow of f2 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "k" AS "k", to_char("af"::float8, '9.99999999EEEE') AS "af", "mnh" AS "mnh", "ba" AS "ba", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM flownode.read_flow(NULL::f2_sink)) a WHERE w >= '2000-01-01'
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "k" AS "k", to_char("af"::float8, '9.99999999EEEE') AS "af", "mnh" AS "mnh", "ba" AS "ba", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_bin('1 day', s.t, timestamp '1970-01-01 00:00:00.5') AS w, s.host AS host, lower(s.host) AS lhost, s.k AS k, avg(s.f) AS af, min(s.host) AS mnh, bool_and(s.b) AS ba, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1, 2, 3, 4) q WHERE isfinite(w)) b WHERE w >= '2000-01-01') x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "k" AS "k", to_char("af"::float8, '9.99999999EEEE') AS "af", "mnh" AS "mnh", "ba" AS "ba", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_bin('1 day', s.t, timestamp '1970-01-01 00:00:00.5') AS w, s.host AS host, lower(s.host) AS lhost, s.k AS k, avg(s.f) AS af, min(s.host) AS mnh, bool_and(s.b) AS ba, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1, 2, 3, 4) q WHERE isfinite(w)) b WHERE w >= '2000-01-01'
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "k" AS "k", to_char("af"::float8, '9.99999999EEEE') AS "af", "mnh" AS "mnh", "ba" AS "ba", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM flownode.read_flow(NULL::f2_sink)) a WHERE w >= '2000-01-01') y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f2):
--   read_flow differs from the query:
--   +|2024-03-23 00:00:00.5|h4|h4|2|-1.47500000e+02|h4|t|1
--   +|2024-03-26 00:00:00.5|||8|-1.53000000e+02||f|1
--   +|2024-03-19 00:00:00.5|h3|h3|4|-1.60000000e+01|h3|t|1
--   +|2024-03-26 00:00:00.5|h3|h3|5| 8.30000000e+01|h3|t|1
--   +|2024-03-12 00:00:00.5|h1|h1|9| 1.18000000e+02|h1||1
--   +|2024-03-29 00:00:00.5|h4|h4|1| 8.25000000e+01|h4|f|1
--   +|2024-03-23 00:00:00.5|h4|h4|8| 1.66500000e+02|h4|f|1
--   +|2024-03-30 00:00:00.5|||1|-1.65000000e+01||t|1
--   +|2024-03-25 00:00:00.5|h1|h1|2| 1.85000000e+02|h1||1
--   +|2024-03-31 00:00:00.5|H1|h1|5|-1.28000000e+02|H1|t|1
--   +|2024-03-13 00:00:00.5|h1|h1|3|-1.78500000e+02|h1|t|1
--   +|2024-03-27 00:00:00.5|h0|h0|4|-7.70000000e+01|h0||1
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');
