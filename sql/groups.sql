-- Flows on one time column whose windows nest (1 minute, 5 minutes, an hour, a day
-- on one grid; the same calendar window) are marked once per row, in the finest
-- window, and each flow's own windows are derived at commit. Each flow must still get
-- exactly the windows its rows fall in (no fewer: the sink would miss them; no more:
-- refreshes would grow), flows that do not nest are marked on their own (a day in
-- New York is not a union of hours from half a minute past), and a flow
-- created or dropped in the middle of a transaction changes nothing for the others.
SET timezone = 'UTC';
-- the groups are those of whole-window marks: flows whose marks carry keys (the
-- default) are groups of their own, marked by their key triggers (key_marks.sql)
SET flownode.key_marks_per_window = 0;
CREATE TABLE gsrc (ts timestamptz NOT NULL, ts2 timestamptz NOT NULL DEFAULT '2024-01-01', host text NOT NULL, v float8);
CREATE FUNCTION gflow(name text, win text, col text DEFAULT 'ts') RETURNS boolean LANGUAGE sql AS $f$
  SELECT flownode.create_flow(name, name || '_sink',
    format('SELECT %s AS w, host, count(*) AS n, sum(v) AS sv FROM gsrc GROUP BY 1, 2',
           replace(win, '$c', col)),
    eval_interval => '1 hour') > 0 $f$;
SELECT gflow('g1m', $$date_bin('1 minute', $c, timestamptz '2000-01-01')$$),
       gflow('g5m', $$date_bin('5 minutes', $c, timestamptz '2000-01-01')$$),
       gflow('g5off', $$date_bin('5 minutes', $c, timestamptz '2000-01-01 00:00:30')$$),
       gflow('g1h', $$date_trunc('hour', $c)$$),
       gflow('g1d', $$date_trunc('day', $c)$$),
       gflow('gmon', $$date_trunc('month', $c)$$),
       gflow('gmon2', $$date_trunc('month', $c, 'UTC')$$),
       gflow('gnyc', $$date_trunc('day', $c, 'America/New_York')$$),
       gflow('g2', $$date_bin('1 hour', $c, timestamptz '2000-01-01 00:00:30')$$, 'ts2'),
       gflow('g2nyc', $$date_trunc('day', $c, 'America/New_York')$$, 'ts2');
SELECT flownode.create_flow('gall', 'gall_sink',
  $$SELECT host, count(*) AS n FROM gsrc GROUP BY host$$, eval_interval => '1 hour') > 0 AS windowless;

-- the windows each flow should have dirty for the rows of a table t
CREATE FUNCTION expected_windows(t regclass) RETURNS TABLE (flow text, windows bigint) LANGUAGE plpgsql AS $f$
BEGIN
  RETURN QUERY EXECUTE format($q$
    SELECT 'g1m', count(DISTINCT date_bin('1 minute', ts, timestamptz '2000-01-01')) FROM %1$s
    UNION ALL SELECT 'g5m', count(DISTINCT date_bin('5 minutes', ts, timestamptz '2000-01-01')) FROM %1$s
    UNION ALL SELECT 'g5off', count(DISTINCT date_bin('5 minutes', ts, timestamptz '2000-01-01 00:00:30')) FROM %1$s
    UNION ALL SELECT 'g1h', count(DISTINCT date_trunc('hour', ts)) FROM %1$s
    UNION ALL SELECT 'g1d', count(DISTINCT date_trunc('day', ts)) FROM %1$s
    UNION ALL SELECT 'gmon', count(DISTINCT date_trunc('month', ts)) FROM %1$s
    UNION ALL SELECT 'gmon2', count(DISTINCT date_trunc('month', ts, 'UTC')) FROM %1$s
    UNION ALL SELECT 'gnyc', count(DISTINCT date_trunc('day', ts, 'America/New_York')) FROM %1$s
    UNION ALL SELECT 'g2', count(DISTINCT date_bin('1 hour', ts2, timestamptz '2000-01-01 00:00:30')) FROM %1$s
    UNION ALL SELECT 'g2nyc', count(DISTINCT date_trunc('day', ts2, 'America/New_York')) FROM %1$s
    UNION ALL SELECT 'gall', least(count(*), 1) FROM %1$s$q$, t);
