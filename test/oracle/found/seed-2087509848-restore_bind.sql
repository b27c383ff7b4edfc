-- flownode oracle: seed 2087509848, failure restore_bind at step pg_dump and restore
-- shrunk to 5 steps (21 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 2087509848 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t bigint, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);
CREATE INDEX ON src (k);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, 'h1', 'r2', true), (1, NULL, 'r3', true), (2, 'h3', 'r3', false), (3, 'h2', 'r3', true), (4, NULL, 'r2', true), (5, 'h1', 'r2', true), (6, 'h2', 'r2', false), (7, NULL, 'r3', true), (8, 'h0', 'r1', true);


-- [3] create_flow f1 (agg_join)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('1 day 2 hours', to_timestamp(s.t::float8 / 1000), timestamptz '2001-02-03 04:05:06.789+00') AS w, count(s.f) AS nf FROM src s LEFT JOIN dim d ON s.k = d.dk GROUP BY 1$q$,
  eval_interval => '500 milliseconds') > 0 AS created;

-- [4] pg_dump and restore
\! pg_dump -h /tmp/guAW613hBF -p 23949 -Fc -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc33_s20.dump -d oc33_s20
\! createdb oc33_s20_r1
\! pg_restore -h /tmp/guAW613hBF -p 23949 -j 1 -d oc33_s20_r1 /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc33_s20.dump
\c oc33_s20_r1
-- bind the flows the restore left restored (user guide §11)
SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;
SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;
-- FAILED (restore_bind):
--   function pg_catalog.isfinite(bigint) does not exist
