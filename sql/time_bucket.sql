-- flownode.time_bucket (TimescaleDB's semantics) and time_bucket as a flow's window;
-- date_bin in a time zone as a window. Expected values are TimescaleDB's documented
-- rules (docs: api/latest/hyperfunctions/time_bucket, "Buckets are aligned to start
-- at midnight in UTC+0", the default origin Monday 2000-01-03, month buckets from
-- 2000-01-01; time_bucket_ng's examples, whose months and zones time_bucket took
-- over) and its src/time_bucket.c.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS flownode;
RESET client_min_messages;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- Each case: the call, and what TimescaleDB documents it returns.
CREATE TABLE cases (name text, got text, want text);
INSERT INTO cases VALUES
 -- docs Samples "Simple five-minute averaging": 5-minute buckets from the origin
 ('5 min', flownode.time_bucket('5 minutes', timestamp '2024-05-06 10:13:27')::text, '2024-05-06 10:10:00'),
 -- docs: buckets of a week start on Monday (origin 2000-01-03, a Monday)
 ('week', flownode.time_bucket('1 week', timestamp '2024-05-09 12:00')::text, '2024-05-06 00:00:00'),
 ('week tz', flownode.time_bucket('1 week', timestamptz '2024-05-09 12:00+00')::text, '2024-05-06 00:00:00+00'),
 -- docs Samples "rounding": offset of -2.5 minutes moves the alignment
 ('offset', flownode.time_bucket('5 minutes', timestamp '2024-05-06 10:13:27', '-2.5 minutes'::interval)::text,
  '2024-05-06 10:12:30'),
 -- docs Samples: a week from Sunday, origin 2017-12-31 (a Sunday)
 ('origin', flownode.time_bucket('1 week', timestamp '2024-05-09', timestamp '2017-12-31')::text, '2024-05-05 00:00:00'),
 -- time_bucket_ng docs: time_bucket_ng('3 month', date '2021-08-01') = 2021-07-01
 ('3 months', flownode.time_bucket('3 months', date '2021-08-01')::text, '2021-07-01'),
 -- time_bucket_ng docs: time_bucket_ng('1 year', date '2021-08-01') = 2021-01-01
 ('1 year', flownode.time_bucket('1 year', date '2021-08-01')::text, '2021-01-01'),
 -- month buckets count from the origin's month (its day ignored): 2 months from March
 ('2 months origin', flownode.time_bucket('2 months', timestamp '2024-06-15', timestamp '2000-03-20')::text,
  '2024-05-01 00:00:00'),
 -- time_bucket_ng docs: '1 month' of 2001-02-03 12:34:56 MSK in Europe/Moscow = 2001-02-01 00:00:00+03
 ('month zone', flownode.time_bucket('1 month', timestamptz '2001-02-03 12:34:56 MSK', 'Europe/Moscow')::text,
  '2001-01-31 21:00:00+00'),
 -- docs: "the buckets are realigned to start at midnight in the time zone you specify"
 ('day zone', flownode.time_bucket('1 day', timestamptz '2024-05-06 03:00+00', 'America/New_York')::text,
  '2024-05-05 04:00:00+00'),
 -- timestamptz without a zone is bucketed in UTC (sql/time_bucket.sql: "bucketing of timestamptz happens at UTC time")
 ('month utc', flownode.time_bucket('1 month', timestamptz '2024-03-01 02:00+05')::text, '2024-02-01 00:00:00+00'),
 -- a date is bucketed without a time zone; widths must be whole days
 ('date 10d', flownode.time_bucket('10 days', date '2024-05-09')::text, '2024-05-06'),
 ('date origin', flownode.time_bucket('7 days', date '2024-05-09', date '2024-05-08')::text, '2024-05-08'),
 ('date offset', flownode.time_bucket('1 month', date '2024-05-09', '2 days'::interval)::text, '2024-05-03'),
 -- integers: multiples of the width, rounded down (src/time_bucket.c TIME_BUCKET)
 ('int', flownode.time_bucket(10, 27)::text, '20'),
 ('int negative', flownode.time_bucket(10, -27)::text, '-30'),
 ('int offset', flownode.time_bucket(10, 27, 5)::text, '25'),
 ('int2', flownode.time_bucket(10::int2, 9::int2)::text, '0'),
 ('int8', flownode.time_bucket(1000::int8, -1::int8, 1::int8)::text, '-999'),
 -- edge cases: before the origin, infinities, Feb 29, leap years, DST
 ('before origin', flownode.time_bucket('1 hour', timestamp '1999-12-31 23:30')::text, '1999-12-31 23:00:00'),
 ('far before', flownode.time_bucket('3 days', timestamp '1900-01-01 12:00')::text, '1899-12-30 00:00:00'),
 ('months before', flownode.time_bucket('3 months', timestamp '1999-11-15')::text, '1999-10-01 00:00:00'),
 ('infinity', flownode.time_bucket('1 month', timestamptz 'infinity')::text, 'infinity'),
 ('-infinity', flownode.time_bucket('1 day', date '-infinity')::text, '-infinity'),
 ('tz infinity', flownode.time_bucket('1 day', timestamptz 'infinity', 'Europe/Berlin')::text, 'infinity'),
 ('feb 29', flownode.time_bucket('1 year', timestamp '2024-02-29 23:59')::text, '2024-01-01 00:00:00'),
 ('feb 29 month', flownode.time_bucket('1 month', date '2024-02-29')::text, '2024-02-01'),
 ('feb 29 3 months', flownode.time_bucket('3 months', timestamp '2024-02-29 12:00')::text, '2024-01-01 00:00:00'),
 -- a Berlin day across the spring change is 23 hours; 4-hour buckets in local time
 ('dst day', flownode.time_bucket('1 day', timestamptz '2024-03-31 20:00+00', 'Europe/Berlin')::text,
  '2024-03-30 23:00:00+00'),
 ('dst 4h', flownode.time_bucket('4 hours', timestamptz '2024-03-31 02:30+00', 'Europe/Berlin')::text,
  '2024-03-31 02:00:00+00'),
 ('dst origin', flownode.time_bucket('1 day', timestamptz '2024-03-31 20:00+00', 'Europe/Berlin',
                                     origin => timestamptz '2000-01-01 06:00+01')::text, '2024-03-31 04:00:00+00'),
 ('dst offset', flownode.time_bucket('1 day', timestamptz '2024-03-31 20:00+00', 'Europe/Berlin',
                                     "offset" => '6 hours')::text, '2024-03-31 04:00:00+00'),
 ('null origin', flownode.time_bucket('1 day', timestamptz '2024-03-31 20:00+00', 'Europe/Berlin', NULL, NULL)::text,
  '2024-03-30 23:00:00+00'),
 ('null zone', coalesce(flownode.time_bucket('1 day', now(), NULL::text)::text, 'NULL'), 'NULL');
SELECT name, got, want FROM cases WHERE got IS DISTINCT FROM want;
SELECT count(*) AS cases FROM cases;

-- refusals, each saying what works
SELECT flownode.time_bucket('1 month 1 day', timestamp '2024-01-01');
SELECT flownode.time_bucket('0 seconds', timestamp '2024-01-01');
SELECT flownode.time_bucket('6 hours', date '2024-01-01');
SELECT flownode.time_bucket(0, 5);
SELECT flownode.time_bucket(10::int2, (-32768)::int2);
-- immutable, strict, parallel safe, as TimescaleDB declares them
SELECT DISTINCT provolatile, proisstrict, proparallel FROM pg_proc
 WHERE proname = 'time_bucket' AND pronamespace = 'flownode'::regnamespace ORDER BY 1, 2;

-- Compares a flow's sink with its query, both ways.
CREATE FUNCTION bucket_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; missing bigint; extra bigint;
BEGIN
  SELECT user_query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT * FROM %s) d', q, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL (%s)) d', s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;

