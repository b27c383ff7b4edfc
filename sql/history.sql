-- The run history (flownode.run_history, read through flownode.runs): a row per run
-- of a flow, written by whoever ran it (create_flow's fill, the worker's refreshes,
-- flushes and repairs), a failure with its SQLSTATE, kept to
-- flownode.run_history_per_flow rows a flow by the worker, visible to the members of
-- the flow's owner only, and gone with the flow. And the flows view's
-- last_start_delay: how late the flow's last scheduled evaluation started.
SET timezone = 'UTC';
CREATE ROLE fn_hist_alice;
CREATE ROLE fn_hist_bob;
GRANT EXECUTE ON FUNCTION flownode.create_flow TO fn_hist_alice;
GRANT CREATE ON SCHEMA public TO fn_hist_alice;
CREATE TABLE hist_src (ts timestamptz NOT NULL, v int NOT NULL);
CREATE INDEX ON hist_src (ts);
ALTER TABLE hist_src OWNER TO fn_hist_alice;
INSERT INTO hist_src SELECT timestamptz '2024-01-01' + i * interval '1 minute', 1 + i % 5 FROM generate_series(0, 29) i;

CREATE FUNCTION hist_wait(cond text, max_seconds int DEFAULT 30) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ok boolean;
BEGIN
  FOR i IN 1 .. max_seconds * 20 LOOP
    EXECUTE cond INTO ok;
    IF ok THEN RETURN 'reached'; END IF;
    PERFORM pg_sleep(0.05);
  END LOOP;
  RETURN 'timed out: ' || cond;
END $$;

SET ROLE fn_hist_alice;
-- 100 / v: a row with v = 0 makes the refresh of its window fail (division_by_zero)
SELECT flownode.create_flow('hist_f', 'hist_sink',
  $$SELECT date_bin('10 minutes', ts, timestamptz '2000-01-01') AS w, count(*) AS n, sum(100 / v) AS q
      FROM hist_src GROUP BY 1$$, eval_interval => '1 hour') AS hist_id \gset

-- create_flow's fill is the first run
SELECT kind, succeeded, rows_written, sqlstate, error FROM flownode.runs WHERE flow_name = 'hist_f';

-- a flush's refresh: its windows, the source rows in them and the sink rows written
INSERT INTO hist_src VALUES ('2024-01-01 00:05:30', 2), ('2024-01-01 01:00:00', 4);
SELECT flownode.flush_flow('hist_f');
SELECT kind, succeeded, windows, rows_read >= 2 AS read_rows, rows_written, folded, duration >= interval '0' AS timed
  FROM flownode.runs WHERE flow_name = 'hist_f' AND kind = 'flush';

-- a failure: its own row, with the SQLSTATE and the message, and the flows view's
-- current error with its SQLSTATE
INSERT INTO hist_src VALUES ('2024-01-01 00:15:00', 0);
DO $$
BEGIN
  PERFORM flownode.flush_flow('hist_f');
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'the flush failed';
END $$;
SELECT kind, succeeded, windows, rows_written, sqlstate, error
  FROM flownode.runs WHERE flow_name = 'hist_f' AND NOT succeeded;
SELECT state, last_error, last_error_sqlstate, last_error_at IS NOT NULL AS error_at_known
  FROM flownode.flows WHERE flow_name = 'hist_f';

-- healed by refresh_flow (a repair run)
RESET ROLE;
DELETE FROM hist_src WHERE v = 0;
SET ROLE fn_hist_alice;
SELECT flownode.refresh_flow('hist_f') > 0 AS repaired;
SELECT kind, succeeded, sqlstate FROM flownode.runs WHERE flow_name = 'hist_f' ORDER BY started_at DESC LIMIT 1;
SELECT state, last_error, last_error_sqlstate FROM flownode.flows WHERE flow_name = 'hist_f';

-- another role sees none of it; a member of the owner sees it all; the table itself
-- is closed
SET ROLE fn_hist_bob;
SELECT count(*) AS bob_sees FROM flownode.runs;
SELECT count(*) FROM flownode.run_history;
RESET ROLE;
GRANT fn_hist_alice TO fn_hist_bob;
SET ROLE fn_hist_bob;
SELECT count(*) AS member_sees FROM flownode.runs WHERE flow_name = 'hist_f';
RESET ROLE;

-- kept to flownode.run_history_per_flow rows a flow: the worker prunes the oldest
ALTER SYSTEM SET flownode.run_history_per_flow = 3;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SELECT count(*) > 3 AS more_before FROM flownode.runs WHERE flow_name = 'hist_f';
INSERT INTO hist_src VALUES ('2024-01-01 00:25:00', 1);
SELECT flownode.flush_flow('hist_f');
INSERT INTO hist_src VALUES ('2024-01-01 00:35:00', 1);
SELECT flownode.flush_flow('hist_f');
SELECT count(*) AS kept, bool_and(kind = 'flush' OR kind = 'repair') AS newest_kept
  FROM flownode.runs WHERE flow_name = 'hist_f';
ALTER SYSTEM RESET flownode.run_history_per_flow;
SELECT pg_reload_conf();

-- last_start_delay: set once a scheduled evaluation started (NULL before), never
-- negative
SET ROLE fn_hist_alice;
SELECT flownode.create_flow('hist_fast', 'hist_fast_sink',
  $$SELECT date_bin('10 minutes', ts, timestamptz '2000-01-01') AS w, count(*) AS n FROM hist_src GROUP BY 1$$,
  eval_interval => '1 second') > 0 AS created;
RESET ROLE;
INSERT INTO hist_src VALUES ('2024-01-01 02:00:00', 3);
SELECT hist_wait($$SELECT EXISTS (SELECT FROM flownode.runs WHERE flow_name = 'hist_fast' AND kind = 'refresh')$$);
SELECT last_start_delay >= interval '0' AND last_start_delay < interval '10 seconds' AS delay_known
  FROM flownode.flows WHERE flow_name = 'hist_fast';
SELECT kind, succeeded, windows, rows_written FROM flownode.runs WHERE flow_name = 'hist_fast' AND kind = 'refresh' LIMIT 1;

-- a flow's rows go with it
SELECT flownode.drop_flow('hist_f');
SELECT count(*) AS left_behind FROM flownode.run_history WHERE flow_id = :hist_id;
SELECT flownode.drop_flow('hist_fast');
DROP TABLE hist_src, hist_sink, hist_fast_sink;
REVOKE EXECUTE ON FUNCTION flownode.create_flow FROM fn_hist_alice;
REVOKE CREATE ON SCHEMA public FROM fn_hist_alice;
DROP ROLE fn_hist_alice, fn_hist_bob;
