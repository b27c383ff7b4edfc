-- flownode oracle: seed 1789980197, failure read_flow of flow f1 at step read_flow = query
-- shrunk to 6 steps (14 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1789980197 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t bigint, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (1, 1710085461, '', 1, -17, -14.75, NULL),
  (2, 1711127092, 'h3', 6, -5, -3.5, false),
  (3, 1711795690, 'H1', 8, -8, 92.25, false),
  (4, 1710631328, NULL, 3, -2, 81.5, false),
  (5, 1711850951, 'h2', 2, 41, 17.25, true),
  (6, 1711612746, 'h2', 0, -27, 61, false),
  (7, 1711261890, 'h4', 6, -28, -84.75, true),
  (8, 1710401316, 'h3', 8, -50, -95, false),
  (9, 1711738244, 'H1', 9, 50, 45, true),
  (10, 1711337079, '', 5, -11, -34.5, true),
  (11, 1710592120, 'H1', 8, -7, -54.25, false),
  (12, 1710660140, 'h2', 6, -7, -90, NULL),
  (13, 1710170360, 'h3', 7, 15, -28.75, true),
  (14, 1710023020, 'h1', 9, -30, -5.75, false),
  (15, 1710317991, '', 8, 5, 86.25, true),
  (16, 1710418092, 'h2', 5, 33, 90.75, NULL),
  (17, 649711652, 'h0', 7, 2, 92, NULL),
  (18, NULL, 'h4', 4, 50, -74.75, NULL),
  (19, 1926574231, '', 6, -33, -42.75, false),
  (20, 1710057181, 'h4', 3, -31, -8.75, false),
  (21, 1711310534, 'h4', 1, 26, 36, true),
  (22, 1710389148, 'h4', 2, 11, -87, NULL),
  (23, 1711862811, 'h1', 0, -2, -87.25, NULL),
  (24, 1710229943, 'H1', 4, 44, 34.5, false),
  (25, 1925037997, 'h0', 7, 5, 90.5, NULL);

-- [3] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('1 day', to_timestamp(s.t), timestamptz '1970-01-01 00:00:00.5+05:30') AS w, lower(s.host) AS lhost, (s.v % 3) AS vmod, count(*) AS n, sum(s.f) AS sf, count(DISTINCT s.k) AS dk, json_agg(s.v ORDER BY s.v) AS jv FROM src s GROUP BY 1, 2, 3$q$) > 0 AS created;

-- [4] update
UPDATE src SET t = t + (-3600) WHERE id % 2 = 1;

-- [5] read_flow = query
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "vmod" AS "vmod", "n" AS "n", to_char("sf"::float8, '9.99999999EEEE') AS "sf", "dk" AS "dk", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "vmod" AS "vmod", "n" AS "n", to_char("sf"::float8, '9.99999999EEEE') AS "sf", "dk" AS "dk", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('1 day', to_timestamp(s.t), timestamptz '1970-01-01 00:00:00.5+05:30') AS w, lower(s.host) AS lhost, (s.v % 3) AS vmod, count(*) AS n, sum(s.f) AS sf, count(DISTINCT s.k) AS dk, json_agg(s.v ORDER BY s.v) AS jv FROM src s GROUP BY 1, 2, 3) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "vmod" AS "vmod", "n" AS "n", to_char("sf"::float8, '9.99999999EEEE') AS "sf", "dk" AS "dk", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('1 day', to_timestamp(s.t), timestamptz '1970-01-01 00:00:00.5+05:30') AS w, lower(s.host) AS lhost, (s.v % 3) AS vmod, count(*) AS n, sum(s.f) AS sf, count(DISTINCT s.k) AS dk, json_agg(s.v ORDER BY s.v) AS jv FROM src s GROUP BY 1, 2, 3) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "vmod" AS "vmod", "n" AS "n", to_char("sf"::float8, '9.99999999EEEE') AS "sf", "dk" AS "dk", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1990-08-02 20:30:00.5+02|h0|2|1| 9.20000000e+01|1|[2]
--   -|1990-08-03 20:30:00.5+02|h0|2|1| 9.20000000e+01|1|[2]
