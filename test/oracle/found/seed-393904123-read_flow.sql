-- flownode oracle: seed 393904123, failure read_flow of flow f1 at step read_flow = query
-- shrunk to 5 steps (18 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 393904123 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t timestamp NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] create_flow f1 or_replace
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('45 seconds', s.t, timestamp '1970-01-01 00:00:00.5') AS w, count(*) AS n, max(s.f) AS mxf, min(s.host) AS mnh, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50 FROM src s GROUP BY 1$q$,
  eval_interval => '1 hour',
  or_replace => true) > 0 AS created;

-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (64, '2031-01-25 16:44:15.437000', 'h1', 7, -30, 70.25, true),
  (65, '1993-07-05 20:33:17.963000', 'h1', 9, 34, 63.25, true),
  (66, '1992-01-12 07:59:14.869000', NULL, 8, -47, 28.25, false),
  (67, '2024-03-15 20:04:37', '', 1, -19, 45, false),
  (68, '2024-03-22 03:24:46', 'h1', 0, -7, 84.25, NULL),
  (69, '2024-03-11 02:25:33', '', 9, 16, 78.25, NULL),
  (70, '2024-03-20 05:44:10', '', 5, -38, -53.25, NULL);

-- [4] read_flow = query
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "n" AS "n", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "mnh" AS "mnh", to_char("p50"::float8, '9.99999999EEEE') AS "p50" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "n" AS "n", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "mnh" AS "mnh", to_char("p50"::float8, '9.99999999EEEE') AS "p50" FROM (SELECT * FROM (SELECT date_bin('45 seconds', s.t, timestamp '1970-01-01 00:00:00.5') AS w, count(*) AS n, max(s.f) AS mxf, min(s.host) AS mnh, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50 FROM src s GROUP BY 1) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "n" AS "n", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "mnh" AS "mnh", to_char("p50"::float8, '9.99999999EEEE') AS "p50" FROM (SELECT * FROM (SELECT date_bin('45 seconds', s.t, timestamp '1970-01-01 00:00:00.5') AS w, count(*) AS n, max(s.f) AS mxf, min(s.host) AS mnh, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50 FROM src s GROUP BY 1) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "n" AS "n", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "mnh" AS "mnh", to_char("p50"::float8, '9.99999999EEEE') AS "p50" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1993-07-05 20:33:00.5|1| 6.32500000e+01|h1| 6.32500000e+01
--   +|1992-01-12 07:58:30.5|1| 2.82500000e+01|| 2.82500000e+01
