-- flownode oracle: seed 20261206, failure read_flow of flow f1 at step two sessions
-- shrunk to 5 steps (20 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 20261206 --cases 1
-- or run this script as a superuser with psql -X -f on a server with
-- shared_preload_libraries = 'flownode' (\! lines need pg_ctl, pg_dump, PGDATA).
-- Database names below are those of the oracle's run.
\set VERBOSITY verbose
SET timezone = 'Europe/Berlin';

-- [0] extensions
CREATE EXTENSION flownode;
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;


-- [1] source table
CREATE TABLE src (id bigint NOT NULL, t timestamptz NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_trunc('quarter', s.t) AS w, count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, min(s.host) AS mnh FROM src s GROUP BY 1$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (88, '2024-03-26 06:27:55.373000+00', NULL, 6, 37, 59.5, NULL),
  (89, '2024-03-13 10:34:49.626000+00', 'h1', 2, -44, -1.75, NULL),
  (90, '1994-04-05 15:53:45.589123+00', 'H1', 3, 7, -86.75, false);

-- [4] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('A', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (91, '2024-03-14 19:51:57.034000+00', 'h1', 1, 6, 11.5, false),
  (92, '2024-03-11 09:13:21+00', 'h1', 8, -46, 46.75, false),
  (93, '2024-03-10 20:50:57.072000+00', NULL, 7, -8, 26.75, NULL);$dbl$);
SELECT dblink_exec('A', $dbl$DELETE FROM src WHERE id % 2 = 0 AND id % 5 = 2;$dbl$);
SELECT dblink_exec('B', $dbl$UPDATE src SET v = v + 1, f = f + 0.25, b = NOT b WHERE id % 2 = 1 AND id % 3 = 0;$dbl$);
SELECT dblink_exec('A', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (94, '2024-03-30 20:32:51+00', 'h1', 6, -47, -23, false),
  (95, '2024-03-10 07:45:01+00', NULL, 0, -29, 75.75, NULL),
  (96, '2024-03-24 20:08:58.491000+00', 'h4', 9, -17, -76.25, true);$dbl$);
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (97, '1990-03-26 10:27:10+00', 'h2', 8, 5, 29.5, true),
  (98, '1991-03-18 09:00:59.367000+00', 'H1', 6, 30, -53.25, false),
  (99, '2024-03-31 13:46:14.313123+00', 'H1', 4, -38, -84.25, true),
  (100, '2024-03-30 02:51:36.234000+00', 'h1', 7, 50, 20.75, NULL);$dbl$);
SELECT dblink_exec('A', $dbl$COMMIT;$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "mnh" AS "mnh" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "mnh" AS "mnh" FROM (SELECT * FROM (SELECT date_trunc('quarter', s.t) AS w, count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, min(s.host) AS mnh FROM src s GROUP BY 1) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "mnh" AS "mnh" FROM (SELECT * FROM (SELECT date_trunc('quarter', s.t) AS w, count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, min(s.host) AS mnh FROM src s GROUP BY 1) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "mnh" AS "mnh" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1994-04-01 00:00:00+02|1|7|-8.67500000e+01|H1
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');
