-- TimescaleDB's continuous-aggregate statements, as text (docs/reference.md,
-- "Coming from TimescaleDB"): flownode.execute runs CREATE MATERIALIZED VIEW ... WITH
-- (timescaledb.continuous), DROP MATERIALIZED VIEW, CALL refresh_continuous_aggregate
-- and SELECT add_/remove_continuous_aggregate_policy, time_bucket as written. Each
-- sink is compared with its stored query after writes and a flush (ts_diff).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS flownode;
RESET client_min_messages;
SET timezone = 'UTC';

CREATE FUNCTION ts_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; missing bigint; extra bigint;
BEGIN
  SELECT query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL TABLE %s) d', q, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (TABLE %s EXCEPT ALL (%s)) d', s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;

CREATE TABLE conditions (time timestamptz NOT NULL, location text NOT NULL,
                         temperature double precision, humidity double precision);
CREATE INDEX ON conditions (time);
INSERT INTO conditions
SELECT timestamptz '2024-01-01' + i * interval '37 minutes', 'loc' || (i % 3), i, i * 2
  FROM generate_series(1, 200) i;

-- 1. TimescaleDB's documentation's example, unchanged: a flow and a sink named after
-- the view, filled at once (WITH DATA is the default), keyed by the groups.
SELECT * FROM flownode.execute($$
CREATE MATERIALIZED VIEW conditions_summary_hourly
WITH (timescaledb.continuous) AS
SELECT location,
       time_bucket(INTERVAL '1 hour', time) AS bucket,
       AVG(temperature),
       MAX(temperature),
       MIN(temperature)
FROM conditions
GROUP BY location, bucket;
$$);
SELECT flow_name, sink_table, window_expr, eval_interval FROM flownode.flows;
\d conditions_summary_hourly
SELECT ts_diff('conditions_summary_hourly');
-- writes: late rows, updates of values and of times, deletes
INSERT INTO conditions VALUES ('2024-01-01 00:10', 'loc9', 1000, 1), ('2024-01-03 05:59:59', 'loc1', -5, 0);
UPDATE conditions SET temperature = temperature + 0.5 WHERE time < '2024-01-02';
UPDATE conditions SET time = time + interval '3 hours' WHERE location = 'loc2' AND time < '2024-01-02 12:00';
DELETE FROM conditions WHERE location = 'loc0' AND time > '2024-01-04';
SELECT flownode.flush_flow('conditions_summary_hourly') > 0 AS refreshed;
SELECT ts_diff('conditions_summary_hourly');

-- 2. A column list names the sink's columns (the GROUP BY names an output by its
-- former alias); WITH NO DATA leaves the sink empty until a refresh or a write.
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW daily (loc, day, n, total)
  WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = true)
  AS SELECT location, time_bucket('1 day', time) AS bucket, count(*), sum(temperature)
     FROM conditions GROUP BY location, bucket
  WITH NO DATA$$);
SELECT attname FROM pg_attribute WHERE attrelid = 'daily'::regclass AND attnum > 0 ORDER BY attnum;
SELECT count(*) FROM daily;
SELECT * FROM flownode.execute($$CALL refresh_continuous_aggregate('daily', '2024-01-02', '2024-01-03')$$);
SELECT loc, day, n FROM daily ORDER BY day, loc;
-- a write reaches the sink for its own group only (a late row marks its group: the
-- day's other groups wait for a refresh of their range)
INSERT INTO conditions VALUES ('2024-01-05 01:00', 'loc1', 7, 7);
SELECT flownode.flush_flow('daily') > 0 AS refreshed;
SELECT loc, day, n FROM daily ORDER BY day, loc;
-- NULL bounds: everything
SELECT * FROM flownode.execute($$CALL refresh_continuous_aggregate('daily', NULL, NULL)$$);
SELECT ts_diff('daily');
-- named arguments, and force
SELECT * FROM flownode.execute($$CALL refresh_continuous_aggregate(continuous_aggregate => 'daily',
  window_start => now() - interval '10 years', window_end => NULL, force => true)$$);
SELECT ts_diff('daily');

-- materialized_only = false: read_flow is the real-time answer, in full even WITH NO
-- DATA (the sink then fills in the background), and ALTER MATERIALIZED VIEW says so too.
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW rt WITH (timescaledb.continuous,
  timescaledb.materialized_only = false) AS
  SELECT location, time_bucket('1 hour', time) AS b, count(*) AS n FROM conditions GROUP BY 1, 2 WITH NO DATA$$);
