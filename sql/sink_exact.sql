-- Invariant 1 (docs/internals.md §2) in detail: vanished groups are deleted, HAVING is honoured, unchanged
-- rows are not rewritten, NULL group keys are groups, an existing sink is used,
-- and expire_after drops marks of windows that are too old.
SET timezone = 'UTC';
CREATE TABLE s (ts timestamptz NOT NULL, host text, v int);
INSERT INTO s SELECT timestamptz '2024-01-01' + i * interval '1 minute', (ARRAY['a', 'b', NULL])[1 + i % 3], i
  FROM generate_series(0, 299) i;

-- HAVING: a group leaves the sink when it stops qualifying, and comes back
SELECT flownode.create_flow('busy', 'busy_hours',
  $$SELECT date_trunc('hour', ts) AS hour, host, count(*) AS n FROM s GROUP BY 1, 2 HAVING sum(v) > 1000$$,
  eval_interval => '1 hour') > 0;
-- a nullable key: the sink's key treats NULLs as equal
SELECT indexrelid::regclass, indisprimary, indnullsnotdistinct FROM pg_index WHERE indrelid = 'busy_hours'::regclass;
SELECT hour, host, n FROM busy_hours ORDER BY 1, 2 NULLS FIRST;
DELETE FROM s WHERE ts < '2024-01-01 00:30' AND host IS NULL;
SELECT flownode.flush_flow('busy'), flow_diff('busy');
SELECT hour, host, n FROM busy_hours WHERE hour = '2024-01-01 00:00+00' ORDER BY 2 NULLS FIRST;
INSERT INTO s VALUES ('2024-01-01 00:59', NULL, 5000);
SELECT flownode.flush_flow('busy'), flow_diff('busy');
SELECT hour, host, n FROM busy_hours WHERE hour = '2024-01-01 00:00+00' ORDER BY 2 NULLS FIRST;

-- unchanged rows are not rewritten: a refresh of a window touches only the groups
-- whose values changed (their xmin moves; the others keep theirs)
CREATE TEMP TABLE before AS SELECT hour, host, xmin::text AS x FROM busy_hours;
INSERT INTO s VALUES ('2024-01-01 01:10', 'a', 1);
SELECT flownode.flush_flow('busy');
SELECT b.hour, b.host, b.x = a.xmin::text AS unchanged
  FROM before b JOIN busy_hours a ON a.hour = b.hour AND a.host IS NOT DISTINCT FROM b.host
 WHERE b.hour = '2024-01-01 01:00+00' ORDER BY 2 NULLS FIRST;
-- a write that changes nothing in the result rewrites nothing
UPDATE s SET v = v WHERE ts = '2024-01-01 02:00';
SELECT rows_written AS written_before FROM flownode.flow_info WHERE flow_name = 'busy' \gset
SELECT flownode.flush_flow('busy');
SELECT rows_written - :written_before AS rewritten FROM flownode.flow_info WHERE flow_name = 'busy';

