-- flownode oracle: seed 349357191, failure read_flow of flow f1 at step read_flow = query
-- shrunk to 5 steps (15 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 349357191 --cases 1
-- or run this script as a superuser with psql -X -f on a server with
-- shared_preload_libraries = 'flownode' (\! lines need pg_ctl, pg_dump, PGDATA).
-- Database names below are those of the oracle's run.
\set VERBOSITY verbose
SET timezone = 'Asia/Kolkata';

-- [0] extensions
CREATE EXTENSION flownode;
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;


-- [1] source table
CREATE TABLE src (id bigint NOT NULL, t timestamp NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id, t)) PARTITION BY RANGE (t);
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM ('2024-02-23 00:00:00') TO ('2024-03-08 00:00:00');
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM ('2024-03-08 00:00:00') TO ('2024-03-22 00:00:00');
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM ('2024-03-22 00:00:00') TO ('2024-04-05 00:00:00');
CREATE TABLE src_pdef PARTITION OF src DEFAULT;
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('90 seconds', s.t, timestamp '2000-01-01') AS w, s.host AS host, (s.v % 3) AS vmod, s.b AS b, count(*) AS n, avg(s.v) AS av, max(s.f) AS mxf FROM src s GROUP BY 1, 2, 3, 4$q$,
  eval_interval => '2 seconds') > 0 AS created;

-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (43, '2024-03-16 00:12:49', '', 1, 34, -9.5, true),
  (44, '2024-03-12 08:20:56.706000', 'H1', 8, 18, 44.75, false),
  (45, '2024-03-13 13:56:04.404123', 'h2', 2, -8, -47, true),
  (46, '2024-03-13 12:16:45.715000', 'h2', 7, -2, 54.25, false),
  (47, '2024-03-17 17:39:17', 'h0', 5, -5, 36.5, true),
  (48, '1992-03-10 21:49:11', NULL, 9, 49, 2.75, false);

-- [4] read_flow = query
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "vmod" AS "vmod", "b" AS "b", "n" AS "n", "av" AS "av", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "vmod" AS "vmod", "b" AS "b", "n" AS "n", "av" AS "av", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf" FROM (SELECT * FROM (SELECT date_bin('90 seconds', s.t, timestamp '2000-01-01') AS w, s.host AS host, (s.v % 3) AS vmod, s.b AS b, count(*) AS n, avg(s.v) AS av, max(s.f) AS mxf FROM src s GROUP BY 1, 2, 3, 4) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "vmod" AS "vmod", "b" AS "b", "n" AS "n", "av" AS "av", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf" FROM (SELECT * FROM (SELECT date_bin('90 seconds', s.t, timestamp '2000-01-01') AS w, s.host AS host, (s.v % 3) AS vmod, s.b AS b, count(*) AS n, avg(s.v) AS av, max(s.f) AS mxf FROM src s GROUP BY 1, 2, 3, 4) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "vmod" AS "vmod", "b" AS "b", "n" AS "n", "av" AS "av", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1992-03-10 21:48:00||1|f|1|49.0000000000000000| 2.75000000e+00
