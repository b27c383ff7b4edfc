-- flownode oracle: seed 134736882, failure read_flow of flow f1 at step two sessions
-- shrunk to 5 steps (21 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 134736882 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t timestamp, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);
CREATE INDEX ON src (k);


-- [2] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_trunc('hours', s.t) AS w, s.host AS host, count(*) AS n, avg(s.f) AS af, string_agg(s.host, ',' ORDER BY s.host) AS hosts FROM src s WHERE s.b IS NOT FALSE GROUP BY 1, 2$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [3] savepoint rolled back
BEGIN;
UPDATE src SET v = v + 1, f = f + 0.25, b = NOT b WHERE id % 2 = 0;
SAVEPOINT s1;
MERGE INTO src s USING (VALUES
  (64::bigint, '2024-03-10 06:44:28.498123'::timestamp, 'h0'::text, 2::int, 25::int, -23.25::float8, true::bool),
  (35::bigint, '2024-03-25 20:51:25.478000'::timestamp, 'h2'::text, 6::int, -39::int, -96.5::float8, true::bool)) AS x(id, t, host, k, v, f, b) ON s.id = x.id
WHEN MATCHED AND x.v > 0 THEN UPDATE SET t = x.t, v = x.v, host = x.host
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED THEN INSERT (id, t, host, k, v, f, b) VALUES (x.id, x.t, x.host, x.k, x.v, x.f, x.b);
ROLLBACK TO SAVEPOINT s1;
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (65, '2024-03-31 06:02:05.751000', 'H1', 1, 14, -60.5, NULL),
  (66, '1991-10-31 23:45:12.939000', 'h4', 3, -34, 39.5, true),
  (67, '2024-03-24 11:33:28.869000', 'H1', 4, -43, 37, NULL),
  (68, '2024-03-25 17:22:39.235000', 'h1', 9, -26, 62.75, NULL),
  (69, '2024-03-08 02:11:08.633123', NULL, 4, 19, -73.5, true),
  (70, '2024-03-18 19:15:40', 'H1', 8, -29, 86.75, false);
COMMIT;

-- [4] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('A', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (115, NULL, 'h0', 9, -42, 29.75, true),
  (116, '2024-03-31 11:36:06.916123', 'h2', 5, 48, -13.5, NULL),
  (117, '2024-03-09 05:49:28.514000', 'H1', 9, -44, -81.75, NULL),
  (118, '2024-03-28 03:16:51', NULL, 9, -22, -7.75, true);$dbl$);
SELECT dblink_exec('A', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (119, '2024-04-01 10:46:11.901000', 'h2', 8, 28, 54.5, true);$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "n" AS "n", to_char("af"::float8, '9.99999999EEEE') AS "af", "hosts" AS "hosts" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "n" AS "n", to_char("af"::float8, '9.99999999EEEE') AS "af", "hosts" AS "hosts" FROM (SELECT * FROM (SELECT date_trunc('hours', s.t) AS w, s.host AS host, count(*) AS n, avg(s.f) AS af, string_agg(s.host, ',' ORDER BY s.host) AS hosts FROM src s WHERE s.b IS NOT FALSE GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "n" AS "n", to_char("af"::float8, '9.99999999EEEE') AS "af", "hosts" AS "hosts" FROM (SELECT * FROM (SELECT date_trunc('hours', s.t) AS w, s.host AS host, count(*) AS n, avg(s.f) AS af, string_agg(s.host, ',' ORDER BY s.host) AS hosts FROM src s WHERE s.b IS NOT FALSE GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "n" AS "n", to_char("af"::float8, '9.99999999EEEE') AS "af", "hosts" AS "hosts" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1991-10-31 23:00:00|h4|1| 3.95000000e+01|h4
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');
