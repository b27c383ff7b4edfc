-- The refresh statement's shapes (docs/internals.md §5): the dirty ranges are two
-- arrays; a source with an index on its time column is read range by range (a
-- LATERAL subquery per range), one without is read once through the ranges'
-- multirange; the sink's vanished groups likewise, by its index on the window
-- column or without one. Every shape must leave the sink equal to the query, with
-- windows scattered far apart, deletes, dropped columns and inheritance children.
SET timezone = 'UTC';

-- scattered writes into a source: every 7th hour over a year, a few rows each
CREATE FUNCTION scatter(t regclass, n int, seed float8) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM setseed(seed);
  EXECUTE format($q$INSERT INTO %s (ts, host, v)
    SELECT timestamptz '2024-01-01' + (floor(random() * 1250) * 7) * interval '1 hour' + random() * interval '59 minutes',
           'h' || (i %% 3), i FROM generate_series(1, %s) i$q$, t, n);
END $$;

-- 1. indexed source, a dropped column before the time column, sink keyed by the window
CREATE TABLE idx_src (gone int, ts timestamptz NOT NULL, host text, v int);
ALTER TABLE idx_src DROP COLUMN gone;
CREATE INDEX ON idx_src (ts);
SELECT scatter('idx_src', 2000, 0.1);
SELECT flownode.create_flow('idx', 'idx_hourly',
  $$SELECT date_trunc('hour', ts) AS hour, host, sum(v) AS total, count(*) AS n FROM idx_src GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT scatter('idx_src', 500, 0.2);
DELETE FROM idx_src WHERE v % 11 = 0;
UPDATE idx_src SET host = 'moved' WHERE v % 13 = 0;
SELECT dirty_windows > 100 AS scattered FROM flownode.flows WHERE flow_name = 'idx';
SELECT flownode.flush_flow('idx') > 100 AS refreshed, flow_diff('idx');

-- 2. the same writes without an index on the time column (one read of the source)
CREATE TABLE scan_src (ts timestamptz NOT NULL, host text, v int);
SELECT scatter('scan_src', 2000, 0.1);
SELECT flownode.create_flow('scan', 'scan_hourly',
  $$SELECT date_trunc('hour', ts) AS hour, host, sum(v) AS total, count(*) AS n FROM scan_src GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT scatter('scan_src', 500, 0.2);
DELETE FROM scan_src WHERE v % 11 = 0;
UPDATE scan_src SET host = 'moved' WHERE v % 13 = 0;
SELECT flownode.flush_flow('scan') > 100 AS refreshed, flow_diff('scan');

-- 3. a sink whose key does not lead with the window (no index to read it by)
CREATE TABLE by_host (host text NOT NULL, hour timestamptz NOT NULL, total bigint, n bigint, PRIMARY KEY (host, hour));
SELECT flownode.create_flow('host_first', 'by_host',
  $$SELECT date_trunc('hour', ts) AS hour, host, sum(v) AS total, count(*) AS n FROM idx_src WHERE host IS NOT NULL GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
DELETE FROM idx_src WHERE v % 5 = 0;
SELECT scatter('idx_src', 300, 0.3);
SELECT flownode.flush_flow('host_first') > 0 AS refreshed;
SELECT flownode.flush_flow('idx') >= 0, flow_diff('idx');
-- (the sink's columns are in another order than the query's)
SELECT (SELECT count(*) FROM ((SELECT date_trunc('hour', ts), host, sum(v), count(*) FROM idx_src WHERE host IS NOT NULL GROUP BY 1, 2)
          EXCEPT ALL SELECT hour, host, total, n FROM by_host) d) AS missing,
       (SELECT count(*) FROM (SELECT hour, host, total, n FROM by_host
          EXCEPT ALL (SELECT date_trunc('hour', ts), host, sum(v), count(*) FROM idx_src WHERE host IS NOT NULL GROUP BY 1, 2)) d) AS extra;

-- 4. timestamp without time zone, indexed and not
CREATE TABLE local_src (ts timestamp NOT NULL, host text, v int);
CREATE INDEX ON local_src (ts);
INSERT INTO local_src SELECT timestamp '2024-01-01' + i * interval '7 hours 3 minutes', 'h' || (i % 2), i FROM generate_series(1, 1500) i;
SELECT flownode.create_flow('local', 'local_daily',
  $$SELECT date_bin('1 day', ts, timestamp '2000-01-01') AS day, host, sum(v) AS total FROM local_src GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
DELETE FROM local_src WHERE v % 4 = 0;
INSERT INTO local_src SELECT timestamp '2024-01-01' + i * interval '13 hours', 'h9', 1 FROM generate_series(1, 400) i;
SELECT flownode.flush_flow('local') > 0 AS refreshed, flow_diff('local');
DROP INDEX local_src_ts_idx;
DELETE FROM local_src WHERE v % 3 = 0;
SELECT flownode.flush_flow('local') > 0 AS refreshed, flow_diff('local');

-- 5. an inheritance parent is refused; with ONLY the children stay out of the query
-- and of its refreshes
CREATE TABLE parent_src (ts timestamptz NOT NULL, host text, v int);
CREATE INDEX ON parent_src (ts);
CREATE TABLE child_src () INHERITS (parent_src);
INSERT INTO parent_src SELECT timestamptz '2024-03-01' + i * interval '50 minutes', 'p', i FROM generate_series(1, 300) i;
INSERT INTO child_src SELECT timestamptz '2024-03-01' + i * interval '70 minutes', 'c', i FROM generate_series(1, 300) i;
SELECT flownode.create_flow('inherit', 'inherit_hourly',
  $$SELECT date_trunc('hour', ts) AS hour, host, count(*) AS n FROM parent_src GROUP BY 1, 2$$);
SELECT flownode.create_flow('only_parent', 'only_hourly',
  $$SELECT date_trunc('hour', ts) AS hour, count(*) AS n FROM ONLY parent_src GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
INSERT INTO parent_src SELECT timestamptz '2024-03-01' + i * interval '5 hours', 'p', 1 FROM generate_series(1, 60) i;
SELECT flownode.flush_flow('only_parent') > 0 AS refreshed, flow_diff('only_parent');
SELECT sum(n) = (SELECT count(*) FROM ONLY parent_src) AS only_parent_rows FROM only_hourly;


-- 6. flownode.in_ranges, the filter of a refresh without a time index: the same
-- answer as the ranges' multirange, for ranges in any order, overlapping, empty or
-- unbounded, and for timestamp; an ERROR that names the problem for bad arrays
SELECT setseed(0.42);
CREATE TEMP TABLE probe_ranges AS
  SELECT lo, CASE WHEN lo = '-infinity' THEN timestamptz '2023-12-31 23:30+00' ELSE lo + len END AS hi,
         random() AS k
    FROM (SELECT timestamptz '2024-01-01' + (random() * 1000)::int * interval '1 minute' AS lo,
                 (random() * 30)::int * interval '1 minute' - interval '3 minutes' AS len
            FROM generate_series(1, 200)
          UNION ALL VALUES ('-infinity'::timestamptz, interval '0'), ('2024-01-02 03:00+00', interval '0')) x;
CREATE TEMP TABLE probe_times AS
  SELECT timestamptz '2023-12-31 23:00+00' + i * interval '17 seconds' AS t FROM generate_series(0, 6000) i
  UNION ALL VALUES ('infinity'::timestamptz), ('-infinity'), (NULL);
WITH r AS (SELECT array_agg(lo ORDER BY k) AS lo, array_agg(hi ORDER BY k) AS hi FROM probe_ranges),
     mr AS (SELECT range_agg(tstzrange(lo, hi)) AS m FROM probe_ranges WHERE lo < hi)
SELECT count(*) FILTER (WHERE flownode.in_ranges(t, r.lo, r.hi)) AS inside,
       count(*) FILTER (WHERE flownode.in_ranges(t, r.lo, r.hi) IS DISTINCT FROM (t <@ mr.m)) AS differ,
       count(*) FILTER (WHERE flownode.in_ranges(t, r.lo, r.hi) IS NULL) AS nulls
  FROM probe_times, r, mr;
SELECT flownode.in_ranges(timestamp '2024-01-01 10:00', '{2024-01-01 09:00, 2024-01-01 12:00}',
                          '{2024-01-01 10:00, 2024-01-01 13:00}') AS at_an_end,
       flownode.in_ranges(timestamp '2024-01-01 09:00', '{2024-01-01 09:00}', '{2024-01-01 10:00}') AS at_a_start,
       flownode.in_ranges(timestamp '2024-01-01 09:00', '{}', '{}') AS no_range;
SELECT flownode.in_ranges(now(), ARRAY[now()], ARRAY[now(), now()]);
SELECT flownode.in_ranges(now(), ARRAY[NULL::timestamptz], ARRAY[now()]);
SELECT flownode.in_ranges(now(), ARRAY[[now()]], ARRAY[[now()]]);

SELECT flownode.drop_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