-- time_bucket as a flow's window: every form
SET timezone = 'America/New_York';
CREATE TABLE tb (ts timestamptz NOT NULL, lts timestamp NOT NULL, d date NOT NULL, k text NOT NULL, v int);
CREATE INDEX ON tb (ts);
-- every 53 minutes for 400 days, across both 2024 DST changes in New York and Berlin
INSERT INTO tb SELECT t, t AT TIME ZONE 'UTC', (t AT TIME ZONE 'UTC')::date, 'k' || (i % 3), i % 97
  FROM generate_series(0, 10867) i, LATERAL (SELECT timestamptz '2024-01-15 00:00+00' + i * interval '53 minutes') s(t);

SELECT flownode.create_flow('tb_fixed', 'tb_fixed',
  $$SELECT flownode.time_bucket('90 minutes', ts) AS b, k, sum(v) AS s, count(*) AS n FROM tb GROUP BY 1, 2$$) > 0;
SELECT flownode.create_flow('tb_offset', 'tb_offset',
  $$SELECT flownode.time_bucket('1 day', lts, '7 hours'::interval) AS b, sum(v) AS s FROM tb GROUP BY 1$$) > 0;
SELECT flownode.create_flow('tb_origin', 'tb_origin',
  $$SELECT flownode.time_bucket('1 week', ts, timestamptz '2017-12-31 00:00+00') AS b, count(*) AS n FROM tb GROUP BY 1$$) > 0;
