-- flownode oracle: seed 1648766328, failure read_flow of flow f1 at step read_flow = query
-- shrunk to 7 steps (29 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1648766328 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t date NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (1, 'h3', 'r3', false), (2, 'h2', 'r3', true), (3, 'H1', 'r2', true), (4, NULL, NULL, false), (5, 'h2', 'r1', true), (6, 'h0', NULL, true), (7, 'h1', 'r2', true), (9, 'h1', NULL, true);


-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (12, '2024-03-17', 'h2', 3, 0, 89.5, true),
  (13, '2024-03-26', 'h1', 0, 30, -75.5, true),
  (14, '2024-04-01', 'h2', 6, 39, -25.75, NULL),
  (15, '2024-03-19', 'H1', 2, 11, -41, true),
  (16, '1991-07-28', NULL, 0, -28, -55, true),
  (17, '2024-03-31', 'h4', 1, 42, -65.5, true),
  (18, '2024-03-22', 'h1', 3, 27, -25, true),
  (19, '2031-01-22', 'h1', 5, 16, 77, false),
  (20, '2024-03-28', 'H1', 6, 30, -63.75, true),
  (21, '2024-03-29', 'h3', 6, 24, -92.5, true),
  (22, '2024-03-29', 'h0', 7, -11, 39.25, NULL),
  (23, '2024-03-21', 'h3', 4, 12, 93.25, false),
  (24, '2024-03-19', 'h4', 0, -12, -84.25, true),
  (25, '1992-10-12', '', 2, -6, -39.25, false),
  (26, '2024-03-29', 'h4', 5, -2, 0.75, true),
  (27, '2024-03-16', 'h3', 8, -49, 67.25, true),
  (28, '2024-03-31', 'h4', 5, -1, -67, false),
  (29, '2024-03-11', 'h0', 0, -1, -52.75, NULL),
  (30, '2024-03-14', '', 6, 30, -46.25, NULL),
  (31, '2024-03-12', NULL, 7, 43, -24.25, NULL),
  (32, '2024-03-24', 'h3', 7, -17, -5.25, true),
  (33, '2024-03-26', 'h2', 1, 18, -13.5, true),
  (34, '2024-03-23', 'h0', 0, -34, 21.5, false),
  (35, '2024-03-30', 'h4', 8, 28, -81.25, NULL),
  (36, '2024-03-26', NULL, 7, -28, 99.75, true),
  (37, '2024-03-18', NULL, 9, -11, -7.75, NULL),
  (38, '2024-03-10', 'h3', 0, -29, -54.75, false);

-- [4] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('1 day', s.t, timestamp '2024-03-10 02:30:00') AS w, count(*) AS n, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [5] delete
DELETE FROM src WHERE id % 11 = 3;

-- [6] read_flow = query
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "n" AS "n", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "n" AS "n", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_bin('1 day', s.t, timestamp '2024-03-10 02:30:00') AS w, count(*) AS n, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "n" AS "n", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_bin('1 day', s.t, timestamp '2024-03-10 02:30:00') AS w, count(*) AS n, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "n" AS "n", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   -|1992-10-11 02:30:00|1|1