-- an existing sink with the right columns and a unique key is used as it is
CREATE TABLE mine (host text, w timestamptz, total bigint, note text DEFAULT 'kept', UNIQUE NULLS NOT DISTINCT (w, host));
INSERT INTO mine VALUES ('zzz', '1999-01-01', 1, 'stale');
SELECT flownode.create_flow('into_mine', 'mine',
  $$SELECT date_bin('2 hours', ts, timestamptz '2000-01-01') AS w, host, sum(v) AS total FROM s GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
-- create_flow made it exact: the stale row is gone, the extra column keeps its default
SELECT host, w, total, note FROM mine ORDER BY 2, 1 NULLS FIRST;

-- expire_after: windows that ended long enough ago are frozen: a write into them marks nothing
SELECT flownode.create_flow('recent', 'recent_days',
  $$SELECT date_trunc('day', ts) AS day, count(*) AS n FROM s GROUP BY 1$$,
  eval_interval => '1 hour', expire_after => '7 days') > 0;
SELECT expire_after FROM flownode.flow_info WHERE flow_name = 'recent';
INSERT INTO s VALUES ('2024-01-01 12:00', 'a', 1), (now(), 'a', 1);
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'recent';
SELECT flownode.flush_flow('recent');
-- today's window was refreshed; January 2024 was too old and keeps its old count
SELECT n FROM recent_days WHERE day = date_trunc('day', now());
SELECT n FROM recent_days WHERE day = '2024-01-01';
SELECT count(*) AS n_in_source FROM s WHERE ts >= '2024-01-01' AND ts < '2024-01-02';
-- and the durable record no longer holds the expired window either
SELECT count(*) AS recorded FROM flownode.pending p JOIN flownode.flow f USING (flow_id) WHERE f.flow_name = 'recent';

-- windows that saw only inserts are refreshed without the vanished-groups DELETE
-- (a group cannot vanish by gaining rows); a DELETE or UPDATE brings it back
CREATE TABLE ins (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
INSERT INTO ins SELECT timestamptz '2024-02-01' + i * interval '20 seconds', 'h' || (i % 3), i
  FROM generate_series(0, 89) i;
SELECT flownode.create_flow('ins_only', 'ins_min',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, host, count(*) AS n, sum(v) AS s
      FROM ins GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
INSERT INTO ins VALUES ('2024-02-01 00:00:05', 'h0', 1000), ('2024-02-01 00:10:05', 'h9', 1);
SELECT flownode.flush_flow('ins_only'), flow_diff('ins_only');
-- inserts into one window and a whole group deleted from another, in one transaction
BEGIN;
INSERT INTO ins VALUES ('2024-02-01 00:20:05', 'h1', 7);
DELETE FROM ins WHERE host = 'h9';
COMMIT;
SELECT flownode.flush_flow('ins_only'), flow_diff('ins_only');
SELECT count(*) AS h9_groups FROM ins_min WHERE host = 'h9';
-- a DELETE rolled back to a savepoint removes nothing; an UPDATE moving rows does
BEGIN;
SAVEPOINT sp;
DELETE FROM ins WHERE host = 'h0';
ROLLBACK TO sp;
INSERT INTO ins VALUES ('2024-02-01 00:25:00', 'h2', 1);
COMMIT;
SELECT flownode.flush_flow('ins_only'), flow_diff('ins_only');
UPDATE ins SET host = 'h1' WHERE host = 'h2' AND ts < '2024-02-01 00:05';
SELECT flownode.flush_flow('ins_only'), flow_diff('ins_only');
SELECT count(*) AS h2_groups_before_0005 FROM ins_min WHERE host = 'h2' AND m < '2024-02-01 00:05';
-- a backfill of hundreds of windows the sink never held (refreshed in chunks that
-- grow past 64 windows: those are probed and plainly inserted), then one that
-- overlaps windows the sink holds (upserted)
INSERT INTO ins SELECT timestamptz '2023-12-01' + i * interval '1 minute', 'h' || (i % 2), i
  FROM generate_series(0, 599) i;
SELECT flownode.flush_flow('ins_only'), flow_diff('ins_only');
INSERT INTO ins SELECT timestamptz '2023-12-01 09:00' + i * interval '30 seconds', 'h' || (i % 3), i
  FROM generate_series(0, 599) i;
SELECT flownode.flush_flow('ins_only'), flow_diff('ins_only');

SELECT flownode.drop_flow(flow_name) FROM flownode.flows;
DROP TABLE s, busy_hours, mine, recent_days, ins, ins_min;

-- An existing sink must find every group again, NULL keys included: ON CONFLICT
-- never matches a NULL under a plain UNIQUE, so each refresh of a group with a NULL
-- host would add one more row. create_flow refuses such a sink and says how to fix it.
CREATE TABLE n (ts timestamptz NOT NULL, host text, v int);
INSERT INTO n VALUES ('2024-01-01 00:00:10', NULL, 1), ('2024-01-01 00:00:20', 'a', 2);
CREATE TABLE n_plain (minute timestamptz, host text, total bigint, UNIQUE (minute, host));
SELECT flownode.create_flow('n_flow', 'n_plain',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, sum(v) AS total
      FROM n GROUP BY 1, 2$$, eval_interval => '1 hour');
-- nothing was left behind: no flow, and the sink is as it was
SELECT count(*) AS flows FROM flownode.flows WHERE flow_name = 'n_flow';
SELECT count(*) AS sink_rows FROM n_plain;
-- the fix the hint gives: a key that treats NULLs as equal; the sink then stays exact
-- with a NULL group across refreshes
ALTER TABLE n_plain ADD UNIQUE NULLS NOT DISTINCT (minute, host);
SELECT flownode.create_flow('n_flow', 'n_plain',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, sum(v) AS total
      FROM n GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
INSERT INTO n VALUES ('2024-01-01 00:00:30', NULL, 10);
SELECT flownode.flush_flow('n_flow'), flow_diff('n_flow');
INSERT INTO n VALUES ('2024-01-01 00:00:40', NULL, 100);
SELECT flownode.flush_flow('n_flow'), flow_diff('n_flow');
UPDATE n SET v = v + 1000 WHERE host IS NULL AND v = 1;
SELECT flownode.flush_flow('n_flow'), flow_diff('n_flow');
SELECT minute, host, total FROM n_plain ORDER BY host NULLS FIRST;
SELECT flownode.drop_flow('n_flow');
-- a sink whose nullable key column is NOT NULL: a plain UNIQUE is enough, since a
-- NULL group would fail the refresh loudly instead of duplicating rows
CREATE TABLE n_notnull (minute timestamptz, host text NOT NULL, total bigint, UNIQUE (minute, host));
SELECT flownode.create_flow('n_nn', 'n_notnull',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, sum(v) AS total
      FROM n WHERE host IS NOT NULL GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
SELECT flow_diff('n_nn');
SELECT flownode.drop_flow('n_nn');
-- keys the query knows NOT NULL (the window; a NOT NULL source column) need nothing
-- more: here the sink's columns are nullable and its UNIQUE is plain
CREATE TABLE n2 (ts timestamptz NOT NULL, host text NOT NULL, v int);
INSERT INTO n2 VALUES ('2024-01-01 00:00:10', 'a', 1);
CREATE TABLE n2_plain (minute timestamptz, host text, total bigint, UNIQUE (minute, host));
SELECT flownode.create_flow('n2_flow', 'n2_plain',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, sum(v) AS total
      FROM n2 GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
SELECT flow_diff('n2_flow');
SELECT flownode.drop_flow('n2_flow');
-- a window-less flow keyed by a nullable host alone: the same refusal
CREATE TABLE n_host (host text PRIMARY KEY, total bigint);
CREATE TABLE n_host2 (host text UNIQUE, total bigint);
SELECT flownode.create_flow('n_host', 'n_host2', $$SELECT host, sum(v) AS total FROM n GROUP BY 1$$,
  eval_interval => '1 hour');
-- a PRIMARY KEY makes its columns NOT NULL: accepted, and the NULL host fails the
-- fill loudly instead of being duplicated later
\set VERBOSITY terse
SELECT flownode.create_flow('n_host', 'n_host', $$SELECT host, sum(v) AS total FROM n GROUP BY 1$$,
  eval_interval => '1 hour');
\set VERBOSITY default
-- every arbiter must also compare keys as the query groups them: a case-insensitive
-- key would take host 'A' for the sink row of host 'a' (the sink kept 'a' after an
-- UPDATE to 'A'), even next to a key that is right
CREATE COLLATION n_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE n_ci_sink (minute timestamptz, host text NOT NULL, total bigint, UNIQUE (minute, host));
CREATE UNIQUE INDEX n_ci_key ON n_ci_sink (minute, host COLLATE n_ci);
SELECT flownode.create_flow('n_ci', 'n_ci_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, sum(v) AS total
      FROM n2 GROUP BY 1, 2$$, eval_interval => '1 hour');
-- another deterministic collation compares as the query does: accepted
DROP INDEX n_ci_key;
CREATE UNIQUE INDEX n_c_key ON n_ci_sink (minute, host COLLATE "C");
ALTER TABLE n_ci_sink DROP CONSTRAINT n_ci_sink_minute_host_key;
SELECT flownode.create_flow('n_ci', 'n_ci_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, sum(v) AS total
      FROM n2 GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
INSERT INTO n2 VALUES ('2024-01-01 00:00:20', 'A', 5);
SELECT flownode.flush_flow('n_ci'), flow_diff('n_ci');
SELECT flownode.drop_flow('n_ci');
DROP TABLE n, n_plain, n_notnull, n2, n2_plain, n_host, n_host2, n_ci_sink;
DROP COLLATION n_ci;
