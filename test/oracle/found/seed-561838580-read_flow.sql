-- flownode oracle: seed 561838580, failure read_flow of flow f1 at step read_flow = query
-- shrunk to 6 steps (25 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 561838580 --cases 1
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


-- [2] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (31, '2024-03-31 13:41:52+00', 'h3', 6, -2, 70.75, true),
  (32, '2024-03-22 09:13:55.007123+00', 'h0', 7, -43, 33.75, false),
  (33, '2024-03-13 23:12:55.488000+00', 'H1', 0, -30, -79.5, true),
  (34, '2024-03-17 12:12:45+00', 'h4', 6, -29, -64, true),
  (35, '2024-03-11 18:44:50+00', 'h2', 9, -35, -24.75, false),
  (36, '2024-03-10 06:44:22.713123+00', 'h3', 6, 49, 28, true),
  (37, '2024-03-19 13:50:25.865000+00', '', 3, -2, -7.75, true),
  (38, '2024-03-19 07:06:02+00', 'h0', 0, 46, 15, true),
  (39, '2024-04-01 16:58:15.479000+00', 'h0', 4, -26, 0, true),
  (40, '2024-03-10 06:54:58+00', 'h3', 2, -32, -38.75, true),
  (41, '2024-03-22 06:52:19+00', NULL, 0, 49, 88.75, true),
  (42, '2024-03-28 19:43:11+00', NULL, 9, -9, 40, NULL),
  (43, '2024-03-27 16:12:34.205123+00', 'h2', 9, 43, 41.5, true),
  (44, '2024-03-24 13:02:08+00', '', 4, 33, -20.75, NULL),
  (45, '2024-03-12 08:08:26+00', 'h3', 2, -48, -48.25, NULL),
  (46, '1990-03-24 22:39:03.385000+00', '', 2, 50, -95.25, true),
  (47, '2024-03-19 21:30:54+00', '', 1, 3, -1.5, false),
  (48, '2024-03-30 16:51:10.635000+00', NULL, 3, 26, -66.75, true),
  (49, '2024-03-25 21:39:27+00', 'h4', 5, 26, 63.75, true),
  (50, '2024-03-17 15:59:47.783000+00', 'h4', 7, -26, 51.75, false),
  (51, '2024-03-25 11:07:02+00', 'h1', 6, 50, -75.5, NULL),
  (52, '2024-03-15 03:47:35+00', '', 5, 42, -91, false),
  (53, '2024-03-09 10:37:02+00', 'h4', 0, -15, 24.25, false),
  (54, '2024-03-30 04:46:54.270000+00', 'h2', 2, -24, -34, false),
  (55, '2024-03-28 22:23:27.088000+00', 'h2', 4, -22, -69.5, true),
  (56, '2024-03-12 18:55:07.483123+00', 'h3', 0, -32, 12, NULL),
  (57, '2024-03-26 14:02:57+00', 'H1', 1, -45, 0.75, true),
  (58, '2024-03-15 09:42:29+00', 'h0', 1, -25, 53.75, false);

-- [3] create_flow f1 (copy)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT s.id AS id, s.t AS t, s.host AS host, s.v AS v FROM src s$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [4] upsert
INSERT INTO src AS s (id, t, host, k, v, f, b) VALUES
  (59, '2024-03-13 23:40:28.289000+00', 'h1', 0, -33, 97.5, false),
  (26, '2024-03-10 20:45:06.331000+00', '', 6, 2, -20, NULL),
  (46, '2024-03-08 16:33:50+00', 'h4', 2, 17, 4, false)
ON CONFLICT (id) DO UPDATE SET t = EXCLUDED.t, v = s.v + EXCLUDED.v, k = EXCLUDED.k;

-- [5] read_flow = query
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (SELECT * FROM (SELECT s.id AS id, s.t AS t, s.host AS host, s.v AS v FROM src s) q WHERE isfinite(t)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (SELECT * FROM (SELECT s.id AS id, s.t AS t, s.host AS host, s.v AS v FROM src s) q WHERE isfinite(t)) b
    EXCEPT ALL SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   -|46|1990-03-24 17:39:03.385-05||50
