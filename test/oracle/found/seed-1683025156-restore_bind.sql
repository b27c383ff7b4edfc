-- flownode oracle: seed 1683025156, failure restore_bind at step pg_dump and restore
-- shrunk to 5 steps (7 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1683025156 --cases 1
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


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, 'H1', 'r1', true), (1, NULL, NULL, true), (2, 'h0', 'r3', false), (3, 'h2', 'r3', false), (4, 'h2', 'r1', true), (6, 'H1', NULL, true), (7, 'h2', 'r2', true), (8, 'h3', 'r2', true), (9, NULL, 'r2', true);


-- [3] create_flow f1 (agg_join)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_trunc('hour', to_timestamp(s.t::float8 / 1000)) AS w, s.host AS host, count(s.f) AS nf, bool_and(s.b) AS ba, count(DISTINCT s.k) AS dk FROM src s JOIN dim d ON s.host = d.host GROUP BY 1, 2$q$,
  eval_interval => '2 seconds') > 0 AS created;

-- [4] pg_dump and restore
\! pg_dump -h /tmp/guAW613hBF -p 23949 -Fc --exclude-table-data public.f1_sink -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc87_s6.dump -d oc87_s6
\! createdb oc87_s6_r1
\! pg_restore -h /tmp/guAW613hBF -p 23949 -j 2 -d oc87_s6_r1 /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc87_s6.dump
\c oc87_s6_r1
-- bind the flows the restore left restored (user guide §11)
SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;
SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;
-- FAILED (restore_bind):
--   function pg_catalog.isfinite(bigint) does not exist
