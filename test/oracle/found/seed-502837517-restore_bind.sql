-- flownode oracle: seed 502837517, failure restore_bind at step pg_dump and restore
-- shrunk to 5 steps (11 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 502837517 --cases 1
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
CREATE INDEX ON src (host);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, 'h3', 'r1', true), (1, 'h0', 'r2', false), (2, 'h3', 'r2', true), (3, 'H1', NULL, false), (4, 'h3', 'r2', false), (6, 'h2', 'r1', true), (7, 'H1', 'r3', false), (9, 'h0', NULL, true);


-- [3] create_flow f3 (distinct)
SELECT flownode.create_flow('f3',
  'f3_sink',
  $q$SELECT DISTINCT date_trunc('Day', to_timestamp(s.t::float8 / 1000), 'Australia/Lord_Howe') AS w, s.host AS host FROM src s$q$,
  expire_after => '6000 days') > 0 AS created;

-- [4] pg_dump and restore
\! pg_dump -h /tmp/guAW613hBF -p 23949 -Fp --exclude-table-data public.f3_sink -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc25_s10.dump -d oc25_s10
\! createdb oc25_s10_r1
\! psql -h /tmp/guAW613hBF -p 23949 -X -q -d oc25_s10_r1 -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc25_s10.dump
\c oc25_s10_r1
-- bind the flows the restore left restored (user guide §11)
SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;
SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;
-- FAILED (restore_bind):
--   function pg_catalog.isfinite(bigint) does not exist
