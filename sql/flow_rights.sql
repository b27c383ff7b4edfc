-- Who may take the server's resources (docs/operations.md, "Privileges and caps"): creating a
-- flow needs EXECUTE on flownode.create_flow, which PUBLIC does not have, and
-- flownode.execute's CREATE FLOW asks for the same right; managing one's own flows
-- needs none. flownode.max_flows_per_database and flownode.max_flows_per_role cap
-- the flows of a database and of a role in it. In a database of its own, so that the
-- counts are this file's flows only.
SELECT current_user AS admin, current_database() AS home \gset
CREATE DATABASE fn_rights;
\c fn_rights
SET client_min_messages = warning;
CREATE EXTENSION flownode;
RESET client_min_messages;
SET timezone = 'UTC';
CREATE ROLE fn_dave LOGIN;
CREATE ROLE fn_erin LOGIN;
CREATE TABLE src (ts timestamptz NOT NULL, v int);
CREATE INDEX ON src (ts);
INSERT INTO src SELECT timestamptz '2024-01-01' + i * interval '7 minutes', i FROM generate_series(0, 99) i;
GRANT SELECT, INSERT, TRIGGER ON src TO fn_dave, fn_erin;
GRANT CREATE ON SCHEMA public TO fn_dave, fn_erin;
CREATE FUNCTION hourly(name text) RETURNS bigint LANGUAGE sql AS $$
  SELECT flownode.create_flow(name, name || '_sink',
    $q$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n, sum(v) AS s FROM public.src GROUP BY 1$q$,
    eval_interval => '1 hour')$$;
GRANT EXECUTE ON FUNCTION hourly(text) TO PUBLIC;

