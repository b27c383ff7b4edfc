-- flownode oracle: seed 1748023116, failure read_flow of flow f2 at step read_flow = query
-- shrunk to 5 steps (19 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1748023116 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t bigint, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] create_flow f2 (agg)
SELECT flownode.create_flow('f2',
  'f2_sink',
  $q$SELECT date_trunc('hours', to_timestamp(s.t)) AS w, s.b AS b, count(*) AS n, count(s.f) AS nf, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50, tdigest(s.f, 100) AS td FROM src s GROUP BY 1, 2$q$) > 0 AS created;

-- [3] savepoint rolled back
BEGIN;
DELETE FROM src WHERE id % 2 = 0;
SAVEPOINT s1;
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (9, 1711993331, 'h3', 0, -39, -11.5, false),
  (10, 1710757800, '', 2, 11, 99.75, NULL),
  (11, 1710505034, 'h0', 4, 33, -76.25, true),
  (12, 643214663, 'h2', 8, -1, 49.75, NULL),
  (13, 761416429, 'H1', 4, -20, 32, NULL),
  (14, 1709879707, 'h1', 5, -13, 89.25, true),
  (15, 1711848975, 'h1', 3, -38, 60, NULL),
  (16, 1711843753, 'h2', 4, -48, -48.75, true),
  (17, 1711613106, NULL, 7, 29, 73.5, NULL),
  (18, 1710461913, 'h0', 4, -9, -40, true);
ROLLBACK TO SAVEPOINT s1;
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (19, 1711460270, 'h1', 2, -20, 15.5, true),
  (20, 1711949031, 'H1', 0, 41, 56, NULL),
  (21, 1711903297, 'h4', 1, -14, -80, true),
  (22, 1711848389, '', 0, -1, -67.5, false),
  (23, 647618380, '', 7, -6, -47.5, true);
COMMIT;

-- [4] read_flow = query
-- check: read_flow of f2 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "b" AS "b", "n" AS "n", "nf" AS "nf", to_char("p50"::float8, '9.99999999EEEE') AS "p50", (SELECT to_char(tdigest_percentile(z, 0.5), '9.99999999EEEE') FROM (VALUES ("td")) v(z)) AS "td" FROM (SELECT * FROM flownode.read_flow(NULL::f2_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "b" AS "b", "n" AS "n", "nf" AS "nf", to_char("p50"::float8, '9.99999999EEEE') AS "p50", (SELECT to_char(tdigest_percentile(z, 0.5), '9.99999999EEEE') FROM (VALUES ("td")) v(z)) AS "td" FROM (SELECT * FROM (SELECT date_trunc('hours', to_timestamp(s.t)) AS w, s.b AS b, count(*) AS n, count(s.f) AS nf, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50, tdigest(s.f, 100) AS td FROM src s GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "b" AS "b", "n" AS "n", "nf" AS "nf", to_char("p50"::float8, '9.99999999EEEE') AS "p50", (SELECT to_char(tdigest_percentile(z, 0.5), '9.99999999EEEE') FROM (VALUES ("td")) v(z)) AS "td" FROM (SELECT * FROM (SELECT date_trunc('hours', to_timestamp(s.t)) AS w, s.b AS b, count(*) AS n, count(s.f) AS nf, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50, tdigest(s.f, 100) AS td FROM src s GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "b" AS "b", "n" AS "n", "nf" AS "nf", to_char("p50"::float8, '9.99999999EEEE') AS "p50", (SELECT to_char(tdigest_percentile(z, 0.5), '9.99999999EEEE') FROM (VALUES ("td")) v(z)) AS "td" FROM (SELECT * FROM flownode.read_flow(NULL::f2_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f2):
--   read_flow differs from the query:
--   +|1990-07-10 09:00:00-04|t|1|1|-4.75000000e+01|-4.75000000e+01