SELECT (SELECT count(*) FROM flownode.read_flow(NULL::rt)) AS rows, count(*) AS differences
  FROM flownode.read_flow(NULL::rt) r
  FULL JOIN (SELECT location, flownode.time_bucket('1 hour', time) AS b, count(*) AS n FROM conditions GROUP BY 1, 2) q
    USING (location, b, n)
 WHERE r IS NULL OR q IS NULL;
SELECT flownode.flush_flow('rt') >= 0 AS flushed, ts_diff('rt');
SELECT * FROM flownode.execute($$ALTER MATERIALIZED VIEW rt SET (timescaledb.materialized_only = false)$$);
SELECT * FROM flownode.execute($$ALTER MATERIALIZED VIEW rt SET (timescaledb.materialized_only = true)$$);

-- 3. The policy: schedule_interval is eval_interval, start_offset expire_after,
-- positional or named; remove_continuous_aggregate_policy puts both back.
SELECT * FROM flownode.execute($$SELECT add_continuous_aggregate_policy('daily',
  start_offset => INTERVAL '1 month', end_offset => NULL, schedule_interval => INTERVAL '1 hour')$$);
SELECT flow_name, eval_interval, expire_after FROM flownode.flow WHERE flow_name = 'daily';
SELECT * FROM flownode.execute($$SELECT add_continuous_aggregate_policy('daily', NULL, NULL, '10 minutes',
  if_not_exists => true, buckets_per_batch => 10)$$);
SELECT flow_name, eval_interval, expire_after FROM flownode.flow WHERE flow_name = 'daily';
SELECT * FROM flownode.execute($$SELECT remove_continuous_aggregate_policy('daily', if_exists => true)$$);
SELECT flow_name, eval_interval, expire_after FROM flownode.flow WHERE flow_name = 'daily';

-- 4. Schema-qualified names, integer buckets (no time window: the default
-- eval_interval, said in a NOTICE), IF NOT EXISTS, public.time_bucket.
CREATE SCHEMA analytics;
CREATE TABLE readings (t int NOT NULL, device int, v numeric);
INSERT INTO readings SELECT i, i % 4, i * 1.5 FROM generate_series(1, 100) i;
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW analytics.by_ten
  WITH (timescaledb.continuous) AS
  SELECT public.time_bucket(10, t) AS b, device, sum(v) AS s, count(*) AS n FROM readings GROUP BY 1, 2$$);
SELECT flow_name, sink_table, eval_interval FROM flownode.flows WHERE flow_name = 'analytics.by_ten';
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW IF NOT EXISTS analytics.by_ten
  WITH (timescaledb.continuous) AS SELECT 1$$);
INSERT INTO readings VALUES (5, 9, 1), (250, 1, 2);
UPDATE readings SET t = t + 33 WHERE device = 2;
DELETE FROM readings WHERE device = 3 AND t > 50;
SELECT flownode.flush_flow('analytics.by_ten') > 0 AS refreshed;
SELECT ts_diff('analytics.by_ten');
-- integer bounds say nothing to a flow without windows: it is recomputed whole
SELECT * FROM flownode.execute($$CALL refresh_continuous_aggregate('analytics.by_ten', 0, 100)$$);
SELECT * FROM flownode.execute($$SELECT add_continuous_aggregate_policy('analytics.by_ten', NULL, NULL, '5 minutes')$$);
SELECT eval_interval FROM flownode.flow WHERE flow_name = 'analytics.by_ten';
SELECT * FROM flownode.execute($$SELECT remove_continuous_aggregate_policy('analytics.by_ten')$$);
SELECT eval_interval FROM flownode.flow WHERE flow_name = 'analytics.by_ten';