SELECT flownode.create_flow('tb_3months', 'tb_3months',
  $$SELECT flownode.time_bucket('3 months', ts) AS b, k, sum(v) AS s FROM tb GROUP BY 1, 2$$) > 0;
SELECT flownode.create_flow('tb_year', 'tb_year',
  $$SELECT flownode.time_bucket('1 year', lts, timestamp '2000-07-01') AS b, count(*) AS n FROM tb GROUP BY 1$$) > 0;
SELECT flownode.create_flow('tb_date', 'tb_date',
  $$SELECT flownode.time_bucket('1 month', d) AS b, sum(v) AS s FROM tb GROUP BY 1$$) > 0;
SELECT flownode.create_flow('tb_date_days', 'tb_date_days',
  $$SELECT flownode.time_bucket('10 days', d, date '2024-01-05') AS b, sum(v) AS s FROM tb GROUP BY 1$$) > 0;
SELECT flownode.create_flow('tb_berlin', 'tb_berlin',
  $$SELECT flownode.time_bucket('4 hours', ts, 'Europe/Berlin') AS b, count(*) AS n FROM tb GROUP BY 1$$) > 0;
SELECT flownode.create_flow('tb_ny_15m', 'tb_ny_15m',
  $$SELECT flownode.time_bucket('15 minutes', ts, 'America/New_York') AS b, count(*) AS n, sum(v) AS s
      FROM tb GROUP BY 1$$) > 0;
SELECT flownode.create_flow('tb_ny_month', 'tb_ny_month',
  $$SELECT flownode.time_bucket('1 month', ts, 'America/New_York', "offset" => '1 day') AS b, count(*) AS n
      FROM tb GROUP BY 1$$) > 0;
SELECT flownode.create_flow('tb_ny_origin', 'tb_ny_origin',
  $$SELECT flownode.time_bucket('2 hours', ts, 'America/New_York', origin => timestamptz '2000-01-01 00:30-05')
           AS b, count(*) AS n FROM tb GROUP BY 1$$) > 0;
SELECT flownode.create_flow('zoned_bin', 'zoned_bin',
  $$SELECT date_bin('3 hours', ts AT TIME ZONE 'Europe/Berlin', timestamp '2000-01-01') AT TIME ZONE 'Europe/Berlin'
           AS b, k, count(*) AS n FROM tb GROUP BY 1, 2$$) > 0;
-- an integer epoch column read by to_timestamp
CREATE TABLE ep (e bigint NOT NULL, v int);
INSERT INTO ep SELECT 1704067200 + i * 7919, i FROM generate_series(0, 2000) i;
SELECT flownode.create_flow('tb_epoch', 'tb_epoch',
  $$SELECT flownode.time_bucket('1 week', to_timestamp(e), 'Asia/Kolkata') AS b, count(*) AS n, sum(v) AS s
      FROM ep GROUP BY 1$$) > 0;

SELECT flow_name, window_expr FROM flownode.flows WHERE flow_name LIKE 'tb%' OR flow_name = 'zoned_bin' ORDER BY 1;
SELECT flow_name, window_kind, window_stride, window_origin, window_unit, window_zone FROM flownode.flow
 WHERE flow_name LIKE 'tb%' OR flow_name = 'zoned_bin' ORDER BY 1;
SELECT flow_name, bucket_diff(flow_name) FROM flownode.flows ORDER BY 1;

