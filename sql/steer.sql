-- Steering a flow in place (docs/reference.md, Functions): alter_flow, pause_flow and
-- resume_flow keep the flow's id, sink and pending work; the flows view's lag,
-- oldest_dirty_window and last_success_at; create_flow's backfill => 'background'
-- and the chunked 'now' fill.
SET timezone = 'UTC';
CREATE FUNCTION steer_wait(cond text, max_seconds int DEFAULT 30) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ok boolean;
BEGIN
  FOR i IN 1 .. max_seconds * 20 LOOP
    EXECUTE cond INTO ok;
    IF ok THEN RETURN 'reached'; END IF;
    PERFORM pg_sleep(0.05);
    PERFORM pg_stat_clear_snapshot();
  END LOOP;
  RETURN 'timed out: ' || cond;
END $$;

CREATE TABLE st (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON st (ts);
INSERT INTO st SELECT timestamptz '2024-01-01' + i * interval '1 minute', 'h' || (i % 2), i
  FROM generate_series(0, 299) i;
SELECT flownode.create_flow('st_h', 'st_hourly',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, host, count(*) AS n, sum(v) AS s
      FROM st GROUP BY 1, 2$$,
  eval_interval => '1 hour', comment => 'hourly') AS st_id \gset
SELECT steer_wait($$SELECT state = 'active' FROM flownode.flows WHERE flow_name = 'st_h'$$);
-- the initial fill shows: rows written, when; nothing pending, no backfill
SELECT state, rows_written, runs, last_run_at IS NOT NULL AS filled_at,
       last_success_at = last_run_at AS succeeded, lag, oldest_dirty_window,
       backfill_windows_done, backfill_windows_total
  FROM flownode.flows NATURAL JOIN (SELECT flow_id, runs, rows_written, oldest_dirty_window, backfill_windows_done, backfill_windows_total FROM flownode.flow_info) i WHERE flow_name = 'st_h';
SELECT worker_pid AS pid0 FROM flownode.flows WHERE flow_name = 'st_h' \gset

-- lag and oldest_dirty_window: a write is pending until refreshed
INSERT INTO st VALUES ('2024-01-01 02:30', 'h0', 1000), ('2024-01-01 04:10', 'h1', 1001);
SELECT dirty_windows, oldest_dirty_window, lag >= interval '0' AND lag < interval '1 minute' AS lag_small
  FROM flownode.flows NATURAL JOIN (SELECT flow_id, oldest_dirty_window FROM flownode.flow_info) i WHERE flow_name = 'st_h';
SELECT pg_sleep(1.1);
SELECT lag >= interval '1 second' AS lag_grows FROM flownode.flows WHERE flow_name = 'st_h';
SELECT flownode.flush_flow('st_h');
SELECT dirty_windows, oldest_dirty_window, lag, runs, last_success_at = last_run_at AS succeeded
  FROM flownode.flows NATURAL JOIN (SELECT flow_id, runs, oldest_dirty_window FROM flownode.flow_info) i WHERE flow_name = 'st_h';
SELECT flow_diff('st_h');

-- ==== alter_flow: only what is named changes, the worker follows without a restart
-- eval_interval: from an hour to a second, so a write converges without a flush
SELECT flownode.alter_flow('st_h', eval_interval => '1 second');
SELECT flow_id = :st_id AS same_id, eval_interval, expire_after, comment FROM flownode.flow_info
 WHERE flow_name = 'st_h';
INSERT INTO st VALUES ('2024-01-01 01:15', 'h2', 7);
SELECT steer_wait($$SELECT flow_diff('st_h') = 'missing=0 extra=0'$$);
SELECT worker_pid = :pid0 AS same_worker FROM flownode.flows WHERE flow_name = 'st_h';
-- comment, then reset to none
SELECT flownode.alter_flow('st_h', comment => 'per hour and host');
SELECT eval_interval, comment FROM flownode.flow_info WHERE flow_name = 'st_h';
SELECT flownode.alter_flow('st_h', reset_comment => true);
SELECT eval_interval, comment FROM flownode.flow_info WHERE flow_name = 'st_h';
-- new_name: same id, same sink, the worker's application_name follows
SELECT flownode.alter_flow('st_h', new_name => 'st "hourly"');
SELECT flow_id = :st_id AS same_id, sink_table, state FROM flownode.flows WHERE flow_name = 'st "hourly"';
SELECT count(*) AS old_name FROM flownode.flows WHERE flow_name = 'st_h';
SELECT steer_wait($$SELECT count(*) = 1 FROM pg_stat_activity
  WHERE backend_type = 'flownode flow' AND application_name = 'st "hourly"' AND pid = $$ || :pid0);
SELECT flownode.alter_flow('st "hourly"', new_name => 'st_h');
-- expire_after: from the next evaluation; writers follow at once
SELECT flownode.alter_flow('st_h', expire_after => '1 day');
SELECT eval_interval, expire_after FROM flownode.flow_info WHERE flow_name = 'st_h';
INSERT INTO st VALUES ('2024-01-01 00:05', 'h0', 500);   -- frozen: not marked
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'st_h';
SELECT flownode.flush_flow('st_h');
SELECT flow_diff('st_h');                                  -- the frozen window kept its rollup
SELECT flownode.alter_flow('st_h', reset_expire_after => true);
SELECT expire_after FROM flownode.flow_info WHERE flow_name = 'st_h';
INSERT INTO st VALUES ('2024-01-01 00:06', 'h0', 501);   -- marked again
SELECT dirty_windows, oldest_dirty_window FROM flownode.flow_info WHERE flow_name = 'st_h';
SELECT flownode.flush_flow('st_h');
SELECT flow_diff('st_h');
-- a writer that knew the old line (its session cached it) follows a longer one at once
CREATE TABLE ex (ts timestamptz NOT NULL, v int NOT NULL);
INSERT INTO ex VALUES ('2024-01-01 10:00', 1);
SELECT flownode.create_flow('ex_d', 'ex_daily',
  $$SELECT date_trunc('day', ts) AS d, sum(v) AS s FROM ex GROUP BY 1$$,
  eval_interval => '1 hour', expire_after => '1 day') > 0;
INSERT INTO ex VALUES ('2024-01-01 11:00', 2);             -- frozen: not marked
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'ex_d';
SELECT flownode.alter_flow('ex_d', expire_after => '1000 years');
INSERT INTO ex VALUES ('2024-01-01 12:00', 3);             -- no longer frozen: marked
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'ex_d';
SELECT flownode.flush_flow('ex_d');
SELECT d, s FROM ex_daily;
SELECT flownode.drop_flow('ex_d');
DROP TABLE ex, ex_daily;

-- back to adaptive; several attributes at once
SELECT flownode.alter_flow('st_h', reset_eval_interval => true, comment => 'adaptive');
SELECT eval_interval, expire_after, comment FROM flownode.flow_info WHERE flow_name = 'st_h';
SELECT flownode.alter_flow('st_h', eval_interval => '1 hour', expire_after => '100 years');
SELECT eval_interval, expire_after, comment FROM flownode.flow_info WHERE flow_name = 'st_h';
-- a rolled-back alter changes nothing
BEGIN;
SELECT flownode.alter_flow('st_h', new_name => 'gone', comment => 'x');
ROLLBACK;
SELECT flow_name, comment FROM flownode.flow_info WHERE flow_id = :st_id;

-- bad input: clear errors
SELECT flownode.alter_flow('st_h');
SELECT flownode.alter_flow('no_such_flow', comment => 'x');
SELECT flownode.alter_flow(NULL, comment => 'x');
SELECT flownode.alter_flow('st_h', eval_interval => '10 ms');
SELECT flownode.alter_flow('st_h', eval_interval => '-1 hour');
SELECT flownode.alter_flow('st_h', expire_after => '0');
SELECT flownode.alter_flow('st_h', eval_interval => '1 hour', reset_eval_interval => true);
SELECT flownode.alter_flow('st_h', expire_after => '1 day', reset_expire_after => true);
SELECT flownode.alter_flow('st_h', comment => 'x', reset_comment => true);
SELECT flownode.alter_flow('st_h', reset_comment => NULL);
SELECT flownode.alter_flow('st_h', new_name => '');
CREATE TABLE other (ts timestamptz NOT NULL, v int);
SELECT flownode.create_flow('other_f', 'other_s',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n FROM other GROUP BY 1$$) > 0;
SELECT flownode.alter_flow('st_h', new_name => 'other_f');
-- a window-less flow needs eval_interval and cannot expire
SELECT flownode.create_flow('total', 'st_total', $$SELECT host, count(*) AS n FROM st GROUP BY host$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.alter_flow('total', expire_after => '1 day');
SELECT flownode.alter_flow('total', reset_eval_interval => true);
-- only members of the owning role
CREATE ROLE steer_other;
SET ROLE steer_other;
SELECT flownode.alter_flow('st_h', comment => 'mine');
SELECT flownode.pause_flow('st_h');
SELECT flownode.resume_flow('st_h');
RESET ROLE;
SELECT comment FROM flownode.flow_info WHERE flow_name = 'st_h';

-- ==== pause_flow / resume_flow
SELECT flownode.alter_flow('st_h', eval_interval => '1 second');
SELECT flownode.pause_flow('st_h');
SELECT state FROM flownode.flows WHERE flow_name = 'st_h';
SELECT flownode.pause_flow('st_h');                       -- already paused: a NOTICE
-- writes while paused are recorded (shared memory and the durable record) ...
INSERT INTO st VALUES ('2024-01-01 03:20', 'h3', 9), ('2024-01-01 03:40', 'h3', 10);
UPDATE st SET v = v + 1 WHERE ts = '2024-01-01 01:00';
DELETE FROM st WHERE ts = '2024-01-01 02:00';
SELECT dirty_windows, oldest_dirty_window, lag IS NOT NULL AS lags, state FROM flownode.flows NATURAL JOIN (SELECT flow_id, oldest_dirty_window FROM flownode.flow_info) i
 WHERE flow_name = 'st_h';
SELECT (SELECT count(*) FROM flownode.pending WHERE flow_id = :st_id) +
       (SELECT count(*) FROM flownode.pending_keys WHERE flow_id = :st_id) AS recorded;
-- ... and nothing is refreshed, not even after several evaluation intervals
SELECT runs AS runs_paused FROM flownode.flow_info WHERE flow_name = 'st_h' \gset
SELECT pg_sleep(2.5);
SELECT runs = :runs_paused AS no_runs, dirty_windows FROM flownode.flow_info WHERE flow_name = 'st_h';
SELECT flow_diff('st_h');
-- flush_flow and refresh_flow say it is paused
SELECT flownode.flush_flow('st_h');
SELECT flownode.refresh_flow('st_h');
-- a flow can be altered while paused
SELECT flownode.alter_flow('st_h', comment => 'paused for maintenance');
SELECT state, comment FROM flownode.flow_info WHERE flow_name = 'st_h';
-- resume: it catches up on its own (eval_interval 1 second)
SELECT flownode.resume_flow('st_h');
SELECT flownode.resume_flow('st_h');                      -- not paused: a NOTICE
-- (the view's lag clears once the worker has published the refresh it committed:
-- waited for too, the sink alone can be exact a moment before)
SELECT steer_wait($$SELECT flow_diff('st_h') = 'missing=0 extra=0' AND
  (SELECT lag IS NULL FROM flownode.flows WHERE flow_name = 'st_h')$$);
SELECT state, dirty_windows, lag, oldest_dirty_window FROM flownode.flows NATURAL JOIN (SELECT flow_id, oldest_dirty_window FROM flownode.flow_info) i WHERE flow_name = 'st_h';
SELECT (SELECT count(*) FROM flownode.pending WHERE flow_id = :st_id) +
       (SELECT count(*) FROM flownode.pending_keys WHERE flow_id = :st_id) AS recorded;
-- a pause that rolls back leaves the flow running
BEGIN;
SELECT flownode.pause_flow('st_h');
ROLLBACK;
SELECT state FROM flownode.flows WHERE flow_name = 'st_h';
-- a flush in the transaction that altered the flow is refused (its worker follows
-- the committed settings)
BEGIN;
SELECT flownode.alter_flow('st_h', comment => 'x');
SELECT flownode.flush_flow('st_h');
ROLLBACK;
SELECT flownode.pause_flow('no_such_flow');
SELECT flownode.resume_flow(NULL);
SELECT flownode.drop_flow('total');
SELECT flownode.drop_flow('other_f');

-- ==== backfill => 'background': the worker fills the sink oldest first, in chunks
-- of flownode.backfill_chunk_rows rows (whole windows), after create_flow returned
ALTER SYSTEM SET flownode.backfill_chunk_rows = 50;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);   -- the reload reaches this session (and the postmaster) between statements
SHOW flownode.backfill_chunk_rows;
CREATE TABLE bf (ts timestamptz NOT NULL, v int NOT NULL);
CREATE INDEX ON bf (ts);
-- one row a minute for 17 hours: a chunk of 50 rows ends at the end of its hour
INSERT INTO bf SELECT timestamptz '2024-02-01' + i * interval '1 minute', i + 1
  FROM generate_series(0, 1019) i;
UPDATE bf SET v = 0 WHERE ts = '2024-02-01 08:30';       -- 100 / v fails in hour 8
-- created paused, so that nothing runs before we look
BEGIN;
SELECT flownode.create_flow('bf_h', 'bf_hourly',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n, sum(100 / v) AS s
      FROM bf GROUP BY 1$$,
  eval_interval => '1 hour', backfill => 'background') AS bf_id \gset
SELECT flownode.pause_flow('bf_h');
COMMIT;
SELECT steer_wait($$SELECT worker_pid IS NOT NULL FROM flownode.flows WHERE flow_name = 'bf_h'$$);
SELECT count(*) AS sink_rows FROM bf_hourly;
SELECT state, rows_written, last_run_at, backfill_windows_done, backfill_windows_total,
       lag IS NOT NULL AS lags
  FROM flownode.flows NATURAL JOIN (SELECT flow_id, rows_written, backfill_windows_done, backfill_windows_total FROM flownode.flow_info) i WHERE flow_name = 'bf_h';
-- writes during the backfill: before, inside and after the range it fills
INSERT INTO bf VALUES ('2024-01-31 23:59', 5), ('2024-02-01 03:03', 6), ('2024-02-01 16:59:30', 7),
  ('2024-02-02 00:10', 8);
DELETE FROM bf WHERE ts = '2024-02-01 12:00';
UPDATE bf SET v = v + 1 WHERE ts = '2024-02-01 01:01';
SELECT flownode.resume_flow('bf_h');
-- the backfill runs until the bad row's hour and fails there, visibly
SELECT steer_wait($$SELECT consecutive_failures > 0 FROM flownode.flows WHERE flow_name = 'bf_h'$$);
SELECT state, backfill_windows_done, backfill_windows_total, last_error
  FROM flownode.flows NATURAL JOIN (SELECT flow_id, backfill_windows_done, backfill_windows_total FROM flownode.flow_info) i WHERE flow_name = 'bf_h';
-- (the windows written meanwhile were refreshed first, at the resume)
SELECT count(*) AS hours_filled, min(h), max(h) FROM bf_hourly WHERE h >= '2024-02-01' AND h < '2024-02-01 08:00';
SELECT count(*) AS beyond FROM bf_hourly WHERE h >= '2024-02-01 08:00' AND h < '2024-02-01 12:00';
SELECT flownode.flush_flow('bf_h');
-- fixed: a flush finishes the backfill, then what was written meanwhile
UPDATE bf SET v = 1 WHERE v = 0;
SELECT flownode.flush_flow('bf_h') > 0 AS flushed;
SELECT state, backfill_windows_done, backfill_windows_total, dirty_windows, lag, last_error,
       rows_written >= 18 AS written
  FROM flownode.flows NATURAL JOIN (SELECT flow_id, rows_written, backfill_windows_done, backfill_windows_total FROM flownode.flow_info) i WHERE flow_name = 'bf_h';
SELECT flow_diff('bf_h');
SELECT count(*) AS recorded FROM flownode.pending WHERE flow_id = :bf_id;

-- background into an existing sink: stray rows go, frozen windows are filled too
CREATE TABLE bf_daily (d timestamptz PRIMARY KEY, n bigint);
INSERT INTO bf_daily VALUES ('2023-01-01', 99), ('2024-02-01', -1), ('2024-02-01 12:00', 5);
SELECT flownode.create_flow('bf_d', 'bf_daily',
  $$SELECT date_trunc('day', ts) AS d, count(*) AS n FROM bf GROUP BY 1$$,
  eval_interval => '1 hour', expire_after => '1 day', backfill => 'background') > 0;
SELECT flownode.flush_flow('bf_d') >= 0 AS flushed;
SELECT d, n FROM bf_daily ORDER BY d;
SELECT flow_diff('bf_d'), state, backfill_windows_total FROM flownode.flow_info WHERE flow_name = 'bf_d';
-- an empty source: nothing to backfill
CREATE TABLE empty_src (ts timestamptz NOT NULL, v int);
SELECT flownode.create_flow('bf_empty', 'bf_empty_s',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n FROM empty_src GROUP BY 1$$,
  backfill => 'background') > 0;
SELECT backfill_windows_done, backfill_windows_total FROM flownode.flow_info WHERE flow_name = 'bf_empty';
-- a window-less flow: one chunk
BEGIN;
SELECT flownode.create_flow('bf_total', 'bf_total_s',
  $$SELECT v % 2 AS parity, count(*) AS n, sum(v) AS s FROM bf GROUP BY 1$$,
  eval_interval => '1 hour', backfill => 'background') > 0;
SELECT flownode.pause_flow('bf_total');
COMMIT;
SELECT state, backfill_windows_done, backfill_windows_total FROM flownode.flow_info WHERE flow_name = 'bf_total';
SELECT flownode.resume_flow('bf_total');
-- the resumed worker may fill its one window before the flush asks: 0 or 1
SELECT flownode.flush_flow('bf_total') <= 1 AS one_window_at_most;
SELECT flow_diff('bf_total'), backfill_windows_total FROM flownode.flow_info WHERE flow_name = 'bf_total';

-- a flush in the transaction that created the flow with a background backfill
-- cannot wait for the worker, which starts at commit
BEGIN;
SELECT flownode.create_flow('bf_tx', 'bf_tx_s',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n FROM bf GROUP BY 1$$,
  backfill => 'background') > 0;
SELECT flownode.flush_flow('bf_tx');
ROLLBACK;

-- refresh_flow of a range while the backfill has not reached it
BEGIN;
SELECT flownode.create_flow('bf_r', 'bf_r_s',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n FROM bf GROUP BY 1$$,
  eval_interval => '1 hour', backfill => 'background') > 0;
SELECT flownode.pause_flow('bf_r');
COMMIT;
UPDATE bf SET v = v + 1 WHERE ts = '2024-02-01 10:10';
SELECT dirty_windows, oldest_dirty_window FROM flownode.flow_info WHERE flow_name = 'bf_r';
SELECT flownode.resume_flow('bf_r');
SELECT flownode.refresh_flow('bf_r', '2024-02-01 10:00', '2024-02-01 12:00');
SELECT flownode.flush_flow('bf_r') >= 0 AS flushed;
SELECT flow_diff('bf_r'), state, backfill_windows_done FROM flownode.flow_info WHERE flow_name = 'bf_r';

-- backfill => 'now' (the default) in chunks too: the same sink as one statement
SELECT flownode.create_flow('bf_now', 'bf_now_s',
  $$SELECT date_bin('10 minutes', ts, timestamptz '2000-01-01') AS w, count(*) AS n, sum(v) AS s
      FROM bf GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
SELECT flow_diff('bf_now'), rows_written = (SELECT count(*) FROM bf_now_s) AS counted, backfill_windows_total
  FROM flownode.flow_info WHERE flow_name = 'bf_now';
CREATE TABLE bf_now2 (w timestamptz PRIMARY KEY, n bigint, s bigint);
INSERT INTO bf_now2 VALUES ('2020-01-01', 1, 1), ('2024-02-01 00:10', 0, 0), ('2024-02-01 00:13', 0, 0);
SELECT flownode.create_flow('bf_now2', 'bf_now2',
  $$SELECT date_bin('10 minutes', ts, timestamptz '2000-01-01') AS w, count(*) AS n, sum(v) AS s
      FROM bf GROUP BY 1$$,
  eval_interval => '1 hour', backfill => 'now') > 0;
SELECT flow_diff('bf_now2');
ALTER SYSTEM RESET flownode.backfill_chunk_rows;
SELECT pg_reload_conf();

-- bad backfill values
SELECT flownode.create_flow('bad', 'bad_s',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n FROM bf GROUP BY 1$$,
  backfill => 'later');
SELECT flownode.create_flow('bad', 'bad_s',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n FROM bf GROUP BY 1$$,
  backfill => NULL);
SELECT to_regclass('bad_s') AS no_sink;

SELECT flownode.drop_flow(flow_name) FROM flownode.flows
 WHERE flow_name IN ('st_h', 'bf_h', 'bf_d', 'bf_empty', 'bf_total', 'bf_r', 'bf_now', 'bf_now2')
 ORDER BY flow_name;
DROP TABLE st, st_hourly, st_total, other, other_s, bf, bf_hourly, bf_daily, empty_src, bf_empty_s,
  bf_total_s, bf_r_s, bf_now_s, bf_now2;
DROP ROLE steer_other;