-- 5. A time zone, an offset and a month width, time_bucket as TimescaleDB writes them.
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW zoned WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 day', time, 'Europe/Berlin') AS day, count(*) AS n FROM conditions GROUP BY 1$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW monthly WITH (timescaledb.continuous) AS
  SELECT time_bucket(INTERVAL '1 month', time) AS m, location, max(humidity) AS h FROM conditions GROUP BY m, location$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW shifted WITH (timescaledb.continuous) AS
  SELECT time_bucket('6 hours', time, "offset" => '2 hours') AS w, avg(humidity) AS h FROM conditions GROUP BY w$$);
INSERT INTO conditions VALUES ('2024-01-01 23:30', 'loc1', 3, 3), ('2024-02-01 00:00', 'loc2', 4, 4);
DELETE FROM conditions WHERE time BETWEEN '2024-01-03' AND '2024-01-03 06:00';
SELECT flownode.flush_flow(f) >= 0 AS flushed, ts_diff(f) FROM unnest(ARRAY['zoned', 'monthly', 'shifted', 'conditions_summary_hourly', 'daily']) f;

-- 5b. timescaledb_experimental.time_bucket_ng: flownode.time_bucket from its own
-- default origin, 2000-01-01 (a Saturday) for widths of days and months, 2000-01-03
-- for widths with a time part (as TimescaleDB's src/time_bucket.c); TimescaleDB's
-- documented results (3 months, 1 year), a week from that Saturday (time_bucket's
-- weeks start on Mondays), an origin; its time zone forms (below).
CREATE TABLE days (day date NOT NULL, city text NOT NULL, temperature int NOT NULL);
INSERT INTO days SELECT date '2021-06-01' + i, 'city' || (i % 2), i FROM generate_series(0, 120) i;
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW ng_quarter WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng('3 month', day) AS bucket, count(*) AS n FROM days GROUP BY bucket$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW ng_week WITH (timescaledb.continuous) AS
  SELECT city, timescaledb_experimental.time_bucket_ng('7 days', day) AS bucket, min(temperature), max(temperature)
  FROM days GROUP BY city, bucket$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW ng_origin WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng('2 months', day, origin => '2021-02-01') AS bucket, sum(temperature)
  FROM days GROUP BY bucket$$);
SELECT * FROM ng_quarter ORDER BY bucket;
SELECT bucket, extract(isodow FROM bucket) AS weekday FROM ng_week WHERE city = 'city0' ORDER BY bucket LIMIT 2;
SELECT * FROM ng_origin ORDER BY bucket;
INSERT INTO days VALUES ('2021-08-01', 'city9', 100), ('2022-01-15', 'city1', 7);
DELETE FROM days WHERE day BETWEEN '2021-07-03' AND '2021-07-09';
SELECT flownode.flush_flow(f) >= 0 AS flushed, ts_diff(f) FROM unnest(ARRAY['ng_quarter', 'ng_week', 'ng_origin']) f;
SELECT query FROM flownode.flow WHERE flow_name = 'ng_week';
-- TimescaleDB's documented results, through the stored query's function
SELECT flownode.time_bucket('3 month', date '2021-08-01', date '2000-01-01') AS q,
       flownode.time_bucket('1 year', date '2021-08-01', date '2000-01-01') AS y;
