-- flownode oracle: seed 1738381893, failure flush of flow f1 at step final check
-- shrunk to 7 steps (28 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1738381893 --cases 1
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
CREATE INDEX ON src (host);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, NULL, 'r1', false), (1, 'h2', 'r1', true), (2, 'h1', 'r2', false), (3, 'h0', NULL, false), (5, 'h2', 'r3', true), (6, NULL, NULL, true), (7, 'h2', 'r1', true), (8, 'h0', 'r1', true), (9, 'h2', 'r2', false);


-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (1, 1711279828000000, 'h3', 2, -34, -69.25, NULL),
  (2, 1711981932000000, '', 1, -28, -0.25, true),
  (3, NULL, NULL, 9, -35, 30.75, NULL),
  (4, 1709909125000000, 'H1', 9, 38, -0.5, NULL),
  (5, 1711095800000000, 'h0', 0, -22, 91.75, true),
  (6, 1710947062000000, '', 6, 37, 66, false),
  (7, 1711837213000000, 'h1', 5, -13, 58.5, false),
  (8, 1711899627009123, 'h4', 3, -12, 28.5, true),
  (9, 1711180453000000, NULL, 1, -6, -15.75, false),
  (10, NULL, '', 8, 20, 7.25, false),
  (11, 1711848979000000, 'h4', 9, 19, 69, true),
  (12, 1710962045000000, 'h0', 9, 35, 50.75, false),
  (13, 1709981632000000, '', 1, -23, -62.75, false),
  (14, 1711968980000000, 'h1', 6, 43, 74.25, true),
  (15, 1710685195000000, 'H1', 5, 38, 63.25, false),
  (16, 639566156000000, 'h3', 2, -25, -51.5, true),
  (17, 1710293197000000, 'h0', 9, -14, 78.25, false),
  (18, 1710988039459123, 'H1', 3, -16, 16.25, NULL),
  (19, 1711504927083000, 'h2', 6, -16, -33, false),
  (20, 1709886294171123, 'h4', 3, 39, 6.5, false),
  (21, 1710991233000000, 'h0', 7, -32, 5.25, false),
  (22, 675165490000000, 'h4', 4, -34, 81.5, NULL),
  (23, 1710831472000000, 'h0', 2, -6, 81, false),
  (24, 1711880214233000, 'h0', 7, 49, -80, false),
  (25, 1711841402000000, 'h0', 5, -4, 64.5, false),
  (26, 653997933000000, 'h4', 8, 3, 7, NULL);

-- [4] create_flow f1 (agg_join)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('1 hour', to_timestamp(s.t / 1000000.0), timestamptz '2024-03-10 02:30:00-03') AS w, avg(s.v) AS av, min(s.v) AS mnv, string_agg(s.host, ',' ORDER BY s.host) AS hosts, max(d.region) AS mr FROM src s , dim d WHERE s.host = d.host AND s.v > -20 GROUP BY 1$q$,
  eval_interval => '500 milliseconds') > 0 AS created;

-- [5] alter column type
ALTER TABLE src ALTER COLUMN v TYPE int USING v * 2;

-- [6] final check
-- flush f1
SELECT flownode.flush_flow('f1') >= 0;
-- check: sink of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "av" AS "av", "mnv" AS "mnv", "hosts" AS "hosts", "mr" AS "mr" FROM (TABLE f1_sink) a
    EXCEPT ALL SELECT "w" AS "w", "av" AS "av", "mnv" AS "mnv", "hosts" AS "hosts", "mr" AS "mr" FROM (SELECT * FROM (SELECT date_bin('1 hour', to_timestamp(s.t / 1000000.0), timestamptz '2024-03-10 02:30:00-03') AS w, avg(s.v) AS av, min(s.v) AS mnv, string_agg(s.host, ',' ORDER BY s.host) AS hosts, max(d.region) AS mr FROM src s , dim d WHERE s.host = d.host AND s.v > -20 GROUP BY 1) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "av" AS "av", "mnv" AS "mnv", "hosts" AS "hosts", "mr" AS "mr" FROM (SELECT * FROM (SELECT date_bin('1 hour', to_timestamp(s.t / 1000000.0), timestamptz '2024-03-10 02:30:00-03') AS w, avg(s.v) AS av, min(s.v) AS mnv, string_agg(s.host, ',' ORDER BY s.host) AS hosts, max(d.region) AS mr FROM src s , dim d WHERE s.host = d.host AND s.v > -20 GROUP BY 1) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "av" AS "av", "mnv" AS "mnv", "hosts" AS "hosts", "mr" AS "mr" FROM (TABLE f1_sink) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (flush, f1):
--   after flush_flow the sink differs from the query:
--   +|2024-03-20 18:30:00+00|70.0000000000000000|70|h0,h0|r1
--   +|2024-04-01 10:30:00+00|86.0000000000000000|86|h1|r2
--   +|2024-03-19 06:30:00+00|-12.0000000000000000|-12|h0,h0|r1
--   +|2024-03-31 09:30:00+00|98.0000000000000000|98|h0,h0|r1
--   +|2024-03-30 23:30:00+00|-8.0000000000000000|-8|h0,h0|r1
--   -|2024-03-30 21:30:00+00|-13.0000000000000000|-13|h1|r2
--   -|2024-03-31 09:30:00+00|49.0000000000000000|49|h0,h0|r1
--   -|2024-03-19 06:30:00+00|-6.0000000000000000|-6|h0,h0|r1
--   -|2024-03-20 18:30:00+00|35.0000000000000000|35|h0,h0|r1
--   -|2024-03-27 01:30:00+00|-16.0000000000000000|-16|h2,h2,h2,h2|r3
--   -|2024-04-01 10:30:00+00|43.0000000000000000|43|h1|r2
--   -|2024-03-30 23:30:00+00|-4.0000000000000000|-4|h0,h0|r1
