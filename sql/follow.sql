-- A flow follows its tables as a view does (docs/operations.md, DDL on the tables of
-- a flow): renames of the source, its schema, its columns and the sink keep it
-- working; a change of a source column's type that changes an output type makes it
-- fail visibly, naming the column and both types, until the sink is fixed.
SET timezone = 'UTC';
CREATE SCHEMA raw;
CREATE TABLE raw.m (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
INSERT INTO raw.m VALUES ('2024-05-01 00:00:10', 'a', 1), ('2024-05-01 00:01:10', 'b', 2);
SELECT flownode.create_flow('f', 'public.f_min',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, host, sum(v) AS total, count(*) AS n
      FROM raw.m GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
-- the sink compared with the query written with today's names
CREATE FUNCTION diff(q text, s regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE missing bigint; extra bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT * FROM %s) d', q, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL (%s)) d', s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;

-- rename the source table
ALTER TABLE raw.m RENAME TO metrics;
INSERT INTO raw.metrics VALUES ('2024-05-01 00:02:10', 'a', 3);
SELECT flownode.flush_flow('f');
SELECT state, source_table FROM flownode.flows WHERE flow_name = 'f';
SELECT diff($$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01'), host, sum(v), count(*)
              FROM raw.metrics GROUP BY 1, 2$$, 'f_min');
-- rename a column the query reads, and the time column
ALTER TABLE raw.metrics RENAME COLUMN v TO value;
ALTER TABLE raw.metrics RENAME COLUMN ts TO at;
UPDATE raw.metrics SET value = value + 10 WHERE host = 'b';
SELECT flownode.flush_flow('f');
SELECT state, time_column, window_expr FROM flownode.flows WHERE flow_name = 'f';
SELECT query FROM flownode.flow WHERE flow_name = 'f';
SELECT diff($$SELECT date_bin('1 minute', at, timestamptz '2000-01-01'), host, sum(value), count(*)
              FROM raw.metrics GROUP BY 1, 2$$, 'f_min');
-- move the source to another schema, then rename that schema
CREATE SCHEMA staging;
ALTER TABLE raw.metrics SET SCHEMA staging;
ALTER SCHEMA staging RENAME TO stage;
DELETE FROM stage.metrics WHERE host = 'a' AND at < '2024-05-01 00:01';
SELECT flownode.flush_flow('f');
SELECT state, source_table FROM flownode.flows WHERE flow_name = 'f';
SELECT diff($$SELECT date_bin('1 minute', at, timestamptz '2000-01-01'), host, sum(value), count(*)
              FROM stage.metrics GROUP BY 1, 2$$, 'f_min');
-- rename the sink and move it
ALTER TABLE f_min RENAME TO per_minute;
INSERT INTO stage.metrics VALUES ('2024-05-01 00:03:10', 'c', 5);
SELECT flownode.flush_flow('f');
ALTER TABLE per_minute SET SCHEMA stage;
INSERT INTO stage.metrics VALUES ('2024-05-01 00:04:10', 'c', 6);
SELECT flownode.flush_flow('f');
SELECT state, sink_table FROM flownode.flows WHERE flow_name = 'f';
SELECT diff($$SELECT date_bin('1 minute', at, timestamptz '2000-01-01'), host, sum(value), count(*)
              FROM stage.metrics GROUP BY 1, 2$$, 'stage.per_minute');
-- a rename in a transaction that rolls back leaves the stored query as it was
BEGIN;
ALTER TABLE stage.metrics RENAME TO gone;
ROLLBACK;
SELECT query FROM flownode.flow WHERE flow_name = 'f';

-- type drift: sum(value) becomes numeric, the sink's column is bigint
ALTER TABLE stage.metrics ALTER COLUMN value TYPE numeric;
INSERT INTO stage.metrics VALUES ('2024-05-01 00:05:10', 'c', 1.4);
SELECT flownode.flush_flow('f');
SELECT state, last_error FROM flownode.flows WHERE flow_name = 'f';
SELECT total FROM stage.per_minute WHERE w = '2024-05-01 00:05';
-- fixing the sink heals the flow: the value is exact, not rounded (every window of
-- the rows is refreshed: both ALTER COLUMN TYPE marked them)
ALTER TABLE stage.per_minute ALTER COLUMN total TYPE numeric;
SELECT flownode.flush_flow('f');
SELECT state, last_error FROM flownode.flows WHERE flow_name = 'f';
SELECT total FROM stage.per_minute WHERE w = '2024-05-01 00:05';
SELECT diff($$SELECT date_bin('1 minute', at, timestamptz '2000-01-01'), host, sum(value), count(*)
              FROM stage.metrics GROUP BY 1, 2$$, 'stage.per_minute');

-- dropping a column the query reads breaks it visibly; adding it back heals it
ALTER TABLE stage.metrics DROP COLUMN host CASCADE;
INSERT INTO stage.metrics VALUES ('2024-05-01 00:06:10', 7);
SELECT flownode.flush_flow('f');
SELECT state, last_error FROM flownode.flows WHERE flow_name = 'f';

SELECT flownode.drop_flow('f');
DROP SCHEMA raw, stage CASCADE;
DROP FUNCTION diff;
