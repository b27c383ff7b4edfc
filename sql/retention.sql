-- Retention with expire_after (docs/reference.md, expire_after): raw data is kept
-- for 7 days, the daily rollups forever. Windows that ended before
-- now() - expire_after are frozen: no DELETE, TRUNCATE or late row changes their
-- sink rows; the window across the line and newer ones stay exact.
SET timezone = 'UTC';
CREATE TABLE raw (ts timestamptz NOT NULL, v int NOT NULL);
CREATE INDEX ON raw (ts);
-- one row in the first second of each of the last 11 days, today included
INSERT INTO raw SELECT date_trunc('day', now()) - d * interval '1 day' + interval '1 second', 1
  FROM generate_series(0, 10) d;
SELECT flownode.create_flow('daily', 'daily',
  $$SELECT date_bin('1 day', ts, timestamptz '2000-01-01') AS day, count(*) AS n, sum(v) AS s
      FROM raw GROUP BY 1$$,
  eval_interval => '1 hour', expire_after => '7 days') > 0;
SELECT count(*) AS days, sum(n) AS rows FROM daily;

-- the sink's rows of windows not frozen (from the window holding the line on) equal
-- the query's; frozen ones keep what they had
CREATE FUNCTION open_diff() RETURNS TABLE (side text, day timestamptz, n bigint) LANGUAGE sql AS $$
  WITH q AS (SELECT date_bin('1 day', ts, timestamptz '2000-01-01') AS day, count(*) AS n FROM raw GROUP BY 1),
       line AS (SELECT date_bin('1 day', now() - interval '7 days', timestamptz '2000-01-01') AS l)
  (SELECT 'sink only', d.day, d.n FROM daily d, line WHERE d.day >= l
   EXCEPT SELECT 'sink only', q.day, q.n FROM q, line WHERE q.day >= l)
  UNION ALL
  (SELECT 'query only', q.day, q.n FROM q, line WHERE q.day >= l
   EXCEPT SELECT 'query only', d.day, d.n FROM daily d, line WHERE d.day >= l) $$;
CREATE FUNCTION frozen_days() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM daily
   WHERE day < date_bin('1 day', now() - interval '7 days', timestamptz '2000-01-01') AND n = 1 $$;

-- the everyday retention job deletes the raw rows older than 7 days: the DELETE's
-- range straddles the line, and only the window across it is marked
DELETE FROM raw WHERE ts < now() - interval '7 days';
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'daily';
SELECT flownode.flush_flow('daily');
SELECT count(*) AS days FROM daily;
SELECT frozen_days();
SELECT * FROM open_diff();
-- nothing of the flow is left in the durable record
SELECT count(*) AS recorded FROM flownode.pending p JOIN flownode.flow f USING (flow_id)
 WHERE f.flow_name = 'daily';

-- a late row into a frozen window marks nothing and changes nothing
INSERT INTO raw VALUES (date_trunc('day', now()) - interval '9 days' + interval '1 hour', 100);
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'daily';
SELECT flownode.flush_flow('daily');
SELECT frozen_days();
DELETE FROM raw WHERE v = 100;

-- one transaction deleting across the line (older and newer days): only the newer
-- windows are refreshed
BEGIN;
DELETE FROM raw WHERE ts < now() - interval '5 days';
INSERT INTO raw VALUES (date_trunc('day', now()) - interval '10 days' + interval '2 hours', 5);
COMMIT;
SELECT flownode.flush_flow('daily');
SELECT count(*) AS days FROM daily;
SELECT frozen_days();
SELECT * FROM open_diff();

-- TRUNCATE empties only the windows not frozen
TRUNCATE raw;
SELECT count(*) AS days FROM daily;
SELECT frozen_days();
SELECT * FROM open_diff();
INSERT INTO raw VALUES (now(), 1);
SELECT flownode.flush_flow('daily');
SELECT count(*) AS days FROM daily;
SELECT * FROM open_diff();

-- windows that expire while they wait for a refresh are dropped unrefreshed, and
-- from the durable record: 1-second windows expiring after 2 seconds
CREATE TABLE fast (ts timestamptz NOT NULL, v int NOT NULL);
SELECT flownode.create_flow('fast', 'fast_s',
  $$SELECT date_bin('1 second', ts, timestamptz '2000-01-01') AS sec, count(*) AS n FROM fast GROUP BY 1$$,
  eval_interval => '1 hour', expire_after => '2 seconds') > 0;
INSERT INTO fast VALUES (now(), 1);
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'fast';
SELECT pg_sleep(3.5);
SELECT flownode.flush_flow('fast');
SELECT count(*) AS rows_in_sink FROM fast_s;
SELECT count(*) AS recorded FROM flownode.pending p JOIN flownode.flow f USING (flow_id)
 WHERE f.flow_name = 'fast';

SELECT flownode.drop_flow('daily');
SELECT flownode.drop_flow('fast');
DROP TABLE raw, daily, fast, fast_s;
DROP FUNCTION open_diff, frozen_days;
