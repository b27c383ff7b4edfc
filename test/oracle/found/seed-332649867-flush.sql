-- flownode oracle: seed 332649867, failure flush of flow f3 at step final check
-- shrunk to 18 steps (40 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 332649867 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t date NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);


-- [2] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (1, '2024-03-31', 'h0', 1, -47, 31, true),
  (2, '2024-03-18', 'H1', 6, 34, -65.75, NULL),
  (3, '2024-03-20', NULL, 8, 36, 64.25, true),
  (4, '2024-03-10', 'H1', 5, -23, 61.5, NULL),
  (5, '1992-09-04', 'h3', 0, -29, -96.25, true),
  (6, '2024-03-21', '', 4, 31, -10.75, NULL),
  (7, '2024-03-15', 'H1', 1, -43, 59.5, false),
  (8, '2024-03-14', 'H1', 0, -27, -14.75, true),
  (9, '2024-03-19', '', 7, -41, -3.25, true),
  (10, '2024-03-25', 'h2', 0, -37, 47.75, true),
  (11, '2024-03-22', 'h3', 7, -34, -69.75, false),
  (12, '2024-03-14', 'h2', 5, -48, -37.75, NULL),
  (13, '2024-03-14', 'h3', 5, -6, 18, NULL),
  (14, '2024-03-12', 'h4', 2, 35, 16, true),
  (15, '2024-03-21', 'h1', 1, -43, -95.25, NULL),
  (16, '2024-03-12', '', 4, 30, 15, false),
  (17, '2024-03-26', NULL, 5, -39, 36.5, false),
  (18, '2024-03-10', 'h1', 5, -23, -98.5, true),
  (19, '2024-03-17', 'h3', 9, 31, 34.75, true);

-- [3] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (20, '2024-03-20', 'h4', 6, -38, -74.75, true),
  (21, '2024-03-22', 'h3', 4, 30, -92.25, true),
  (22, '2024-03-08', 'h3', 6, -35, -58.5, false),
  (23, '2024-03-14', 'h0', 3, 5, -46.75, false),
  (24, '2024-03-12', '', 3, 39, -93, NULL),
  (25, '2024-03-30', 'H1', 2, -30, 82, NULL),
  (26, '2024-03-20', 'h2', 5, -29, -35.25, true),
  (27, '2024-03-14', 'h3', 1, -44, 16.5, true),
  (28, '2024-03-16', NULL, 6, 30, 61.5, false),
  (29, '2024-03-25', 'h1', 7, -44, 79.75, false),
  (30, '2024-03-21', '', 1, 37, -69.5, true),
  (31, '2024-03-19', 'h2', 6, -21, 89.75, false),
  (32, '2024-03-14', 'h0', 3, 43, -83.25, false),
  (33, '2024-03-16', 'h2', 4, 10, 13.5, true),
  (34, '2024-03-25', 'h0', 6, -12, -94.5, false);

-- [4] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (35, '2024-04-01', 'h0', 2, 0, -41, true),
  (36, '2024-03-14', '', 2, -29, 78.25, false),
  (37, '2024-03-27', 'h0', 6, 32, 26.5, false),
  (38, '2024-04-01', '', 7, -17, 80, NULL),
  (39, '2024-03-22', 'h3', 9, -11, -99.5, true),
  (40, '2024-03-22', 'h0', 7, -26, -66, true),
  (41, '2024-03-14', 'h1', 7, 7, -8.25, false),
  (42, '2024-03-08', 'h4', 7, -48, 79.75, false),
  (43, '2024-03-26', 'h3', 5, -8, 36.75, true),
  (44, '2024-03-12', 'h2', 4, -35, 80, true),
  (45, '2024-03-21', 'h4', 9, -49, 51.25, true),
  (46, '2024-03-31', 'h1', 0, -25, 33.75, NULL),
  (47, '2024-03-13', 'h0', 7, -40, -81.75, false),
  (48, '2024-03-18', 'h2', 7, 50, 14.5, true),
  (49, '2024-03-29', NULL, 7, -34, 2.5, false),
  (50, '2024-03-16', 'h1', 1, 4, 18, true),
  (51, '2024-03-25', 'H1', 6, 5, -27.5, true),
  (52, '2024-03-15', 'h2', 0, -7, 49.5, false),
  (53, '2024-03-13', 'h1', 3, 31, -8, true),
  (54, '2024-03-19', 'h4', 8, -6, 42.25, true),
  (55, '2031-01-28', NULL, 0, 34, -39.75, true),
  (56, '2024-03-18', 'h2', 1, 45, 1.75, false);

