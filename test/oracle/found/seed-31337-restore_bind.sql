-- flownode oracle: seed 31337, failure restore_bind at step pg_dump and restore
-- shrunk to 4 steps (8 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 31337 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t bigint NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);


-- [2] create_flow f3 (agg)
SELECT flownode.create_flow('f3',
  'f3_sink',
  $q$SELECT date_bin('1 hour', to_timestamp(s.t), timestamptz '1999-12-31 23:59:30-03') AS w, (s.v % 3) AS vmod, count(s.f) AS nf, min(s.v) AS mnv, min(s.host) AS mnh, json_agg(s.v ORDER BY s.v) AS jv FROM src s GROUP BY 1, 2 HAVING count(*) > 1$q$,
  eval_interval => '500 milliseconds') > 0 AS created;

-- [3] pg_dump and restore
\! pg_dump -h /tmp/ehrQXVTfAK -p 26235 -Fp -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_xO0O/oc1_s7.dump -d oc1_s7
\! createdb oc1_s7_r1
\! psql -h /tmp/ehrQXVTfAK -p 26235 -X -q -d oc1_s7_r1 -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_xO0O/oc1_s7.dump
\c oc1_s7_r1
-- bind the flows the restore left restored (user guide §11)
SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;
SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;
-- FAILED (restore_bind):
--   function pg_catalog.isfinite(bigint) does not exist
