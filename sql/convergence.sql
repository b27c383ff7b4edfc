-- The worker converges on its own, without flush_flow; drop_flow leaves no worker.
SET timezone = 'UTC';
CREATE TABLE c (ts timestamptz NOT NULL, v int);
SELECT flownode.create_flow('conv', 'c_1s',
  $$SELECT date_bin('1 second', ts, timestamptz '2000-01-01') AS s, sum(v) AS total, count(*) AS n FROM c GROUP BY 1$$,
  eval_interval => '200 milliseconds') > 0;
INSERT INTO c SELECT now() - i * interval '10 ms', i FROM generate_series(1, 500) i;
UPDATE c SET v = v * 2 WHERE v % 7 = 0;
DELETE FROM c WHERE v % 5 = 0;

-- poll (at most 30 s) until the sink equals the query
CREATE FUNCTION wait_for(cond text, max_seconds int DEFAULT 30) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ok boolean;
BEGIN
  FOR i IN 1 .. max_seconds * 20 LOOP
    EXECUTE cond INTO ok;
    IF ok THEN RETURN 'reached'; END IF;
    PERFORM pg_sleep(0.05);
    PERFORM pg_stat_clear_snapshot();  -- pg_stat_activity is cached per transaction
  END LOOP;
  RETURN 'timed out: ' || cond;
END $$;
SELECT wait_for($$SELECT flow_diff('conv') = 'missing=0 extra=0'$$);
SELECT count(*) > 0 AS sink_filled FROM c_1s;
SELECT state, runs > 0 AS ran, last_error FROM flownode.flows NATURAL JOIN (SELECT flow_id, runs FROM flownode.flow_info) i WHERE flow_name = 'conv';

-- the worker shows up under its flow's name
SELECT backend_type, application_name, usename
  FROM pg_stat_activity WHERE backend_type = 'flownode flow' AND datname = current_database();

SELECT flownode.drop_flow('conv');
SELECT wait_for($$SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'flownode flow' AND datname = current_database()$$);
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'c'::regclass;

-- a drop that rolls back keeps the flow and its worker
SELECT flownode.create_flow('conv2', 'c_1s_b',
  $$SELECT date_bin('1 second', ts, timestamptz '2000-01-01') AS s, count(*) AS n FROM c GROUP BY 1$$,
  eval_interval => '200 milliseconds') > 0;
SELECT wait_for($$SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'conv2' AND datname = current_database()$$);
BEGIN;
SELECT flownode.drop_flow('conv2');
ROLLBACK;
INSERT INTO c VALUES (now(), 1);
SELECT wait_for($$SELECT flow_diff('conv2') = 'missing=0 extra=0'$$);
SELECT count(*) AS workers FROM pg_stat_activity WHERE application_name = 'conv2' AND datname = current_database();

-- DROP EXTENSION stops every worker and leaves no trigger behind
DROP EXTENSION flownode;
SELECT wait_for($$SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'flownode flow' AND datname = current_database()$$);
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'c'::regclass;
SELECT count(*) > 0 AS sinks_kept FROM c_1s_b;
INSERT INTO c VALUES (now(), 1);
CREATE EXTENSION flownode;
DROP TABLE c, c_1s, c_1s_b;
