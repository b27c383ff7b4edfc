-- flownode oracle: seed 2115249135, failure flush of flow f2 at step final check
-- shrunk to 5 steps (18 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 2115249135 --cases 1
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
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM (1708646400000000) TO (1709856000000000);
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM (1709856000000000) TO (1711065600000000);
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM (1711065600000000) TO (1712275200000000);
CREATE TABLE src_pdef PARTITION OF src DEFAULT;
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);


-- [2] create_flow f2 (global)
SELECT flownode.create_flow('f2',
  'f2_sink',
  $q$SELECT count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, count(DISTINCT s.host) AS dh FROM src s$q$,
  eval_interval => '1 second') > 0 AS created;

-- [3] truncate
TRUNCATE src;

-- [4] final check
-- flush f2
SELECT flownode.flush_flow('f2') >= 0;
-- check: sink of f2 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (TABLE f2_sink) a
    EXCEPT ALL SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (SELECT count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, count(DISTINCT s.host) AS dh FROM src s) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (SELECT count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, count(DISTINCT s.host) AS dh FROM src s) b
    EXCEPT ALL SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (TABLE f2_sink) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (flush, f2):
--   after flush_flow the sink differs from the query:
--   +|0|||0
