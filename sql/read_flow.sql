-- Exact real-time reads (docs/internals.md §2, invariant 9): read_flow(NULL::sink)
-- equals the flow's query in the caller's snapshot, whatever the sink holds yet.
-- The flows evaluate once an hour: between the flushes below, the sink lags.
SET timezone = 'UTC';

-- read_diff: rows of read_flow not in the query plus rows of the query not in
-- read_flow (EXCEPT ALL both ways), 0 when equal; sink_diff: the same for the sink
-- (not 0 shows the read had windows to compute). The query is the user's text.
CREATE FUNCTION read_diff(p_flow text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; n bigint;
BEGIN
  SELECT user_query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM ((SELECT * FROM flownode.read_flow(NULL::%1$s) EXCEPT ALL (%2$s))'
                 ' UNION ALL ((%2$s) EXCEPT ALL SELECT * FROM flownode.read_flow(NULL::%1$s))) d', s, q) INTO n;
  RETURN n;
END $$;
CREATE FUNCTION sink_diff(p_flow text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; n bigint;
BEGIN
  SELECT user_query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM ((TABLE %1$s EXCEPT ALL (%2$s)) UNION ALL ((%2$s) EXCEPT ALL TABLE %1$s)) d',
                 s, q) INTO n;
  RETURN n;
END $$;

CREATE TABLE m (ts timestamptz NOT NULL, host text, v int);
CREATE INDEX ON m (ts);
INSERT INTO m SELECT timestamptz '2024-01-01' + i * interval '10 seconds', 'h' || (i % 3), i
  FROM generate_series(0, 359) i;
SELECT flownode.create_flow('m_1m', 'm_1m',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, sum(v) AS total, count(*) AS n
      FROM m GROUP BY 1, 2$$, eval_interval => '1 hour') > 0 AS created;
-- nothing dirty: the sink itself
SELECT read_diff('m_1m'), sink_diff('m_1m'), (SELECT count(*) FROM flownode.read_flow(NULL::m_1m)) AS rows;

-- every kind of write, committed and not refreshed: the sink lags, read_flow does not
INSERT INTO m VALUES ('2024-01-01 00:00:05', 'h0', 1000), ('2024-01-01 05:00:00', 'new', 7);
UPDATE m SET ts = ts + interval '30 minutes' WHERE ts >= '2024-01-01 00:10' AND ts < '2024-01-01 00:11';
DELETE FROM m WHERE ts >= '2024-01-01 00:20' AND ts < '2024-01-01 00:21' AND host = 'h1';
UPDATE m SET host = NULL WHERE ts >= '2024-01-01 00:30' AND ts < '2024-01-01 00:31';
SELECT read_diff('m_1m'), sink_diff('m_1m') > 0 AS sink_lags;
-- the windows it computed, as the query has them
SELECT * FROM flownode.read_flow(NULL::m_1m)
 WHERE minute IN ('2024-01-01 00:00', '2024-01-01 00:10', '2024-01-01 00:20', '2024-01-01 05:00')
 ORDER BY 1, 2;
SELECT flownode.flush_flow('m_1m') > 0 AS flushed;
SELECT read_diff('m_1m'), sink_diff('m_1m');

-- a range: the windows overlapping [from, to), whole (00:01:30 to 00:02:10 is the
-- windows 00:01 and 00:02), dirty ones computed
UPDATE m SET v = v + 1 WHERE ts >= '2024-01-01 00:02' AND ts < '2024-01-01 00:02:20';
SELECT * FROM flownode.read_flow(NULL::m_1m, '2024-01-01 00:01:30', '2024-01-01 00:02:10') ORDER BY 1, 2;
SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, sum(v) AS total, count(*) AS n
  FROM m WHERE ts >= '2024-01-01 00:01' AND ts < '2024-01-01 00:03' GROUP BY 1, 2 ORDER BY 1, 2;
-- open ends: from a time on, up to a time
SELECT count(*) FROM flownode.read_flow(NULL::m_1m, "from" => '2024-01-01 00:59');
SELECT count(*) FROM flownode.read_flow(NULL::m_1m, "to" => '2024-01-01 00:00:01');
SELECT * FROM flownode.read_flow(NULL::m_1m, '2024-01-01 00:02', '2024-01-01 00:01');
SELECT * FROM flownode.read_flow(NULL::m_1m, '2024-01-01 00:02', '2024-01-01 00:02');

-- the caller's own uncommitted writes are in its snapshot, so in its read; a rolled
-- back savepoint's are not
BEGIN;
INSERT INTO m VALUES ('2024-01-01 00:40:01', 'h2', 500);
DELETE FROM m WHERE ts >= '2024-01-01 00:41' AND ts < '2024-01-01 00:42';
SAVEPOINT s;
INSERT INTO m VALUES ('2024-01-01 00:45:01', 'h2', 900);
ROLLBACK TO SAVEPOINT s;
SELECT read_diff('m_1m'), sink_diff('m_1m') > 0 AS sink_lags;
SELECT * FROM flownode.read_flow(NULL::m_1m, '2024-01-01 00:40', '2024-01-01 00:46') WHERE host = 'h2' ORDER BY 1;
ROLLBACK;
SELECT read_diff('m_1m'), sink_diff('m_1m');

-- a REPEATABLE READ transaction reads in its snapshot: a refresh committed since
-- changes nothing it sees (the record it sees still holds the windows)
INSERT INTO m VALUES ('2024-01-01 00:50:01', 'h0', 300);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT read_diff('m_1m'), sink_diff('m_1m') > 0 AS sink_lags;
SELECT flownode.flush_flow('m_1m') > 0 AS flushed;
SELECT read_diff('m_1m'), sink_diff('m_1m') > 0 AS sink_lags_in_this_snapshot;
COMMIT;
SELECT read_diff('m_1m'), sink_diff('m_1m');

-- flows whose windows nest are marked in the finest one's windows (one group): each
-- reads its own
SELECT flownode.create_flow('m_5m', 'm_5m',
  $$SELECT date_bin('5 minutes', ts, timestamptz '2000-01-01') AS w, count(*) AS n, max(v) AS top
      FROM m GROUP BY 1$$, eval_interval => '1 hour') > 0 AS created;
INSERT INTO m VALUES ('2024-01-01 00:03:01', 'h1', 5000);
BEGIN;
INSERT INTO m VALUES ('2024-01-01 00:07:01', 'h1', 6000);
SELECT read_diff('m_1m') AS diff_1m, read_diff('m_5m') AS diff_5m, sink_diff('m_5m') > 0 AS sink_5m_lags;
COMMIT;
SELECT read_diff('m_1m') AS diff_1m, read_diff('m_5m') AS diff_5m;

-- HAVING and a flow created in this transaction
BEGIN;
SELECT flownode.create_flow('m_busy', 'm_busy',
  $$SELECT date_trunc('hour', ts) AS hour, host, count(*) AS n FROM m GROUP BY 1, 2 HAVING count(*) > 100$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT read_diff('m_busy');
DELETE FROM m WHERE host = 'h0' AND ts < '2024-01-01 00:30';
SELECT read_diff('m_busy'), sink_diff('m_busy') > 0 AS sink_lags;
COMMIT;
SELECT read_diff('m_busy'), sink_diff('m_busy') > 0 AS sink_lags;
SELECT * FROM flownode.read_flow(NULL::m_busy) ORDER BY 1, 2;

-- a window-less flow: anything dirty means the whole query, else the sink
SELECT flownode.create_flow('m_hosts', 'm_hosts', $$SELECT host, count(*) AS n FROM m GROUP BY host$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT read_diff('m_hosts'), sink_diff('m_hosts');
INSERT INTO m VALUES ('2024-01-01 00:00:00', 'h9', 1);
SELECT read_diff('m_hosts'), sink_diff('m_hosts') > 0 AS sink_lags;
SELECT * FROM flownode.read_flow(NULL::m_hosts) ORDER BY 1 NULLS FIRST;

-- a source without an index on its time column (the query part reads the source once)
CREATE TABLE noidx (ts timestamp NOT NULL, k int NOT NULL, v numeric);
INSERT INTO noidx SELECT timestamp '2024-03-30' + i * interval '1 hour', i % 2, i FROM generate_series(0, 99) i;
SET client_min_messages = warning;
SET timezone = 'Europe/Paris';
SELECT flownode.create_flow('noidx_day', 'noidx_day',
  $$SELECT date_trunc('day', ts) AS day, k, sum(v) AS total FROM noidx GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
RESET client_min_messages;
INSERT INTO noidx VALUES ('2024-03-31 02:30', 1, 0.5), ('2024-04-02 23:59:59', 0, 1000);
SELECT read_diff('noidx_day'), sink_diff('noidx_day') > 0 AS sink_lags;
-- a timestamp column holds the flow's local time: the bounds are read in its zone
-- (10:00 UTC is noon in Paris on 2024-04-01, so that day only)
SET timezone = 'UTC';
SELECT * FROM flownode.read_flow(NULL::noidx_day, '2024-04-01 10:00+00', '2024-04-01 10:00:01+00') ORDER BY 2;

-- expire_after: a frozen window is read as the sink keeps it, whatever its rows are
-- now (a write into it is not even marked); the other windows are exact
CREATE TABLE recent (ts timestamptz NOT NULL, v int);
CREATE INDEX ON recent (ts);
INSERT INTO recent VALUES (now() - interval '10 days', 1), (now(), 2);
SELECT flownode.create_flow('recent_1d', 'recent_1d',
  $$SELECT date_bin('1 day', ts, timestamptz '2000-01-01') AS day, sum(v) AS total FROM recent GROUP BY 1$$,
  eval_interval => '1 hour', expire_after => '2 days') > 0 AS created;
DELETE FROM recent WHERE ts < now() - interval '5 days';
INSERT INTO recent VALUES (now(), 40);
SELECT total FROM flownode.read_flow(NULL::recent_1d) ORDER BY day;
SELECT total FROM recent_1d ORDER BY day;
SELECT sum(v) AS total FROM recent GROUP BY date_bin('1 day', ts, timestamptz '2000-01-01') ORDER BY 1;

-- a flow comparing its time column with now(): its sink follows the query at the
-- flow's clock (a multiple of eval_interval: midnight UTC here), read_flow the query
-- at the reader's now(), so the windows whose rows left the comparison since are
-- computed too (the sink lags unless this runs in the first minute of a UTC day)
CREATE TABLE nowsrc (ts timestamptz NOT NULL, v int);
CREATE INDEX ON nowsrc (ts);
INSERT INTO nowsrc SELECT now() - i * interval '1 minute', i FROM generate_series(0, 2879) i;
SELECT flownode.create_flow('now_1h', 'now_1h',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n, sum(v) AS total
      FROM nowsrc WHERE ts > now() - interval '1 day' GROUP BY 1$$, eval_interval => '1 day') > 0 AS created;
SELECT read_diff('now_1h'), sink_diff('now_1h') > 0 AS sink_lags;
INSERT INTO nowsrc VALUES (now() - interval '3 hours', 100000), (now() - interval '30 hours', 100000);
SELECT read_diff('now_1h');
-- a transaction reads at its own now()
BEGIN;
SELECT read_diff('now_1h');
SELECT pg_sleep(0.2);
SELECT read_diff('now_1h');
COMMIT;

-- a sink with a column the flow does not write: NULL in computed rows
CREATE TABLE extra_sink (minute timestamptz NOT NULL, n bigint, note text DEFAULT 'kept', PRIMARY KEY (minute));
SELECT flownode.create_flow('m_extra', 'extra_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, count(*) AS n FROM m GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
ALTER TABLE extra_sink DROP COLUMN note, ADD COLUMN note text DEFAULT 'kept';
INSERT INTO m VALUES ('2024-01-01 00:01:01', 'h1', 1);
SELECT * FROM flownode.read_flow(NULL::extra_sink, '2024-01-01 00:00', '2024-01-01 00:02') ORDER BY 1;

-- the other shapes: a copy without aggregation (windows are seconds of its time
-- column), one row without GROUP BY (window-less), SELECT DISTINCT
CREATE TABLE metrics (host text NOT NULL, ts timestamptz NOT NULL, v float8, PRIMARY KEY (host, ts));
CREATE INDEX ON metrics (ts);
INSERT INTO metrics SELECT 'h' || (i % 3), timestamptz '2024-01-01' + i * interval '10 seconds', i * 3
  FROM generate_series(0, 99) i;
SELECT flownode.create_flow('hot', 'hot', $$SELECT ts, host, v FROM metrics WHERE v > 100$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('totals', 'totals', $$SELECT count(*) AS n, sum(v) AS total FROM metrics$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('hosts_seen', 'hosts_seen',
  $$SELECT DISTINCT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host FROM metrics$$,
  eval_interval => '1 hour') > 0 AS created;
UPDATE metrics SET v = 1 WHERE host = 'h0' AND v BETWEEN 150 AND 200;
UPDATE metrics SET v = 1000 WHERE host = 'h1' AND v < 50;
UPDATE metrics SET ts = ts + interval '2 hours' WHERE host = 'h2' AND v > 250;
DELETE FROM metrics WHERE host = 'h1' AND v BETWEEN 200 AND 250;
INSERT INTO metrics VALUES ('h9', '2024-01-01 00:30:00.5', 500);
SELECT read_diff('hot') AS hot, sink_diff('hot') > 0 AS hot_lags, read_diff('totals') AS totals,
       sink_diff('totals') > 0 AS totals_lags, read_diff('hosts_seen') AS hosts_seen,
       sink_diff('hosts_seen') > 0 AS hosts_seen_lags;
SELECT * FROM flownode.read_flow(NULL::hot, '2024-01-01 00:30', '2024-01-01 00:30:01');
SELECT * FROM flownode.read_flow(NULL::totals);

-- a background backfill that has not filled everything: the windows it has not
-- reached are computed (the flow is paused in the transaction that creates it, so its
-- worker fills nothing)
CREATE TABLE bf (ts timestamptz NOT NULL, v int);
CREATE INDEX ON bf (ts);
INSERT INTO bf SELECT timestamptz '2024-01-01' + i * interval '1 minute', i FROM generate_series(0, 299) i;
BEGIN;
SELECT flownode.create_flow('bf_1h', 'bf_1h',
  $$SELECT date_trunc('hour', ts) AS hour, count(*) AS n, sum(v) AS total FROM bf GROUP BY 1$$,
  eval_interval => '1 hour', backfill => 'background') > 0 AS created;
SELECT flownode.pause_flow('bf_1h');
COMMIT;
SELECT read_diff('bf_1h'), (SELECT count(*) FROM bf_1h) AS sink_rows;
SELECT * FROM flownode.read_flow(NULL::bf_1h, '2024-01-01 01:30', '2024-01-01 03:00') ORDER BY 1;
SELECT flownode.resume_flow('bf_1h');

-- errors
SELECT * FROM flownode.read_flow(1);
SELECT * FROM flownode.read_flow(NULL);
SELECT * FROM flownode.read_flow(NULL::m);
SELECT * FROM flownode.read_flow(NULL::record);

-- a read view: a relation over read_flow, owned by its creator
SELECT flownode.create_read_view('m_1m', 'm_1m_live');
SELECT count(*) AS live_rows, (SELECT count(*) FROM m_1m) AS sink_rows FROM m_1m_live;
SELECT obj_description('m_1m_live'::regclass, 'pg_class');
SELECT reloptions FROM pg_class WHERE oid = 'm_1m_live'::regclass;
SELECT count(*) FROM ((TABLE m_1m_live EXCEPT ALL SELECT * FROM flownode.read_flow(NULL::m_1m))
                      UNION ALL (SELECT * FROM flownode.read_flow(NULL::m_1m) EXCEPT ALL TABLE m_1m_live)) d;
SELECT flownode.create_read_view('m_1m', 'm_1m_live');
SELECT flownode.create_read_view('nope', 'v');
SELECT flownode.create_read_view('m_1m', 'a.b.c.d');
SELECT flownode.create_read_view('m_1m', NULL);
SELECT flownode.create_read_view('m_1m', '');
SELECT flownode.create_read_view('m_1m', 'no_such_schema.v');
-- schema-qualified, quoted names
CREATE SCHEMA "Live Views";
SELECT flownode.create_read_view('m_5m', '"Live Views"."5 minutes"');
SELECT count(*) > 0 AS readable FROM "Live Views"."5 minutes";
-- DROP TABLE of the sink takes its views with it (and drops the flow)
DROP TABLE m_5m;
SELECT count(*) FROM pg_class WHERE relname = '5 minutes';
-- a view built on a read view keeps it, as for any view
CREATE VIEW on_top AS SELECT count(*) FROM m_1m_live;
SELECT flownode.drop_flow('m_1m');
DROP VIEW on_top;
-- drop_flow takes the flow's read views; the sink stays
SELECT flownode.drop_flow('m_1m');
SELECT to_regclass('m_1m_live') AS view, to_regclass('m_1m') AS sink;
-- DROP EXTENSION would take them too (not run here)
SELECT flownode.create_read_view('m_busy', 'm_busy_live');
SELECT deptype, refclassid::regclass FROM pg_depend
 WHERE classid = 'pg_class'::regclass AND objid = 'm_busy_live'::regclass AND deptype = 'a' ORDER BY 2;

-- privileges: the caller needs SELECT on the sink and on the source's columns the
-- query reads; the dirty windows are computed as the flow's owner computes them
CREATE ROLE rf_owner;
CREATE ROLE rf_reader;
GRANT EXECUTE ON FUNCTION flownode.create_flow TO rf_owner;
CREATE TABLE guarded (ts timestamptz NOT NULL, tenant text NOT NULL, v int, secret text);
CREATE INDEX ON guarded (ts);
GRANT SELECT, TRIGGER ON guarded TO rf_owner;
GRANT CREATE ON SCHEMA public TO rf_owner;
INSERT INTO guarded SELECT timestamptz '2024-01-01' + i * interval '1 minute', 't' || (i % 2), i, 'x'
  FROM generate_series(0, 119) i;
SET ROLE rf_owner;
SELECT flownode.create_flow('guarded_1h', 'guarded_1h',
  $$SELECT date_trunc('hour', ts) AS hour, tenant, sum(v) AS total FROM guarded GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
RESET ROLE;
INSERT INTO guarded VALUES ('2024-01-01 00:30', 't0', 1000);
SET ROLE rf_reader;
SELECT * FROM flownode.read_flow(NULL::guarded_1h);
RESET ROLE;
GRANT SELECT ON guarded_1h TO rf_reader;
SET ROLE rf_reader;
SELECT * FROM flownode.read_flow(NULL::guarded_1h);
RESET ROLE;
-- the columns the query reads are enough; others are not
GRANT SELECT (ts, tenant) ON guarded TO rf_reader;
SET ROLE rf_reader;
SELECT * FROM flownode.read_flow(NULL::guarded_1h);
RESET ROLE;
GRANT SELECT (v) ON guarded TO rf_reader;
SET ROLE rf_reader;
SELECT * FROM flownode.read_flow(NULL::guarded_1h) ORDER BY 1, 2;
RESET ROLE;
-- row-level security on the source that applies to the reader: refused, since the
-- windows it would compute would count rows hidden from it
ALTER TABLE guarded ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_tenant ON guarded FOR SELECT USING (tenant = 't1');
GRANT SELECT ON guarded TO rf_owner;
SET ROLE rf_reader;
SELECT * FROM flownode.read_flow(NULL::guarded_1h);
RESET ROLE;
-- ... and that applies to the owner: the computed windows hold only what the owner
-- sees, as the refresh will write them (the reader here is exempt: the table's owner)
INSERT INTO guarded VALUES ('2024-01-01 01:30', 't0', 2000), ('2024-01-01 01:30', 't1', 3000);
SELECT * FROM flownode.read_flow(NULL::guarded_1h) ORDER BY 1, 2;
SELECT flownode.flush_flow('guarded_1h') > 0 AS flushed;
SELECT * FROM guarded_1h ORDER BY 1, 2;
-- row-level security on the sink that applies to the reader: refused too
ALTER TABLE guarded DISABLE ROW LEVEL SECURITY;
ALTER TABLE guarded_1h ENABLE ROW LEVEL SECURITY;
CREATE POLICY some_rows ON guarded_1h FOR SELECT USING (tenant = 't1');
SET ROLE rf_reader;
SELECT * FROM flownode.read_flow(NULL::guarded_1h);
RESET ROLE;
-- read views: only a member of the flow's owner creates them
SET ROLE rf_reader;
SELECT flownode.create_read_view('guarded_1h', 'guarded_live');
RESET ROLE;

-- a flow that joins a dimension table: a write to the dimension in the reader's own
-- transaction marks its windows only at commit (the lookup of the fact rows that join
-- it), so before then every window of the flow is computed from the query
CREATE TABLE rf_hosts (host text PRIMARY KEY, region text);
CREATE TABLE rf_cpu (ts timestamptz NOT NULL, host text, v int);
CREATE INDEX ON rf_cpu (ts);
CREATE INDEX ON rf_cpu (host);
INSERT INTO rf_hosts VALUES ('a', 'us'), ('b', 'eu');
INSERT INTO rf_cpu SELECT timestamptz '2024-01-01' + i * interval '5 minutes', chr(97 + i % 2), i
  FROM generate_series(0, 99) i;
SELECT flownode.create_flow('rf_region', 'rf_region',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, rf_hosts.region, count(*) AS n, sum(v) AS s
      FROM rf_cpu JOIN rf_hosts USING (host) GROUP BY 1, 2$$, eval_interval => '1 day') > 0 AS created;
BEGIN;
UPDATE rf_hosts SET region = 'ap' WHERE host = 'b';
SELECT read_diff('rf_region') AS own_dimension_write, sink_diff('rf_region') > 0 AS sink_lags;
ROLLBACK;
UPDATE rf_hosts SET region = 'sa' WHERE host = 'a';
SELECT read_diff('rf_region') AS committed_dimension_write, sink_diff('rf_region') > 0 AS sink_lags;

-- time columns of epoch milliseconds and of dates: the query part reads the source
-- through the column's own values, as a refresh does
CREATE TABLE rf_ep (ts_ms bigint NOT NULL, host text, v int);
CREATE INDEX ON rf_ep (ts_ms);
INSERT INTO rf_ep SELECT 1704067200000 + i * 7000, 'h' || (i % 3), i FROM generate_series(0, 2000) i;
SELECT flownode.create_flow('rf_ep_1m', 'rf_ep_1m',
  $$SELECT date_bin('1 minute', to_timestamp(ts_ms / 1000.0), timestamptz '2000-01-01') AS m, host,
           count(*) AS n, sum(v) AS s FROM rf_ep GROUP BY 1, 2$$, eval_interval => '1 day') > 0 AS created;
CREATE TABLE rf_days (day date NOT NULL, host text, v int);  -- no index: read once
INSERT INTO rf_days SELECT date '2024-01-01' + i % 40, 'h' || (i % 3), i FROM generate_series(0, 500) i;
SELECT flownode.create_flow('rf_weeks', 'rf_weeks',
  $$SELECT date_trunc('week', day) AS w, host, count(*) AS n FROM rf_days GROUP BY 1, 2$$,
  eval_interval => '1 day') > 0 AS created;
INSERT INTO rf_ep VALUES (1704067200000 + 3000 * 7000 + 5, 'late', 1), (1704067200000 + 500 * 7000 + 5, 'late', 2);
DELETE FROM rf_ep WHERE v % 97 = 0;
INSERT INTO rf_days VALUES ('2024-01-03', 'late', 5), ('2024-02-20', 'x', 1);
UPDATE rf_days SET host = 'moved' WHERE v % 50 = 0;
SELECT read_diff('rf_ep_1m') AS epoch_ms, sink_diff('rf_ep_1m') > 0 AS sink_lags;
SELECT read_diff('rf_weeks') AS dates, sink_diff('rf_weeks') > 0 AS sink_lags;

-- Dirty windows before 2000-01-01 (PostgreSQL's time 0): the query computes them too.
-- read_flow took "no expire_after" (0) as the line below which windows are frozen,
-- and returned the sink's stale rows there (found by the oracle, seed 393904123).
INSERT INTO rf_days VALUES ('1999-12-31', 'old', 1), ('1993-07-05', 'old', 2), ('1970-01-01', 'epoch', 3);
SELECT read_diff('rf_weeks') AS dates_before_2000, sink_diff('rf_weeks') > 0 AS sink_lags;
SELECT count(*) AS old_weeks FROM flownode.read_flow(NULL::rf_weeks, NULL, '2000-01-01');
SELECT count(*) AS old_weeks FROM flownode.read_flow(NULL::rf_weeks, '1990-01-01', '1999-12-31');

-- cleanup
SELECT flownode.drop_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
DROP TABLE rf_region, rf_cpu, rf_hosts, rf_ep, rf_ep_1m, rf_days, rf_weeks;
DROP TABLE bf, bf_1h, metrics, hot, totals, hosts_seen, m, m_1m, m_busy, m_hosts, noidx, noidx_day, recent, recent_1d, nowsrc, now_1h, extra_sink, guarded, guarded_1h;
DROP SCHEMA "Live Views";
REVOKE CREATE ON SCHEMA public FROM rf_owner;
REVOKE EXECUTE ON FUNCTION flownode.create_flow FROM rf_owner;
DROP ROLE rf_owner, rf_reader;
DROP FUNCTION read_diff(text), sink_diff(text);
