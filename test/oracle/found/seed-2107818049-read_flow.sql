-- flownode oracle: seed 2107818049, failure read_flow of flow f2 at step two sessions
-- shrunk to 7 steps (14 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 2107818049 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t timestamptz, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);
CREATE INDEX ON src (k);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, 'h2', 'r2', false), (1, 'h1', 'r2', false), (2, 'H1', 'r1', true), (3, NULL, NULL, true), (4, NULL, 'r3', true), (5, 'h3', NULL, true), (6, NULL, 'r1', true), (7, NULL, NULL, false), (8, NULL, NULL, true);


-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (1, '2024-03-13 18:10:08.453000+00', '', 6, 30, 89.25, true),
  (2, '2024-03-08 17:01:42+00', NULL, 5, -31, -71.25, false),
  (3, '2024-03-19 09:32:57.866000+00', 'H1', 1, -47, -84.25, NULL),
  (4, '2024-03-29 16:19:54+00', NULL, 3, 2, 93.25, NULL),
  (5, '2024-03-08 12:28:17+00', '', 7, -24, 68.5, true),
  (6, '2024-03-16 04:07:45+00', 'h0', 4, -36, 31.75, NULL),
  (7, '2024-03-21 07:58:14.480000+00', 'h0', 6, -34, 46.75, NULL),
  (8, '2024-03-09 22:30:24+00', 'h3', 1, 49, 89.5, NULL),
  (9, '2024-03-10 06:05:16.546000+00', 'h2', 7, 5, 67.25, true),
  (10, '2024-03-30 01:56:24+00', 'h1', 3, -11, -75.25, false),
  (11, '2031-01-17 09:26:56+00', NULL, 0, 44, 62.25, NULL),
  (12, '2024-03-22 01:29:06.540000+00', 'h0', 6, 18, -82, false),
  (13, '2024-03-30 17:16:31+00', '', 3, 48, 94.75, true),
  (14, '2024-03-16 12:34:22+00', 'h3', 3, -4, -3.75, false),
  (15, '2024-03-14 10:21:56+00', 'h1', 9, 45, -78.75, true),
  (16, '2024-03-14 23:21:17+00', NULL, 7, 3, 60.75, false),
  (17, '2024-03-22 07:43:07+00', 'h2', 9, 7, 78.75, true),
  (18, '2024-03-30 17:29:10.597123+00', 'H1', 6, -12, 98.5, false),
  (19, '2024-03-31 00:58:16+00', 'h3', 4, 46, -79.25, false),
  (20, '2024-03-25 11:13:43+00', 'h1', 2, 13, 86, NULL),
  (21, '2031-01-14 18:33:03+00', '', 1, -43, 94.25, false),
  (22, NULL, 'h3', 1, -27, -38.25, false),
  (23, '2024-03-31 00:01:54.120123+00', 'h1', 2, -39, -35, true),
  (24, '2024-03-13 17:48:14.849000+00', NULL, 0, 13, -65, false),
  (25, '2024-03-13 05:28:17+00', '', 0, -50, -53.5, true),
  (26, '1994-03-03 11:44:11.710000+00', 'h1', 9, 42, -42.5, false),
  (27, '2024-03-14 21:15:46.318000+00', 'h2', 5, 18, -38.5, false),
  (28, '2024-03-11 10:44:41.743000+00', '', 2, -19, 26.75, true),
  (29, '2024-03-18 16:28:01+00', 'h1', 3, 27, -85.75, NULL),
  (30, '2024-03-26 16:31:38.364000+00', '', 5, 10, 31.5, NULL);

-- [4] create_flow f2 (agg_join)
SELECT flownode.create_flow('f2',
  'f2_sink',
  $q$SELECT date_trunc('hours', s.t, 'Europe/Berlin') AS w, s.host AS host, lower(s.host) AS lhost, s.b AS b, min(s.v) AS mnv, count(DISTINCT s.k) AS dk, string_agg(s.host, ',' ORDER BY s.host) AS hosts FROM src s JOIN dim d ON s.host = d.host GROUP BY 1, 2, 3, 4$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [5] update
SET timezone = 'America/New_York';
UPDATE src SET t = t + interval '604800 seconds 250 milliseconds' WHERE id % 3 = 2;
SET timezone = 'UTC';

-- [6] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (31, '2024-03-10 05:26:21.473123+00', 'h2', 8, 26, -64.25, false);$dbl$);
-- check: read_flow of f2 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "b" AS "b", "mnv" AS "mnv", "dk" AS "dk", "hosts" AS "hosts" FROM (SELECT * FROM flownode.read_flow(NULL::f2_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "b" AS "b", "mnv" AS "mnv", "dk" AS "dk", "hosts" AS "hosts" FROM (SELECT * FROM (SELECT date_trunc('hours', s.t, 'Europe/Berlin') AS w, s.host AS host, lower(s.host) AS lhost, s.b AS b, min(s.v) AS mnv, count(DISTINCT s.k) AS dk, string_agg(s.host, ',' ORDER BY s.host) AS hosts FROM src s JOIN dim d ON s.host = d.host GROUP BY 1, 2, 3, 4) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "b" AS "b", "mnv" AS "mnv", "dk" AS "dk", "hosts" AS "hosts" FROM (SELECT * FROM (SELECT date_trunc('hours', s.t, 'Europe/Berlin') AS w, s.host AS host, lower(s.host) AS lhost, s.b AS b, min(s.v) AS mnv, count(DISTINCT s.k) AS dk, string_agg(s.host, ',' ORDER BY s.host) AS hosts FROM src s JOIN dim d ON s.host = d.host GROUP BY 1, 2, 3, 4) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "b" AS "b", "mnv" AS "mnv", "dk" AS "dk", "hosts" AS "hosts" FROM (SELECT * FROM flownode.read_flow(NULL::f2_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f2):
--   read_flow differs from the query:
--   +|1994-03-10 11:00:00+00|h1|h1|f|42|1|h1
--   -|1994-03-03 11:00:00+00|h1|h1|f|42|1|h1
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');
