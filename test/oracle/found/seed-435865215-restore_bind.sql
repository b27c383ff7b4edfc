-- flownode oracle: seed 435865215, failure restore_bind at step pg_dump and restore
-- shrunk to 4 steps (26 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 435865215 --cases 1
-- or run this script as a superuser with psql -X -f on a server with
-- shared_preload_libraries = 'flownode' (\! lines need pg_ctl, pg_dump, PGDATA).
-- Database names below are those of the oracle's run.
\set VERBOSITY verbose
SET timezone = 'America/New_York';

-- [0] extensions
CREATE EXTENSION flownode;
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;


-- [1] source table
CREATE TABLE src (id bigint NOT NULL, t bigint NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);


-- [2] create_flow f3 (agg)
SELECT flownode.create_flow('f3',
  'f3_sink',
  $q$SELECT date_trunc('day', to_timestamp(s.t::float8 / 1000)) AS w, s.k AS k, count(*) AS n, avg(s.f) AS af, string_agg(s.host, ',' ORDER BY s.host) AS hosts FROM src s GROUP BY 1, 2 HAVING sum(s.v) > -10$q$,
  eval_interval => '500 milliseconds') > 0 AS created;

-- [3] pg_dump and restore
\! pg_dump -h /tmp/DPAE1GiADd -p 22727 -Fc -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_zQM9/oc3_s25.dump -d oc3_s25
\! createdb oc3_s25_r1
\! pg_restore -h /tmp/DPAE1GiADd -p 22727 -j 2 -d oc3_s25_r1 /work/wt/oracle/test/oracle/tmp_check/tmp_test_zQM9/oc3_s25.dump
\c oc3_s25_r1
-- bind the flows the restore left restored (user guide §11)
SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;
SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;
-- FAILED (restore_bind):
--   function pg_catalog.isfinite(bigint) does not exist
