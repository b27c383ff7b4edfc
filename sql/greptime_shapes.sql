-- The flow shapes GreptimeDB accepts besides a GROUP BY over a time window
-- (docs/reference.md, "What a flow query may be"): a flow without aggregation (a filtered
-- copy of the source, keyed by its primary key), an aggregate without GROUP BY (one
-- row, recomputed whole), and SELECT DISTINCT (the GROUP BY it means). Each is exact
-- under INSERT, UPDATE and DELETE: flow_diff compares the sink with the query.
SET timezone = 'UTC';

-- 1. Without aggregation: a filtered copy, keyed by the source's primary key. Windows
-- are ranges of the first NOT NULL timestamp column it outputs (here ts, part of the
-- key): a write marks the second of its row, a refresh recomputes the copy there.
CREATE TABLE metrics (host text NOT NULL, ts timestamptz NOT NULL, v float8, note text,
                      PRIMARY KEY (host, ts));
INSERT INTO metrics SELECT 'h' || (i % 3), timestamptz '2024-01-01' + i * interval '10 seconds', i * 3, 'n' || i
  FROM generate_series(0, 99) i;
SELECT flownode.create_flow('hot', 'hot', $$SELECT ts, host, v FROM metrics WHERE v > 100$$,
  eval_interval => '1 hour') > 0 AS created;
\d hot
SELECT count(*) AS sink_rows, flow_diff('hot') FROM hot;
SELECT time_column, window_expr FROM flownode.flows WHERE flow_name = 'hot';
-- inserts only (the upsert alone): new rows above and below the line
INSERT INTO metrics VALUES ('h9', '2024-01-01 00:30:00', 500, 'x'), ('h9', '2024-01-01 00:30:01', 5, 'y');
SELECT flownode.flush_flow('hot'), flow_diff('hot');
-- rows that cross the filter either way, a row moved in time, a key changed, a delete
UPDATE metrics SET v = 1 WHERE host = 'h0' AND v BETWEEN 150 AND 200;
UPDATE metrics SET v = 1000 WHERE host = 'h1' AND v < 50;
UPDATE metrics SET ts = ts + interval '2 hours' WHERE host = 'h2' AND v > 250;
UPDATE metrics SET host = 'h7' WHERE host = 'h9';
DELETE FROM metrics WHERE host = 'h1' AND v BETWEEN 200 AND 250;
SELECT flownode.flush_flow('hot') > 0 AS refreshed, flow_diff('hot');
-- a row whose key and time both change in one UPDATE, in one window each way
UPDATE metrics SET host = 'h8', ts = '2023-12-31 23:59:00' WHERE host = 'h7' AND v = 500;
SELECT flownode.flush_flow('hot') > 0 AS refreshed, flow_diff('hot');
SELECT * FROM hot WHERE host IN ('h7', 'h8', 'h9') ORDER BY ts;
-- an unchanged row keeps its row version when its second is refreshed again
CREATE TEMP TABLE before AS SELECT host, ts, xmin::text AS x FROM hot;
INSERT INTO metrics VALUES ('h5', '2024-01-01 00:08:20.5', 0, 'same second as a kept row');
SELECT flownode.flush_flow('hot'), flow_diff('hot');
SELECT count(*) AS rewritten FROM hot JOIN before USING (host, ts) WHERE hot.xmin::text <> before.x;
-- TRUNCATE empties the copy
TRUNCATE metrics;
SELECT count(*) AS sink_rows FROM hot;
INSERT INTO metrics VALUES ('h1', '2024-01-02', 101, 'back');
SELECT flownode.flush_flow('hot'), flow_diff('hot');
SELECT flownode.drop_flow('hot');

-- Expressions over the columns, the key renamed, and no eval_interval (the cadence is
-- adaptive: windows are seconds). The sink's key is the renamed key.
INSERT INTO metrics SELECT 'h' || (i % 2), timestamptz '2024-03-01' + i * interval '1 minute', i, 'n' || i
  FROM generate_series(0, 59) i;
SELECT flownode.create_flow('shout', 'shout',
  $$SELECT host AS machine, ts AS at, upper(note) AS loud, v * 2 AS v2 FROM metrics
     WHERE note LIKE 'n1%'$$) > 0 AS created;
