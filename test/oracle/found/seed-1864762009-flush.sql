-- flownode oracle: seed 1864762009, failure flush of flow f2 at step flush, sink = query
-- shrunk to 6 steps (24 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1864762009 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t timestamptz NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);
CREATE INDEX ON src (k);


-- [2] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (24, '2024-03-10 07:59:37.928000+00', 'h3', 8, 25, -40.25, NULL),
  (25, '2024-03-25 15:13:45.360123+00', '', 0, -38, 21.5, false),
  (26, '2024-03-10 06:28:56.172123+00', 'h2', 7, 23, -28.25, false),
  (27, '2024-03-12 19:58:19.198123+00', 'H1', 3, -39, -81, NULL),
  (28, '2024-03-10 22:03:25+00', 'h3', 9, 31, -87, false),
  (29, '2024-03-15 16:31:39.638123+00', NULL, 0, 22, -31.5, true),
  (30, '2024-03-10 00:39:29.434000+00', 'h0', 6, -50, -82, false),
  (31, '2024-03-31 23:48:02+00', 'h3', 2, -11, 77.75, true);

-- [3] create_flow f2 (agg)
SELECT flownode.create_flow('f2',
  'f2_sink',
  $q$SELECT date_trunc('week', s.t) AS w, avg(s.f) AS af, count(DISTINCT s.k) AS dk, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50 FROM src s GROUP BY 1$q$,
  eval_interval => '500 milliseconds') > 0 AS created;

-- [4] alter column type
ALTER TABLE src ALTER COLUMN f TYPE float8 USING f * 2;

-- [5] flush, sink = query
-- flush f2
SELECT flownode.flush_flow('f2') >= 0;
-- check: sink of f2 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", to_char("af"::float8, '9.99999999EEEE') AS "af", "dk" AS "dk", to_char("p50"::float8, '9.99999999EEEE') AS "p50" FROM (TABLE f2_sink) a
    EXCEPT ALL SELECT "w" AS "w", to_char("af"::float8, '9.99999999EEEE') AS "af", "dk" AS "dk", to_char("p50"::float8, '9.99999999EEEE') AS "p50" FROM (SELECT * FROM (SELECT date_trunc('week', s.t) AS w, avg(s.f) AS af, count(DISTINCT s.k) AS dk, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50 FROM src s GROUP BY 1) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", to_char("af"::float8, '9.99999999EEEE') AS "af", "dk" AS "dk", to_char("p50"::float8, '9.99999999EEEE') AS "p50" FROM (SELECT * FROM (SELECT date_trunc('week', s.t) AS w, avg(s.f) AS af, count(DISTINCT s.k) AS dk, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50 FROM src s GROUP BY 1) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", to_char("af"::float8, '9.99999999EEEE') AS "af", "dk" AS "dk", to_char("p50"::float8, '9.99999999EEEE') AS "p50" FROM (TABLE f2_sink) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (flush, f2):
--   after flush_flow the sink differs from the query:
--   +|2024-03-04 00:00:00-05|-1.18750000e+02|4|-1.22250000e+02
--   +|2024-03-25 00:00:00-04| 9.92500000e+01|2| 9.92500000e+01
--   +|2024-03-11 00:00:00-04|-1.12500000e+02|2|-1.12500000e+02
--   -|2024-03-11 00:00:00-04|-5.62500000e+01|2|-5.62500000e+01
--   -|2024-03-25 00:00:00-04| 4.96250000e+01|2| 4.96250000e+01
--   -|2024-03-04 00:00:00-05|-5.93750000e+01|4|-6.11250000e+01
