-- Invariant 8 (docs/internals.md §2): bad input gets an ERROR naming the problem, and a failed call leaves
-- no flow, trigger, sink or worker behind.
SET timezone = 'UTC';
CREATE TABLE m (ts timestamptz NOT NULL, d date, host text, v float8);
CREATE VIEW m_view AS SELECT * FROM m;
CREATE TEMP TABLE m_temp (ts timestamptz, v float8);

-- checks that nothing was left behind
CREATE FUNCTION leftovers() RETURNS text LANGUAGE sql AS $$
  SELECT format('flows=%s triggers=%s sinks=%s',
    (SELECT count(*) FROM flownode.flows),
    (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'm'::regclass),
    (SELECT count(*) FROM pg_class WHERE relname LIKE 'bad_sink%'))
$$;

-- NULL and empty arguments
SELECT flownode.create_flow(NULL, 'bad_sink', 'SELECT 1');
SELECT flownode.create_flow('f', NULL, 'SELECT 1');
SELECT flownode.create_flow('f', 'bad_sink', NULL);
SELECT flownode.create_flow('', 'bad_sink', 'SELECT 1');
SELECT flownode.create_flow('f', '', 'SELECT 1');
SELECT flownode.create_flow('f', 'bad_sink', '');
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT 1', if_not_exists => NULL);
SELECT flownode.drop_flow(NULL);
SELECT flownode.flush_flow(NULL);
SELECT flownode.flush_flow('');

-- if_not_exists and or_replace together
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT 1', if_not_exists => true, or_replace => true);

-- the query must be exactly one SELECT
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT 1; SELECT 2');
SELECT flownode.create_flow('f', 'bad_sink', 'DELETE FROM m');
SELECT flownode.create_flow('f', 'bad_sink', '   ');
SELECT flownode.create_flow('f', 'bad_sink', 'SELEC 1');
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT ts FROM m UNION SELECT ts FROM m');

-- missing source table
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n FROM no_such_table GROUP BY 1$$);

-- without GROUP BY: a copy of the rows needs the source's primary key (m has none),
-- aggregates of every row need eval_interval (docs/reference.md, "What a flow query may be")
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT ts, v FROM m');
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT count(*) AS n FROM m');

-- the window must be over a time column, not an expression of one
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 minute', ts + interval '1 hour', timestamptz '2000-01-01') AS w, count(*) AS n
      FROM m GROUP BY 1$$);
-- (a date column is a time column itself, sql/time_inputs.sql; not an expression of one)
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('day', d + 1) AS w, count(*) AS n FROM m GROUP BY 1$$);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_bin('1 month', ts, timestamptz '2000-01-01') AS w, count(*) AS n FROM m GROUP BY 1$$);
SELECT flownode.create_flow('x', 'x_sink',
  $$SELECT date_bin('200000000 days', ts, timestamptz '2000-01-01') AS w, count(*) AS n FROM m GROUP BY 1$$);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('fortnight', ts) AS w, count(*) AS n FROM m GROUP BY 1$$);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('day', ts, 'No/Such_Zone') AS w, count(*) AS n FROM m GROUP BY 1$$);

-- a window-less query needs eval_interval
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT host, count(*) AS n FROM m GROUP BY host');

-- other query shapes a flow cannot keep exact
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) + 1 FROM m GROUP BY 1$$);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1 LIMIT 5$$);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', a.ts) AS w, count(*) AS n FROM m a JOIN m b ON a.ts = b.ts GROUP BY 1$$);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m WHERE v > (SELECT 1) GROUP BY 1$$);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, sum(v * random()) AS n FROM m GROUP BY 1$$);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n, count(*) AS n FROM m GROUP BY 1$$);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m_view GROUP BY 1$$);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m_temp GROUP BY 1$$);

-- non-positive intervals
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$, eval_interval => '0 seconds');
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$, eval_interval => '-1 minute');
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$, eval_interval => '10 ms');
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$, expire_after => '0 seconds');
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$, expire_after => '-1 day');

-- the sink must not be the source
SELECT flownode.create_flow('f', 'm',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$);

-- an existing sink that does not fit says what differs
CREATE TABLE bad_sink_cols (w timestamptz PRIMARY KEY);
SELECT flownode.create_flow('f', 'bad_sink_cols',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$);
CREATE TABLE bad_sink_type (w timestamptz PRIMARY KEY, n int);
SELECT flownode.create_flow('f', 'bad_sink_type',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$);
CREATE TABLE bad_sink_key (w timestamptz, n bigint);
SELECT flownode.create_flow('f', 'bad_sink_key',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$);
CREATE TABLE bad_sink_extra (w timestamptz PRIMARY KEY, n bigint, note text NOT NULL);
SELECT flownode.create_flow('f', 'bad_sink_extra',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$);
DROP TABLE bad_sink_cols, bad_sink_type, bad_sink_key, bad_sink_extra;

