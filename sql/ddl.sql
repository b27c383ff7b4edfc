-- DDL on the objects a flow depends on. DROP TABLE of a source or sink drops its
-- flows with a NOTICE (as PostgreSQL does for dependent objects); ALTER TABLE that
-- breaks a query makes the flow fail visibly, and it heals when fixed; a flow
-- created in a rolled-back subtransaction leaves nothing behind.
SET timezone = 'UTC';
CREATE TABLE src (ts timestamptz NOT NULL, host text NOT NULL, v int);
INSERT INTO src SELECT timestamptz '2024-01-01' + i * interval '1 minute', 'h' || (i % 2), i
  FROM generate_series(0, 99) i;
SELECT flownode.create_flow('a', 'sink_a',
  $$SELECT date_trunc('hour', ts) AS h, host, sum(v) AS total FROM src GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('b', 'sink_b',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM src GROUP BY 1$$,
  eval_interval => '1 hour') > 0;

-- dropping one sink drops its flow; the other flow on the source keeps working
DROP TABLE sink_a;
SELECT flow_name FROM flownode.flows ORDER BY 1;
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'src'::regclass;
INSERT INTO src VALUES ('2024-01-01 00:30', 'h0', 1);
SELECT flownode.flush_flow('b'), flow_diff('b');

-- a rolled-back DROP TABLE keeps the flow
BEGIN;
DROP TABLE sink_b;
ROLLBACK;
SELECT flow_name FROM flownode.flows ORDER BY 1;

-- dropping the last flow's sink removes the source's triggers
DROP TABLE sink_b;
SELECT count(*) AS flows FROM flownode.flows;
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'src'::regclass;

-- dropping the source drops its flows; the sink stays
SELECT flownode.create_flow('c', 'sink_c',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM src GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
DROP TABLE src;
SELECT count(*) AS flows FROM flownode.flows;
SELECT count(*) > 0 AS sink_kept FROM sink_c;
DROP TABLE sink_c;

-- DROP SCHEMA ... CASCADE reaches flows too
CREATE SCHEMA app;
CREATE TABLE app.src (ts timestamptz NOT NULL, v int);
SELECT flownode.create_flow('in_app', 'app.sink',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM app.src GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
DROP SCHEMA app CASCADE;
SELECT count(*) AS flows FROM flownode.flows;

-- ALTER TABLE that breaks the query (a column it reads dropped): the flow fails with a
-- clear last_error, keeps its windows, and heals once the query works again
CREATE TABLE src (ts timestamptz NOT NULL, v int);
INSERT INTO src VALUES ('2024-01-01 00:00', 1);
SELECT flownode.create_flow('alt', 'sink_alt',
  $$SELECT date_trunc('hour', ts) AS h, sum(v) AS total FROM src GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
ALTER TABLE src DROP COLUMN v;
INSERT INTO src VALUES ('2024-01-01 00:10');
SELECT flownode.flush_flow('alt');
SELECT state, last_error, failures > 0 AS failed, consecutive_failures > 0 AS in_a_row,
       last_error_at IS NOT NULL AS when_known, dirty_windows
  FROM flownode.flows WHERE flow_name = 'alt';
ALTER TABLE src ADD COLUMN v int DEFAULT 2;
SELECT flownode.flush_flow('alt');
SELECT state, consecutive_failures, dirty_windows FROM flownode.flows WHERE flow_name = 'alt';
SELECT flow_diff('alt');
-- the time column is pinned while a flow marks it (as a view pins its columns);
-- terse: the DETAIL names the internal triggers, whose names end in their OIDs
\set VERBOSITY terse
ALTER TABLE src ALTER COLUMN ts TYPE timestamp;
ALTER TABLE src DROP COLUMN ts;
\set VERBOSITY default
SELECT flownode.drop_flow('alt');
DROP TABLE sink_alt;
-- once no flow reads it, it is free again
ALTER TABLE src ALTER COLUMN ts TYPE timestamp;
ALTER TABLE src ALTER COLUMN ts TYPE timestamptz;

-- a flow created in a rolled-back subtransaction leaves nothing behind
BEGIN;
SAVEPOINT s;
SELECT flownode.create_flow('sub', 'sink_sub',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM src GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
ROLLBACK TO s;
COMMIT;
SELECT count(*) AS flows FROM flownode.flows;
SELECT count(*) AS sinks FROM pg_class WHERE relname = 'sink_sub';
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'src'::regclass;
-- and one created in a released subtransaction exists
BEGIN;
SAVEPOINT s;
SELECT flownode.create_flow('sub', 'sink_sub',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM src GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
RELEASE s;
COMMIT;
INSERT INTO src VALUES ('2024-01-01 05:00', 1);
SELECT flownode.flush_flow('sub'), flow_diff('sub');
SELECT flownode.drop_flow('sub');
DROP TABLE src, sink_sub;
