-- flownode oracle: seed 1638056308, failure read_flow of flow f1 at step read_flow = query
-- shrunk to 7 steps (18 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1638056308 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t timestamptz, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, 'h0', 'r1', true), (2, 'h0', 'r3', true), (3, 'h1', NULL, true), (4, 'H1', 'r3', false), (5, 'h2', NULL, false), (6, 'h0', 'r3', false), (7, 'h2', 'r3', true), (8, 'h0', 'r2', false), (9, 'h0', 'r2', true);


-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (8, '2024-03-17 08:07:17+00', 'h0', 2, 46, -86.75, true),
  (9, '2024-03-27 02:12:56.545123+00', 'h3', 3, -34, -73.5, false),
  (10, '2024-03-19 13:41:19+00', NULL, 6, -26, -5.75, NULL),
  (11, '2024-03-28 10:48:21.668123+00', '', 6, -24, -41.75, true),
  (12, '2024-03-09 22:11:42.800123+00', 'h2', 7, -9, 42.25, true),
  (13, NULL, 'h2', 9, 0, 42.25, true),
  (14, '2024-04-01 13:10:59.086123+00', NULL, 7, -12, -24.5, NULL),
  (15, '2024-03-28 09:29:07+00', 'h1', 5, 6, 14.25, NULL),
  (16, '2024-03-20 08:00:02.985000+00', 'h4', 8, 40, 8.75, NULL),
  (17, '2024-03-10 20:46:54.029000+00', 'h3', 5, 13, -68.75, true),
  (18, '2024-03-17 19:40:41.473000+00', 'h0', 4, 16, 15.75, false),
  (19, '2024-03-10 08:35:16+00', 'h4', 4, 2, -67.25, true),
  (20, '2024-03-08 11:13:49.575000+00', 'h0', 1, 4, 73.5, false),
  (21, '1993-11-06 10:33:11.932123+00', 'h0', 6, 19, -61.25, true),
  (22, '2024-03-24 20:14:11+00', 'h2', 9, -7, -62, NULL),
  (23, '2024-03-31 00:47:24+00', '', 0, -7, 83.5, true),
  (24, '2024-04-01 09:31:59.252000+00', 'h4', 3, 19, -26.5, false);

-- [4] create_flow f1 (agg_join)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_trunc('millennium', s.t) AS w, sum(s.f) AS sf, min(s.v) AS mnv, max(s.f) AS mxf FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1$q$,
  eval_interval => '2 seconds') > 0 AS created;

-- [5] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$DELETE FROM src WHERE id % 2 = 1 AND id % 5 = 1;$dbl$);
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (25, '2024-03-11 18:42:59+00', 'h0', 4, -14, -71, true),
  (26, '2024-03-08 22:07:46+00', 'H1', 7, 38, -21, true),
  (27, '2024-03-28 04:35:15.314000+00', 'h1', 4, 12, -0.5, false),
  (28, '2024-03-29 01:26:27+00', 'h2', 1, 33, -19.5, NULL);$dbl$);
SELECT dblink_exec('A', $dbl$COMMIT;$dbl$);
SELECT dblink_exec('B', $dbl$COMMIT;$dbl$);
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');

-- [6] read_flow = query
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", to_char("sf"::float8, '9.99999999EEEE') AS "sf", "mnv" AS "mnv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", to_char("sf"::float8, '9.99999999EEEE') AS "sf", "mnv" AS "mnv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf" FROM (SELECT * FROM (SELECT date_trunc('millennium', s.t) AS w, sum(s.f) AS sf, min(s.v) AS mnv, max(s.f) AS mxf FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", to_char("sf"::float8, '9.99999999EEEE') AS "sf", "mnv" AS "mnv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf" FROM (SELECT * FROM (SELECT date_trunc('millennium', s.t) AS w, sum(s.f) AS sf, min(s.v) AS mnv, max(s.f) AS mxf FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", to_char("sf"::float8, '9.99999999EEEE') AS "sf", "mnv" AS "mnv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   -|1001-01-01 00:00:00-04:56:02|-6.12500000e+01|19|-6.12500000e+01
