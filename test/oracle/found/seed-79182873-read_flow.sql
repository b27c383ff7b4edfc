-- flownode oracle: seed 79182873, failure read_flow of flow f1 at step read_flow = query
-- shrunk to 5 steps (20 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 79182873 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t bigint, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);


-- [2] create_flow f1 (agg)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_trunc('minute', to_timestamp(s.t / 1000000.0)) AS w, bool_and(s.b) AS ba, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [3] copy
COPY src (id, t, host, k, v, f, b) FROM STDIN;
69	1710423807265123	h1	1	36	59.75	false
70	\N	h4	5	42	33	\N
71	1711435042000000	H1	2	-24	-27	\N
72	1709913960000000	H1	1	-40	-23	true
73	706434657000000	h1	5	10	-47.25	\N
74	1710119555000000	\N	9	39	12.75	true
75	1710915609653000	h3	5	49	-97	false
76	1711410832745123	h2	6	5	24.5	false
77	1711841487000000	\N	6	25	19.75	false
78	1710404881786000	H1	0	-24	94.75	\N
\.

-- [4] read_flow = query
-- check: read_flow of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "w" AS "w", "ba" AS "ba", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a
    EXCEPT ALL SELECT "w" AS "w", "ba" AS "ba", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_trunc('minute', to_timestamp(s.t / 1000000.0)) AS w, bool_and(s.b) AS ba, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1) q WHERE isfinite(w)) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "w" AS "w", "ba" AS "ba", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM (SELECT date_trunc('minute', to_timestamp(s.t / 1000000.0)) AS w, bool_and(s.b) AS ba, hll_add_agg(hll_hash_integer(s.k)) AS hk FROM src s GROUP BY 1) q WHERE isfinite(w)) b
    EXCEPT ALL SELECT "w" AS "w", "ba" AS "ba", hll_cardinality("hk") AS "hk" FROM (SELECT * FROM flownode.read_flow(NULL::f1_sink)) a) y) d
ORDER BY 1 LIMIT 12;
-- FAILED (read_flow, f1):
--   read_flow differs from the query:
--   +|1992-05-21 13:20:00+05:30||1
