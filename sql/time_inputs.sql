-- Date and integer epoch time columns (docs/reference.md, "What a flow query may be", internals §3 "Time
-- columns that are not timestamps"): a date (cast to timestamp or timestamptz) and
-- an integer count of seconds, milliseconds or microseconds since 1970 (read through
-- to_timestamp) are windowed like a timestamp column. A row is marked in the window
-- the query puts it in (computed as the query computes it, in the flow's time zone,
-- with the query's rounding), and a refresh reads the rows of its windows through
-- the column's own values.
SET timezone = 'UTC';

-- Compares a flow's sink with its query's rows that have a window (a NULL or
-- infinite time belongs to none), both ways.
CREATE FUNCTION windowed_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; w name; missing bigint; extra bigint;
BEGIN
  SELECT f.user_query, f.sink_table::regclass, a.attname INTO q, s, w
    FROM flownode.flow f JOIN pg_attribute a ON a.attrelid = f.sink_table AND a.attnum = 1
   WHERE f.flow_name = p_flow;
  q := format('SELECT * FROM (%s) q WHERE isfinite(q.%I)', q, w);
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT * FROM %s) d', q, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL (%s)) d', s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;

-- 1. A date column. date_trunc over a date casts it to timestamptz: midnight in the
-- flow's time zone (New York here), whatever the writer's zone is.
CREATE TABLE sales (d date, shop text NOT NULL, amount numeric NOT NULL);
CREATE INDEX ON sales (d);
INSERT INTO sales SELECT date '2024-01-01' + i % 400, 's' || (i % 3), i FROM generate_series(1, 1200) i;
SET timezone = 'America/New_York';
SELECT flownode.create_flow('sales_month', 'sales_month',
  $$SELECT date_trunc('month', d) AS month, shop, sum(amount) AS total, count(*) AS n
      FROM sales GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- date_bin over a date with a timestamp origin casts it to timestamp (no zone at all)
SELECT flownode.create_flow('sales_week', 'sales_week',
  $$SELECT date_bin('7 days', d, timestamp '2024-01-01') AS week, count(*) AS n, sum(amount) AS total
      FROM sales GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flow_name, time_column, window_expr FROM flownode.flows WHERE flow_name LIKE 'sales%' ORDER BY 1;
SELECT flow_name, time_input FROM flownode.flow WHERE flow_name LIKE 'sales%' ORDER BY 1;
\d sales_month
SELECT windowed_diff('sales_month'), windowed_diff('sales_week');
-- writers in Tokyo: the first day of a month is that month in New York too (cast in
-- the writer's zone, 2024-03-01 would be marked as February)
SET timezone = 'Asia/Tokyo';
INSERT INTO sales VALUES ('2024-03-01', 's0', 1000), ('2024-02-29', 's1', 1000), ('2025-01-31', 's2', 7),
                         ('2024-12-30', 's0', 5), ('2024-01-07', 's0', 3), ('2024-01-08', 's1', 4);
UPDATE sales SET d = d + 31 WHERE amount % 50 = 0;
DELETE FROM sales WHERE amount % 77 = 0;
-- NULL and infinite dates belong to no window: they are never marked, never read
INSERT INTO sales VALUES (NULL, 's0', 1), ('infinity', 's1', 2), ('-infinity', 's2', 3);
SELECT flownode.flush_flow('sales_month') > 0 AS refreshed;
SELECT flownode.flush_flow('sales_week') > 0 AS refreshed;
-- compared in the flow's zone, where its query puts a date's midnight
SET timezone = 'America/New_York';
SELECT windowed_diff('sales_month'), windowed_diff('sales_week');
SELECT month, shop, total, n FROM sales_month WHERE month >= '2024-02-01' AND month < '2024-04-01' ORDER BY 1, 2;
SELECT count(*) AS unwindowed_groups FROM sales_month WHERE NOT isfinite(month);
-- one write in Tokyo on the first day of a month, nothing else dirty: it is marked in
-- June, as the flow's zone has it (in the writer's zone it would be May, and June
-- would stay stale)
SET timezone = 'Asia/Tokyo';
INSERT INTO sales VALUES ('2024-06-01', 's1', 9);
SELECT flownode.flush_flow('sales_month') AS windows;
SET timezone = 'America/New_York';
SELECT windowed_diff('sales_month');
SET timezone = 'UTC';

-- a date column without an index: read once through a multirange of dates. The last
-- date PostgreSQL has is past the last timestamp: the cast fails on it, so its window
-- (the last) fails visibly until the row is gone
CREATE TABLE days (d date NOT NULL, n int NOT NULL);
INSERT INTO days SELECT date '2023-12-25' + i, i FROM generate_series(0, 99) i;
SELECT flownode.create_flow('days_week', 'days_week',
  $$SELECT date_trunc('week', d) AS week, sum(n) AS n FROM days GROUP BY 1$$, eval_interval => '1 hour') > 0 AS created;
INSERT INTO days VALUES ('2024-01-01', 1000), ('2024-03-31', 1000), ('2024-04-01', 1000);
DELETE FROM days WHERE n = 20;
SELECT flownode.flush_flow('days_week') > 0 AS refreshed, windowed_diff('days_week');
INSERT INTO days VALUES ('5874897-12-31', 1);
SELECT flownode.flush_flow('days_week');
DELETE FROM days WHERE d = '5874897-12-31';
SELECT flownode.flush_flow('days_week') >= 0 AS healed, windowed_diff('days_week');

-- 2. Integer epochs: seconds, milliseconds, microseconds (bigint, each indexed), the
-- same instants; seconds in an int column without an index (read once through its
-- multirange); milliseconds divided as double precision.
CREATE TABLE ev (ts_s bigint, ts_ms bigint, ts_us bigint, ts_i int, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON ev (ts_s);
CREATE INDEX ON ev (ts_ms);
CREATE INDEX ON ev (ts_us);
CREATE FUNCTION add_events(p_from bigint, p_n int, p_step_ms bigint, p_v int) RETURNS void LANGUAGE sql AS $$
  INSERT INTO ev SELECT div(ms, 1000), ms, ms * 1000 + (i % 1000), div(ms, 1000)::int, 'h' || (i % 3), p_v + i
    FROM generate_series(0, p_n - 1) i, LATERAL (SELECT p_from + i * p_step_ms AS ms) t $$;
SELECT add_events(1704067200000, 3000, 7001, 0);
SELECT flownode.create_flow('ev_s', 'ev_s',
  $$SELECT date_trunc('hour', to_timestamp(ts_s)) AS hour, host, count(*) AS n, sum(v) AS total
      FROM ev GROUP BY 1, 2$$, eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('ev_ms', 'ev_ms',
  $$SELECT date_bin('1 minute', to_timestamp(ts_ms / 1000.0), timestamptz '2000-01-01') AS minute, host,
           count(*) AS n, sum(v) AS total
      FROM ev GROUP BY 1, 2$$, eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('ev_ms_hour', 'ev_ms_hour',
  $$SELECT date_trunc('hour', to_timestamp(ts_ms / 1000.0)) AS hour, count(*) AS n FROM ev GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('ev_us', 'ev_us',
  $$SELECT date_bin('1 second', to_timestamp(ts_us / 1000000.0), timestamptz '2000-01-01') AS second,
           count(*) AS n, sum(v) AS total
      FROM ev GROUP BY 1$$, eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('ev_i', 'ev_i',
  $$SELECT date_bin('10 minutes', to_timestamp(ts_i), timestamptz '2000-01-01') AS w, count(*) AS n
      FROM ev GROUP BY 1$$, eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('ev_f', 'ev_f',
  $$SELECT date_trunc('minute', to_timestamp(ts_ms::float8 / 1000)) AS minute, count(*) AS n, sum(v) AS total
      FROM ev GROUP BY 1$$, eval_interval => '1 hour') > 0 AS created;
SELECT flow_name, time_input FROM flownode.flow WHERE flow_name LIKE 'ev%' ORDER BY 1;
-- three row triggers per time column (four of them), each calling the bigint or the
-- date overload of mark_row
SELECT count(*) AS row_triggers FROM pg_trigger WHERE tgrelid = 'ev'::regclass AND tgtype & 1 = 1;

-- writes at window boundaries, one unit either side; before 1970 (negative epochs,
-- where integer division would round the other way); NULLs
INSERT INTO ev SELECT div(ms, 1000), ms, ms * 1000 + d, div(ms, 1000)::int, 'edge', 1
  FROM (VALUES (1704070800000), (1704070860000), (0), (-60000), (-3600000), (-86400000)) b(w),
       (VALUES (-1), (0), (1)) e(d), LATERAL (SELECT w + d AS ms) m;
INSERT INTO ev VALUES (NULL, NULL, NULL, NULL, 'null', 1);
SELECT add_events(1704067200000 + 86400000::bigint * 40, 500, 13003, 100000);
UPDATE ev SET ts_s = ts_s + 3600, ts_ms = ts_ms + 60000, ts_us = ts_us + 1000000, ts_i = ts_i + 600
 WHERE v % 7 = 0;
DELETE FROM ev WHERE v % 11 = 0;
SELECT flow_name, dirty_windows > 0 AS dirty FROM flownode.flows WHERE flow_name LIKE 'ev%' ORDER BY 1;
SELECT flownode.flush_flow(f) > 0 AS refreshed, windowed_diff(f)
  FROM unnest(ARRAY['ev_s', 'ev_ms', 'ev_ms_hour', 'ev_us', 'ev_i', 'ev_f']) f;
SELECT minute, host, n FROM ev_ms WHERE host = 'edge' ORDER BY 1;

-- 3. Where to_timestamp rounds: microseconds of the year 11476 are beyond double
-- precision's reach, and to_timestamp(us / 1000000.0) puts some rows a second later
-- or earlier than their exact value; marking rounds as the query does (PostgreSQL's
-- own numeric division past 2^53).
SELECT count(*) AS rows_rounded_into_another_second
  FROM generate_series(299999999999, 300000000099) k, generate_series(-3, 3) d
 WHERE date_trunc('second', to_timestamp((k * 1000000 + d) / 1000000.0))
       <> to_timestamp(0) + (k + (d < 0)::int * -1) * interval '1 second';
INSERT INTO ev (ts_us, host, v) SELECT k * 1000000 + d, 'far', 1
  FROM generate_series(299999999999, 300000000099) k, generate_series(-3, 3) d;
-- the past too: 1200 BC, and milliseconds past 2^53 (the year 287,000)
INSERT INTO ev (ts_us, host, v) SELECT -(k * 1000000 + d), 'past', 1
  FROM generate_series(99999999999, 100000000049) k, generate_series(-3, 3) d;
INSERT INTO ev (ts_ms, host, v) SELECT k * 1000 + d, 'far', 1
  FROM generate_series(9007199254740, 9007199254790) k, generate_series(-2, 2) d;
SELECT flownode.flush_flow('ev_us') > 0 AS refreshed, windowed_diff('ev_us');
SELECT flownode.flush_flow('ev_ms') > 0 AS refreshed, windowed_diff('ev_ms');
SELECT flownode.flush_flow('ev_f') > 0 AS refreshed, windowed_diff('ev_f');
UPDATE ev SET ts_us = ts_us + 1 WHERE host IN ('far', 'past') AND ts_us % 2 = 0;
DELETE FROM ev WHERE host IN ('far', 'past') AND ts_us % 3 = 0;
SELECT flownode.flush_flow('ev_us') > 0 AS refreshed, windowed_diff('ev_us');
-- one row alone where the rounding moves it: 299999999999999968 us is 05:19:59.999936
-- for the query (numeric division, then double precision), 05:20:00 as a double
-- divided by 1e6; likewise 1,200 BC. Nothing else is dirty: the second the query
-- puts each in must be the one marked.
SELECT to_timestamp(299999999999999968 / 1000000.0) AS query_time,
       to_timestamp(299999999999999968::float8 / 1000000) AS double_time;
INSERT INTO ev (ts_us, host, v) VALUES (299999999999999968, 'alone', 1), (-100000000000000008, 'alone', 1);
SELECT flownode.flush_flow('ev_us') AS windows, windowed_diff('ev_us');

-- 4. A time PostgreSQL cannot represent (to_timestamp fails on it) is marked in the
-- last window, whose refresh then fails visibly, until the row is gone
INSERT INTO ev (ts_ms, host, v) VALUES (9300000000000000, 'bad', 1);
SELECT flownode.flush_flow('ev_ms');
SELECT state, last_error FROM flownode.flows WHERE flow_name = 'ev_ms';
DELETE FROM ev WHERE host = 'bad';
SELECT flownode.flush_flow('ev_ms') >= 0 AS healed, windowed_diff('ev_ms');
SELECT state, last_error FROM flownode.flows WHERE flow_name = 'ev_ms';
SELECT flownode.flush_flow('ev_f') >= 0 AS healed, windowed_diff('ev_f');
SELECT flownode.flush_flow('ev_ms_hour') >= 0 AS healed, windowed_diff('ev_ms_hour');

-- 5. refresh_flow over a range of windows of an epoch flow
UPDATE ev_ms SET n = -1 WHERE minute >= '2024-01-01 01:00' AND minute < '2024-01-01 01:10';
SELECT flownode.refresh_flow('ev_ms', '2024-01-01 01:00', '2024-01-01 01:10') AS windows, windowed_diff('ev_ms');

-- 6. A partitioned source by epoch milliseconds: ATTACH, DETACH and DROP of a partition
-- mark the windows of its rows, read through its index or without one
CREATE TABLE pev (ts_ms bigint NOT NULL, v int NOT NULL) PARTITION BY RANGE (ts_ms);
CREATE INDEX ON pev (ts_ms);
CREATE TABLE pev_1 PARTITION OF pev FOR VALUES FROM (1704067200000) TO (1706745600000);
INSERT INTO pev SELECT 1704067200000 + i * 60001, i FROM generate_series(0, 999) i;
SELECT flownode.create_flow('pev_h', 'pev_h',
  $$SELECT date_trunc('hour', to_timestamp(ts_ms / 1000.0)) AS hour, count(*) AS n, sum(v) AS total
      FROM pev GROUP BY 1$$, eval_interval => '1 hour') > 0 AS created;
CREATE TABLE pev_2 (ts_ms bigint NOT NULL, v int NOT NULL);
CREATE INDEX ON pev_2 (ts_ms);
INSERT INTO pev_2 SELECT 1706745600000 + i * 120001, i FROM generate_series(0, 499) i;
CREATE TABLE pev_3 (ts_ms bigint NOT NULL, v int NOT NULL); -- no index: every row read
INSERT INTO pev_3 SELECT 1709251200000 + i * 90001, i FROM generate_series(0, 499) i;
ALTER TABLE pev ATTACH PARTITION pev_2 FOR VALUES FROM (1706745600000) TO (1709251200000);
ALTER TABLE pev ATTACH PARTITION pev_3 FOR VALUES FROM (1709251200000) TO (1711929600000);
SELECT flownode.flush_flow('pev_h') > 0 AS refreshed, windowed_diff('pev_h');
ALTER TABLE pev DETACH PARTITION pev_2;
DROP TABLE pev_3;
SELECT flownode.flush_flow('pev_h') > 0 AS refreshed, windowed_diff('pev_h');

-- 7. A filter on the clock in the column's own unit: each evaluation refreshes the
-- windows of the rows that entered or left it (as milliseconds, turned into times)
CREATE TABLE evn (id int PRIMARY KEY, ts_ms bigint NOT NULL, host text, v int);
CREATE INDEX ON evn (ts_ms);
INSERT INTO evn SELECT i, (extract(epoch FROM date_trunc('second', now())) * 1000)::bigint + i * 1000, 'h' || (i % 3), i
  FROM generate_series(-600, 120) i;
SELECT flownode.create_flow('recent_ms', 'recent_ms',
  $$SELECT date_bin('1 minute', to_timestamp(ts_ms / 1000.0), timestamptz '2000-01-01') AS m, host,
           count(*) AS n, sum(v) AS s
      FROM evn WHERE ts_ms > ((extract(epoch FROM now()) - 300) * 1000)::bigint GROUP BY 1, 2$$,
  eval_interval => '1 second') > 0 AS created;
CREATE FUNCTION recent_diff() RETURNS text LANGUAGE sql AS $$
  WITH q AS (SELECT date_bin('1 minute', to_timestamp(ts_ms / 1000.0), timestamptz '2000-01-01') AS m, host,
                    count(*) AS n, sum(v) AS s
               FROM evn, flownode.flow_clock c JOIN flownode.flow f USING (flow_id)
              WHERE f.flow_name = 'recent_ms'
                AND ts_ms > ((extract(epoch FROM c.evaluated_at) - 300) * 1000)::bigint GROUP BY 1, 2)
  SELECT format('missing=%s extra=%s', (SELECT count(*) FROM (TABLE q EXCEPT ALL TABLE recent_ms) a),
                (SELECT count(*) FROM (TABLE recent_ms EXCEPT ALL TABLE q) b)) $$;
CREATE TEMP TABLE t0 AS SELECT sum(n) AS rows FROM recent_ms;
SELECT pg_sleep(2.5);
SELECT flownode.flush_flow('recent_ms') >= 0 AS flushed;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT recent_diff(), sum(n) < (SELECT rows FROM t0) AS rows_left FROM recent_ms;
COMMIT;
SELECT flownode.drop_flow('recent_ms');

-- 8. Refused, with what to write instead
SELECT flownode.create_flow('bad', 'bad',
  $$SELECT date_bin('1 minute', to_timestamp(ts_ms / 1000), timestamptz '2000-01-01') AS w, count(*) AS n
      FROM ev GROUP BY 1$$);
SELECT flownode.create_flow('bad', 'bad',
  $$SELECT date_bin('1 minute', to_timestamp(ts_ms / 100.0), timestamptz '2000-01-01') AS w, count(*) AS n
      FROM ev GROUP BY 1$$);
SELECT flownode.create_flow('bad', 'bad',
  $$SELECT date_bin('1 minute', to_timestamp(ts_ms / 1000.0 + 1), timestamptz '2000-01-01') AS w, count(*) AS n
      FROM ev GROUP BY 1$$);
SELECT flownode.create_flow('bad', 'bad',
  $$SELECT date_trunc('day', d + 1) AS w, count(*) AS n FROM sales GROUP BY 1$$);
CREATE TABLE numeric_src (ts numeric NOT NULL);
SELECT flownode.create_flow('bad', 'bad',
  $$SELECT date_trunc('day', to_timestamp(ts)) AS w, count(*) AS n FROM numeric_src GROUP BY 1$$);

-- 9. create_flow's fill in chunks of flownode.backfill_chunk_rows source rows, now and
-- in the background: each chunk ends where the column's index says, and reads its
-- rows by the column's values
ALTER SYSTEM SET flownode.backfill_chunk_rows = 300;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SHOW flownode.backfill_chunk_rows;
SELECT flownode.create_flow('ev_fill', 'ev_fill',
  $$SELECT date_bin('10 minutes', to_timestamp(ts_ms / 1000.0), timestamptz '2000-01-01') AS w, count(*) AS n,
           sum(v) AS total
      FROM ev GROUP BY 1$$, eval_interval => '1 hour') > 0 AS created;
SELECT windowed_diff('ev_fill');
-- again into the sink it leaves, changed meanwhile: the chunks' refreshes make it exact
UPDATE ev_fill SET n = -1 WHERE w >= '2024-01-01 01:00' AND w < '2024-01-01 03:00';
DELETE FROM ev_fill WHERE w >= '2024-01-01 04:00' AND w < '2024-01-01 04:30';
INSERT INTO ev_fill VALUES ('2023-06-01 00:00', 5, 5);
SELECT flownode.create_flow('ev_fill', 'ev_fill',
  $$SELECT date_bin('10 minutes', to_timestamp(ts_ms / 1000.0), timestamptz '2000-01-01') AS w, count(*) AS n,
           sum(v) AS total
      FROM ev GROUP BY 1$$, eval_interval => '1 hour', or_replace => true) > 0 AS replaced;
SELECT windowed_diff('ev_fill');
SELECT flownode.create_flow('sales_fill', 'sales_fill',
  $$SELECT date_trunc('week', d) AS week, count(*) AS n, sum(amount) AS total FROM sales GROUP BY 1$$,
  eval_interval => '1 hour', backfill => 'background') > 0 AS created;
SELECT flownode.flush_flow('sales_fill') >= 0 AS flushed, windowed_diff('sales_fill');
SELECT flow_name, backfill_windows_total FROM flownode.flow_info WHERE flow_name IN ('ev_fill', 'sales_fill')
 ORDER BY 1;
ALTER SYSTEM RESET flownode.backfill_chunk_rows;
SELECT pg_reload_conf();

SELECT flownode.drop_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
DROP TABLE sales, sales_month, sales_week, days, days_week, ev, ev_s, ev_ms, ev_ms_hour, ev_us, ev_i, ev_f, ev_fill, sales_fill,
  pev, pev_2, pev_h, evn, recent_ms, numeric_src;
DROP FUNCTION windowed_diff(text), add_events(bigint, int, bigint, int), recent_diff();
