-- flownode oracle: seed 514730679, failure restore_bind at step pg_dump and restore
-- shrunk to 4 steps (8 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 514730679 --cases 1
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
CREATE TABLE src_pdef PARTITION OF src DEFAULT;
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] create_flow f2 or_replace
SELECT flownode.create_flow('f2',
  'f2_sink',
  $q$SELECT date_trunc('week', to_timestamp(s.t), 'Australia/Lord_Howe') AS w, s.host AS host, s.k AS k, s.b AS b, min(s.v) AS mnv, string_agg(s.host, ',' ORDER BY s.host) AS hosts FROM src s GROUP BY 1, 2, 3, 4 HAVING sum(s.v) > -10$q$,
  expire_after => '6000 days',
  or_replace => true) > 0 AS created;

-- [3] pg_dump and restore
\! pg_dump -h /tmp/guAW613hBF -p 23949 -Fc --exclude-table-data public.f2_sink -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc46_s7.dump -d oc46_s7
\! createdb oc46_s7_r1
\! pg_restore -h /tmp/guAW613hBF -p 23949 -j 2 -d oc46_s7_r1 /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc46_s7.dump
\c oc46_s7_r1
-- bind the flows the restore left restored (user guide §11)
SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;
SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;
-- FAILED (restore_bind):
--   function pg_catalog.isfinite(bigint) does not exist