-- a literal third argument is an origin or a time zone, by the column's type; a
-- parameter time_bucket_ng does not have; a width that is not a literal; over a
-- timestamptz without a time zone, TimescaleDB's continuous aggregates refuse it
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng('1 day', time, 'Europe/Berlin') AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng('1 day', time, tz => 'Europe/Berlin') AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng(interval '1 day' * 2, time, timezone => 'UTC') AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng('1 day', time) AS b, count(*) FROM conditions GROUP BY b$$);
-- over a timestamp: widths with a time part from 2000-01-03, as time_bucket (before:
-- from 2000-01-01, 3 hours off for 5 hours); compared with date_bin from that origin
CREATE TABLE lts (t timestamp NOT NULL, v int);
INSERT INTO lts SELECT timestamp '2021-06-01' + i * interval '50 minutes', i FROM generate_series(0, 100) i;
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW ng_hours WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng('5 hours', t) AS bucket, count(*) AS n FROM lts GROUP BY bucket$$);
SELECT * FROM ng_hours ORDER BY bucket LIMIT 2;
INSERT INTO lts VALUES ('2021-06-01 01:00', 1000);
SELECT flownode.flush_flow('ng_hours') >= 0 AS flushed, ts_diff('ng_hours');
SELECT count(*) AS differ FROM ng_hours s FULL JOIN
  (SELECT date_bin('5 hours', t, timestamp '2000-01-03') AS bucket, count(*) AS n FROM lts GROUP BY 1) r
  USING (bucket) WHERE s.n IS DISTINCT FROM r.n;
SELECT * FROM flownode.execute('DROP MATERIALIZED VIEW ng_quarter, ng_week, ng_origin, ng_hours');
DROP TABLE lts;

-- 5b'. time_bucket_ng in a time zone: the local time bucketed as above (days from the
-- local 2000-01-01, so weeks from a Saturday; months from January 2000; 5 hours from
-- the local 2000-01-03; days from an origin's local date), read back in the zone, as
-- TimescaleDB's ts_time_bucket_ng_timezone[_origin]; each sink compared with that
-- computation written without flownode.time_bucket, across the DST change of
-- 2021-03-28
CREATE TABLE zts (time timestamptz NOT NULL, v int);
CREATE INDEX ON zts (time);
INSERT INTO zts SELECT timestamptz '2021-03-20 00:00+00' + i * interval '97 minutes', i FROM generate_series(0, 600) i;
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW ngz_week WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng('7 days', time, timezone => 'Europe/Berlin') AS b, count(*) AS n
    FROM zts GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW ngz_month WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng('1 month', time, timezone => 'Europe/Berlin') AS b, count(*) AS n
    FROM zts GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW ngz_hours WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng('5 hours', time, timezone => 'America/New_York') AS b, count(*) AS n
    FROM zts GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW ngz_origin WITH (timescaledb.continuous) AS
  SELECT timescaledb_experimental.time_bucket_ng('3 days', time, '2021-03-02 15:00+00', 'Europe/Berlin') AS b,
         count(*) AS n FROM zts GROUP BY b$$);
SELECT query FROM flownode.flow WHERE flow_name = 'ngz_week';
INSERT INTO zts VALUES ('2021-03-27 23:30+00', 1000), ('2021-04-30 22:30+00', 1001);
SELECT flownode.flush_flow(f) >= 0 AS flushed, ts_diff(f)
  FROM unnest(ARRAY['ngz_week', 'ngz_month', 'ngz_hours', 'ngz_origin']) f;
SELECT b AT TIME ZONE 'Europe/Berlin' AS local, extract(isodow FROM b AT TIME ZONE 'Europe/Berlin') AS weekday, n
  FROM ngz_week ORDER BY b LIMIT 3;
SELECT b AT TIME ZONE 'Europe/Berlin' AS local, n FROM ngz_month ORDER BY b;
CREATE FUNCTION ng_days(w int, t timestamptz, tz text, origin date) RETURNS timestamptz LANGUAGE sql AS
  $$SELECT (origin + (floor(((t AT TIME ZONE tz)::date - origin) / w::numeric) * w)::int)::timestamp AT TIME ZONE tz$$;