END $f$;
CREATE FUNCTION dirty_vs_expected(t regclass) RETURNS TABLE (flow text, dirty bigint, expected bigint)
LANGUAGE sql AS $f$
  SELECT e.flow, f.dirty_windows, e.windows FROM expected_windows(t) e
    JOIN flownode.flows f ON f.flow_name = e.flow ORDER BY 1 $f$;
CREATE FUNCTION flush_all() RETURNS TABLE (flow text, diff text) LANGUAGE sql AS $f$
  SELECT flow_name, (SELECT flow_diff(flow_name) FROM flownode.flush_flow(flow_name) x)
    FROM flownode.flows WHERE flow_name LIKE 'g%' ORDER BY 1 $f$;
SELECT * FROM flush_all();

-- rows in a few dozen scattered windows, some sharing a window of one flow only,
-- some on a day boundary in New York but not in UTC: exactly their windows are dirty
CREATE TABLE batch1 AS
  SELECT timestamptz '2024-05-01' + (i * 7919 % 4000) * interval '37 seconds' AS ts,
         timestamptz '2024-06-01' + (i % 7) * interval '1 minute' AS ts2,
         'h' || (i % 3) AS host, i::float8 AS v
    FROM generate_series(0, 59) i;
INSERT INTO batch1 (ts, host, v) VALUES ('2024-05-02 03:59:59', 'h0', 1), ('2024-05-02 04:00:00', 'h0', 2),
  ('2024-05-31 23:59:59.999999', 'h1', 3), ('2024-06-01 00:00:00', 'h1', 4),
  ('2024-05-01 00:04:59', 'h2', 5), ('2024-05-01 00:05:29', 'h2', 6);
-- (a row just before midnight in New York, in an hour that ends after it)
UPDATE batch1 SET ts2 = CASE WHEN ts = '2024-05-02 03:59:59' THEN ts ELSE '2024-01-01' END WHERE ts2 IS NULL;
INSERT INTO gsrc SELECT * FROM batch1;
SELECT * FROM dirty_vs_expected('batch1');
SELECT * FROM flush_all();

-- a transaction over a year, past the set's capacity (it coalesces: more windows
-- are dirty than were written, never fewer), with UPDATE and DELETE
SET flownode.local_ranges_per_flow = 16;
BEGIN;
INSERT INTO gsrc SELECT timestamptz '2023-01-01' + (i * 104729 % 525600) * interval '1 minute',
                        timestamptz '2023-01-01' + (i * 7 % 1000) * interval '1 minute', 'y' || (i % 5), i
  FROM generate_series(0, 1999) i;
UPDATE gsrc SET ts = ts + interval '1 hour 1 minute' WHERE host = 'y1';
DELETE FROM gsrc WHERE host = 'y2' AND v::int % 3 = 0;
COMMIT;
RESET flownode.local_ranges_per_flow;
CREATE TABLE batchy AS SELECT * FROM gsrc WHERE host LIKE 'y%';
SELECT flow, dirty >= expected AS all_marked FROM dirty_vs_expected('batchy');
SELECT * FROM flush_all();

-- savepoints: a rolled-back part marks nothing for any flow of the group
BEGIN;
INSERT INTO gsrc VALUES ('2025-01-01 10:00', DEFAULT, 'sp', 1);
SAVEPOINT a;
INSERT INTO gsrc VALUES ('2025-02-01 10:00', DEFAULT, 'sp', 1), ('2025-03-01 10:00', DEFAULT, 'sp', 1);
ROLLBACK TO a;
SAVEPOINT b;
INSERT INTO gsrc VALUES ('2025-01-01 10:07', DEFAULT, 'sp', 1);
RELEASE b;
COMMIT;
CREATE TABLE batch2 AS SELECT * FROM gsrc WHERE host = 'sp';
SELECT * FROM dirty_vs_expected('batch2');
SELECT * FROM flush_all();

