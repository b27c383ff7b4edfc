-- flownode oracle: seed 637013024, failure read_flow of flow f1 at step read_flow = query
-- shrunk to 6 steps (16 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 637013024 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t timestamptz NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id, t)) PARTITION BY RANGE (t);
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM ('2024-02-23 00:00:00+00') TO ('2024-03-08 00:00:00+00');
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM ('2024-03-08 00:00:00+00') TO ('2024-03-22 00:00:00+00');
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM ('2024-03-22 00:00:00+00') TO ('2024-04-05 00:00:00+00');
CREATE TABLE src_pdef PARTITION OF src DEFAULT;
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, 'h2', 'r1', false), (1, 'H1', 'r1', false), (2, NULL, NULL, false), (3, 'h2', 'r3', true), (4, 'H1', NULL, true), (5, 'h1', 'r2', false), (6, 'h2', 'r2', true), (7, 'h2', 'r3', true), (8, 'h1', NULL, true), (9, 'H1', 'r2', false);


-- [3] create_flow f1 (distinct)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT DISTINCT date_bin('7 minutes', s.t, timestamptz '2001-02-03 04:05:06.789+00') AS w, s.host AS host FROM src s$q$) > 0 AS created;

-- [4] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (25, '2024-03-12 16:00:45.231123+00', 'h3', 0, 30, -82.75, NULL),
  (26, '1993-09-25 21:43:01.881123+00', 'h2', 5, -25, 57, false),
  (27, '2024-03-17 16:47:30.191123+00', 'h2', 2, -29, 96, false),
  (28, '2024-03-27 11:17:04.473000+00', 'h0', 2, 18, 74.25, false),
  (29, '2031-01-01 09:37:03+00', 'H1', 7, -4, 16, NULL),
  (30, '2024-03-10 05:07:47+00', '', 6, -28, -32.5, true),
  (31, '2024-03-23 15:26:52.704000+00', 'h3', 7, -6, -89.75, true),
  (32, '2024-03-31 04:21:32.924123+00', 'h4', 4, 7, -58.25, false);

-- [5] read_flow = query
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "host" AS "host" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host" FROM (SELECT * FROM (SELECT DISTINCT date_bin('7 minutes', s.t, timestamptz '2001-02-03 04:05:06.789+00') AS w, s.host AS host FROM src s) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "host" AS "host" FROM (SELECT * FROM (SELECT DISTINCT date_bin('7 minutes', s.t, timestamptz '2001-02-03 04:05:06.789+00') AS w, s.host AS host FROM src s) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1993-09-25 21:42:06.789+00|h2