-- the repeated hour of New York's fall change: its 15-minute buckets hold rows of
-- both hours, and a late row in the first one is refreshed with the second's
INSERT INTO tb VALUES ('2024-11-03 01:20-04', '2024-11-03 05:20', '2024-11-03', 'k0', 1000),
                      ('2024-11-03 01:50-05', '2024-11-03 06:50', '2024-11-03', 'k1', 1000),
                      ('2024-03-31 01:59:59+01', '2024-03-31 00:59:59', '2024-03-31', 'k2', 1000),
                      ('2024-02-29 23:59:59+00', '2024-02-29 23:59:59', '2024-02-29', 'k0', 1000);
SELECT flow_name, dirty_windows > 0 AS marked FROM flownode.flows ORDER BY 1;
SELECT flownode.flush_flow(flow_name) >= 0 FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, bucket_diff(flow_name) FROM flownode.flows ORDER BY 1;
-- an update moving rows across buckets, and a delete of a whole month
UPDATE tb SET ts = ts + interval '1 month', lts = lts + interval '1 month', d = d + 31 WHERE v = 1000;
DELETE FROM tb WHERE ts >= '2024-06-01' AND ts < '2024-07-01';
SELECT flownode.flush_flow(flow_name) >= 0 FROM flownode.flows ORDER BY flow_name;
SELECT flow_name, bucket_diff(flow_name) FROM flownode.flows ORDER BY 1;
-- read_flow and retention over them
INSERT INTO tb VALUES ('2024-10-27 02:30+01', '2024-10-27 01:30', '2024-10-27', 'k0', 7);
SELECT count(*) FROM ((SELECT * FROM flownode.read_flow(NULL::tb_berlin) EXCEPT ALL
                       SELECT flownode.time_bucket('4 hours', ts, 'Europe/Berlin'), count(*) FROM tb GROUP BY 1)
                      UNION ALL
                      (SELECT flownode.time_bucket('4 hours', ts, 'Europe/Berlin'), count(*) FROM tb GROUP BY 1
                       EXCEPT ALL SELECT * FROM flownode.read_flow(NULL::tb_berlin))) d;
-- windows that ended before now() - expire_after are frozen: deleting their rows
-- leaves their sink rows as they were
SELECT flownode.alter_flow('tb_3months', expire_after => '200 days');
SELECT count(*) AS before FROM tb_3months WHERE b < '2024-04-01';
DELETE FROM tb WHERE ts < '2024-04-01';
SELECT flownode.flush_flow('tb_3months') >= 0;
SELECT count(*) AS after FROM tb_3months WHERE b < '2024-04-01';

-- refusals say what to write instead
SELECT flownode.create_flow('bad_zone', 'bad_zone',
  $$SELECT date_bin('1 hour', ts AT TIME ZONE 'Europe/Berlin', timestamp '2000-01-01') AT TIME ZONE 'UTC' AS b,
           count(*) FROM tb GROUP BY 1$$);
SELECT flownode.create_flow('bad_offset', 'bad_offset',
  $$SELECT flownode.time_bucket('1 hour', ts, '1 day'::interval) AS b, count(*) FROM tb GROUP BY 1$$);
SELECT flownode.create_flow('bad_width', 'bad_width',
  $$SELECT flownode.time_bucket('1 month 2 days', ts) AS b, count(*) FROM tb GROUP BY 1$$);
SELECT flownode.create_flow('bad_bin', 'bad_bin',
  $$SELECT date_bin('1 month', ts, timestamptz '2000-01-01') AS b, count(*) FROM tb GROUP BY 1$$);

SELECT flownode.create_flow('bad_local', 'bad_local',
  $$SELECT date_bin('1 hour', ts AT TIME ZONE 'Europe/Berlin', timestamp '2000-01-01') AS b, count(*) FROM tb GROUP BY 1$$);
SELECT flownode.create_flow('bad_local_trunc', 'bad_local_trunc',
  $$SELECT date_trunc('day', ts AT TIME ZONE 'Europe/Berlin') AS b, count(*) FROM tb GROUP BY 1$$);
-- time_bucket over integers groups numbers: a window-less flow
SELECT flownode.create_flow('int_bucket', 'int_bucket',
  $$SELECT flownode.time_bucket(10, v) AS b, count(*) FROM tb GROUP BY 1$$);

SELECT flownode.drop_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
RESET timezone;
