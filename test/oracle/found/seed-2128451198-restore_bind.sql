-- flownode oracle: seed 2128451198, failure restore_bind at step pg_dump and restore
-- shrunk to 5 steps (11 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 2128451198 --cases 1
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
CREATE TABLE src (id bigint NOT NULL, t bigint NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (host);
CREATE INDEX ON src (k);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, 'h3', 'r3', false), (1, 'H1', 'r1', false), (3, 'h2', 'r3', false), (4, 'H1', 'r3', true), (5, 'h2', 'r3', true), (6, NULL, 'r1', true), (7, NULL, NULL, false), (8, NULL, NULL, true), (9, 'H1', 'r2', true);


-- [3] create_flow f1 (agg_join)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT date_bin('1 day', to_timestamp(s.t), timestamptz '2001-02-03 04:05:06.789-03') AS w, s.k AS k, max(d.region) AS mr FROM src s LEFT JOIN dim d ON s.k = d.dk AND d.active GROUP BY 1, 2$q$,
  expire_after => '6000 days') > 0 AS created;

-- [4] pg_dump and restore
\! pg_dump -h /tmp/guAW613hBF -p 23949 -Fc --exclude-table-data public.f1_sink -f /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc83_s10.dump -d oc83_s10
\! createdb oc83_s10_r1
\! pg_restore -h /tmp/guAW613hBF -p 23949 -j 1 -d oc83_s10_r1 /work/wt/oracle/test/oracle/tmp_check/tmp_test_8tgD/oc83_s10.dump
\c oc83_s10_r1
-- bind the flows the restore left restored (user guide §11)
SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;
SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;
-- FAILED (restore_bind):
--   function pg_catalog.isfinite(bigint) does not exist
