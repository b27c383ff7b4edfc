-- flownode oracle: seed 10960907, failure read_flow of flow f1 at step two sessions
-- shrunk to 6 steps (14 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 10960907 --cases 1
-- or run this script as a superuser with psql -X -f on a server with
-- shared_preload_libraries = 'flownode' (\! lines need pg_ctl, pg_dump, PGDATA).
-- Database names below are those of the oracle's run.
\set VERBOSITY verbose
SET timezone = 'Europe/Berlin';

-- [0] extensions
CREATE EXTENSION flownode;
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;


-- [1] source table
CREATE TABLE src (id bigint NOT NULL, t timestamptz NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, 'h3', NULL, false), (1, 'h3', 'r2', false), (3, 'h3', 'r3', true), (4, 'h1', 'r3', true), (5, 'h2', 'r1', false), (7, 'h2', 'r1', true), (9, 'h0', 'r1', true);


-- [3] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('7 minutes', s.t, timestamptz '2000-01-01+00') AS w, s.host AS host, lower(s.host) AS lhost, s.b AS b, count(*) AS n, count(s.f) AS nf, avg(s.v) AS av FROM src s WHERE s.b IS NOT FALSE GROUP BY 1, 2, 3, 4 HAVING max(s.f) IS NOT NULL$q$,
  eval_interval => '2 seconds') > 0 AS created;

-- [4] savepoint rolled back
BEGIN;
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (45, '2024-03-11 04:29:25.538000+00', 'h3', 7, -10, -11.5, false),
  (46, '2024-03-12 15:35:23+00', 'h0', 3, 9, -62.5, false),
  (47, '2024-04-01 01:02:10+00', 'h4', 7, -46, -85.25, false),
  (48, '2024-03-25 01:39:15.775000+00', 'h1', 7, -28, -88.75, false),
  (49, '2024-03-08 01:44:16+00', '', 7, -13, -39.5, false),
  (50, '2024-03-21 04:14:09+00', 'h3', 2, 26, 16, false),
  (51, '1990-02-02 19:33:14+00', 'h3', 9, -2, -77.5, NULL),
  (52, '2024-03-12 14:04:27.554123+00', 'h1', 7, -26, -6.5, NULL);
SAVEPOINT s1;
UPDATE src SET host = 'h4', k = (k + 1) % 10 WHERE id % 2 = 0;
ROLLBACK TO SAVEPOINT s1;
COPY src (id, t, host, k, v, f, b) FROM STDIN;
53	2024-03-24 05:51:45.513000+00	h3	0	13	59.5	\N
54	1990-08-07 11:37:31+00	h2	8	35	80	true
55	2024-03-08 20:48:58+00	h0	7	49	-30.75	false
56	2024-03-10 06:50:14+00	h1	8	32	-12.5	true
57	2024-03-11 08:25:44+00	h3	8	8	-45.25	false
58	1993-08-23 08:05:23.720123+00	h1	9	23	98.75	false
59	2024-03-14 06:52:17+00	\N	7	-46	8.25	false
60	2024-03-29 14:25:18+00	h1	4	-39	92.75	\N
61	2031-01-03 03:26:12.170000+00	h0	4	-19	21	true
62	2024-03-09 07:55:15+00	h1	5	-27	65.5	true
63	2024-03-10 06:28:03+00	h3	2	-35	23.75	true
64	2024-03-10 10:06:37+00	h0	1	48	21.25	\N
65	2024-03-29 18:33:02.920000+00	h2	7	-37	33	true
66	2024-03-21 11:26:38+00	h2	0	-46	91	false
67	2024-03-31 00:49:34.158123+00	h2	8	-22	-46.5	true
68	2024-03-31 00:02:00.711123+00	h2	2	-34	90.75	\N
69	2024-03-10 06:25:46+00	H1	4	0	23.75	true
70	2031-01-24 19:26:54+00	h1	1	-26	-13.25	true
\.
COMMIT;

-- [5] two sessions
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('A', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('B', 'dbname=' || current_database() || ' port=' || current_setting('port') || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('A', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('B', $dbl$BEGIN;$dbl$);
SELECT dblink_exec('A', $dbl$DELETE FROM src WHERE id % 2 = 0 AND id % 5 = 3;$dbl$);
SELECT dblink_exec('A', $dbl$UPDATE src SET host = 'h3', k = (k + 1) % 10 WHERE id % 2 = 0 AND id % 3 = 2;$dbl$);
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "b" AS "b", "n" AS "n", "nf" AS "nf", "av" AS "av" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "b" AS "b", "n" AS "n", "nf" AS "nf", "av" AS "av" FROM (SELECT * FROM (SELECT date_bin('7 minutes', s.t, timestamptz '2000-01-01+00') AS w, s.host AS host, lower(s.host) AS lhost, s.b AS b, count(*) AS n, count(s.f) AS nf, avg(s.v) AS av FROM src s WHERE s.b IS NOT FALSE GROUP BY 1, 2, 3, 4 HAVING max(s.f) IS NOT NULL) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "b" AS "b", "n" AS "n", "nf" AS "nf", "av" AS "av" FROM (SELECT * FROM (SELECT date_bin('7 minutes', s.t, timestamptz '2000-01-01+00') AS w, s.host AS host, lower(s.host) AS lhost, s.b AS b, count(*) AS n, count(s.f) AS nf, avg(s.v) AS av FROM src s WHERE s.b IS NOT FALSE GROUP BY 1, 2, 3, 4 HAVING max(s.f) IS NOT NULL) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host", "lhost" AS "lhost", "b" AS "b", "n" AS "n", "nf" AS "nf", "av" AS "av" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1990-02-02 20:27:00+01|h3|h3||1|1|-2.0000000000000000
--   +|1990-08-07 13:32:00+02|h2|h2|t|1|1|35.0000000000000000
SELECT dblink_disconnect('A');
SELECT dblink_disconnect('B');
