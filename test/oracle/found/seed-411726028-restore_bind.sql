-- flownode oracle: seed 411726028, failure restore_bind at step pg_dump and restore
-- shrunk to 4 steps (10 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 411726028 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t bigint NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id, t)) PARTITION BY RANGE (t);
CREATE TABLE src_p0 PARTITION OF src FOR VALUES FROM (1708646400) TO (1709856000);
CREATE TABLE src_p1 PARTITION OF src FOR VALUES FROM (1709856000) TO (1711065600);
CREATE TABLE src_p2 PARTITION OF src FOR VALUES FROM (1711065600) TO (1712275200);
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);


-- [2] create_flow f2 (agg)
SELECT flownode.create_flow('f2',
  'f2_sink',
  $q$SELECT date_bin('1 day 2 hours', to_timestamp(s.t), timestamptz '2000-01-01+05:30') AS w, bool_and(s.b) AS ba, json_agg(s.v ORDER BY s.v) AS jv FROM src s WHERE s.k <> 4 GROUP BY 1$q$,
  eval_interval => '1 hour') > 0 AS created;

-- [3] pg_dump and restore
\! pg_dump -h /tmp/s1bYQQXeKH -p 31155 -Fc --exclude-table-data public.f2_sink -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_lBFB/oc3_s9.dump -d oc3_s9
\! createdb oc3_s9_r1
\! pg_restore -h /tmp/s1bYQQXeKH -p 31155 -j 1 -d oc3_s9_r1 /work/wt/oracle/test/oracle/tmp_check/tmp_test_lBFB/oc3_s9.dump
\c oc3_s9_r1
-- bind the flows the restore left restored (user guide §11)
SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;
SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;
-- FAILED (restore_bind):
--   function pg_catalog.isfinite(bigint) does not exist
