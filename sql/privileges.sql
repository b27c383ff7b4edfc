-- Invariant 6 (docs/internals.md §2) for roles: a flow gives nobody more than they had.
SET timezone = 'UTC';
CREATE ROLE fn_alice NOLOGIN;
CREATE ROLE fn_bob LOGIN;
-- both may create flows (flow_rights.sql tests who may)
GRANT EXECUTE ON FUNCTION flownode.create_flow TO fn_alice, fn_bob;
CREATE SCHEMA alice_space AUTHORIZATION fn_alice;
CREATE SCHEMA locked;
-- a table owned by an admin, readable by alice only through a grant
CREATE TABLE shared_src (ts timestamptz NOT NULL, host text NOT NULL, v int);
INSERT INTO shared_src SELECT timestamptz '2024-01-01' + i * interval '1 minute', 'h' || (i % 3), i
  FROM generate_series(0, 179) i;
GRANT SELECT, INSERT, UPDATE, DELETE ON shared_src TO fn_alice, fn_bob;

SET ROLE fn_alice;
-- SELECT alone is not enough: installing the marking trigger needs TRIGGER
SELECT flownode.create_flow('alice_flow', 'alice_space.sink',
  $$SELECT date_trunc('hour', ts) AS h, host, sum(v) AS total FROM shared_src GROUP BY 1, 2$$,
  eval_interval => '1 hour');
RESET ROLE;
GRANT TRIGGER ON shared_src TO fn_alice;
REVOKE SELECT ON shared_src FROM fn_bob;

SET ROLE fn_alice;
-- a schema alice cannot create in
SELECT flownode.create_flow('alice_flow', 'locked.sink',
  $$SELECT date_trunc('hour', ts) AS h, host, sum(v) AS total FROM shared_src GROUP BY 1, 2$$,
  eval_interval => '1 hour');
-- nor in public (PostgreSQL 15 grants no CREATE there)
SELECT flownode.create_flow('alice_flow', 'public.flow_diff_sink',
  $$SELECT date_trunc('hour', ts) AS h, host, sum(v) AS total FROM shared_src GROUP BY 1, 2$$,
  eval_interval => '1 hour');
RESET ROLE;
CREATE TABLE readonly_sink (h timestamptz, host text, total bigint, PRIMARY KEY (h, host));
GRANT SELECT, INSERT ON readonly_sink TO fn_alice;
SET ROLE fn_alice;
SELECT flownode.create_flow('alice_flow', 'public.readonly_sink',
  $$SELECT date_trunc('hour', ts) AS h, host, sum(v) AS total FROM shared_src GROUP BY 1, 2$$,
  eval_interval => '1 hour');