-- create_flow needs READ COMMITTED
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$);
ROLLBACK;

-- a failure after the sink and triggers were made (the initial fill divides by
-- zero) takes them all back
INSERT INTO m VALUES ('2024-01-01', NULL, 'a', 0);
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS w, sum(1 / v) AS inv FROM m GROUP BY 1$$);
SELECT leftovers();

-- duplicate names
SELECT flownode.create_flow('f', 'good_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$, eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('f', 'good_sink2',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$);
-- one sink, one flow
SELECT flownode.create_flow('g', 'good_sink',
  $$SELECT date_trunc('hour', ts) AS w, count(*) AS n FROM m GROUP BY 1$$);

-- unknown flows
SELECT flownode.drop_flow('nope');
SELECT flownode.flush_flow('nope');
SELECT flownode.drop_flow('nope', if_exists => true);

-- a transaction with marks cannot be prepared (its marks would be lost)
BEGIN;
INSERT INTO m VALUES ('2024-01-02', NULL, 'a', 1);
PREPARE TRANSACTION 'p';

SELECT flownode.drop_flow('f');
DROP TABLE good_sink;
SELECT leftovers();
-- A refresh that fails in the flow's worker fails the flush_flow waiting for it with
-- the worker's own SQLSTATE, message, detail and hint (the CONTEXT names the flow).
CREATE FUNCTION say_caught() RETURNS void LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; hnt text;
BEGIN
  PERFORM flownode.flush_flow('werr');
  RAISE NOTICE 'flush_flow succeeded';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  RAISE NOTICE 'SQLSTATE %: % / detail: % / hint: %', st, msg, det, hnt;
END $$;
CREATE TABLE werr_src (ts timestamptz NOT NULL, v int NOT NULL);
INSERT INTO werr_src VALUES ('2024-01-01 00:10', 1);
CREATE FUNCTION werr_check(v int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
  IF v < 0 THEN
    RAISE EXCEPTION 'negative value %', v USING ERRCODE = 'numeric_value_out_of_range',
      DETAIL = 'The flow reads only values of zero or more.', HINT = 'Write the value as a positive number.';
  END IF;
  RETURN v;
END $$;
CREATE ROLE fn_werr;
GRANT SELECT, TRIGGER ON werr_src TO fn_werr;
GRANT CREATE ON SCHEMA public TO fn_werr;
GRANT EXECUTE ON FUNCTION flownode.create_flow TO fn_werr;
SET ROLE fn_werr;
SELECT flownode.create_flow('werr', 'werr_sink',
  $$SELECT date_trunc('hour', ts) AS h, sum(100 / v) AS s, sum(werr_check(v)) AS c FROM werr_src GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
RESET ROLE;
-- division_by_zero (22012)
INSERT INTO werr_src VALUES ('2024-01-01 01:10', 0);
SELECT say_caught();
\set VERBOSITY verbose
SELECT flownode.flush_flow('werr');
\set VERBOSITY default
DO $$
BEGIN
  PERFORM flownode.flush_flow('werr');
EXCEPTION WHEN division_by_zero THEN
  RAISE NOTICE 'caught as division_by_zero';
END $$;
-- a detail and a hint of the failure come along (22003)
DELETE FROM werr_src WHERE v = 0;
INSERT INTO werr_src VALUES ('2024-01-01 02:10', -1);
SELECT say_caught();
-- permission denied (42501): the owner may no longer read the source
DELETE FROM werr_src WHERE v < 0;
REVOKE SELECT ON werr_src FROM fn_werr;
INSERT INTO werr_src VALUES ('2024-01-01 03:10', 2);
SELECT say_caught();
DO $$
BEGIN
  PERFORM flownode.flush_flow('werr');
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'caught as insufficient_privilege';
END $$;
-- refresh_flow's the same way
DO $$
BEGIN
  PERFORM flownode.refresh_flow('werr', NULL, NULL);
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'refresh_flow caught as insufficient_privilege';
END $$;
-- healed: the flush succeeds, with every window exact
GRANT SELECT ON werr_src TO fn_werr;
SELECT say_caught();
SELECT * FROM werr_sink ORDER BY h;
SELECT flownode.drop_flow('werr');
DROP TABLE werr_sink, werr_src;
DROP FUNCTION werr_check(int);
DROP FUNCTION say_caught();
DROP OWNED BY fn_werr;
DROP ROLE fn_werr;

-- the trigger refuses to be called any other way
SELECT flownode.mark_dirty();
SELECT flownode.mark_insert();
DROP TABLE m CASCADE;
DROP FUNCTION leftovers();
