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
  FROM flownode.flows NATURAL JOIN (SELECT flow_id, failures FROM flownode.flow_info) i WHERE flow_name = 'alt';
ALTER TABLE src ADD COLUMN v int DEFAULT 2;
SELECT flownode.flush_flow('alt');
SELECT state, consecutive_failures, dirty_windows FROM flownode.flows WHERE flow_name = 'alt';
SELECT flow_diff('alt');
-- the time column is pinned while a flow marks it (as a view pins its columns): its
-- type change is refused naming the flow, its drop by its triggers' dependency (terse:
-- the DETAIL names the internal triggers, whose names end in their OIDs)
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

-- ALTER COLUMN TYPE of a column a flow reads: the table is rewritten, so
-- the answer of every window holding its rows may change (values rewritten by USING,
-- compared under another collation, groups merged or gone). Every window of the
-- rows is marked, as removals, for the flows that read the column: as an aggregate's
-- argument, a group key, in WHERE or HAVING, in a joined dimension, or as the sink's
-- column. A column no flow reads marks nothing.
CREATE TABLE rt (ts timestamptz NOT NULL, host text NOT NULL, name text COLLATE "C",
                 v int, w int, k int, note text);
CREATE INDEX ON rt (ts);
INSERT INTO rt SELECT timestamptz '2024-01-01' + i * interval '1 minute',
       'h' || (i % 4), (ARRAY['a', 'B', 'c', 'D', 'e'])[1 + i % 5], i % 7, i % 5, i % 6, 'x'
  FROM generate_series(0, 2879) i; -- 48 hours
