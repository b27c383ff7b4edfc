-- Outputs of any type (docs/internals.md §2, invariant 1): json, jsonb, point, box,
-- xml, arrays and composites of them, hll and tdigest states. Many have no "=" (json,
-- point, xml, tdigest, point[], a composite holding a point), and some have an "="
-- that is not identity (box: equal by area; numeric: 1.0 = 1.00). The refresh
-- compares a sink row with the fresh one by their binary images, as REFRESH
-- MATERIALIZED VIEW CONCURRENTLY does: every type works, a changed value is always
-- written, an unchanged row is never rewritten.
SET timezone = 'UTC';
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;

-- flow_diff needs "=" on every column: compare the rows' text forms instead, which
-- is stricter (1.0 and 1.00 differ) and works for every type
CREATE FUNCTION flow_text_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; missing bigint; extra bigint;
BEGIN
  SELECT user_query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM (SELECT r::text FROM (%s) r EXCEPT ALL SELECT r::text FROM %s r) d', q, s)
    INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT r::text FROM %s r EXCEPT ALL SELECT r::text FROM (%s) r) d', s, q)
    INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;

CREATE TABLE m (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL, tag text NOT NULL, doc xml);
CREATE INDEX ON m (ts);
INSERT INTO m SELECT timestamptz '2024-01-01' + i * interval '5 minutes', 'h' || (i % 3), i, 't' || (i % 4),
  xmlelement(name v, i)
  FROM generate_series(0, 59) i;
CREATE TYPE span AS (n bigint, at point);

