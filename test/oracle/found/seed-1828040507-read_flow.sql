-- flownode oracle: seed 1828040507, failure read_flow of flow f1 at step read_flow = query
-- shrunk to 5 steps (8 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1828040507 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t bigint, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);


-- [2] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_trunc('year', to_timestamp(s.t / 1000.0)) AS w, lower(s.host) AS lhost, count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s WHERE s.host IS DISTINCT FROM 'h3' GROUP BY 1, 2$q$,
  eval_interval => '1 second',
  backfill => 'background') > 0 AS created;

-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (22, 1711860445460, 'h0', 9, -34, -71.25, true),
  (23, 1711084826000, 'h3', 9, -3, -26, true),
  (24, 1710029818000, 'h3', 8, -17, -19.5, false),
  (25, 1711490353105, 'h2', 4, 28, -50.75, false),
  (26, 1711473019000, 'H1', 6, 20, -27, false),
  (27, 1710398678297, NULL, 4, 23, 75.5, NULL),
  (28, 1710686860503, 'h3', 5, -46, 22, NULL),
  (29, 1710049269000, 'h0', 0, -6, -90.5, false),
  (30, 1710927064265, 'h3', 1, 47, -40.25, true),
  (31, 1710761808158, 'h0', 3, -33, 25.25, true),
  (32, 639632471054, 'h4', 9, -24, 75.75, NULL),
  (33, 1710685901000, 'h0', 4, 25, 75.5, true);

-- [4] read_flow = query
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_trunc('year', to_timestamp(s.t / 1000.0)) AS w, lower(s.host) AS lhost, count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s WHERE s.host IS DISTINCT FROM 'h3' GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_trunc('year', to_timestamp(s.t / 1000.0)) AS w, lower(s.host) AS lhost, count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s WHERE s.host IS DISTINCT FROM 'h3' GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1990-01-01 00:00:00+00|h4|1|-24| 7.57500000e+01|1