CREATE TABLE dim (host text PRIMARY KEY, region text, weight int, label text);
INSERT INTO dim VALUES ('h0', 'r1', 1, 'x'), ('h1', 'r1', 2, 'x'), ('h2', 'r2', 3, 'x'), ('h3', 'r2', 4, 'x');
SELECT flownode.create_flow('rt_sum', 'rt_sum',
  $$SELECT date_trunc('hour', ts) AS h, host, sum(v) AS total FROM rt GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('rt_key', 'rt_key',
  $$SELECT date_trunc('hour', ts) AS h, k, count(*) AS n FROM rt GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('rt_where', 'rt_where',
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM rt WHERE w > 2 GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('rt_having', 'rt_having',
  $$SELECT date_trunc('hour', ts) AS h, host, count(*) AS n FROM rt GROUP BY 1, 2 HAVING sum(w) > 30$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('rt_min', 'rt_min',
  $$SELECT date_trunc('hour', ts) AS h, min(name) AS lo, max(name) AS hi, count(*) AS n
      FROM rt GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('rt_dim', 'rt_dim',
  $$SELECT date_trunc('hour', r.ts) AS h, d.region, sum(d.weight) AS weight
      FROM rt r JOIN dim d ON d.host = r.host GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
CREATE VIEW rt_flows AS
  -- (not the state: a flow's worker may still be starting, on a loaded machine)
  SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'rt%';
CREATE FUNCTION rt_diffs() RETURNS TABLE (flow text, flushed bigint, diff text) LANGUAGE sql AS $$
  SELECT flow_name, flownode.flush_flow(flow_name), flow_diff(flow_name)
    FROM flownode.flows WHERE flow_name LIKE 'rt%' ORDER BY 1 $$;
-- a column no flow reads: nothing marked
ALTER TABLE rt ALTER COLUMN note TYPE varchar(10) USING upper(note);
ALTER TABLE dim ALTER COLUMN label TYPE varchar(10) USING upper(label);
SELECT * FROM rt_flows ORDER BY 1;
-- an aggregate's argument rewritten by USING: only rt_sum is marked (48 hours)
ALTER TABLE rt ALTER COLUMN v TYPE int USING v * 2;
SELECT * FROM rt_flows ORDER BY 1;
SELECT * FROM rt_diffs();
-- a group key (SET DATA TYPE: groups merge, some vanish), a WHERE and HAVING column
ALTER TABLE rt ALTER COLUMN k SET DATA TYPE int USING k % 3;
ALTER TABLE rt ALTER COLUMN w TYPE int USING w + 1;
SELECT * FROM rt_flows ORDER BY 1;
SELECT * FROM rt_diffs();
-- another collation under min() and max(): 'B' < 'a' in "C", not in ICU's root
ALTER TABLE rt ALTER COLUMN name TYPE text COLLATE "und-x-icu";
SELECT * FROM rt_flows ORDER BY 1;
-- (the sink's columns follow, for flow_diff to compare them: marked again)
ALTER TABLE rt_min ALTER COLUMN lo TYPE text COLLATE "und-x-icu",
                   ALTER COLUMN hi TYPE text COLLATE "und-x-icu";
SELECT * FROM rt_diffs();
-- a column of a dimension the flow reads
ALTER TABLE dim ALTER COLUMN weight TYPE int USING weight * 10;
SELECT * FROM rt_flows ORDER BY 1;
SELECT * FROM rt_diffs();
-- in a rolled-back transaction, and in a rolled-back savepoint: nothing stays marked
BEGIN;
ALTER TABLE rt ALTER COLUMN v TYPE int USING v + 1;
ROLLBACK;
BEGIN;
SAVEPOINT s;
ALTER TABLE rt ALTER COLUMN v TYPE int USING v + 1;
ROLLBACK TO s;
COMMIT;
SELECT * FROM rt_flows ORDER BY 1;
SELECT * FROM rt_diffs();
-- a sink's column rewritten by USING: the flow writes it again
ALTER TABLE rt_sum ALTER COLUMN total TYPE bigint USING total + 1;
SELECT * FROM rt_flows ORDER BY 1;
SELECT * FROM rt_diffs();
-- a group key under a case-insensitive collation: groups 'a' and 'A' would merge
CREATE COLLATION rt_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT flownode.create_flow('rt_name', 'rt_name',
  $$SELECT date_trunc('hour', ts) AS h, name, count(*) AS n FROM rt GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
UPDATE rt SET name = upper(name) WHERE ts >= '2024-01-01 12:00' AND ts < '2024-01-01 12:10';
SELECT * FROM rt_diffs();
-- (the sink's key compares them as the query grouped them: the refresh fails saying
-- so, and heals once the collation is put back)
ALTER TABLE rt ALTER COLUMN name TYPE text COLLATE rt_ci;
SELECT * FROM rt_flows ORDER BY 1;
SELECT flownode.flush_flow('rt_name');
SELECT state, last_error FROM flownode.flows WHERE flow_name = 'rt_name';
ALTER TABLE rt ALTER COLUMN name TYPE text COLLATE "und-x-icu";
SELECT * FROM rt_diffs();
SELECT flownode.drop_flow('rt_name');
DROP TABLE rt_name;
-- a type that breaks the query (no sum(text)): the flow fails visibly, and heals
-- once the type is put back
ALTER TABLE rt ALTER COLUMN v TYPE text;
SELECT flownode.flush_flow('rt_sum');
SELECT flow_name, state, last_error FROM flownode.flows WHERE flow_name = 'rt_sum';
ALTER TABLE rt ALTER COLUMN v TYPE int USING v::int + 1;
SELECT * FROM rt_diffs();
-- a type that changes an output's type (sum(bigint) is numeric): the refresh fails
-- naming the sink's column and both types, until the sink's column follows
ALTER TABLE rt ALTER COLUMN v TYPE bigint;
SELECT flownode.flush_flow('rt_sum');
SELECT flow_name, state, last_error FROM flownode.flows WHERE flow_name = 'rt_sum';
ALTER TABLE rt_sum ALTER COLUMN total TYPE numeric;
SELECT * FROM rt_diffs();
-- the time column: refused, naming the flows (its windows, the sink's window column
-- and the marking triggers all follow its type)
ALTER TABLE rt ALTER COLUMN ts TYPE timestamp;
ALTER TABLE rt ALTER COLUMN ts TYPE timestamptz USING ts + interval '1 hour';
ALTER TABLE rt ALTER COLUMN ts SET DATA TYPE timestamptz, ALTER COLUMN v TYPE int;
SELECT * FROM rt_flows ORDER BY 1;
-- an epoch time column too
CREATE TABLE ep (t_s int NOT NULL, v int);
CREATE INDEX ON ep (t_s);
INSERT INTO ep SELECT 1704067200 + i * 60, i FROM generate_series(0, 299) i;
SELECT flownode.create_flow('ep_sum', 'ep_sum',
  $$SELECT date_bin('1 hour', to_timestamp(t_s), timestamptz '2000-01-01') AS h, sum(v) AS total
      FROM ep GROUP BY 1$$, eval_interval => '1 hour') > 0;
ALTER TABLE ep ALTER COLUMN t_s TYPE bigint;
ALTER TABLE ep ALTER COLUMN v TYPE int USING v * 3;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name = 'ep_sum';
SELECT flownode.flush_flow('ep_sum') > 0 AS flushed, flow_diff('ep_sum');
SELECT flownode.drop_flow('ep_sum');
DROP TABLE ep, ep_sum;

-- a partitioned source, with a flow on the parent and one on a partition that is
-- partitioned itself: ALTER of the parent rewrites every partition
CREATE TABLE pt (ts timestamptz NOT NULL, v int) PARTITION BY RANGE (ts);
CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM ('2024-01-01') TO ('2024-01-02');
CREATE TABLE pt_2 PARTITION OF pt FOR VALUES FROM ('2024-01-02') TO ('2024-01-03')
  PARTITION BY RANGE (ts);
CREATE TABLE pt_2a PARTITION OF pt_2 FOR VALUES FROM ('2024-01-02') TO ('2024-01-02 12:00');
CREATE TABLE pt_2b PARTITION OF pt_2 FOR VALUES FROM ('2024-01-02 12:00') TO ('2024-01-03');
CREATE INDEX ON pt (ts);
INSERT INTO pt SELECT timestamptz '2024-01-01' + i * interval '1 minute', i % 7
  FROM generate_series(0, 2879) i;
SELECT flownode.create_flow('pt_sum', 'pt_sum',
  $$SELECT date_trunc('hour', ts) AS h, sum(v) AS total FROM pt GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('pt_2_max', 'pt_2_max',
  $$SELECT date_trunc('hour', ts) AS h, max(v) AS top FROM pt_2 GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
ALTER TABLE pt ALTER COLUMN v TYPE int USING v * 5 - 1;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'pt%' ORDER BY 1;
SELECT flownode.flush_flow('pt_sum'), flow_diff('pt_sum');
SELECT flownode.flush_flow('pt_2_max'), flow_diff('pt_2_max');
-- a partition's own column cannot change type alone (PostgreSQL's rule: 42P16,
-- invalid_table_definition; only its SQLSTATE is shown, as 18 adds the statement's
-- position to the message)
\set VERBOSITY sqlstate
ALTER TABLE pt_2a ALTER COLUMN v TYPE bigint;
\set VERBOSITY default
SELECT flownode.drop_flow('pt_sum');
SELECT flownode.drop_flow('pt_2_max');
DROP TABLE pt, pt_sum, pt_2_max;

SELECT flownode.drop_flow(flow_name) FROM flownode.flows WHERE flow_name LIKE 'rt%';
DROP VIEW rt_flows;
DROP FUNCTION rt_diffs();
DROP TABLE rt, dim, rt_sum, rt_key, rt_where, rt_having, rt_min, rt_dim;
DROP COLLATION rt_ci;