-- a finer flow created in the middle of a transaction (the group gets a new
-- leader), in a savepoint that is released, and one of the group dropped: every
-- flow still gets all of its windows
BEGIN;
INSERT INTO gsrc VALUES ('2026-01-01 10:00:10', DEFAULT, 'mid', 1), ('2026-03-05 00:00', DEFAULT, 'mid', 2);
SAVEPOINT s;
SELECT gflow('g30s', $$date_bin('30 seconds', $c, timestamptz '2000-01-01')$$);
INSERT INTO gsrc VALUES ('2026-01-01 10:00:40', DEFAULT, 'mid', 3), ('2026-07-09 12:34', DEFAULT, 'mid', 4);
RELEASE s;
SELECT flownode.drop_flow('g5m');
INSERT INTO gsrc VALUES ('2026-01-01 10:09', DEFAULT, 'mid', 5), ('2026-11-11 11:11', DEFAULT, 'mid', 6);
COMMIT;
CREATE TABLE batch3 AS SELECT * FROM gsrc WHERE host = 'mid';
SELECT * FROM dirty_vs_expected('batch3');
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name = 'g30s';
SELECT * FROM flush_all();

-- a coarser flow created in the middle of a transaction joins the group's set: the
-- rows after it mark it (and the rows before, which its creation already summed)
BEGIN;
INSERT INTO gsrc VALUES ('2026-12-01 01:00', DEFAULT, 'join', 1);
SELECT gflow('g2h', $$date_bin('2 hours', $c, timestamptz '2000-01-01')$$);
INSERT INTO gsrc VALUES ('2026-12-01 05:00', DEFAULT, 'join', 2), ('2026-12-09 00:00', DEFAULT, 'join', 3);
COMMIT;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name IN ('g2h', 'g30s', 'g1d') ORDER BY 1;
SELECT * FROM flush_all();

-- the same in a savepoint that is released: the savepoint's set, which is for one
-- more flow than the transaction's, moves up whole
BEGIN;
INSERT INTO gsrc VALUES ('2026-12-10 01:00', DEFAULT, 'join', 4);
SAVEPOINT s;
SELECT gflow('g4h', $$date_bin('4 hours', $c, timestamptz '2000-01-01')$$);
INSERT INTO gsrc VALUES ('2026-12-11 05:00', DEFAULT, 'join', 5);
RELEASE s;
COMMIT;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name IN ('g4h', 'g2h', 'g30s') ORDER BY 1;
SELECT * FROM flush_all();

-- and in a rolled-back savepoint: the rows around it still mark every flow
BEGIN;
INSERT INTO gsrc VALUES ('2027-01-01 10:00:10', DEFAULT, 'rb', 1);
SAVEPOINT s;
SELECT gflow('g10s', $$date_bin('10 seconds', $c, timestamptz '2000-01-01')$$);
INSERT INTO gsrc VALUES ('2027-02-01 10:00:40', DEFAULT, 'rb', 2);
ROLLBACK TO s;
INSERT INTO gsrc VALUES ('2027-03-01 10:09', DEFAULT, 'rb', 3);
COMMIT;
SELECT count(*) AS g10s FROM flownode.flows WHERE flow_name = 'g10s';
CREATE TABLE batch4 AS SELECT * FROM gsrc WHERE host = 'rb';
SELECT * FROM dirty_vs_expected('batch4');
SELECT * FROM flush_all();

-- the flows are read again at commit when they changed after the last row: a flow
-- created, one dropped, the table dropped, all after the transaction's last row
BEGIN;
INSERT INTO gsrc VALUES ('2028-01-01 10:00', DEFAULT, 'late', 1);
SELECT gflow('g15m', $$date_bin('15 minutes', $c, timestamptz '2000-01-01')$$);
COMMIT;
BEGIN;
INSERT INTO gsrc VALUES ('2028-02-01 10:00', DEFAULT, 'late', 2);
SELECT flownode.drop_flow('g1h');
COMMIT;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name IN ('g15m', 'g1m', 'g1d') ORDER BY 1;
SELECT * FROM flush_all();
SELECT flownode.drop_flow(flow_name) FROM flownode.flows WHERE flow_name LIKE 'g%' AND flow_name <> 'g1m'
 ORDER BY flow_name;
BEGIN;
INSERT INTO gsrc VALUES ('2028-03-01 10:00', DEFAULT, 'late', 3);
DROP TABLE gsrc;
COMMIT;
SELECT count(*) AS flows_left FROM flownode.flows WHERE flow_name LIKE 'g%';
DROP TABLE batch1, batchy, batch2, batch3, batch4;
