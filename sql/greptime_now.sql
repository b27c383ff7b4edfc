-- now() with GreptimeDB's meaning (docs/reference.md, "What a flow query may be"): in a flow
-- with eval_interval, now() is the scheduled time of each evaluation (multiples of the
-- interval since the Unix epoch), so WHERE ts > now() - interval '5 minutes' is a
-- sliding filter. Each evaluation refreshes, besides the dirty windows, the windows
-- whose rows entered or left the comparison since the one before, so the sink is the
-- query at the time the flow's clock (flownode.flow_clock) holds.
SET timezone = 'UTC';

-- The sink against the query with now() replaced by the flow's clock, in one snapshot
-- (the callers run it in REPEATABLE READ: the worker may move the clock meanwhile).
CREATE FUNCTION clock_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; t timestamptz; missing bigint; extra bigint;
BEGIN
  SELECT f.user_query, f.sink_table::regclass, c.evaluated_at INTO q, s, t
    FROM flownode.flow f JOIN flownode.flow_clock c USING (flow_id) WHERE f.flow_name = p_flow;
  q := replace(replace(q, 'now()', format('%L::timestamptz', t)),
               'LOCALTIMESTAMP', format('%L::timestamptz::timestamp', t));
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT * FROM %s) d', q, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL (%s)) d', s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;

-- one row a second, from ten minutes ago to two minutes ahead
CREATE TABLE ev (id int PRIMARY KEY, ts timestamptz NOT NULL, ts_local timestamp NOT NULL, host text, v int);
CREATE INDEX ON ev (ts);
INSERT INTO ev SELECT i, date_trunc('second', now()) + i * interval '1 second',
                      (date_trunc('second', now()) + i * interval '1 second')::timestamp, 'h' || (i % 3), i
  FROM generate_series(-600, 120) i;

-- a sliding filter over minute windows
SELECT flownode.create_flow('recent', 'recent',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, host, count(*) AS n, sum(v) AS s
      FROM ev WHERE ts > now() - interval '5 minutes' GROUP BY 1, 2$$,
  eval_interval => '1 second') > 0 AS created;
-- the fill was evaluated at this second: the clock holds it
SELECT evaluated_at = date_trunc('second', evaluated_at) AND evaluated_at <= now() AS clock_on_the_second
  FROM flownode.flow_clock;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT clock_diff('recent');
COMMIT;
CREATE TEMP TABLE t0 AS SELECT (SELECT evaluated_at FROM flownode.flow_clock) AS clock, sum(n) AS rows FROM recent;
-- the clock moves: rows leave the filter, with no write at all
SELECT pg_sleep(2.5);
SELECT flownode.flush_flow('recent') >= 0 AS flushed;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT clock_diff('recent'),
       (SELECT evaluated_at FROM flownode.flow_clock) >= (SELECT clock FROM t0) + interval '2 seconds' AS clock_moved,
       sum(n) < (SELECT rows FROM t0) AS rows_left
  FROM recent;
COMMIT;
-- writes on both sides of the line, and rows moved across it
INSERT INTO ev VALUES (1000, now() - interval '4 minutes 59 seconds', now()::timestamp, 'h9', 1),
                      (1001, now() - interval '20 minutes', now()::timestamp, 'h9', 1);
UPDATE ev SET ts = ts - interval '1 hour' WHERE id BETWEEN -30 AND -20;
UPDATE ev SET ts = ts + interval '6 minutes' WHERE id BETWEEN -500 AND -490;
DELETE FROM ev WHERE id = 60;
SELECT flownode.flush_flow('recent') >= 0 AS flushed;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT clock_diff('recent');
COMMIT;
SELECT pg_sleep(1.5);
SELECT flownode.flush_flow('recent') >= 0 AS flushed;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT clock_diff('recent');
COMMIT;
-- the flows view and the plan: the clock is a parameter of the refresh, bound to the
-- scheduled time, never the worker's now()
SELECT flow_name, time_column, eval_interval FROM flownode.flows;
SELECT flownode.drop_flow('recent');
SELECT count(*) AS clock_rows FROM flownode.flow_clock;