-- a fresh install: of flownode's functions only create_flow and wait_for_publishers
-- (which connects to publishers with the subscriptions' credentials) are closed to
-- PUBLIC; flow_replication, which the flows view calls, is open
SELECT p.oid::regprocedure AS closed_to_public FROM pg_proc p
 WHERE p.pronamespace = 'flownode'::regnamespace AND NOT has_function_privilege('public', p.oid, 'EXECUTE')
 ORDER BY p.oid::regprocedure::text;

-- a role without the grant creates no flow, through either entry point
SET ROLE fn_dave;
SELECT flownode.create_flow('d1', 'd1_sink', 'SELECT date_bin(''1 hour'', ts, timestamptz ''2000-01-01'') AS h, count(*) AS n FROM src GROUP BY 1');
SELECT hourly('d1');
SELECT * FROM flownode.execute($$CREATE FLOW d2 SINK TO d2_sink EVAL INTERVAL '1 hour' AS
  SELECT date_bin('1 hour'::INTERVAL, ts) AS h, count(*) AS n FROM src GROUP BY 1$$);
SELECT * FROM flownode.execute($$CREATE FLOW IF NOT EXISTS d2 SINK TO d2_sink EVAL INTERVAL '1 hour' AS
  SELECT date_bin('1 hour'::INTERVAL, ts) AS h, count(*) AS n FROM src GROUP BY 1$$);
RESET ROLE;

-- GRANT makes it work
GRANT EXECUTE ON FUNCTION flownode.create_flow TO fn_dave;
SET ROLE fn_dave;
SELECT hourly('d1') > 0 AS created;
SELECT * FROM flownode.execute($$CREATE FLOW d2 SINK TO d2_sink EVAL INTERVAL '1 hour' AS
  SELECT date_bin('1 hour'::INTERVAL, ts) AS h, count(*) AS n FROM src GROUP BY 1$$);
RESET ROLE;

-- without it again, dave manages the flows he owns but creates and replaces none
REVOKE EXECUTE ON FUNCTION flownode.create_flow FROM fn_dave;
SET ROLE fn_dave;
INSERT INTO src VALUES ('2024-01-01 00:30', 1000);
SELECT flownode.flush_flow('d1'), flownode.flush_flow('d1', cascade => true);
SELECT flownode.refresh_flow('d1') > 0 AS refreshed;
SELECT flownode.alter_flow('d1', comment => 'hourly');
SELECT flownode.pause_flow('d1'), flownode.resume_flow('d1');
SELECT n FROM flownode.read_flow(NULL::d1_sink) WHERE h = '2024-01-01 00:00';
SELECT flownode.create_read_view('d1', 'd1_now');
SELECT * FROM flownode.execute($$ADMIN FLUSH_FLOW('d2')$$);
SELECT * FROM flownode.execute('SHOW FLOWS');
SELECT flow_name, owner, comment FROM flownode.flows NATURAL JOIN (SELECT flow_id, comment FROM flownode.flow_info) i ORDER BY 1;
SELECT hourly('d1');
SELECT * FROM flownode.execute($$CREATE OR REPLACE FLOW d2 SINK TO d2_sink EVAL INTERVAL '1 hour' AS
  SELECT date_bin('1 hour'::INTERVAL, ts) AS h, count(*) AS n FROM src GROUP BY 1$$);
SELECT * FROM flownode.execute('DROP FLOW d2');
-- (the view goes with the flow)
SELECT flownode.drop_flow('d1');
DROP TABLE d1_sink, d2_sink;
RESET ROLE;
GRANT EXECUTE ON FUNCTION flownode.create_flow TO fn_dave, fn_erin;

-- The caps: superuser-only settings, set per role in a database and per database,
-- read when a session starts.
ALTER ROLE fn_dave IN DATABASE fn_rights SET flownode.max_flows_per_role = 2;
\c fn_rights fn_dave
SET timezone = 'UTC';
SHOW flownode.max_flows_per_role;
SET flownode.max_flows_per_role = -1;
SELECT * FROM flownode.flow_caps();
SELECT hourly('d1') > 0 AS created, hourly('d2') > 0 AS created;
-- the third is refused, through either entry point
SELECT hourly('d3');
SELECT * FROM flownode.execute($$CREATE FLOW d3 SINK TO d3_sink EVAL INTERVAL '1 hour' AS
  SELECT date_bin('1 hour'::INTERVAL, ts) AS h, count(*) AS n FROM src GROUP BY 1$$);
-- replacing a flow, or finding it there, takes nothing more
SELECT * FROM flownode.execute($$CREATE OR REPLACE FLOW d2 SINK TO d2_sink EVAL INTERVAL '1 hour' AS
  SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n, sum(v) AS s FROM public.src GROUP BY 1$$);
SELECT flownode.create_flow('d1', 'd1_sink', 'SELECT 1', if_not_exists => true) > 0 AS exists;
SELECT * FROM flownode.flow_caps();
-- "per role" is per role in a database: erin, another role, is not capped by dave's
\c fn_rights fn_erin
SET timezone = 'UTC';
SELECT hourly('e1') > 0 AS created, hourly('e2') > 0 AS created;
SELECT * FROM flownode.flow_caps();

-- per database: four flows, and a cap of five
\c fn_rights :admin
ALTER DATABASE fn_rights SET flownode.max_flows_per_database = 5;
\c fn_rights fn_erin
SET timezone = 'UTC';
SELECT hourly('e3') > 0 AS created;
SELECT hourly('e4');
-- superusers are capped as everyone else, and may lift the cap for their session
\c fn_rights :admin
SET timezone = 'UTC';
SELECT hourly('a1');
SET flownode.max_flows_per_database = -1;
-- a flow waiting for its source counts as one
SELECT * FROM flownode.execute($$CREATE FLOW waits SINK TO waits_sink EVAL INTERVAL '1 hour'
  WITH (defer_on_missing_source = true) AS SELECT date_bin('1 hour'::INTERVAL, ts) AS h, count(*) AS n FROM later GROUP BY 1$$);
RESET flownode.max_flows_per_database;
SELECT * FROM flownode.flow_caps();
-- a flow that waited starts when its source appears, even over the cap: it was
-- counted when it was created
CREATE TABLE later (ts timestamp NOT NULL);
SELECT flow_name, state <> 'waiting_for_source' AS started FROM flownode.flows WHERE flow_name = 'waits';
-- lowering a cap removes nothing: the flows go on
ALTER DATABASE fn_rights SET flownode.max_flows_per_database = 1;
\c fn_rights fn_erin
SET timezone = 'UTC';
INSERT INTO src VALUES ('2024-01-01 00:40', 1);
SELECT flownode.flush_flow('e1');
SELECT n FROM e1_sink WHERE h = '2024-01-01 00:00';
SELECT hourly('e4');

\c :home :admin
-- the flows' workers leave with the database
DROP DATABASE fn_rights WITH (FORCE);
DROP ROLE fn_dave, fn_erin;
