-- flownode oracle: seed 1460990241, failure restore_bind at step pg_dump and restore
-- shrunk to 5 steps (8 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1460990241 --cases 1
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


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (2, 'h1', 'r3', false), (3, NULL, 'r3', true), (4, 'H1', NULL, true), (5, 'h2', 'r3', false), (6, 'h2', 'r2', false), (7, 'h0', 'r1', true), (8, 'h0', 'r2', false), (9, NULL, 'r2', false);


-- [3] create_flow f3 (agg)
SELECT flownode.create_flow('f3',
  'f3_sink',
  $q$SELECT date_trunc('month', to_timestamp(s.t)) AS w, lower(s.host) AS lhost, sum(s.f) AS sf, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50 FROM src s GROUP BY 1, 2$q$) > 0 AS created;

-- [4] pg_dump and restore
\! pg_dump -h /tmp/DPAE1GiADd -p 22727 -Fc --exclude-table-data public.f3_sink -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_zQM9/oc21_s7.dump -d oc21_s7
\! createdb oc21_s7_r1
\! pg_restore -h /tmp/DPAE1GiADd -p 22727 -j 1 -d oc21_s7_r1 /work/wt/oracle/test/oracle/tmp_check/tmp_test_zQM9/oc21_s7.dump
\c oc21_s7_r1
-- bind the flows the restore left restored (user guide §11)
SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;
SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;
-- FAILED (restore_bind):
--   function pg_catalog.isfinite(bigint) does not exist