-- json, jsonb: json has no "="
SELECT flownode.create_flow('t_json', 't_json',
  $$SELECT date_trunc('hour', ts) AS h, host, json_agg(v ORDER BY v) AS j, jsonb_agg(v ORDER BY v) AS jb,
           json_object_agg(tag, v ORDER BY v) AS jo
      FROM m GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- geometry, an array of points, a composite holding a point: none has "="
SELECT flownode.create_flow('t_geo', 't_geo',
  $$SELECT date_trunc('hour', ts) AS h, host, point(min(v), max(v)) AS p,
           array_agg(point(v, 0) ORDER BY v) AS pts, ROW(count(*), point(avg(v), 0))::span AS sp
      FROM m GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- box alone: its "=" compares areas, so a box moved to an equal area is "equal"
SELECT flownode.create_flow('t_box', 't_box',
  $$SELECT date_trunc('hour', ts) AS h, host, box(point(min(v), 0), point(max(v), 1)) AS b
      FROM m GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- xml (this PostgreSQL is built with libxml)
SELECT flownode.create_flow('t_xml', 't_xml',
  $$SELECT date_trunc('hour', ts) AS h, host, xmlagg(doc ORDER BY v) AS x
      FROM m GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- mergeable sketch states: hll (it has an "=") and tdigest (it has none)
SELECT flownode.create_flow('t_sketch', 't_sketch',
  $$SELECT date_trunc('hour', ts) AS h, host, hll_add_agg(hll_hash_text(tag)) AS uniq, tdigest(v, 100) AS td
      FROM m GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT attname, atttypid::regtype FROM pg_attribute
 WHERE attrelid IN ('t_json'::regclass, 't_geo'::regclass, 't_box'::regclass, 't_xml'::regclass,
                    't_sketch'::regclass) AND attnum > 2
 ORDER BY attrelid, attnum;

CREATE TEMP TABLE flows_here (flow text);
INSERT INTO flows_here VALUES ('t_json'), ('t_geo'), ('t_box'), ('t_xml'), ('t_sketch');
SELECT flow, flow_text_diff(flow) FROM flows_here ORDER BY 1;

-- INSERT (into a window and a new one), UPDATE (values, a row moved to another
-- group), DELETE (rows, and a whole group); then every flow is exact again
INSERT INTO m VALUES ('2024-01-01 00:07', 'h0', 100, 't9'), ('2024-01-01 09:00', 'h1', 7, 't1');
UPDATE m SET v = v * 10 WHERE ts >= '2024-01-01 01:00' AND ts < '2024-01-01 02:00' AND host = 'h1';
UPDATE m SET host = 'h2' WHERE ts = '2024-01-01 02:00';
DELETE FROM m WHERE ts >= '2024-01-01 03:00' AND ts < '2024-01-01 04:00' AND host = 'h0';
DELETE FROM m WHERE ts = '2024-01-01 04:05';
SELECT flow, flownode.flush_flow(flow) > 0 AS refreshed, flow_text_diff(flow) FROM flows_here ORDER BY 1;
SELECT count(*) AS h0_groups_in_hour_3 FROM t_json WHERE h = '2024-01-01 03:00' AND host = 'h0';
SELECT j, jb, jo FROM t_json WHERE h = '2024-01-01 00:00' AND host = 'h0';
SELECT p, pts, sp FROM t_geo WHERE h = '2024-01-01 01:00' AND host = 'h1';
SELECT x FROM t_xml WHERE h = '2024-01-01 09:00';
-- the sketches answer as the same sketches over the source rows do
SELECT s.host, hll_cardinality(hll_union_agg(s.uniq)) AS sink_uniq, tdigest_percentile(s.td, 0.5) AS sink_median,
       q.uniq AS query_uniq, q.median AS query_median
  FROM t_sketch s
  JOIN (SELECT host, count(DISTINCT tag) AS uniq, tdigest_percentile(v, 100, 0.5) AS median
          FROM m WHERE ts >= '2024-01-01 00:00' AND ts < '2024-01-01 01:00' GROUP BY host) q USING (host)
 WHERE s.h = '2024-01-01 00:00' GROUP BY 1, 4, 5 ORDER BY 1;
-- and they merge: the hourly states rolled up into the day (what a coarser flow over
-- this sink would compute) answer as the sketches of all the day's rows do
SELECT s.host, hll_cardinality(hll_union_agg(s.uniq)) AS day_uniq, tdigest_percentile(s.td, 0.5) AS day_median,
       q.uniq AS query_uniq, q.median AS query_median
  FROM t_sketch s
  JOIN (SELECT host, count(DISTINCT tag) AS uniq, tdigest_percentile(v, 100, 0.5) AS median
          FROM m GROUP BY host) q USING (host)
 GROUP BY 1, 4, 5 ORDER BY 1;

-- a box moved to one of equal area ("=" says equal) is written all the same
UPDATE m SET v = v + 1 WHERE ts >= '2024-01-01 00:00' AND ts < '2024-01-01 01:00' AND host = 'h2';
SELECT flownode.flush_flow('t_box'), flow_text_diff('t_box');
SELECT b FROM t_box WHERE h = '2024-01-01 00:00' AND host = 'h2';
SELECT flow, flownode.flush_flow(flow) AS windows, flow_text_diff(flow) FROM flows_here WHERE flow <> 't_box' ORDER BY 1;

-- unchanged rows are not rewritten: a refresh of every window (each row written
-- again, with the same values) changes no sink row, keeps every xmin
CREATE TEMP TABLE before_flush AS
  SELECT 't_json' AS flow, h, host, xmin::text AS x FROM t_json
  UNION ALL SELECT 't_geo', h, host, xmin::text FROM t_geo
  UNION ALL SELECT 't_box', h, host, xmin::text FROM t_box
  UNION ALL SELECT 't_xml', h, host, xmin::text FROM t_xml
  UNION ALL SELECT 't_sketch', h, host, xmin::text FROM t_sketch;
CREATE TEMP TABLE written AS SELECT flow_name AS flow, rows_written FROM flownode.flow_info;
UPDATE m SET v = v;
SELECT flow, flownode.flush_flow(flow) AS windows FROM flows_here ORDER BY 1;
SELECT w.flow, s.rows_written - w.rows_written AS rewritten
  FROM written w JOIN flownode.flow_info s ON s.flow_name = w.flow ORDER BY 1;
CREATE TEMP TABLE after_flush AS
  SELECT 't_json' AS flow, h, host, xmin::text AS x FROM t_json
  UNION ALL SELECT 't_geo', h, host, xmin::text FROM t_geo
  UNION ALL SELECT 't_box', h, host, xmin::text FROM t_box
  UNION ALL SELECT 't_xml', h, host, xmin::text FROM t_xml
  UNION ALL SELECT 't_sketch', h, host, xmin::text FROM t_sketch;
SELECT flow, count(*) AS sink_rows, count(*) FILTER (WHERE b.x = a.x) AS kept_xmin
  FROM before_flush b JOIN after_flush a USING (flow, h, host) GROUP BY 1 ORDER BY 1;
-- a change of one group rewrites that group's row only
UPDATE m SET v = v + 1000 WHERE ts = '2024-01-01 04:00';
SELECT f.flow, flownode.flush_flow(f.flow) AS windows, flow_text_diff(f.flow) FROM flows_here f ORDER BY 1;
DROP TABLE after_flush;
CREATE TEMP TABLE after_flush AS
  SELECT 't_json' AS flow, h, host, xmin::text AS x FROM t_json
  UNION ALL SELECT 't_geo', h, host, xmin::text FROM t_geo
  UNION ALL SELECT 't_box', h, host, xmin::text FROM t_box
  UNION ALL SELECT 't_xml', h, host, xmin::text FROM t_xml
  UNION ALL SELECT 't_sketch', h, host, xmin::text FROM t_sketch;
SELECT flow, h, host FROM before_flush b JOIN after_flush a USING (flow, h, host) WHERE b.x <> a.x ORDER BY 1, 2, 3;

-- values that "=" calls equal but that differ (numeric 1.0 and 1.00, in a value and
-- in a group key): the sink shows what the query shows. The row is rewritten, which
-- is harmless; before, the sink kept 1.0 while the query said 1.00.
CREATE TABLE n (ts timestamptz NOT NULL, k numeric NOT NULL, d numeric NOT NULL);
INSERT INTO n VALUES ('2024-01-01 00:10', 1.0, 1.0), ('2024-01-01 00:20', 2, 5);
SELECT flownode.create_flow('t_num', 't_num',
  $$SELECT date_trunc('hour', ts) AS h, k, max(d) AS d, sum(d) AS s FROM n GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
UPDATE n SET k = 1.00, d = 1.00 WHERE k = 1;
SELECT flownode.flush_flow('t_num'), flow_text_diff('t_num');
SELECT k, d, s FROM t_num ORDER BY k;

-- an existing sink with a json column: create_flow's fill (an upsert into a table
-- that holds rows) and the refreshes work
CREATE TABLE mine_json (h timestamptz NOT NULL, host text NOT NULL, j json, PRIMARY KEY (h, host));
INSERT INTO mine_json VALUES ('2024-01-01 00:00', 'h0', '"stale"'), ('1999-01-01', 'zz', '[]');
SELECT flownode.create_flow('t_mine', 'mine_json',
  $$SELECT date_trunc('hour', ts) AS h, host, json_agg(v ORDER BY v) AS j FROM m GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flow_text_diff('t_mine');
DELETE FROM m WHERE ts = '2024-01-01 00:00';
SELECT flownode.flush_flow('t_mine'), flow_text_diff('t_mine');

-- outputs a table cannot hold, or a key a unique index cannot be built on, are
-- refused with an error that says so
SELECT flownode.create_flow('t_rec', 't_rec',
  $$SELECT date_trunc('hour', ts) AS h, ROW(min(v), max(v)) AS r FROM m GROUP BY 1$$, eval_interval => '1 hour');
SELECT flownode.create_flow('t_xid', 't_xid',
  $$SELECT date_trunc('hour', ts) AS h, v::text::xid AS x, count(*) AS c FROM m GROUP BY 1, 2$$,
  eval_interval => '1 hour');
SELECT count(*) AS left_behind FROM pg_class WHERE relname IN ('t_rec', 't_xid');

SELECT count(flownode.drop_flow(flow_name)) AS dropped FROM flownode.flows;
DROP TABLE m, n, t_json, t_geo, t_box, t_xml, t_sketch, t_num, mine_json;
DROP TYPE span;
DROP FUNCTION flow_text_diff(text);
DROP EXTENSION tdigest;
DROP EXTENSION hll;
