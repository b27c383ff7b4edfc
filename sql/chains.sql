-- Chains of flows (docs/reference.md "Chains of flows"): a flow whose source is
-- another flow's sink. flush_flow(..., cascade => true) flushes the levels bottom up;
-- the flows view names each flow's upstream and downstream flows; a cycle is refused;
-- which aggregates stay exact across levels and which do not.
SET timezone = 'UTC';

-- raw samples; per minute, per hour from the minutes, per day from the hours. Every
-- level keeps what merges exactly: count, sum, min, max, and the average as its sum
-- and count; the hourly level also keeps an average of the minutes' averages, which
-- is not the hour's average.
CREATE TABLE samples (ts timestamptz NOT NULL, host text NOT NULL, v numeric NOT NULL);
CREATE INDEX ON samples (ts);
INSERT INTO samples
  SELECT timestamptz '2024-05-01' + i * interval '17 seconds', 'h' || (i % 2), (i * 37) % 101
    FROM generate_series(0, 9999) i;
-- uneven minutes: many samples in some, one in others
INSERT INTO samples
  SELECT timestamptz '2024-05-01 03:00' + (i % 3) * interval '1 minute', 'h0', 1000
    FROM generate_series(1, 60) i;
SELECT flownode.create_flow('s_1m', 's_1m',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host,
           count(*) AS n, sum(v) AS total, min(v) AS lo, max(v) AS hi, avg(v) AS avg_v
      FROM samples GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('s_1h', 's_1h',
  $$SELECT date_trunc('hour', minute) AS hour, host,
           sum(n) AS n, sum(total) AS total, min(lo) AS lo, max(hi) AS hi,
           sum(total) / sum(n) AS avg_v,      -- exact: the average from its sum and count
           avg(avg_v) AS avg_of_avgs          -- not the hour's average
      FROM s_1m GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('s_1d', 's_1d',
  $$SELECT date_trunc('day', hour) AS day, host,
           sum(n) AS n, sum(total) AS total, min(lo) AS lo, max(hi) AS hi, sum(total) / sum(n) AS avg_v
      FROM s_1h GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;

-- the direct answers over the raw samples
CREATE VIEW direct_1h AS
  SELECT date_trunc('hour', ts) AS hour, host, count(*)::numeric AS n, sum(v) AS total, min(v) AS lo,
         max(v) AS hi, avg(v) AS avg_v
    FROM samples GROUP BY 1, 2;
CREATE VIEW direct_1d AS
  SELECT date_trunc('day', ts) AS day, host, count(*)::numeric AS n, sum(v) AS total, min(v) AS lo,
         max(v) AS hi, avg(v) AS avg_v
    FROM samples GROUP BY 1, 2;
CREATE FUNCTION top_diff() RETURNS text LANGUAGE sql AS $$
  SELECT format('missing=%s extra=%s',
    (SELECT count(*) FROM (TABLE direct_1d EXCEPT ALL SELECT day, host, n, total, lo, hi, avg_v FROM s_1d) d),
    (SELECT count(*) FROM (SELECT day, host, n, total, lo, hi, avg_v FROM s_1d EXCEPT ALL TABLE direct_1d) d)) $$;

-- each level reads the one below: the view names both directions
SELECT flow_name, upstream_flows, downstream_flows FROM flownode.flows ORDER BY flow_id;
SELECT top_diff();

-- the sum, count, min, max and the average from them are the day's own; an average of
-- averages is not an average
SELECT count(*) AS hours, count(*) FILTER (WHERE h.avg_v = d.avg_v) AS exact_avg,
       count(*) FILTER (WHERE h.avg_of_avgs <> d.avg_v) AS avg_of_avgs_differs
  FROM s_1h h JOIN direct_1h d USING (hour, host);
SELECT h.hour, h.host, h.n, round(h.avg_v, 4) AS avg_v, round(h.avg_of_avgs, 4) AS avg_of_avgs
  FROM s_1h h WHERE h.hour = '2024-05-01 03:00' ORDER BY 2;

-- new samples, changes and deletes. Flushing the top level alone refreshes nothing:
-- the levels below have not written their sinks yet
INSERT INTO samples
  SELECT timestamptz '2024-05-03' + i * interval '41 seconds', 'h' || (i % 3), i % 50
    FROM generate_series(0, 2999) i;
UPDATE samples SET v = v + 1 WHERE ts < '2024-05-01 06:00' AND v < 10;
DELETE FROM samples WHERE ts >= '2024-05-02 10:00' AND ts < '2024-05-02 11:00';
SELECT flownode.flush_flow('s_1d') AS windows;
SELECT top_diff();
-- with cascade, the minutes, then the hours, then the days: exact at once
SELECT flownode.flush_flow('s_1d', cascade => true) > 0 AS refreshed;
SELECT top_diff(), flow_diff('s_1m'), flow_diff('s_1h'), flow_diff('s_1d');
SELECT flow_name, dirty_windows FROM flownode.flows ORDER BY flow_id;
-- nothing left: a second cascade refreshes nothing
SELECT flownode.flush_flow('s_1d', cascade => true) AS windows;
-- a cascade from the middle flushes the levels below it, not those above
INSERT INTO samples VALUES ('2024-05-04 00:00:01', 'h0', 1);
SELECT flownode.flush_flow('s_1h', cascade => true) AS windows;
SELECT flow_name, dirty_windows FROM flownode.flows ORDER BY flow_id;
SELECT flownode.flush_flow('s_1d', cascade => true) AS windows, top_diff();
-- cascade => false is the plain flush; a NULL cascade is an error
SELECT flownode.flush_flow('s_1d', false) AS windows;
SELECT flownode.flush_flow('s_1d', NULL);
-- in a transaction block, too
INSERT INTO samples VALUES ('2024-05-04 00:00:02', 'h1', 2);
BEGIN;
SELECT flownode.flush_flow('s_1d', cascade => true) AS windows;
SELECT top_diff();
COMMIT;
-- a paused flow below stops a cascade before anything is flushed
SELECT flownode.pause_flow('s_1h');
INSERT INTO samples VALUES ('2024-05-04 00:00:03', 'h0', 3);
SELECT flownode.flush_flow('s_1d', cascade => true);
SELECT flow_name, state, dirty_windows FROM flownode.flows ORDER BY flow_id;
SELECT flownode.resume_flow('s_1h');
SELECT flownode.flush_flow('s_1d', cascade => true) > 0 AS refreshed, top_diff();

-- Sketches merge across levels too: hll's distinct counts are the day's own (a union
-- of the hours' sketches is the sketch of the day's values); tdigest's percentiles
-- are the day's within its accuracy (a merge of the hours' digests is a digest of the
-- day's values: here within 1% of the exact 99th percentile)
CREATE EXTENSION IF NOT EXISTS hll;
CREATE EXTENSION IF NOT EXISTS tdigest;
CREATE TABLE visits (ts timestamptz NOT NULL, page text NOT NULL, user_id int NOT NULL, latency float8 NOT NULL);
CREATE INDEX ON visits (ts);
INSERT INTO visits
  SELECT timestamptz '2024-05-01' + i * interval '13 seconds', 'p' || (i % 2), (i * 7919) % 5000,
         ((i * 31) % 1000) / 10.0
    FROM generate_series(0, 19999) i;
SELECT flownode.create_flow('v_1h', 'v_1h',
  $$SELECT date_trunc('hour', ts) AS hour, page, hll_add_agg(hll_hash_integer(user_id)) AS users,
           tdigest(latency, 100) AS latency, count(*) AS n
      FROM visits GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('v_1d', 'v_1d',
  $$SELECT date_trunc('day', hour) AS day, page, hll_union_agg(users) AS users, tdigest(latency) AS latency,
           sum(n) AS n
      FROM v_1h GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
INSERT INTO visits
  SELECT timestamptz '2024-05-02 12:00' + i * interval '3 seconds', 'p' || (i % 3), (i * 104729) % 9000, i % 300
    FROM generate_series(0, 4999) i;
SELECT flownode.flush_flow('v_1d', cascade => true) > 0 AS refreshed;
SELECT d.day, d.page,
       hll_cardinality(d.users) = hll_cardinality(r.users) AS same_distinct_users,
       d.n = r.n AS same_count,
       abs(p.p99 - r.p99) <= 0.01 * r.p99 AS p99_within_1pct
  FROM v_1d d
  JOIN (SELECT date_trunc('day', ts) AS day, page, hll_add_agg(hll_hash_integer(user_id)) AS users,
               count(*) AS n, percentile_cont(0.99) WITHIN GROUP (ORDER BY latency) AS p99
          FROM visits GROUP BY 1, 2) r USING (day, page)
  JOIN (SELECT day, page, tdigest_percentile(latency, 0.99) AS p99 FROM v_1d GROUP BY 1, 2) p USING (day, page)
 ORDER BY 1, 2;

-- A cycle of flows is refused: a flow may not read, directly or through other flows,
-- the rows it writes
CREATE TABLE t_a (ts timestamptz NOT NULL PRIMARY KEY, n numeric);
SELECT flownode.create_flow('fa', 't_b', $$SELECT date_trunc('hour', ts) AS ts, sum(n) AS n FROM t_a GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('fb', 't_c', $$SELECT date_trunc('day', ts) AS ts, sum(n) AS n FROM t_b GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('fc', 't_a', $$SELECT date_trunc('day', ts) AS ts, sum(n) AS n FROM t_c GROUP BY 1$$,
  eval_interval => '1 hour');
SELECT flownode.create_flow('fc', 't_a', $$SELECT date_trunc('day', ts) AS ts, sum(n) AS n FROM t_b GROUP BY 1$$,
  eval_interval => '1 hour');
-- through or_replace: fb, redefined to write into t_a, would close fa's loop
SELECT flownode.create_flow('fb', 't_a', $$SELECT date_trunc('day', ts) AS ts, sum(n) AS n FROM t_b GROUP BY 1$$,
  eval_interval => '1 hour', or_replace => true);
SELECT flow_name, upstream_flows, downstream_flows FROM flownode.flows WHERE flow_name IN ('fa', 'fb') ORDER BY 1;
-- nothing was left behind by the refused ones
SELECT count(*) AS flows FROM flownode.flows WHERE flow_name IN ('fc');

-- A flow whose sink is a partition of another flow's source is upstream of it
CREATE TABLE parted (ts timestamptz NOT NULL, n numeric) PARTITION BY RANGE (ts);
CREATE TABLE parted_2024 PARTITION OF parted FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
ALTER TABLE parted_2024 ADD PRIMARY KEY (ts);
SELECT flownode.create_flow('into_part', 'parted_2024',
  $$SELECT date_trunc('hour', ts) AS ts, sum(n) AS n FROM t_a WHERE ts >= '2024-01-01' AND ts < '2025-01-01' GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('over_parted', 'over_parted',
  $$SELECT date_trunc('day', ts) AS day, sum(n) AS n FROM parted GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flow_name, upstream_flows, downstream_flows FROM flownode.flows
 WHERE flow_name IN ('into_part', 'over_parted') ORDER BY 1;
INSERT INTO t_a VALUES ('2024-06-01 10:00', 5), ('2024-06-01 11:30', 7), ('2023-12-31 23:00', 100);
SELECT flownode.flush_flow('over_parted', cascade => true) > 0 AS refreshed, flow_diff('over_parted');
SELECT * FROM over_parted ORDER BY 1;

-- Another role's flows: a cascade needs the right to flush every flow it reaches
CREATE ROLE chain_other;
GRANT EXECUTE ON FUNCTION flownode.create_flow TO chain_other;
GRANT CREATE ON SCHEMA public TO chain_other;
GRANT SELECT, TRIGGER ON s_1d TO chain_other;
SET ROLE chain_other;
SELECT flownode.create_flow('s_1mon', 's_1mon',
  $$SELECT date_trunc('month', day) AS month, host, sum(n) AS n FROM s_1d GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flow_name, upstream_flows, downstream_flows FROM flownode.flows ORDER BY 1;
SELECT flownode.flush_flow('s_1mon', cascade => true);
SELECT flownode.flush_flow('s_1mon') AS windows;
RESET ROLE;
SELECT flow_name, downstream_flows FROM flownode.flows WHERE flow_name = 's_1d';
SELECT flownode.drop_flow('s_1mon');
DROP TABLE s_1mon;
REVOKE ALL ON SCHEMA public FROM chain_other;
REVOKE ALL ON s_1d FROM chain_other;
REVOKE EXECUTE ON FUNCTION flownode.create_flow FROM chain_other;
DROP ROLE chain_other;

SELECT flownode.drop_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
DROP VIEW direct_1h, direct_1d;
DROP FUNCTION top_diff();
DROP TABLE samples, s_1m, s_1h, s_1d, visits, v_1h, v_1d, t_a, t_b, t_c, parted, over_parted;
