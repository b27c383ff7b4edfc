-- Windows at the ends of PostgreSQL's timestamp range, 4714-11-24 00:00 BC to
-- 294276-12-31 23:59:59.999999: a write PostgreSQL accepts is never refused by
-- marking. The window holding the largest timestamp ends at infinity (its next month,
-- day or bin would be past it); the one holding the smallest starts at it. Where
-- PostgreSQL's own date_trunc/date_bin fails for a row, the write is marked all the
-- same and the flow's refresh fails visibly, until the row is gone.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- The largest timestamp: every kind of flow, timestamp and timestamptz columns.
CREATE TABLE top (ts timestamptz NOT NULL, lts timestamp NOT NULL, k int NOT NULL, v int);
CREATE INDEX ON top (ts);
CREATE INDEX ON top (lts);
INSERT INTO top VALUES ('2024-05-05 05:05', '2024-05-05 05:05', 0, 1);
SELECT count(*) FROM (VALUES
  (flownode.create_flow('top_year', 'top_year',
     $$SELECT date_trunc('year', ts) AS w, k, count(*) AS n, sum(v) AS s FROM top GROUP BY 1, 2$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_month_ny', 'top_month_ny',
     $$SELECT date_trunc('month', ts, 'America/New_York') AS w, count(*) AS n, sum(v) AS s FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_week', 'top_week',
     $$SELECT date_trunc('week', ts) AS w, count(*) AS n, sum(v) AS s FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_day_tokyo', 'top_day_tokyo',
     $$SELECT date_trunc('day', ts, 'Asia/Tokyo') AS w, count(*) AS n, sum(v) AS s FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_hour_ktm', 'top_hour_ktm',
     $$SELECT date_trunc('hour', ts, 'Asia/Kathmandu') AS w, count(*) AS n, sum(v) AS s FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_century', 'top_century',
     $$SELECT date_trunc('century', ts) AS w, count(*) AS n, sum(v) AS s FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_bin_1d', 'top_bin_1d',
     $$SELECT date_bin('1 day', ts, timestamptz '2000-01-01 06:00+00') AS w, count(*) AS n, sum(v) AS s
         FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_lday', 'top_lday',
     $$SELECT date_trunc('day', lts) AS w, count(*) AS n, sum(v) AS s FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_lweek', 'top_lweek',
     $$SELECT date_trunc('week', lts) AS w, count(*) AS n, sum(v) AS s FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_lmonth', 'top_lmonth',
     $$SELECT date_trunc('month', lts) AS w, count(*) AS n, sum(v) AS s FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_ldecade', 'top_ldecade',
     $$SELECT date_trunc('decade', lts) AS w, count(*) AS n, sum(v) AS s FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_lmillennium', 'top_lmillennium',
     $$SELECT date_trunc('millennium', lts) AS w, count(*) AS n, sum(v) AS s FROM top GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('top_lbin_7d', 'top_lbin_7d',
     $$SELECT date_bin('7 days', lts, timestamp '2000-01-02') AS w, count(*) AS n, sum(v) AS s
         FROM top GROUP BY 1$$,
     eval_interval => '1 hour'))) f(id);

-- the largest timestamp, and times in the last windows: before the fix each INSERT
-- failed with "timestamp out of range" from the marking trigger
INSERT INTO top VALUES ('294276-12-31 23:59:59.999999+00', '294276-12-31 23:59:59.999999', 1, 10);
INSERT INTO top VALUES ('294276-12-31 15:00:00+00', '294276-12-31 15:00:00', 1, 100),      -- Tokyo's last day
                       ('294276-12-31 14:59:59.999999+00', '294276-12-31 14:59:59.999999', 2, 1000),
                       ('294276-12-25 00:00:00+00', '294276-12-25 00:00:00', 2, 10000),     -- the last week
                       ('294276-06-01 00:00:00+00', '294276-06-01 00:00:00', 3, 100000),
                       ('294201-01-01 00:00:00+00', '294201-01-01 00:00:00', 3, 1000000),   -- the last century
                       ('294001-01-01 00:00:00+00', '294001-01-01 00:00:00', 4, 10000000); -- the last millennium
-- each row in one window: the last one, or those just before it
SELECT flow_name, dirty_windows FROM flownode.flows ORDER BY flow_name;
-- the record keeps the last window as [lower, 2^63 - 1): int8 ranges up to infinity
SELECT f.flow_name, max(upper(r)) AS upper_bound, max(upper(r)) = 9223372036854775807 AS to_infinity
  FROM flownode.pending p JOIN flownode.flow f USING (flow_id), unnest(p.ranges) r
 WHERE f.flow_name IN ('top_year', 'top_lmonth', 'top_lbin_7d') GROUP BY 1 ORDER BY 1;
SELECT flow_name, flownode.flush_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, flow_diff(flow_name), state, dirty_windows FROM flownode.flows ORDER BY flow_name;
SELECT * FROM top_year ORDER BY w, k;
SELECT * FROM top_day_tokyo ORDER BY w;
SELECT * FROM top_lbin_7d ORDER BY w;
SELECT * FROM top_lmillennium ORDER BY w;
SELECT count(*) FROM flownode.pending;

-- a row at infinity belongs to no window: the last window's refresh (lts < 'infinity')
-- leaves it out of the sink
INSERT INTO top VALUES ('infinity', 'infinity', 1, 5), ('294276-12-31 23:00+00', '294276-12-31 23:00', 1, 20);
SELECT flownode.flush_flow('top_year'), flownode.flush_flow('top_lday');
SELECT * FROM top_year WHERE w >= '294276-01-01' ORDER BY w, k;
SELECT * FROM top_lday WHERE w > '294276-12-30' ORDER BY w;
DELETE FROM top WHERE ts = 'infinity';

-- UPDATE within and out of the last windows, then DELETE
UPDATE top SET v = v + 1 WHERE ts = '294276-12-31 23:59:59.999999+00';
UPDATE top SET ts = ts - interval '1 day', lts = lts - interval '1 day' WHERE v = 100;
UPDATE top SET ts = '2024-05-05 06:00', lts = '2024-05-05 06:00' WHERE v = 1000;
UPDATE top SET ts = '294276-12-31 23:59:59.999999', lts = '294276-12-31 23:59:59.999999' WHERE k = 0;
SELECT flow_name, flownode.flush_flow(flow_name) > 0 FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, flow_diff(flow_name) FROM flownode.flows ORDER BY flow_name;
SELECT * FROM top_year ORDER BY w, k;
DELETE FROM top WHERE ts >= '294276-12-31 20:00+00';
SELECT flow_name, flownode.flush_flow(flow_name) > 0 FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, flow_diff(flow_name), state FROM flownode.flows ORDER BY flow_name;
SELECT * FROM top_lday WHERE w > '294276-12-30' ORDER BY w;

SELECT flownode.drop_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
DROP TABLE top, top_year, top_month_ny, top_week, top_day_tokyo, top_hour_ktm, top_century, top_bin_1d,
  top_lday, top_lweek, top_lmonth, top_ldecade, top_lmillennium, top_lbin_7d;

-- Near the smallest timestamp: windows PostgreSQL computes. 4714-11-24 BC is a Monday
-- midnight, so its day, week and day bin start with it; 4713-01-01 BC is the first
-- year that begins after it, and December 4714 BC the first month, in UTC and in New
-- York (local mean time then, 4:56:02 behind).
CREATE TABLE bottom (ts timestamptz NOT NULL, lts timestamp NOT NULL, k int NOT NULL, v int);
INSERT INTO bottom VALUES ('2024-05-05 05:05', '2024-05-05 05:05', 0, 1);
SELECT count(*) FROM (VALUES
  (flownode.create_flow('bottom_day', 'bottom_day',
     $$SELECT date_trunc('day', ts) AS w, count(*) AS n, sum(v) AS s FROM bottom GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('bottom_lweek', 'bottom_lweek',
     $$SELECT date_trunc('week', lts) AS w, k, count(*) AS n, sum(v) AS s FROM bottom GROUP BY 1, 2$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('bottom_bin_1d', 'bottom_bin_1d',
     $$SELECT date_bin('1 day', ts, timestamptz '2000-01-01 00:00+00') AS w, count(*) AS n, sum(v) AS s
         FROM bottom GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('bottom_lbin_7d', 'bottom_lbin_7d',
     $$SELECT date_bin('7 days', lts, timestamp '2000-01-03') AS w, count(*) AS n, sum(v) AS s
         FROM bottom GROUP BY 1$$,
     eval_interval => '1 hour'))) f(id);
CREATE TABLE bottom_year (ts timestamptz NOT NULL, lts timestamp NOT NULL, v int);
INSERT INTO bottom_year VALUES ('2024-05-05 05:05', '2024-05-05 05:05', 1);
SELECT count(*) FROM (VALUES
  (flownode.create_flow('bottom_year', 'bottom_year_sink',
     $$SELECT date_trunc('year', ts) AS w, count(*) AS n, sum(v) AS s FROM bottom_year GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('bottom_month_ny', 'bottom_month_ny',
     $$SELECT date_trunc('month', ts, 'America/New_York') AS w, count(*) AS n, sum(v) AS s
         FROM bottom_year GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('bottom_lmonth', 'bottom_lmonth',
     $$SELECT date_trunc('month', lts) AS w, count(*) AS n, sum(v) AS s FROM bottom_year GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('bottom_lyear_bin', 'bottom_lyear_bin',
     $$SELECT date_bin('1 day', lts, timestamp '2000-01-01') AS w, count(*) AS n FROM bottom_year GROUP BY 1$$,
     eval_interval => '1 hour'))) f(id);
INSERT INTO bottom VALUES ('4714-11-24 00:00:00+00 BC', '4714-11-24 00:00:00 BC', 1, 10),
                          ('4714-11-24 00:00:00.000001+00 BC', '4714-11-24 00:00:00.000001 BC', 2, 100),
                          ('4714-11-30 23:59:59.999999+00 BC', '4714-11-30 23:59:59.999999 BC', 1, 1000),
                          ('4714-12-01 00:00:00+00 BC', '4714-12-01 00:00:00 BC', 1, 10000),
                          ('-infinity', '-infinity', 1, 5);
INSERT INTO bottom_year VALUES ('4713-01-01 00:00:00+00 BC', '4713-01-01 00:00:00 BC', 10),
                               ('4713-01-01 00:00:00.000001+00 BC', '4713-01-01 00:00:00.000001 BC', 100),
                               ('4713-01-01 04:56:02+00 BC', '4713-01-01 04:56:02 BC', 1000),
                               ('4713-01-01 04:56:01.999999+00 BC', '4713-01-01 04:56:01.999999 BC', 10000);
SELECT flow_name, dirty_windows FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, flownode.flush_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
-- a row at -infinity belongs to no window: the first window's refresh (ts >= the
-- smallest timestamp) leaves it out of the sink
SELECT * FROM bottom_day ORDER BY w;
SELECT * FROM bottom_lweek ORDER BY w, k;
DELETE FROM bottom WHERE ts = '-infinity';
SELECT flow_name, flow_diff(flow_name), state FROM flownode.flows ORDER BY flow_name;
SELECT * FROM bottom_month_ny ORDER BY w;
UPDATE bottom SET v = v + 1, ts = ts + interval '7 days', lts = lts + interval '7 days' WHERE v = 100;
UPDATE bottom_year SET ts = ts + interval '1 hour', lts = lts + interval '1 hour' WHERE v = 10000;
DELETE FROM bottom WHERE v = 10;
DELETE FROM bottom_year WHERE v = 10;
SELECT flow_name, flownode.flush_flow(flow_name) > 0 FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, flow_diff(flow_name), state FROM flownode.flows ORDER BY flow_name;
SELECT * FROM bottom_lweek ORDER BY w, k;
SELECT flownode.drop_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
DROP TABLE bottom, bottom_year, bottom_day, bottom_lweek, bottom_bin_1d, bottom_lbin_7d, bottom_year_sink,
  bottom_month_ny, bottom_lmonth, bottom_lyear_bin;

-- Rows whose window PostgreSQL itself cannot compute: the window would start before
-- the smallest timestamp (a month, year, century in November 4714 BC; a day in New
-- York, west of UTC; a 7-day bin from a Sunday), or date_bin's row is more than
-- 292,277 years from its origin. The write is marked all the same (the first window
-- of the range); the refresh fails with PostgreSQL's error, visibly, and heals when
-- the row is gone. One table per flow, so that each fails alone.
CREATE TABLE low_month (ts timestamp NOT NULL, v int);
CREATE TABLE low_day_ny (ts timestamptz NOT NULL, v int);
CREATE TABLE low_bin_7d (ts timestamptz NOT NULL, v int);
CREATE TABLE low_bin_far (ts timestamptz NOT NULL, v int);
CREATE TABLE low_century (ts timestamptz NOT NULL, v int);
SELECT count(*) FROM (VALUES
  (flownode.create_flow('low_month', 'low_month_sink',
     $$SELECT date_trunc('month', ts) AS w, count(*) AS n FROM low_month GROUP BY 1$$, eval_interval => '1 hour')),
  (flownode.create_flow('low_day_ny', 'low_day_ny_sink',
     $$SELECT date_trunc('day', ts, 'America/New_York') AS w, count(*) AS n FROM low_day_ny GROUP BY 1$$,
     eval_interval => '1 hour')),
  (flownode.create_flow('low_bin_7d', 'low_bin_7d_sink',
     $$SELECT date_bin('7 days', ts, timestamptz '2000-01-02 00:00+00') AS w, count(*) AS n
         FROM low_bin_7d GROUP BY 1$$, eval_interval => '1 hour')),
  (flownode.create_flow('low_bin_far', 'low_bin_far_sink',
     $$SELECT date_bin('1 day', ts, timestamptz '294276-12-31 12:00+00') AS w, count(*) AS n
         FROM low_bin_far GROUP BY 1$$, eval_interval => '1 hour')),
  (flownode.create_flow('low_century', 'low_century_sink',
     $$SELECT date_trunc('century', ts) AS w, count(*) AS n FROM low_century GROUP BY 1$$,
     eval_interval => '1 hour'))) f(id);
-- PostgreSQL accepts each row, and so does marking
INSERT INTO low_month VALUES ('4714-11-30 23:59:59.999999 BC', 1), ('2024-01-01', 2);
INSERT INTO low_day_ny VALUES ('4714-11-24 04:56:01.999999+00 BC', 1), ('2024-01-01', 2);
INSERT INTO low_bin_7d VALUES ('4714-11-24 00:00+00 BC', 1), ('2024-01-01', 2);
INSERT INTO low_bin_far VALUES ('0001-01-01 00:00+00', 1), ('2024-01-01', 2);
INSERT INTO low_century VALUES ('4714-11-24 00:00+00 BC', 1), ('2024-01-01', 2);
-- while date_trunc and date_bin fail for them
SELECT date_trunc('month', timestamp '4714-11-30 23:59:59.999999 BC');
SELECT date_bin('1 day', timestamptz '0001-01-01 00:00+00', timestamptz '294276-12-31 12:00+00');
SELECT flow_name, dirty_windows FROM flownode.flows ORDER BY flow_name;
SELECT flownode.flush_flow('low_month');
SELECT flownode.flush_flow('low_day_ny');
SELECT flownode.flush_flow('low_bin_7d');
SELECT flownode.flush_flow('low_bin_far');
SELECT flownode.flush_flow('low_century');
SELECT flow_name, state, last_error, failures > 0 AS failed FROM flownode.flows NATURAL JOIN (SELECT flow_id, failures FROM flownode.flow_info) i ORDER BY flow_name;
-- the row gone, the flows heal
DELETE FROM low_month WHERE v = 1;
DELETE FROM low_day_ny WHERE v = 1;
DELETE FROM low_bin_7d WHERE v = 1;
DELETE FROM low_bin_far WHERE v = 1;
DELETE FROM low_century WHERE v = 1;
SELECT flow_name, flownode.flush_flow(flow_name) > 0 FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, state, dirty_windows, flow_diff(flow_name) FROM flownode.flows ORDER BY flow_name;
-- a flow created over such a row fails at once, with PostgreSQL's error
INSERT INTO low_month VALUES ('4714-11-24 00:00 BC', 3);
SELECT flownode.create_flow('low_month_2', 'low_month_2',
  $$SELECT date_trunc('month', ts) AS w, count(*) AS n FROM low_month GROUP BY 1$$);
SELECT flownode.drop_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
DROP TABLE low_month, low_day_ny, low_bin_7d, low_bin_far, low_century, low_month_sink, low_day_ny_sink,
  low_bin_7d_sink, low_bin_far_sink, low_century_sink;
RESET timezone;
RESET datestyle;
