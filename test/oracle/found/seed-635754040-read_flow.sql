-- flownode oracle: seed 635754040, failure read_flow of flow f1 at step two sessions
-- shrunk to 6 steps (16 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 635754040 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t timestamptz NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id, t)) PARTITION BY RANGE (t);
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM ('2024-02-23 00:00:00+00') TO ('2024-03-08 00:00:00+00');
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM ('2024-03-08 00:00:00+00') TO ('2024-03-22 00:00:00+00');
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM ('2024-03-22 00:00:00+00') TO ('2024-04-05 00:00:00+00');
CREATE TABLE src_pdef PARTITION OF src DEFAULT;
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);
CREATE INDEX ON src (k);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, 'h1', 'r2', true), (2, 'h2', 'r3', true), (3, 'h1', 'r1', false), (4, 'h3', 'r2', false), (5, 'h1', 'r1', false), (6, 'h1', 'r3', false), (8, 'h0', 'r3', true);


-- [3] create_flow f1 (agg_join)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [4] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$DELETE FROM src WHERE id % 2 = 1 AND id % 5 = 3;$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- check: sink of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (TABLE f1_sink) a
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (TABLE f1_sink) a) y) d
ORDER BY 1 LIMIT 12;
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (52, '1992-12-12 15:56:46.007000+00', 'h0', 6, 9, 77.25, NULL),
  (53, '2024-03-10 08:07:59.301000+00', 'h2', 6, -9, -50.75, false);$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- check: sink of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (TABLE f1_sink) a
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (TABLE f1_sink) a) y) d
ORDER BY 1 LIMIT 12;
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (54, '2024-03-17 13:02:58+00', 'h2', 2, -31, 43.5, true),
  (55, '2024-03-31 07:12:07.810123+00', 'H1', 4, -47, -29.5, NULL);$dbl$);
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (56, '2024-03-31 01:23:56.265123+00', 'H1', 1, -24, -32, true),
  (57, '2024-03-14 16:35:48+00', 'h3', 9, -11, -3.25, true),
  (58, '2024-03-28 22:52:57.157123+00', 'h1', 5, -35, -44.75, true);$dbl$);
SELECT dblink_exec('A', $dbl$ROLLBACK;$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- check: sink of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (TABLE f1_sink) a
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (TABLE f1_sink) a) y) d
ORDER BY 1 LIMIT 12;
SELECT dblink_exec('B', $dbl$COMMIT;$dbl$);
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');

-- [5] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('A', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (91, '2024-03-16 21:28:52+00', 'h2', 3, -2, -96, true),
  (92, '2024-03-12 22:59:20+00', '', 2, 6, 43.5, false),
  (93, '2024-03-30 23:52:11+00', NULL, 0, 10, 69.25, NULL),
  (94, '2024-03-13 11:35:06.976000+00', 'H1', 8, 5, 89, false),
  (95, '2024-03-25 23:42:16+00', 'h1', 6, 36, -85.75, NULL);$dbl$);
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (96, '2024-03-20 18:59:36+00', NULL, 2, 23, 0, false);$dbl$);
SELECT dblink_exec('A', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (97, '2024-03-27 11:16:29+00', 'h1', 7, 8, 20.75, false),
  (98, '2024-03-10 05:18:22.744000+00', 'h0', 6, 37, 44.5, false),
  (99, '2024-03-29 09:28:32+00', '', 2, -41, 22.25, NULL),
  (100, '2024-03-27 21:34:41.688000+00', '', 8, -9, -32.25, false),
  (101, '2024-03-14 11:53:29.633000+00', 'h4', 7, 32, 1.75, false);$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_bin('15 minutes', s.t, timestamptz '2000-01-01+05:30') AS w, lower(s.host) AS lhost, json_agg(s.v ORDER BY s.v) AS jv FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1992-12-12 10:45:00-05|h0|[9]
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');