-- BETWEEN, both bounds sliding, over a copy of the rows (keyed by id, windows are
-- seconds of ts): rows enter at the top and leave at the bottom
SELECT flownode.create_flow('window_copy', 'window_copy',
  $$SELECT id, ts, v FROM ev WHERE ts BETWEEN now() - interval '1 minute' AND now() + interval '30 seconds'$$,
  eval_interval => '1 second') > 0 AS created;
CREATE TEMP TABLE t1 AS SELECT min(ts) AS lo, max(ts) AS hi FROM window_copy;
SELECT pg_sleep(2.5);
SELECT flownode.flush_flow('window_copy') >= 0 AS flushed;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT clock_diff('window_copy'), min(ts) > (SELECT lo FROM t1) AS bottom_left, max(ts) > (SELECT hi FROM t1) AS top_entered
  FROM window_copy;
COMMIT;
UPDATE ev SET v = -v WHERE ts BETWEEN now() - interval '30 seconds' AND now();
SELECT flownode.flush_flow('window_copy') >= 0 AS flushed;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT clock_diff('window_copy');
COMMIT;
SELECT flownode.drop_flow('window_copy');

-- a timestamp (without time zone) column compares with LOCALTIMESTAMP; the comparison
-- may be written either way round, and the threshold may be any expression of now()
SELECT flownode.create_flow('local', 'local',
  $$SELECT date_trunc('minute', ts_local) AS m, count(*) AS n FROM ev
     WHERE date_trunc('second', LOCALTIMESTAMP) - interval '3 minutes' <= ts_local GROUP BY 1$$,
  eval_interval => '1 second') > 0 AS created;
SELECT pg_sleep(2.5);
SELECT flownode.flush_flow('local') >= 0 AS flushed;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT clock_diff('local');
COMMIT;
SELECT flownode.drop_flow('local');

-- Refused, each with the way out.
-- without eval_interval: now() would mean nothing fixed
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, count(*) AS n
      FROM ev WHERE ts > now() - interval '5 minutes' GROUP BY 1$$);
-- the clock in an output, in HAVING, against another column, with =, in a flow
-- without windows
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, now() AS at, count(*) AS n
      FROM ev GROUP BY 1$$, eval_interval => '1 second');
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, count(*) AS n
      FROM ev GROUP BY 1 HAVING max(ts) > now() - interval '1 minute'$$, eval_interval => '1 second');
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, count(*) AS n
      FROM ev WHERE ts_local::timestamptz > now() GROUP BY 1$$, eval_interval => '1 second');
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, count(*) AS n
      FROM ev WHERE ts = now() GROUP BY 1$$, eval_interval => '1 second');
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, count(*) AS n
      FROM ev WHERE now() - ts < interval '1 minute' GROUP BY 1$$, eval_interval => '1 second');
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT host, count(*) AS n FROM ev WHERE ts > now() - interval '1 minute' GROUP BY 1$$,
  eval_interval => '1 second');
-- a timestamp column against now(), a timestamptz
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('minute', ts_local) AS m, count(*) AS n FROM ev
     WHERE ts_local > now() - interval '1 minute' GROUP BY 1$$, eval_interval => '1 second');
-- GreptimeDB's own boundary test puts now() in its outputs: refused
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 second', ts, timestamptz '2000-01-01') AS window_start, count(v) AS value_count,
           now() AS create_time
      FROM ev WHERE ts >= date_trunc('second', now()) - interval '1 second' AND ts < date_trunc('second', now())
     GROUP BY 1$$, eval_interval => '1 second');
-- the other clocks stay refused: they are not the evaluation's time
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, count(*) AS n
      FROM ev WHERE ts > statement_timestamp() GROUP BY 1$$, eval_interval => '1 second');
SELECT count(*) AS flows, (SELECT count(*) FROM pg_class WHERE relname = 'bad_sink') AS sinks
  FROM flownode.flows;

DROP TABLE ev, recent, window_copy, local;
DROP FUNCTION clock_diff(text);
