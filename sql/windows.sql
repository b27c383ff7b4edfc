-- TimeWindowExpr: date_bin and date_trunc over timestamp and timestamptz, calendar
-- units of variable width, DST days, sub-second strides; and a window-less flow.
SET timezone = 'America/New_York';
CREATE TABLE ev (ts timestamptz NOT NULL, local_ts timestamp NOT NULL, k text NOT NULL, v int);
CREATE INDEX ON ev (ts);
-- every 37 minutes for 500 days, from before the 2024 spring DST change
INSERT INTO ev SELECT t, t AT TIME ZONE 'America/New_York', 'k' || (i % 2), i % 100
  FROM generate_series(0, 19459) i, LATERAL (SELECT timestamptz '2024-01-30 00:00' + i * interval '37 minutes') s(t);

-- calendar months in the session's time zone (kept with the flow)
SELECT flownode.create_flow('by_month', 'ev_month',
  $$SELECT date_trunc('month', ts) AS month, k, sum(v) AS total, count(*) AS n FROM ev GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
-- days in an explicit zone, across DST changes (23 and 25 hour days)
SELECT flownode.create_flow('by_day_berlin', 'ev_day_berlin',
  $$SELECT date_trunc('day', ts, 'Europe/Berlin') AS day, sum(v) AS total, count(*) AS n FROM ev GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
-- local days in the flow's zone (New York)
SELECT flownode.create_flow('by_day', 'ev_day',
  $$SELECT date_trunc('DAYS', ts) AS day, sum(v) AS total FROM ev GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
-- years and quarters over a timestamp without time zone
SELECT flownode.create_flow('by_quarter', 'ev_quarter',
  $$SELECT date_trunc('quarter', local_ts) AS q, k, max(v) AS hi FROM ev GROUP BY k, 1$$,
  eval_interval => '1 hour') > 0;
-- date_bin with an origin off the hour over a timestamp column
SELECT flownode.create_flow('bin_local', 'ev_bin_local',
  $$SELECT date_bin('90 minutes', local_ts, timestamp '2001-02-03 04:05:06') AS b, count(*) AS n
      FROM ev GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
-- hours in a zone 5:45 off UTC, and days in a fixed-offset abbreviation
SELECT flownode.create_flow('hour_kathmandu', 'ev_hour_ktm',
  $$SELECT date_trunc('hour', ts, 'Asia/Kathmandu') AS h, count(*) AS n FROM ev GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('day_est', 'ev_day_est',
  $$SELECT date_trunc('day', ts, 'EST') AS d, sum(v) AS total FROM ev GROUP BY 1$$,
  eval_interval => '1 hour') > 0;

SELECT flow_name, window_expr FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, flow_diff(flow_name) FROM flownode.flows ORDER BY flow_name;

-- Berlin's 2024 DST days hold 23 and 25 hours of rows
SELECT day, n FROM ev_day_berlin WHERE day IN ('2024-03-31 00:00+01', '2024-10-27 00:00+02') ORDER BY 1;

-- one row at the very end of a month, one at the start of the next, and one in the
-- last second of the DST fall-back day: each marks exactly one window
INSERT INTO ev VALUES ('2024-02-29 23:59:59.999999', '2024-02-29 23:59:59.999999', 'k0', 1000),
                      ('2024-03-01 00:00:00', '2024-03-01 00:00:00', 'k0', 1000),
                      ('2024-11-03 23:59:59', '2024-11-03 23:59:59', 'k1', 1000);
SELECT flow_name, dirty_windows FROM flownode.flows ORDER BY flow_name;
SELECT flownode.flush_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, flow_diff(flow_name) FROM flownode.flows ORDER BY flow_name;

-- an UPDATE across a month boundary and a DELETE of a whole month
UPDATE ev SET ts = ts + interval '1 month', local_ts = local_ts + interval '1 month' WHERE v = 1000;
DELETE FROM ev WHERE ts >= '2025-04-01' AND ts < '2025-05-01';
SELECT flownode.flush_flow(flow_name) > 0 FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, flow_diff(flow_name) FROM flownode.flows ORDER BY flow_name;
SELECT count(*) FROM ev_month WHERE month = '2025-04-01';

-- a flow's windows do not depend on the writer's time zone
SET timezone = 'Asia/Kolkata';
INSERT INTO ev VALUES ('2024-06-30 23:30:00-04', '2024-06-30 23:30:00', 'k0', 5);
SELECT flow_name, flownode.flush_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
RESET timezone;
SET timezone = 'America/New_York';
SELECT flow_name, flow_diff(flow_name) FROM flownode.flows ORDER BY flow_name;

-- sub-second strides
CREATE TABLE fast (ts timestamptz NOT NULL, v int);
INSERT INTO fast SELECT timestamptz '2024-01-01' + i * interval '7 milliseconds', i FROM generate_series(0, 999) i;
SELECT flownode.create_flow('fast_250ms', 'fast_250ms',
  $$SELECT date_bin('250 milliseconds', ts, timestamptz '2000-01-01') AS b, sum(v) AS s FROM fast GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('fast_us', 'fast_us',
  $$SELECT date_trunc('milliseconds', ts) AS b, count(*) AS n FROM fast GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
INSERT INTO fast VALUES ('2024-01-01 00:00:00.2499', 1), ('2024-01-01 00:00:00.25', 1), ('2024-01-01 00:00:01.000001', 1);
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'fast%' ORDER BY 1;
SELECT flownode.flush_flow('fast_250ms'), flownode.flush_flow('fast_us');
SELECT flow_diff('fast_250ms'), flow_diff('fast_us');

-- units of at most a week in a zone whose offset never changes are fixed strides
-- (computed from one date_trunc answer): hours and weeks over a timestamp column and
-- in UTC, minutes in EST, far from now and before the common era
CREATE TABLE far (ts timestamptz NOT NULL, local_ts timestamp NOT NULL, v int);
INSERT INTO far SELECT t, t AT TIME ZONE 'UTC', i
  FROM generate_series(0, 2999) i, LATERAL (SELECT timestamptz '2024-02-26 00:00+00' + i * interval '173 minutes') s(t);
INSERT INTO far VALUES ('0044-03-15 12:00+00 BC', '0044-03-15 12:00 BC', 1), ('1500-06-01 00:00+00', '1500-06-01', 2),
                       ('2999-12-31 23:59:59.999999+00', '2999-12-31 23:59:59.999999', 3);
SELECT flownode.create_flow('far_week_local', 'far_week_local',
  $$SELECT date_trunc('week', local_ts) AS w, count(*) AS n, sum(v) AS s FROM far GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('far_week_utc', 'far_week_utc',
  $$SELECT date_trunc('week', ts, 'UTC') AS w, count(*) AS n, sum(v) AS s FROM far GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('far_hour_local', 'far_hour_local',
  $$SELECT date_trunc('hour', local_ts) AS h, count(*) AS n FROM far GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('far_minute_est', 'far_minute_est',
  $$SELECT date_trunc('minute', ts, 'EST') AS m, count(*) AS n FROM far GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
-- the last microsecond of a Sunday and the first of a Monday, in each era: one
-- window each, and each in the week date_trunc puts it in; and a row some 198,000
-- years from the first (the stride arithmetic is exact at any distance from its anchor)
INSERT INTO far VALUES ('2024-03-03 23:59:59.999999+00', '2024-03-03 23:59:59.999999', 10),
                       ('2024-03-04 00:00:00+00', '2024-03-04 00:00:00', 20),
                       ('0044-03-17 23:59:59.999999+00 BC', '0044-03-17 23:59:59.999999 BC', 30),
                       ('0044-03-18 00:00:00+00 BC', '0044-03-18 00:00:00 BC', 40),
                       ('200000-05-05 05:05:05+00', '200000-05-05 05:05:05', 500);
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'far%' ORDER BY 1;
SELECT flownode.flush_flow(flow_name) FROM flownode.flows WHERE flow_name LIKE 'far%' ORDER BY flow_name;
SELECT flow_name, flow_diff(flow_name) FROM flownode.flows WHERE flow_name LIKE 'far%' ORDER BY 1;
SELECT w, n, s FROM far_week_local WHERE s >= 10 AND s < 100 ORDER BY 1;
UPDATE far SET ts = ts + interval '3 days', local_ts = local_ts + interval '3 days' WHERE v % 7 = 0;
DELETE FROM far WHERE v % 11 = 0;
SELECT flownode.flush_flow(flow_name) > 0 FROM flownode.flows WHERE flow_name LIKE 'far%' ORDER BY flow_name;
SELECT flow_name, flow_diff(flow_name) FROM flownode.flows WHERE flow_name LIKE 'far%' ORDER BY 1;

-- a window-less flow is recomputed whole when anything changed
SELECT flownode.create_flow('per_key', 'ev_per_key',
  $$SELECT k, count(*) AS n, sum(v) AS total FROM ev GROUP BY k$$, eval_interval => '1 hour') > 0;
SELECT * FROM ev_per_key ORDER BY k;
INSERT INTO ev VALUES ('2024-05-05', '2024-05-05', 'k2', 1);
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'per_key';
SELECT flownode.flush_flow('per_key');
DELETE FROM ev WHERE k = 'k1';
SELECT flownode.flush_flow('per_key');
SELECT * FROM ev_per_key ORDER BY k;
SELECT flow_diff('per_key');

SELECT flownode.drop_flow(flow_name) FROM flownode.flows;
DROP TABLE ev, fast, ev_month, ev_day_berlin, ev_day, ev_quarter, ev_bin_local, fast_250ms, fast_us, ev_per_key,
  ev_hour_ktm, ev_day_est, far, far_week_local, far_week_utc, far_hour_local, far_minute_est;
