-- The SQL API (docs/reference.md, Functions): create_flow, the sink it creates, the flows view,
-- flush_flow, drop_flow, if_not_exists / or_replace / if_exists.
CREATE EXTENSION flownode;

-- Compares a flow's sink with its query, both ways (used by every test file).
CREATE FUNCTION flow_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; missing bigint; extra bigint;
BEGIN
  SELECT user_query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT * FROM %s) d', q, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL (%s)) d', s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;

CREATE TABLE cpu (ts timestamptz NOT NULL, host text, usage float8);
CREATE INDEX ON cpu (ts);
SET timezone = 'UTC';
INSERT INTO cpu SELECT timestamptz '2024-01-01' + i * interval '10 seconds', 'h' || (i % 3), i
  FROM generate_series(0, 99) i;

SELECT flownode.create_flow(
  'cpu_1m', 'cpu_1m',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host,
           avg(usage) AS avg_usage, max(usage) AS max_usage, count(*) AS n
    FROM cpu GROUP BY 1, 2$$,
  eval_interval => '1 hour', comment => 'per-minute cpu') > 0 AS created;

-- the sink: the query's columns, key = group keys with the window first
\d cpu_1m
SELECT count(*) AS sink_rows, flow_diff('cpu_1m') FROM cpu_1m;

SELECT flow_name, source_table, sink_table, time_column, window_expr, eval_interval,
       expire_after, comment, owner, dirty_windows, last_error, failures
  FROM flownode.flows NATURAL JOIN (SELECT flow_id, expire_after, comment, failures FROM flownode.flow_info) i;
-- no subscription feeds the flow (docs/operations.md, "Flow servers"): replication is
-- NULL, as it is for a flow id that names no flow
SELECT flow_name, replication IS NULL AS not_replicated, flownode.flow_replication(-1) IS NULL AS no_flow
  FROM flownode.flows;

-- the triggers that mark dirty windows
SELECT tgfoid::regproc, tgenabled, tgisinternal FROM pg_trigger WHERE tgrelid = 'cpu'::regclass ORDER BY 1;

-- writes mark windows; flush_flow refreshes them and says how many
INSERT INTO cpu VALUES ('2024-01-01 00:20:30', 'h1', 50), ('2024-01-01 00:20:40', 'h1', 70);
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'cpu_1m';
SELECT flownode.flush_flow('cpu_1m');
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'cpu_1m';
SELECT * FROM cpu_1m WHERE minute = '2024-01-01 00:20:00+00';
SELECT flow_diff('cpu_1m');
-- nothing dirty: a flush refreshes nothing
SELECT flownode.flush_flow('cpu_1m');

-- flush_flow works inside a transaction block
BEGIN;
SELECT flownode.flush_flow('cpu_1m');
COMMIT;

-- if_not_exists: a NOTICE and the existing flow's id
SELECT flownode.create_flow('cpu_1m', 'other', 'SELECT 1', if_not_exists => true)
     = (SELECT flow_id FROM flownode.flows WHERE flow_name = 'cpu_1m') AS same_flow;

-- or_replace: a new definition over the same sink
SELECT flownode.create_flow(
  'cpu_1m', 'cpu_1m',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host,
           avg(usage) AS avg_usage, max(usage) AS max_usage, count(*) AS n
    FROM cpu WHERE usage >= 10 GROUP BY 1, 2$$,
  eval_interval => '1 hour', or_replace => true) > 0 AS replaced;
SELECT count(*) AS flows FROM flownode.flows;
SELECT flow_diff('cpu_1m');

-- drop_flow keeps the sink and removes the triggers
SELECT flownode.drop_flow('cpu_1m');
SELECT count(*) AS flows FROM flownode.flows;
SELECT count(*) > 0 AS sink_kept FROM cpu_1m;
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'cpu'::regclass;
SELECT flownode.drop_flow('cpu_1m', if_exists => true);
-- a write after the drop marks nothing and fails nothing
INSERT INTO cpu VALUES (now(), 'h0', 1);
DROP TABLE cpu_1m;