SELECT
  (SELECT count(*) FROM ngz_week s FULL JOIN (SELECT ng_days(7, time, 'Europe/Berlin', '2000-01-01') AS b, count(*) AS n
     FROM zts GROUP BY 1) r USING (b) WHERE s.n IS DISTINCT FROM r.n) AS week_differ,
  (SELECT count(*) FROM ngz_month s FULL JOIN (SELECT date_trunc('month', time AT TIME ZONE 'Europe/Berlin')
     AT TIME ZONE 'Europe/Berlin' AS b, count(*) AS n FROM zts GROUP BY 1) r USING (b)
    WHERE s.n IS DISTINCT FROM r.n) AS month_differ,
  (SELECT count(*) FROM ngz_hours s FULL JOIN (SELECT date_bin('5 hours', time AT TIME ZONE 'America/New_York',
     timestamp '2000-01-03') AT TIME ZONE 'America/New_York' AS b, count(*) AS n FROM zts GROUP BY 1) r USING (b)
    WHERE s.n IS DISTINCT FROM r.n) AS hours_differ,
  (SELECT count(*) FROM ngz_origin s FULL JOIN (SELECT ng_days(3, time, 'Europe/Berlin', '2021-03-02') AS b,
     count(*) AS n FROM zts GROUP BY 1) r USING (b) WHERE s.n IS DISTINCT FROM r.n) AS origin_differ;
SELECT * FROM flownode.execute('DROP MATERIALIZED VIEW ngz_week, ngz_month, ngz_hours, ngz_origin');
DROP FUNCTION ng_days(int, timestamptz, text, date);
DROP TABLE zts;

-- 5d. first(value, time) and last(value, time) are flownode.first and flownode.last
-- (TimescaleDB's aggregates; ties on the time broken by the value).
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW bookends WITH (timescaledb.continuous) AS
  SELECT location, time_bucket('1 day', time) AS b, first(humidity, time), last(humidity, time), max(temperature)
  FROM conditions GROUP BY location, b$$);
SELECT attname FROM pg_attribute WHERE attrelid = 'bookends'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;
INSERT INTO conditions VALUES ('2024-01-02 00:00', 'loc1', 0, -7), ('2024-01-02 00:00', 'loc1', 0, 70);
SELECT flownode.flush_flow('bookends') >= 0 AS flushed, ts_diff('bookends');
SELECT first, last FROM bookends WHERE location = 'loc1' AND b = '2024-01-02';
SELECT * FROM flownode.execute('DROP MATERIALIZED VIEW bookends');

-- 5c. Outputs without a name are named as CREATE MATERIALIZED VIEW names them
-- (avg, ?column?); two outputs of one name are refused. A plain create_flow still
-- asks for names.
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW unnamed WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 day', time) AS b, location, avg(temperature), location || '!', count(*) * 2 AS n
  FROM conditions GROUP BY b, location$$);
SELECT attname FROM pg_attribute WHERE attrelid = 'unnamed'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;
INSERT INTO conditions VALUES ('2024-01-02 01:00', 'loc7', 1, 1);
SELECT flownode.flush_flow('unnamed') >= 0 AS flushed, ts_diff('unnamed');
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 day', time) AS b, avg(temperature), avg(humidity) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 day', time) AS b, count(*) + 1, count(*) - 1 FROM conditions GROUP BY b$$);
SELECT flownode.create_flow('c', 'c_sink', $$SELECT flownode.time_bucket('1 day', time) AS b, count(*) + 1 FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute('DROP MATERIALIZED VIEW unnamed');
DROP TABLE days;

-- 6. DROP MATERIALIZED VIEW: the flow and its sink.
SELECT * FROM flownode.execute('DROP MATERIALIZED VIEW zoned, monthly');
SELECT * FROM flownode.execute('DROP MATERIALIZED VIEW IF EXISTS zoned');
SELECT * FROM flownode.execute('DROP MATERIALIZED VIEW analytics.by_ten;');
SELECT flow_name FROM flownode.flows ORDER BY 1;
SELECT to_regclass('zoned'), to_regclass('analytics.by_ten');

-- 7. Refusals: each an ERROR that says what to write instead.
\set VERBOSITY default
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW plain AS SELECT 1$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous, timescaledb.compress = true) AS
  SELECT time_bucket('1 hour', time) AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous, timescaledb.finalized = false) AS
  SELECT time_bucket('1 hour', time) AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous, timescaledb.bogus = 1) AS
  SELECT time_bucket('1 hour', time) AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous, fillfactor = 50) AS
  SELECT time_bucket('1 hour', time) AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous) TABLESPACE pg_default AS
  SELECT time_bucket('1 hour', time) AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE UNLOGGED MATERIALIZED VIEW c WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 hour', time) AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c (a, b, c) WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 hour', time) AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW daily WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 hour', time) AS b, count(*) FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 hour', time) AS b, count(*) FROM conditions GROUP BY b; SELECT 1$$);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 hour', time) AS b, random() FROM conditions GROUP BY b$$);
