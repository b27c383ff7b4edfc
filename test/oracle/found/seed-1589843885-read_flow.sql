-- flownode oracle: seed 1589843885, failure read_flow of flow f1 at step two sessions
-- shrunk to 5 steps (20 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1589843885 --cases 1
-- or run this script as a superuser with psql -X -f on a server with
-- shared_preload_libraries = 'flownode' (\! lines need pg_ctl, pg_dump, PGDATA).
-- Database names below are those of the oracle's run.
\set VERBOSITY verbose
SET timezone = 'Asia/Kolkata';

-- [0] extensions
CREATE EXTENSION flownode;
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;


-- [1] source table
CREATE TABLE src (id bigint NOT NULL, t timestamp NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id, t)) PARTITION BY RANGE (t);
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM ('2024-02-23 00:00:00') TO ('2024-03-08 00:00:00');
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM ('2024-03-08 00:00:00') TO ('2024-03-22 00:00:00');
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM ('2024-03-22 00:00:00') TO ('2024-04-05 00:00:00');
CREATE TABLE src_pdef PARTITION OF src DEFAULT;
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);


-- [2] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_trunc('decade', s.t) AS w, lower(s.host) AS lhost, s.k AS k, s.b AS b, sum(s.v) AS sv, avg(s.v) AS av FROM src s GROUP BY 1, 2, 3, 4$q$) > 0 AS created;

-- [3] merge
MERGE INTO src s USING (VALUES
  (22::bigint, '2024-03-17 03:33:17'::timestamp, 'h3'::text, 4::int, -48::int, 51.25::float8, true::bool),
  (2::bigint, '2024-03-30 05:47:05.540000'::timestamp, 'h0'::text, 5::int, -40::int, 40::float8, NULL::bool),
  (8::bigint, '2024-03-22 13:56:21.559000'::timestamp, 'h1'::text, 0::int, 2::int, -14.25::float8, true::bool),
  (29::bigint, '2024-03-09 14:38:22.432000'::timestamp, 'h2'::text, 1::int, -15::int, 4.5::float8, false::bool),
  (3::bigint, '1992-10-27 08:44:30'::timestamp, 'h1'::text, 8::int, 30::int, 64::float8, false::bool),
  (30::bigint, '2024-03-21 19:00:29.677000'::timestamp, NULL::text, 0::int, 7::int, -38.75::float8, NULL::bool)) AS x(id, t, host, k, v, f, b) ON s.id = x.id
WHEN MATCHED AND x.v > 0 THEN UPDATE SET t = x.t, v = x.v, host = x.host
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED THEN INSERT (id, t, host, k, v, f, b) VALUES (x.id, x.t, x.host, x.k, x.v, x.f, x.b);

-- [4] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (31, '2024-03-20 19:30:48', 'h2', 7, 26, 65.75, true);$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "k" AS "k", "b" AS "b", "sv" AS "sv", "av" AS "av" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "k" AS "k", "b" AS "b", "sv" AS "sv", "av" AS "av" FROM (SELECT * FROM (SELECT date_trunc('decade', s.t) AS w, lower(s.host) AS lhost, s.k AS k, s.b AS b, sum(s.v) AS sv, avg(s.v) AS av FROM src s GROUP BY 1, 2, 3, 4) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "lhost" AS "lhost", "k" AS "k", "b" AS "b", "sv" AS "sv", "av" AS "av" FROM (SELECT * FROM (SELECT date_trunc('decade', s.t) AS w, lower(s.host) AS lhost, s.k AS k, s.b AS b, sum(s.v) AS sv, avg(s.v) AS av FROM src s GROUP BY 1, 2, 3, 4) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "lhost" AS "lhost", "k" AS "k", "b" AS "b", "sv" AS "sv", "av" AS "av" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1990-01-01 00:00:00|h1|8|f|30|30.0000000000000000
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');