-- into her own schema: the sink is hers
SELECT flownode.create_flow('alice_flow', 'alice_space.sink',
  $$SELECT date_trunc('hour', ts) AS h, host, sum(v) AS total FROM shared_src GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT tableowner FROM pg_tables WHERE schemaname = 'alice_space' AND tablename = 'sink';
SELECT flow_name, owner FROM flownode.flows;
-- the catalog itself (with the query text) is not readable
SELECT count(*) FROM flownode.flow;

-- bob: cannot see, flush, drop or replace alice's flow, nor read through it
SET ROLE fn_bob;
SELECT count(*) AS visible_flows FROM flownode.flows;
SELECT count(*) AS visible_status FROM flownode.flow_status();
SELECT flownode.flush_flow('alice_flow');
SELECT flownode.drop_flow('alice_flow');
SELECT flownode.create_flow('alice_flow', 'x', 'SELECT 1', or_replace => true);
SELECT count(*) FROM alice_space.sink;
-- bob cannot create a flow over a table he cannot read
SELECT flownode.create_flow('bob_flow', 'bob_sink',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM shared_src GROUP BY 1$$,
  eval_interval => '1 hour');
-- but his writes to the source still reach alice's flow
INSERT INTO shared_src VALUES ('2024-01-01 00:30', 'h1', 1000);
RESET ROLE;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'alice_flow';
-- the marking function is public (trigger WHEN clauses run with the writer's
-- EXECUTE right), but marks nothing for a role that cannot write the table
CREATE ROLE fn_carol NOLOGIN;
SET ROLE fn_carol;
SELECT flownode.mark_row('shared_src'::regclass, 1::int2, timestamptz '2024-01-01 02:30');
SELECT flownode.mark_row_removed('shared_src'::regclass, 1::int2, timestamptz '2024-01-01 02:30', NULL);
RESET ROLE;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'alice_flow';
DROP ROLE fn_carol;

-- the worker writes as alice: a sink column defaulting to current_user shows it
SET ROLE fn_alice;
CREATE TABLE alice_space.audited (h timestamptz, n bigint, written_by name DEFAULT current_user, PRIMARY KEY (h));
SELECT flownode.create_flow('audited', 'alice_space.audited',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM shared_src GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
INSERT INTO shared_src VALUES ('2024-01-01 01:30', 'h1', 1);
SELECT flownode.flush_flow('audited'), flownode.flush_flow('alice_flow');
SELECT h, n, written_by FROM alice_space.audited ORDER BY h;
RESET ROLE;
SELECT flow_diff('alice_flow');

-- a revoked privilege makes the flow fail visibly; the grant heals it
REVOKE SELECT ON shared_src FROM fn_alice;
INSERT INTO shared_src VALUES ('2024-01-01 02:30', 'h2', 5);
SET ROLE fn_alice;
SELECT flownode.flush_flow('alice_flow');
SELECT state, last_error, last_error_sqlstate, last_error_at IS NOT NULL AS error_at_known
  FROM flownode.flows WHERE flow_name = 'alice_flow';
-- the failure is in her run history, with its SQLSTATE (insufficient_privilege)
SELECT kind, succeeded, sqlstate, error FROM flownode.runs
 WHERE flow_name = 'alice_flow' ORDER BY started_at DESC LIMIT 1;
RESET ROLE;
GRANT SELECT ON shared_src TO fn_alice;
SET ROLE fn_alice;
SELECT flownode.flush_flow('alice_flow') > 0 AS healed;
-- healed: no current error any more; the last failure is kept in the history
SELECT state, last_error, last_error_sqlstate, last_error_at, consecutive_failures
  FROM flownode.flows WHERE flow_name = 'alice_flow';
SELECT kind, succeeded, sqlstate, started_at BETWEEN now() - interval '1 minute' AND clock_timestamp() AS recent
  FROM flownode.runs WHERE flow_name = 'alice_flow' ORDER BY started_at DESC LIMIT 2;
RESET ROLE;
SELECT flow_diff('alice_flow');

-- row-level security on the source applies to the owner's flow like any query of hers
ALTER TABLE shared_src ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_h0 ON shared_src FOR SELECT TO fn_alice USING (host = 'h0');
CREATE POLICY writes ON shared_src FOR INSERT TO fn_alice, fn_bob WITH CHECK (true);
-- (the hour marked whole: key marks would recompute only the groups h1 and h0)
SET flownode.key_marks_per_window = 0;
INSERT INTO shared_src VALUES ('2024-01-01 00:45', 'h1', 7), ('2024-01-01 00:46', 'h0', 7);
RESET flownode.key_marks_per_window;
SET ROLE fn_alice;
SELECT flownode.flush_flow('alice_flow') > 0 AS refreshed;
-- the refreshed hour now holds only what alice may read
SELECT DISTINCT host FROM alice_space.sink WHERE h = '2024-01-01 00:00+00' ORDER BY 1;
RESET ROLE;
ALTER TABLE shared_src DISABLE ROW LEVEL SECURITY;

-- hostile names work exactly as written, and nothing in them is executed
CREATE TABLE "Weird ""Src""; DROP TABLE shared_src; --" ("Time Stamp" timestamptz NOT NULL, "Grüße" int);
INSERT INTO "Weird ""Src""; DROP TABLE shared_src; --" VALUES ('2024-01-01 00:00', 1), ('2024-01-01 01:00', 2);
SELECT flownode.create_flow($$flow '; DROP TABLE shared_src; --$$, '"Sink; DROP TABLE shared_src"',
  $q$SELECT date_trunc('hour', "Time Stamp") AS "Hour ""H""", sum("Grüße") AS "Σ"
       FROM "Weird ""Src""; DROP TABLE shared_src; --" GROUP BY 1$q$,
  eval_interval => '1 hour') > 0 AS created;
INSERT INTO "Weird ""Src""; DROP TABLE shared_src; --" VALUES ('2024-01-01 02:00', 3);
SELECT flownode.flush_flow($$flow '; DROP TABLE shared_src; --$$);
SELECT * FROM "Sink; DROP TABLE shared_src" ORDER BY 1;
SELECT flow_diff($$flow '; DROP TABLE shared_src; --$$);
SELECT count(*) > 0 AS shared_src_intact FROM shared_src;
-- a sink name that is not a valid name is refused, not interpreted
SELECT flownode.create_flow('x', 'a; DROP TABLE shared_src',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM shared_src GROUP BY 1$$, eval_interval => '1 hour');

-- one statement that touches thousands of windows: the writer's set stays bounded
-- (it coalesces; flownode.local_ranges_per_flow) and nothing is lost
SET flownode.local_ranges_per_flow = 8;
INSERT INTO shared_src SELECT timestamptz '2025-01-01' + i * interval '2 hours', 'h0', 1 FROM generate_series(0, 4999) i;
RESET flownode.local_ranges_per_flow;
SELECT dirty_windows >= 5000 AS all_marked FROM flownode.flows WHERE flow_name = 'alice_flow';
SELECT flownode.flush_flow('alice_flow') >= 5000 AS flushed;
SELECT flow_diff('alice_flow');

-- flownode.max_flows caps the number of flows with a clear error (checked in one
-- transaction, so no worker starts)
SHOW flownode.max_flows;
BEGIN;
DO $$
BEGIN
  FOR i IN 1 .. 100 LOOP
    PERFORM flownode.create_flow('many_' || i, 'many_sink_' || i,
      'SELECT date_trunc(''hour'', ts) AS h, count(*) AS n FROM shared_src GROUP BY 1', eval_interval => '1 hour');
  END LOOP;
END $$;
ROLLBACK;

-- TRUNCATE of a source never fails on what its flows' owners may do to their sinks
-- (pg_restore -j truncates a new source before it restores the sinks' grants): a
-- sink its owner may not empty gets its windows marked instead, in the same
-- transaction, and its worker empties them once it may; the others are emptied.
CREATE TABLE trunc_src (ts timestamptz NOT NULL, v int);
CREATE INDEX ON trunc_src (ts);
GRANT SELECT, TRIGGER ON trunc_src TO fn_alice;
CREATE TABLE trunc_sink (h timestamptz PRIMARY KEY, n bigint);
CREATE TABLE trunc_kept (h timestamptz PRIMARY KEY, n bigint);
GRANT SELECT, INSERT, UPDATE, DELETE ON trunc_sink, trunc_kept TO fn_alice;
INSERT INTO trunc_src SELECT timestamptz '2024-01-01' + i * interval '20 minutes', i FROM generate_series(0, 11) i;
SET ROLE fn_alice;
SELECT flownode.create_flow('trunc_flow', 'public.trunc_sink',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM trunc_src GROUP BY 1$$, eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('trunc_kept', 'public.trunc_kept',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM trunc_src GROUP BY 1$$, eval_interval => '1 hour',
  expire_after => '1000 years') > 0 AS created;
SELECT flownode.create_flow('trunc_own', 'alice_space.trunc_own',
  $$SELECT date_trunc('hour', ts) AS h, sum(v) AS s FROM trunc_src GROUP BY 1$$, eval_interval => '1 hour') > 0 AS created;
RESET ROLE;
REVOKE DELETE ON trunc_sink FROM fn_alice;
REVOKE SELECT ON trunc_kept FROM fn_alice;
-- rolled back: nothing marked, nothing emptied
BEGIN;
TRUNCATE trunc_src;
ROLLBACK;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'trunc%' ORDER BY 1;
TRUNCATE trunc_src;
SELECT (SELECT count(*) FROM trunc_sink) AS sink_rows, (SELECT count(*) FROM trunc_kept) AS kept_rows,
       (SELECT count(*) FROM alice_space.trunc_own) AS own_rows;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'trunc%' ORDER BY 1;
SET ROLE fn_alice;
SELECT flownode.flush_flow('trunc_flow');
RESET ROLE;
GRANT DELETE ON trunc_sink TO fn_alice;
GRANT SELECT ON trunc_kept TO fn_alice;
SET ROLE fn_alice;
SELECT flownode.flush_flow('trunc_flow'), flownode.flush_flow('trunc_kept');
RESET ROLE;
SELECT (SELECT count(*) FROM trunc_sink) AS sink_rows, (SELECT count(*) FROM trunc_kept) AS kept_rows;
SELECT flow_diff('trunc_flow'), flow_diff('trunc_kept'), flow_diff('trunc_own');
-- frozen windows stay frozen on that path too: the marks of the sink's windows are
-- cut at expire_after as every mark is, so the owner's flush, once it may, empties
-- only the recent windows (3 frozen hours of 2024 stay, the 2 recent ones go)
CREATE TABLE trunc_frozen (h timestamptz PRIMARY KEY, n bigint);
GRANT SELECT, INSERT, UPDATE, DELETE ON trunc_frozen TO fn_alice;
INSERT INTO trunc_src SELECT timestamptz '2024-01-01' + i * interval '1 hour', i FROM generate_series(0, 2) i
  UNION ALL SELECT date_trunc('hour', now()) - i * interval '1 hour', i FROM generate_series(2, 3) i;
SET ROLE fn_alice;
SELECT flownode.create_flow('trunc_frozen', 'public.trunc_frozen',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM trunc_src GROUP BY 1$$, eval_interval => '1 hour',
  expire_after => '30 days') > 0 AS created;
RESET ROLE;
REVOKE DELETE ON trunc_frozen FROM fn_alice;
TRUNCATE trunc_src;
SELECT count(*) AS frozen_rows_before_flush FROM trunc_frozen;
GRANT DELETE ON trunc_frozen TO fn_alice;
SET ROLE fn_alice;
SELECT flownode.flush_flow('trunc_frozen') > 0 AS flushed;
RESET ROLE;
SELECT count(*) AS frozen_rows_kept, min(h) >= '2024-01-01' AND max(h) < '2024-01-02' AS only_2024 FROM trunc_frozen;

SELECT flownode.drop_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
DROP TABLE shared_src, readonly_sink, trunc_src, trunc_sink, trunc_kept, trunc_frozen, "Weird ""Src""; DROP TABLE shared_src; --", "Sink; DROP TABLE shared_src";
DROP SCHEMA alice_space CASCADE;
DROP SCHEMA locked;
REVOKE EXECUTE ON FUNCTION flownode.create_flow FROM fn_alice, fn_bob;
DROP ROLE fn_alice, fn_bob;