SELECT * FROM flownode.execute('DROP MATERIALIZED VIEW conditions');
SELECT * FROM flownode.execute('DROP MATERIALIZED VIEW nothing_here');
SELECT * FROM flownode.execute($$CALL refresh_continuous_aggregate('conditions', NULL, NULL)$$);
SELECT * FROM flownode.execute($$CALL refresh_continuous_aggregate('daily', 1, 2)$$);
SELECT * FROM flownode.execute($$CALL refresh_continuous_aggregate('daily', NULL, NULL, bogus => 1)$$);
SELECT * FROM flownode.execute($$CALL some_procedure()$$);
-- end_offset: accepted with a NOTICE (a flow refreshes the newest windows too)
SELECT * FROM flownode.execute($$SELECT add_continuous_aggregate_policy('daily', INTERVAL '1 month', INTERVAL '1 hour', INTERVAL '1 hour')$$);
SELECT flow_name, eval_interval, expire_after FROM flownode.flow WHERE flow_name = 'daily';
SELECT * FROM flownode.execute($$SELECT remove_continuous_aggregate_policy('daily')$$);
SELECT * FROM flownode.execute($$SELECT add_continuous_aggregate_policy('daily', NULL, NULL, INTERVAL '1 hour', initial_start => now())$$);
SELECT * FROM flownode.execute($$SELECT add_continuous_aggregate_policy('daily', NULL, NULL, INTERVAL '1 hour', timezone => 'UTC')$$);
SELECT * FROM flownode.execute($$SELECT add_continuous_aggregate_policy('daily', start_offset => NULL, start_offset => NULL)$$);
SELECT * FROM flownode.execute($$SELECT add_retention_policy('conditions', INTERVAL '1 year')$$);
SELECT * FROM flownode.execute('SELECT 1 FROM conditions');
SELECT * FROM flownode.execute('ALTER MATERIALIZED VIEW daily SET (timescaledb.compress = true)');
SELECT * FROM flownode.execute('ALTER MATERIALIZED VIEW daily RENAME TO d');
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW c WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 hour', time) AS b, count(*) FROM conditions GROUP BY b WITH NO DAT$$);
-- an integer flow: start_offset has no window to leave alone
CREATE TABLE ints (t int NOT NULL, v int);
SELECT * FROM flownode.execute($$CREATE MATERIALIZED VIEW ints_5 WITH (timescaledb.continuous) AS
  SELECT time_bucket(5, t) AS b, sum(v) AS s FROM ints GROUP BY b WITH NO DATA$$);
SELECT * FROM flownode.execute($$SELECT add_continuous_aggregate_policy('ints_5', 10, NULL, INTERVAL '1 hour')$$);

-- 8. GreptimeDB's statements still go their way.
SELECT * FROM flownode.execute('SHOW FLOWS');
SELECT * FROM flownode.execute($$DROP MATERIALIZED VIEW IF EXISTS conditions_summary_hourly, daily, shifted, ints_5, rt$$);
SELECT count(*) FROM flownode.flows;
DROP SCHEMA analytics;
DROP TABLE conditions, readings, ints;
DROP FUNCTION ts_diff(text);
RESET timezone;
