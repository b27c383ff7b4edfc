-- flownode oracle: seed 1896547320, failure flush of flow f1 at step flush, sink = query
-- shrunk to 6 steps (27 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1896547320 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t bigint NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id, t)) PARTITION BY RANGE (t);
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM (1708646400) TO (1709856000);
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM (1709856000) TO (1711065600);
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM (1711065600) TO (1712275200);
CREATE INDEX ON src (t);


-- [2] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (19, 1711747192, NULL, 8, 32, 19.25, NULL),
  (20, 1710609495, 'H1', 0, 36, 66.25, NULL),
  (21, 1710015364, 'h2', 5, 13, 9.5, NULL),
  (22, 1710036222, 'h0', 0, 41, -53.25, NULL),
  (23, 1710082646, 'H1', 9, 22, -6.25, NULL),
  (24, 1710383385, NULL, 1, -29, 62.75, true),
  (25, 1710952981, 'h0', 1, 26, -36.25, false),
  (26, 1711084129, 'h1', 0, 7, 65.25, true),
  (27, 1710641607, 'h4', 3, -44, 72.5, false),
  (28, 1711710006, 'h4', 8, -22, 72.5, NULL),
  (29, 1710235356, 'h2', 3, 12, -88.25, NULL),
  (30, 1710641278, 'h0', 5, -13, 50.25, true);

-- [3] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('1 day', to_timestamp(s.t), timestamptz '1999-12-31 23:59:30-03') AS w, sum(s.v) AS sv FROM src s GROUP BY 1$q$) > 0 AS created;

-- [4] alter column type
ALTER TABLE src ALTER COLUMN v TYPE int USING v * 2;

-- [5] flush, sink = query
-- flush f1
SELECT flownode.flush_flow('f1') >= 0;
-- check: sink of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "sv" AS "sv" FROM (TABLE f1_sink) a
    EXCEPT ALL SELECT "w" AS "w", "sv" AS "sv" FROM (SELECT * FROM (SELECT date_bin('1 day', to_timestamp(s.t), timestamptz '1999-12-31 23:59:30-03') AS w, sum(s.v) AS sv FROM src s GROUP BY 1) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "sv" AS "sv" FROM (SELECT * FROM (SELECT date_bin('1 day', to_timestamp(s.t), timestamptz '1999-12-31 23:59:30-03') AS w, sum(s.v) AS sv FROM src s GROUP BY 1) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "sv" AS "sv" FROM (TABLE f1_sink) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (flush, f1):
--   after flush_flow the sink differs from the query:
--   +|2024-03-29 08:29:30+05:30|20
--   +|2024-03-22 08:29:30+05:30|14
--   +|2024-03-20 08:29:30+05:30|52
--   +|2024-03-09 08:29:30+05:30|108
--   +|2024-03-10 08:29:30+05:30|44
--   +|2024-03-16 08:29:30+05:30|-42
--   +|2024-03-12 08:29:30+05:30|24
--   +|2024-03-13 08:29:30+05:30|-58
--   -|2024-03-20 08:29:30+05:30|26
--   -|2024-03-29 08:29:30+05:30|10
--   -|2024-03-22 08:29:30+05:30|7
--   -|2024-03-16 08:29:30+05:30|-21
