-- flownode oracle: seed 163649150, failure flush of flow f1 at step final check
-- shrunk to 6 steps (25 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 163649150 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t bigint NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id, t)) PARTITION BY RANGE (t);
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM (1708646400) TO (1709856000);
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM (1709856000) TO (1711065600);
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM (1711065600) TO (1712275200);
CREATE TABLE src_pdef PARTITION OF src DEFAULT;
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);


-- [2] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (1, 1710277593, 'h1', 3, -3, -93.75, false),
  (2, 1710149229, 'h2', 7, 3, -93.25, false),
  (3, 1711790875, 'H1', 9, 6, 9.25, NULL),
  (4, 1709998357, 'h1', 4, -8, -27, false),
  (5, 725947013, 'h3', 4, -21, -10, false),
  (6, 1711846236, 'H1', 5, -24, 98, false),
  (7, 1710196690, NULL, 2, 13, 73, true),
  (8, 1710851197, 'h3', 0, -5, 83.25, false),
  (9, 1711108398, 'h2', 7, 11, 18.5, NULL),
  (10, 1710218493, 'H1', 8, 15, 42, NULL),
  (11, 1710743476, NULL, 6, -16, -79.75, true),
  (12, 1711427449, 'h4', 9, 47, -14.5, NULL),
  (13, 1710473617, 'h1', 5, 49, -77.5, NULL),
  (14, 1710056433, 'H1', 4, 50, 65.25, false),
  (15, 1711853042, 'h3', 9, 2, 30, NULL),
  (16, 1711544255, 'h0', 8, -18, 19.5, NULL),
  (17, 1711441744, '', 7, -14, -34, true),
  (18, 1711994314, 'h1', 1, 18, -86, false),
  (19, 1711556384, 'h2', 0, -43, 40.75, true),
  (20, 1710441927, NULL, 7, -25, -49, NULL),
  (21, 1711557871, 'h4', 4, 2, -22, false),
  (22, 1710333628, NULL, 6, 24, 33.5, NULL),
  (23, 1925827713, 'h4', 7, 39, 61.25, NULL),
  (24, 1710200554, 'h4', 8, -23, -7.75, NULL),
  (25, 1710767445, 'h3', 8, -18, -45.25, false),
  (26, 1711081319, 'h1', 8, 37, -79.75, false),
  (27, 1710185176, NULL, 6, -2, 19, true),
  (28, 1927489937, 'H1', 0, 23, 22, false);

-- [3] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('3 hours 30 minutes', to_timestamp(s.t), timestamptz '1999-12-31 23:59:30+05:30') AS w, (s.v % 3) AS vmod, s.b AS b, json_agg(s.v ORDER BY s.v) AS jv, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1, 2, 3$q$,
  eval_interval => '1 second',
  expire_after => '4000 days') > 0 AS created;

-- [4] alter column type
ALTER TABLE src ALTER COLUMN v TYPE int USING v * 2;

-- [5] final check
-- flush f1
SELECT flownode.flush_flow('f1') >= 0;
-- check: sink of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "vmod" AS "vmod", "b" AS "b", "jv"::text AS "jv", hll_cardinality("hk") AS "hk" FROM (TABLE f1_sink) a WHERE w >= '2000-01-01'
    EXCEPT ALL SELECT "w" AS "w", "vmod" AS "vmod", "b" AS "b", "jv"::text AS "jv", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_bin('3 hours 30 minutes', to_timestamp(s.t), timestamptz '1999-12-31 23:59:30+05:30') AS w, (s.v % 3) AS vmod, s.b AS b, json_agg(s.v ORDER BY s.v) AS jv, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1, 2, 3) q WHERE isfinite(w)) b WHERE w >= '2000-01-01') x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "vmod" AS "vmod", "b" AS "b", "jv"::text AS "jv", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_bin('3 hours 30 minutes', to_timestamp(s.t), timestamptz '1999-12-31 23:59:30+05:30') AS w, (s.v % 3) AS vmod, s.b AS b, json_agg(s.v ORDER BY s.v) AS jv, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1, 2, 3) q WHERE isfinite(w)) b WHERE w >= '2000-01-01'
    EXCEPT ALL SELECT "w" AS "w", "vmod" AS "vmod", "b" AS "b", "jv"::text AS "jv", hll_cardinality("hk") AS "hk" FROM (TABLE f1_sink) a WHERE w >= '2000-01-01') y) d
ORDER BY 1 LIMIT 12;
-- FAILED (flush, f1):
--   after flush_flow the sink differs from the query:
--   +|2024-03-26 02:29:30-04|-1|t|[-28]|1
--   +|2024-04-01 12:29:30-04|0|f|[36]|1
--   +|2024-03-27 06:29:30-04|0||[-36]|1
--   +|2024-03-11 01:59:30-04|0|f|[6]|1
--   +|2024-03-10 00:29:30-05|1|f|[100]|1
--   +|2024-03-30 18:29:30-04|0|f|[-48]|1
--   +|2024-03-14 13:59:30-04|-2||[-50]|1
--   +|2024-03-11 15:59:30-04|2|t|[26]|1
--   +|2024-03-11 12:29:30-04|-1|t|[-4]|1
--   +|2024-03-11 19:29:30-04|-1||[-46]|1
--   +|2024-03-25 22:59:30-04|1||[94]|1
--   +|2024-03-22 07:29:30-04|1||[22]|1