-- [5] create_flow f1 (copy)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT s.id AS id, s.t AS t, s.host AS host, s.v AS v FROM src s$q$,
  eval_interval => '2 seconds') > 0 AS created;

-- [6] create_flow f2 (distinct)
SELECT flownode.create_flow('f2',
  'f2_sink',
  $q$SELECT DISTINCT date_trunc('milliseconds', s.t, 'Europe/Berlin') AS w, s.host AS host FROM src s$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [7] create_flow f3 (agg)
SELECT flownode.create_flow('f3',
  'f3_sink',
  $q$SELECT date_bin('12 hours', s.t, timestamp '1970-01-01 00:00:00.5') AS w, (s.v % 3) AS vmod, json_agg(s.v ORDER BY s.v) AS jv, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s WHERE s.b IS NOT FALSE GROUP BY 1, 2$q$,
  eval_interval => '1 second') > 0 AS created;

-- [8] rename t
ALTER TABLE src RENAME COLUMN t TO t_r;

-- [9] pg_dump and restore
\! pg_dump -h /tmp/guAW613hBF -p 23949 -Fp --exclude-table-data public.f1_sink --exclude-table-data public.f2_sink --exclude-table-data public.f3_sink -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc16_s12.dump -d oc16_s12
\! createdb oc16_s12_r1
\! psql -h /tmp/guAW613hBF -p 23949 -X -q -d oc16_s12_r1 -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc16_s12.dump
\c oc16_s12_r1
-- bind the flows the restore left restored (user guide §11)
SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;
SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;

-- [10] insert
INSERT INTO src (id, t_r, host, k, v, f, b) VALUES
  (81, '2024-03-18', '', 0, 2, 28, false),
  (82, '2024-03-25', '', 8, -21, -38.5, true),
  (83, '2024-03-28', 'H1', 3, 27, -50.25, false),
  (84, '2024-03-14', 'h3', 6, 11, 28, NULL),
  (85, '2024-03-17', 'h1', 8, -39, 32.75, false),
  (86, '2024-03-31', NULL, 1, 15, -4.5, true);

-- [11] create_flow f2 or_replace
SELECT flownode.create_flow('f2',
  'f2_sink',
  $q$SELECT DISTINCT date_trunc('milliseconds', s.t_r, 'Europe/Berlin') AS w, s.host AS host FROM src s$q$,
  or_replace => true) > 0 AS created;

-- [12] copy
COPY src (id, t_r, host, k, v, f, b) FROM STDIN;
101	2024-03-11	h0	5	-40	72.25	true
102	2024-03-23	h4	4	40	-58.5	true
103	2024-03-08	h4	1	-13	8	\N
\.

-- [13] delete
DELETE FROM src WHERE id % 3 = 1;

-- [14] rolled back transaction
BEGIN;
UPDATE src SET t_r = t_r + (1) WHERE id % 11 = 0;
COPY src (id, t_r, host, k, v, f, b) FROM STDIN;
104	2024-03-31	H1	5	-24	-82.75	true
105	2024-03-16	h4	9	27	-88.75	false
106	1993-09-20	h1	0	13	-68.25	false
107	2024-03-10	H1	5	-48	20	true
\.
ROLLBACK;

-- [15] upsert
INSERT INTO src AS s (id, t_r, host, k, v, f, b) VALUES
  (110, '2024-03-11', '', 9, -25, 54.75, false)
ON CONFLICT (id) DO UPDATE SET t_r = EXCLUDED.t_r, v = s.v + EXCLUDED.v, k = EXCLUDED.k;

-- [16] copy
SET timezone = 'America/New_York';
COPY src (id, t_r, host, k, v, f, b) FROM STDIN;
111	2024-03-29	h3	6	-12	83.75	\N
112	2024-03-09	H1	8	-31	-1	\N
113	1990-11-20		1	8	-63.5	true
114	2024-03-24	h2	7	-10	41.75	\N
115	2024-03-13	h2	3	42	31.25	false
116	2024-03-22	h4	1	-10	37.5	\N
117	2024-03-08	h2	9	36	-96.5	\N
118	2024-03-16	h3	1	12	78.5	\N
119	1991-01-03	\N	0	8	-27	false
120	2024-04-01	H1	3	-37	-99.25	\N
121	2024-03-31		6	7	-37	true
122	2024-03-23	\N	9	-35	2	\N
123	2024-03-10	h4	5	20	6	false
124	2024-03-24		6	-36	32.25	true
125	1990-01-17		3	-30	25	false
126	2024-03-15	\N	9	27	65.5	\N
127	2024-03-16	h3	5	-1	46	\N
128	2024-03-16	h1	3	-44	30.25	\N
129	2024-03-27	h2	1	37	13	true
\.
SET timezone = 'Asia/Kolkata';

-- [17] final check
-- flush f1
SELECT flownode.flush_flow('f1') >= 0;
-- flush f2
SELECT flownode.flush_flow('f2') >= 0;
-- flush f3
SELECT flownode.flush_flow('f3') >= 0;
-- check: sink of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (TABLE f1_sink) a
    EXCEPT ALL SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (SELECT s.id AS id, s.t_r AS t, s.host AS host, s.v AS v FROM src s) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (SELECT s.id AS id, s.t_r AS t, s.host AS host, s.v AS v FROM src s) b
    EXCEPT ALL SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (TABLE f1_sink) a) y) d
