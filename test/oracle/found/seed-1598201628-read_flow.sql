-- flownode oracle: seed 1598201628, failure read_flow of flow f1 at step two sessions
-- shrunk to 5 steps (12 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1598201628 --cases 1
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
CREATE INDEX ON src (k);


-- [2] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_trunc('quarter', to_timestamp(s.t / 1000000.0), 'Asia/Kolkata') AS w, count(*) AS n, count(DISTINCT s.k) AS dk, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50, json_agg(s.v ORDER BY s.v) AS jv FROM src s GROUP BY 1$q$,
  eval_interval => '500 milliseconds') > 0 AS created;

-- [3] savepoint rolled back
BEGIN;
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (17, 1710596304000000, 'h3', 0, -26, 7.75, NULL),
  (18, 1711498534628123, 'h4', 2, 13, 59.25, NULL),
  (19, 738793365878000, 'h1', 4, 33, -75, false),
  (20, 1711535441591123, 'h1', 2, 18, -92.75, true),
  (21, NULL, '', 6, -23, 31.25, false),
  (22, 1711690225113123, 'H1', 0, -27, -51.75, NULL),
  (23, 1710134432248000, 'H1', 7, 6, -32.75, false);
SAVEPOINT s1;
COPY src (id, t, host, k, v, f, b) FROM STDIN;
24	1711845788000000		8	-13	42.5	false
25	1711634897000000	H1	6	3	-85.5	false
26	1711976168000000	h3	8	-49	41.75	false
27	1710356202907000	H1	1	24	-56.5	true
28	1709868644000000	h3	9	49	-7.75	false
29	1711585034000000	h4	1	4	83.75	false
30	1711303719909000	h3	6	-47	-64.75	false
31	1710286970000000	h4	5	34	57.25	false
32	1711722790344000	h3	2	-30	-24	true
33	1711746397316123	h0	3	18	49	false
34	1710253808000000	H1	2	-37	-9.75	false
35	1711214561000000	\N	3	-11	-42	false
36	1711985581822123	h1	6	30	-43.25	false
37	1710725089928000	h1	2	23	-92.75	true
38	1711488436545000	h2	5	27	63.75	false
39	1711850994000000	h3	6	41	-89.5	true
40	1711653426000000	H1	3	6	49	\N
41	1711008444000000		1	-29	-51.75	true
42	784220224262000	h4	9	27	-28.5	true
\.
ROLLBACK TO SAVEPOINT s1;
DELETE FROM src WHERE t < 1710935220000000 AND id % 2 = 0;
COMMIT;

-- [4] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('A', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (43, 1711577633000000, 'h3', 7, 22, 28.75, false);$dbl$);
SELECT dblink_exec('B', $dbl$INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (44, 1710010666434000, 'h3', 0, 18, 55, NULL);$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "n" AS "n", "dk" AS "dk", to_char("p50"::float8, '9.99999999EEEE') AS "p50", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "n" AS "n", "dk" AS "dk", to_char("p50"::float8, '9.99999999EEEE') AS "p50", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_trunc('quarter', to_timestamp(s.t / 1000000.0), 'Asia/Kolkata') AS w, count(*) AS n, count(DISTINCT s.k) AS dk, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50, json_agg(s.v ORDER BY s.v) AS jv FROM src s GROUP BY 1) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "n" AS "n", "dk" AS "dk", to_char("p50"::float8, '9.99999999EEEE') AS "p50", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_trunc('quarter', to_timestamp(s.t / 1000000.0), 'Asia/Kolkata') AS w, count(*) AS n, count(DISTINCT s.k) AS dk, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50, json_agg(s.v ORDER BY s.v) AS jv FROM src s GROUP BY 1) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "n" AS "n", "dk" AS "dk", to_char("p50"::float8, '9.99999999EEEE') AS "p50", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1993-03-31 18:30:00+00|1|1|-7.50000000e+01|[33]
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');
