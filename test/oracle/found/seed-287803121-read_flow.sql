-- flownode oracle: seed 287803121, failure read_flow of flow f2 at step read_flow = query
-- shrunk to 8 steps (17 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 287803121 --cases 1
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


-- [2] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (1, 1711980600339, NULL, 6, 48, -38.5, true),
  (2, NULL, '', 3, -44, -76, NULL),
  (3, 1926108667000, 'h2', 7, -35, -65, false),
  (4, 1710885796707, NULL, 7, 28, -28.75, true),
  (5, NULL, 'h4', 9, -46, 7.75, true),
  (6, 1711207438000, 'h3', 9, 17, 84.75, true),
  (7, 1710529934833, NULL, 3, 8, -29.25, true),
  (8, 1711752175000, 'h1', 9, 47, 98.5, true),
  (9, 1711464731297, 'h2', 3, 46, -83.5, NULL),
  (10, 1710054262895, 'H1', 8, -33, 25.5, false),
  (11, 1926561404172, '', 0, -21, -58.5, NULL),
  (12, 1711525473046, 'h2', 4, -16, -76.25, false),
  (13, 1711562882236, 'h4', 9, 2, 5.25, true),
  (14, 1709885917000, '', 1, -17, -60.75, false),
  (15, 1710371268724, '', 0, -20, -74.5, NULL),
  (16, 1710087061736, NULL, 8, 50, 57.25, false),
  (17, 1711875541761, 'h0', 0, -29, -38, true),
  (18, 1709900744596, 'h4', 6, 47, -77, true),
  (19, NULL, 'h1', 9, -20, -48, true),
  (20, 1711358088000, 'H1', 1, -27, 1.5, false),
  (21, 1710233206168, 'h3', 8, 47, -11.5, false),
  (22, 772794878565, NULL, 0, -35, -81.5, false);

-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (23, 1710309459356, '', 1, -34, -11.5, NULL),
  (24, 1710055540453, 'h4', 8, 32, 43, false),
  (25, 1711903638448, 'H1', 5, -49, 47.5, false),
  (26, 1711851628603, 'h4', 9, 14, -48, true),
  (27, 636475545000, '', 8, 17, 39.25, NULL),
  (28, 1710986706000, 'h3', 5, 20, 7.5, true),
  (29, 1710725897000, 'h1', 3, -39, 63, true),
  (30, 1710877202262, 'H1', 2, 27, 61.5, true),
  (31, 1710686649000, 'h4', 3, -50, 62.25, false),
  (32, 1711937883429, 'h3', 1, 48, 93.25, true),
  (33, 1710478776000, 'h1', 8, -10, 35.5, NULL);

-- [4] create_flow f1 (global)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, count(DISTINCT s.host) AS dh FROM src s WHERE s.b IS NOT FALSE$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [5] create_flow f2 (agg)
SELECT flownode.create_flow('f2',
  'f2_sink',
  $q$SELECT date_trunc('week', to_timestamp(s.t::float8 / 1000)) AS w, count(s.f) AS nf, json_agg(s.v ORDER BY s.v) AS jv FROM src s WHERE s.b IS NOT FALSE GROUP BY 1$q$,
  eval_interval => '500 milliseconds',
  backfill => 'background') > 0 AS created;

-- [6] savepoint rolled back
BEGIN;
UPDATE src SET v = v + 1, f = f + 0.25, b = NOT b WHERE id % 3 = 1;
SAVEPOINT s1;
DELETE FROM src WHERE id % 11 = 6;
ROLLBACK TO SAVEPOINT s1;
COPY src (id, t, host, k, v, f, b) FROM STDIN;
58	1710047657333	h3	7	13	-33	true
59	1711851358000	h0	5	-7	69.75	\N
60	1711078910000	h3	4	-29	64	false
61	1710009410000	\N	7	17	99.25	false
62	1925688670000	h4	5	22	68.5	\N
63	1710187272000	h2	1	-13	-24.5	false
64	1709948565362	h3	0	30	49	true
65	1710032973455	h4	4	-32	-65.75	false
\.
COMMIT;

-- [7] read_flow = query
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (SELECT count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, count(DISTINCT s.host) AS dh FROM src s WHERE s.b IS NOT FALSE) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (SELECT count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, count(DISTINCT s.host) AS dh FROM src s WHERE s.b IS NOT FALSE) b
    EXCEPT ALL SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- check: sink of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (TABLE f1_sink) a
    EXCEPT ALL SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (SELECT count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, count(DISTINCT s.host) AS dh FROM src s WHERE s.b IS NOT FALSE) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (SELECT count(*) AS n, sum(s.v) AS sv, max(s.f) AS mxf, count(DISTINCT s.host) AS dh FROM src s WHERE s.b IS NOT FALSE) b
    EXCEPT ALL SELECT "n" AS "n", "sv" AS "sv", to_char("mxf"::float8, '9.99999999EEEE') AS "mxf", "dh" AS "dh" FROM (TABLE f1_sink) a) y) d
ORDER BY 1 LIMIT 12;
-- check: read_flow of f2 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "nf" AS "nf", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f2_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "nf" AS "nf", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_trunc('week', to_timestamp(s.t::float8 / 1000)) AS w, count(s.f) AS nf, json_agg(s.v ORDER BY s.v) AS jv FROM src s WHERE s.b IS NOT FALSE GROUP BY 1) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "nf" AS "nf", "jv"::text AS "jv" FROM (SELECT * FROM (SELECT date_trunc('week', to_timestamp(s.t::float8 / 1000)) AS w, count(s.f) AS nf, json_agg(s.v ORDER BY s.v) AS jv FROM src s WHERE s.b IS NOT FALSE GROUP BY 1) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "nf" AS "nf", "jv"::text AS "jv" FROM (SELECT * FROM flownode.read_flow(NULL::f2_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f2):
--   read_flow differs from the query:
--   +|1994-06-27 00:00:00+00|1|[-34]