ORDER BY 1 LIMIT 12;
-- check: sink of f2 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "host" AS "host" FROM (TABLE f2_sink) a
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host" FROM (SELECT * FROM (SELECT DISTINCT date_trunc('milliseconds', s.t_r, 'Europe/Berlin') AS w, s.host AS host FROM src s) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "host" AS "host" FROM (SELECT * FROM (SELECT DISTINCT date_trunc('milliseconds', s.t_r, 'Europe/Berlin') AS w, s.host AS host FROM src s) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "host" AS "host" FROM (TABLE f2_sink) a) y) d
ORDER BY 1 LIMIT 12;
-- check: sink of f3 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "vmod" AS "vmod", "jv"::text AS "jv", hll_cardinality("hk") AS "hk" FROM (TABLE f3_sink) a
    EXCEPT ALL SELECT "w" AS "w", "vmod" AS "vmod", "jv"::text AS "jv", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_bin('12 hours', s.t_r, timestamp '1970-01-01 00:00:00.5') AS w, (s.v % 3) AS vmod, json_agg(s.v ORDER BY s.v) AS jv, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s WHERE s.b IS NOT FALSE GROUP BY 1, 2) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "vmod" AS "vmod", "jv"::text AS "jv", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_bin('12 hours', s.t_r, timestamp '1970-01-01 00:00:00.5') AS w, (s.v % 3) AS vmod, json_agg(s.v ORDER BY s.v) AS jv, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s WHERE s.b IS NOT FALSE GROUP BY 1, 2) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "vmod" AS "vmod", "jv"::text AS "jv", hll_cardinality("hk") AS "hk" FROM (TABLE f3_sink) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (flush, f3):
--   after flush_flow the sink differs from the query:
--   +|2024-03-19 12:00:00.5|-2|[-38, -29]|2
--   +|2024-03-19 12:00:00.5|0|[36]|1
--   +|2024-03-20 12:00:00.5|1|[31, 37]|2
--   +|1992-09-03 12:00:00.5|-2|[-29]|1
--   +|2024-03-20 12:00:00.5|-1|[-49, -43]|2
