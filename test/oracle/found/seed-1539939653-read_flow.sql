-- flownode oracle: seed 1539939653, failure read_flow of flow f3 at step read_flow = query
-- shrunk to 5 steps (16 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1539939653 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t date NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id, t)) PARTITION BY RANGE (t);
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM ('2024-02-23') TO ('2024-03-08');
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM ('2024-03-08') TO ('2024-03-22');
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM ('2024-03-22') TO ('2024-04-05');
CREATE TABLE src_pdef PARTITION OF src DEFAULT;
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] create_flow f3 (agg)
SELECT flownode.create_flow('f3',
  'f3_sink',
  $q$SELECT date_bin('1 day', s.t, timestamp '1999-12-31 23:59:30') AS w, s.host AS host, s.b AS b, sum(s.f) AS sf FROM src s GROUP BY 1, 2, 3$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (57, '2024-03-12', 'H1', 1, -43, -40.5, true),
  (58, '1994-01-15', 'h0', 2, 32, -34.5, NULL),
  (59, '2024-03-08', NULL, 4, -50, 46.75, NULL),
  (60, '2024-03-28', NULL, 2, -48, 16.5, false),
  (61, '2024-03-20', 'h3', 8, -15, 32, true),
  (62, '2024-03-27', NULL, 7, -37, 76.75, NULL),
  (63, '2024-03-31', 'h4', 5, -40, -38.75, true);

-- [4] read_flow = query
-- check: read_flow of f3 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "b" AS "b", to_char("sf"::float8, '9.99999999EEEE') AS "sf" FROM (SELECT * FROM flownode.read_flow(NULL::f3_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "b" AS "b", to_char("sf"::float8, '9.99999999EEEE') AS "sf" FROM (SELECT * FROM (SELECT date_bin('1 day', s.t, timestamp '1999-12-31 23:59:30') AS w, s.host AS host, s.b AS b, sum(s.f) AS sf FROM src s GROUP BY 1, 2, 3) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "b" AS "b", to_char("sf"::float8, '9.99999999EEEE') AS "sf" FROM (SELECT * FROM (SELECT date_bin('1 day', s.t, timestamp '1999-12-31 23:59:30') AS w, s.host AS host, s.b AS b, sum(s.f) AS sf FROM src s GROUP BY 1, 2, 3) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "b" AS "b", to_char("sf"::float8, '9.99999999EEEE') AS "sf" FROM (SELECT * FROM flownode.read_flow(NULL::f3_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f3):
--   read_flow differs from the query:
--   +|1994-01-14 23:59:30|h0||-3.45000000e+01