\d shout
UPDATE metrics SET note = 'n1-changed' WHERE v = 5;
UPDATE metrics SET note = 'gone' WHERE v = 10;
SELECT flownode.flush_flow('shout'), flow_diff('shout');
SELECT flownode.drop_flow('shout');

-- An existing sink keyed by the primary key's columns is accepted and made exact.
CREATE TABLE hot_existing (host text, ts timestamptz, v float8, PRIMARY KEY (host, ts));
INSERT INTO hot_existing VALUES ('stale', '2024-01-01', 1);
SELECT flownode.create_flow('hot2', 'hot_existing', $$SELECT host, ts, v FROM metrics WHERE v >= 30$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT count(*) AS stale_rows FROM hot_existing WHERE host = 'stale';
DELETE FROM metrics WHERE v = 40;
SELECT flownode.flush_flow('hot2'), flow_diff('hot2');
SELECT flownode.drop_flow('hot2');

-- Without a NOT NULL timestamp among its outputs the copy has no windows: it is
-- recomputed whole at each evaluation after a change, so it needs eval_interval.
CREATE TABLE kv (k int PRIMARY KEY, v text, seen timestamptz);
INSERT INTO kv SELECT i, 'v' || i, NULL FROM generate_series(1, 20) i;
SELECT flownode.create_flow('kv_copy', 'kv_copy', $$SELECT k, v, seen FROM kv WHERE k % 2 = 0$$);
SELECT flownode.create_flow('kv_copy', 'kv_copy', $$SELECT k, v, seen FROM kv WHERE k % 2 = 0$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT time_column, window_expr FROM flownode.flows WHERE flow_name = 'kv_copy';
UPDATE kv SET k = k + 100 WHERE k = 2;
UPDATE kv SET v = 'changed', seen = '2024-01-01' WHERE k = 4;
DELETE FROM kv WHERE k = 6;
INSERT INTO kv VALUES (8000, 'new', NULL);
SELECT flownode.flush_flow('kv_copy'), flow_diff('kv_copy');
SELECT flownode.drop_flow('kv_copy');

-- Refused, with what to do: no primary key; a sink without the key. (A key column
-- missing from the outputs is a hidden key column of the sink: sql/hidden_keys.sql.)
CREATE TABLE nokey (ts timestamptz NOT NULL, v int);
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT ts, v FROM nokey', eval_interval => '1 hour');
CREATE TABLE keyless_sink (host text, ts timestamptz, v float8);
SELECT flownode.create_flow('f', 'keyless_sink', 'SELECT host, ts, v FROM metrics', eval_interval => '1 hour');
-- LIMIT, window functions and set-returning functions stay refused
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT host, ts FROM metrics LIMIT 3');
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT host, ts, row_number() OVER () AS r FROM metrics');
SELECT count(*) AS flows, (SELECT count(*) FROM pg_class WHERE relname = 'bad_sink') AS sinks
  FROM flownode.flows;

-- 2. Aggregates without GROUP BY: one row, no key, recomputed whole at each evaluation
-- after a change (as a window-less flow is), so eval_interval is required.
SELECT flownode.create_flow('total', 'total', 'SELECT count(*) AS n, sum(v) AS s FROM metrics');
SELECT flownode.create_flow('total', 'total', 'SELECT count(*) AS n, sum(v) AS s, max(ts) AS last FROM metrics',
  eval_interval => '1 hour') > 0 AS created;
\d total
SELECT n, s, flow_diff('total') FROM total;
INSERT INTO metrics VALUES ('h4', '2024-05-01', 7, 'x');
SELECT flownode.flush_flow('total'), flow_diff('total');
UPDATE metrics SET v = v + 1 WHERE host = 'h4';
DELETE FROM metrics WHERE host = 'h0';
SELECT flownode.flush_flow('total'), flow_diff('total');
-- unchanged: the row keeps its version (a write that changes nothing it shows)
CREATE TEMP TABLE total_before AS SELECT xmin::text AS x FROM total;
UPDATE metrics SET note = 'other' WHERE host = 'h4';
SELECT flownode.flush_flow('total'), flow_diff('total');
SELECT (SELECT x FROM total_before) = xmin::text AS kept FROM total;
-- an empty source: count 0, sum NULL, one row still
DELETE FROM metrics;
SELECT flownode.flush_flow('total'), flow_diff('total');
SELECT * FROM total;
-- also after a TRUNCATE, which empties the sinks of the other shapes: the one row is
-- marked and recomputed, not emptied (the sink had no row left, silently: the
-- oracle's seed 2115249135)
INSERT INTO metrics VALUES ('h5', '2024-05-02', 3, 'y');
SELECT flownode.flush_flow('total'), flow_diff('total');
TRUNCATE metrics;
SELECT count(*) AS sink_rows, flow_diff('total') FROM total;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'total';
SELECT * FROM flownode.read_flow(NULL::total);
SELECT flownode.flush_flow('total'), flow_diff('total');
SELECT * FROM total;
SELECT flownode.drop_flow('total');
-- HAVING without GROUP BY: one row or none; an existing sink holding other rows (even
-- duplicates) is made exact
CREATE TABLE big_total (n bigint);
INSERT INTO big_total VALUES (1), (1), (2);
SELECT flownode.create_flow('big', 'big_total', 'SELECT count(*) AS n FROM metrics HAVING count(*) > 2',
  eval_interval => '1 hour') > 0 AS created;
SELECT count(*) AS sink_rows, flow_diff('big') FROM big_total;
INSERT INTO metrics SELECT 'h1', timestamptz '2024-06-01' + i * interval '1 second', i, NULL
  FROM generate_series(1, 3) i;
SELECT flownode.flush_flow('big'), flow_diff('big');
SELECT * FROM big_total;
DELETE FROM metrics WHERE v = 1;
SELECT flownode.flush_flow('big'), flow_diff('big');
SELECT count(*) AS sink_rows FROM big_total;
SELECT flownode.drop_flow('big');

-- 3. SELECT DISTINCT: the GROUP BY it means, windows included.
DELETE FROM metrics;
INSERT INTO metrics SELECT 'h' || (i % 4), timestamptz '2024-01-01' + i * interval '5 minutes', i, NULL
  FROM generate_series(0, 47) i;
SELECT flownode.create_flow('hosts_1h', 'hosts_1h',
  $$SELECT DISTINCT host, date_bin('1 hour', ts, timestamptz '2000-01-01') AS hour FROM metrics WHERE v::int % 3 <> 0$$)
  > 0 AS created;
\d hosts_1h
SELECT time_column, window_expr FROM flownode.flows WHERE flow_name = 'hosts_1h';
SELECT count(*) AS sink_rows, flow_diff('hosts_1h') FROM hosts_1h;
DELETE FROM metrics WHERE host = 'h1' AND ts < '2024-01-01 01:00';
UPDATE metrics SET host = 'h9' WHERE v = 30;
INSERT INTO metrics VALUES ('h5', '2024-01-01 02:10', 1, NULL);
SELECT flownode.flush_flow('hosts_1h') > 0 AS refreshed, flow_diff('hosts_1h');
SELECT flownode.drop_flow('hosts_1h');
-- DISTINCT over a GROUP BY of all its outputs (GreptimeDB's user guide writes both)
SELECT flownode.create_flow('hosts_1h', 'hosts_1h',
  $$SELECT DISTINCT host, date_bin('1 hour', ts, timestamptz '2000-01-01') AS hour FROM metrics GROUP BY host, hour$$)
  > 0 AS created;
SELECT flow_diff('hosts_1h');
SELECT flownode.drop_flow('hosts_1h');
-- without a window: recomputed whole, so eval_interval
SELECT flownode.create_flow('hosts', 'hosts', 'SELECT DISTINCT host FROM metrics');
SELECT flownode.create_flow('hosts', 'hosts', 'SELECT DISTINCT host FROM metrics', eval_interval => '1 hour') > 0;
DELETE FROM metrics WHERE host = 'h2';
SELECT flownode.flush_flow('hosts'), flow_diff('hosts');
SELECT flownode.drop_flow('hosts');
-- refused: DISTINCT ON, and DISTINCT over aggregated rows
SELECT flownode.create_flow('f', 'bad_sink', 'SELECT DISTINCT ON (host) host, ts FROM metrics');
SELECT flownode.create_flow('f', 'bad_sink',
  $$SELECT DISTINCT date_bin('1 hour', ts, timestamptz '2000-01-01') AS hour, count(*) AS n FROM metrics GROUP BY 1$$);

DROP TABLE metrics, hot, shout, hot_existing, kv, kv_copy, nokey, keyless_sink, total, big_total, hosts_1h, hosts;
