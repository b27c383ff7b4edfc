-- The folded refresh of the open window (docs/reference.md, "Folding the open window"): a window
-- that only gained rows is refreshed by folding its new rows into what its older
-- rows aggregated to. The sink must equal the query after every refresh: the test
-- cluster runs with flownode.verify_folds = on, which fails any folded refresh
-- whose window differs from the query in the same snapshot; flow_diff checks the
-- whole sink besides.
SET timezone = 'UTC';
-- the windows here are past ones taking rows as the open window would: key marks
-- (docs/reference.md, "Late rows") would refresh their groups instead of folding
SET flownode.key_marks_per_window = 0;
CREATE TABLE fm (ts timestamp NOT NULL, host text NOT NULL, v int NOT NULL, x numeric);
CREATE INDEX ON fm (ts);
SELECT flownode.create_flow('fold_m', 'fold_m',
  $$SELECT date_bin('1 minute', ts, timestamp '2000-01-01') AS w, host,
           count(*) AS n, count(x) AS nx, sum(v) AS s, sum(x) AS sx, min(v) AS lo, max(x) AS hi,
           bool_and(v > 0) AS all_pos, bool_or(v > 8) AS any_big, avg(v) AS av, avg(x) AS avx
      FROM fm GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
CREATE FUNCTION folds(p text) RETURNS bigint LANGUAGE sql AS
  $$SELECT folded_refreshes FROM flownode.flow_info WHERE flow_name = p$$;
-- batch k: 20 rows at 10:00:(k*10 + 0..9.5), over two hosts
CREATE FUNCTION batch(k int, base timestamp DEFAULT '2026-01-01 10:00:00') RETURNS void LANGUAGE sql AS $$
  INSERT INTO fm SELECT base + (k * 10) * interval '1 second' + i * interval '500 ms',
                       'h' || (i % 2), i % 10 - k % 3, CASE WHEN i % 3 = 0 THEN NULL ELSE i * 1.5 END
    FROM generate_series(0, 19) i $$;

-- the first refresh of the window recomputes it; the ones after fold
SELECT batch(0);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
SELECT batch(1);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
SELECT batch(2);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
SELECT batch(3);
SELECT batch(4);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');

-- a late row below the line the fold keeps (its rows older than the newest by more
-- than the slack are in the prefix): the window is recomputed, not folded
INSERT INTO fm VALUES ('2026-01-01 10:00:01', 'h0', 100, 7);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
-- and folding resumes from scratch
SELECT batch(5);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
SELECT batch(5);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');

-- a new group in the open window, and a row within the slack below the newest
INSERT INTO fm VALUES ('2026-01-01 10:00:59.5', 'h9', 3, NULL);
INSERT INTO fm VALUES ('2026-01-01 10:00:59', 'h1', -4, 0.25);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');

-- an UPDATE or a DELETE may take rows out: recomputed
UPDATE fm SET v = v + 1 WHERE ts = '2026-01-01 10:00:59.5';
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
SELECT batch(5);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
DELETE FROM fm WHERE host = 'h9';
SELECT batch(5);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');

-- the next window opens: its first refresh recomputes it, then it folds; a late row
-- into the window before does not disturb the fold of the new one
SELECT batch(0, '2026-01-01 10:01:00');
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
SELECT batch(1, '2026-01-01 10:01:00');
INSERT INTO fm VALUES ('2026-01-01 10:00:30', 'h0', 5, 5);
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
SELECT batch(2, '2026-01-01 10:01:00');
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');

-- a rolled-back subtransaction's rows and marks go; a committed one's stay
BEGIN;
SELECT batch(3, '2026-01-01 10:01:00');
SAVEPOINT a;
INSERT INTO fm VALUES ('2026-01-01 10:01:02', 'h0', 50, 50);
ROLLBACK TO a;
SAVEPOINT b;
INSERT INTO fm VALUES ('2026-01-01 10:01:45', 'h0', 60, 60);
RELEASE b;
COMMIT;
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');

-- TRUNCATE of the source empties the sink and drops what the fold kept; a
-- transaction that did it cannot be prepared (what the fold kept would survive it)
BEGIN;
TRUNCATE fm;
PREPARE TRANSACTION 'fold_truncate';
TRUNCATE fm;
SELECT batch(4, '2026-01-01 10:01:00');
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
SELECT batch(5, '2026-01-01 10:01:00');
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
SELECT count(*) AS sink_rows FROM fold_m;

-- a source change the refresh must analyse again (a column added): the fold starts
-- afresh with the new analysis
ALTER TABLE fm ADD COLUMN note text;
SELECT batch(0, '2026-01-01 10:02:00');
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');
SELECT batch(1, '2026-01-01 10:02:00');
SELECT flownode.flush_flow('fold_m') AS windows, flow_diff('fold_m'), folds('fold_m');

-- a partitioned source folds as a plain one; rows that join it (ATTACH) or leave it
-- (DETACH, a partition's TRUNCATE) recompute the window when they touch it
CREATE TABLE fpm (ts timestamp NOT NULL, k int NOT NULL, v int NOT NULL) PARTITION BY LIST (k);
CREATE TABLE fpm_a PARTITION OF fpm FOR VALUES IN (1);
CREATE TABLE fpm_b PARTITION OF fpm FOR VALUES IN (2);
CREATE INDEX ON fpm (ts);
SELECT flownode.create_flow('fold_pm', 'fold_pm',
  $$SELECT date_bin('1 minute', ts, timestamp '2000-01-01') AS w, k, count(*) AS n, sum(v) AS s, max(v) AS hi
      FROM fpm GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
CREATE FUNCTION pbatch(sec int, ks int[] DEFAULT '{1,2}') RETURNS void LANGUAGE sql AS $$
  INSERT INTO fpm SELECT timestamp '2026-01-01 10:00:00' + (sec + i) * interval '1 second',
                        ks[1 + i % cardinality(ks)], i
    FROM generate_series(0, 9) i $$;
SELECT pbatch(0);
SELECT flownode.flush_flow('fold_pm') AS windows, flow_diff('fold_pm'), folds('fold_pm');
SELECT pbatch(10);
SELECT flownode.flush_flow('fold_pm') AS windows, flow_diff('fold_pm'), folds('fold_pm');
SELECT pbatch(20);
SELECT flownode.flush_flow('fold_pm') AS windows, flow_diff('fold_pm'), folds('fold_pm');
-- a table whose rows lie below the line joins the source
CREATE TABLE fpm_c (LIKE fpm);
INSERT INTO fpm_c VALUES ('2026-01-01 10:00:02', 3, 100), ('2026-01-01 10:00:40', 3, 7);
ALTER TABLE fpm ATTACH PARTITION fpm_c FOR VALUES IN (3);
SELECT flownode.flush_flow('fold_pm') AS windows, flow_diff('fold_pm'), folds('fold_pm');
SELECT pbatch(30);
SELECT flownode.flush_flow('fold_pm') AS windows, flow_diff('fold_pm'), folds('fold_pm');
SELECT pbatch(40);
SELECT flownode.flush_flow('fold_pm') AS windows, flow_diff('fold_pm'), folds('fold_pm');
-- a partition leaves: its rows go from the window
ALTER TABLE fpm DETACH PARTITION fpm_b;
SELECT flownode.flush_flow('fold_pm') AS windows, flow_diff('fold_pm'), folds('fold_pm');
SELECT pbatch(50, '{1,3}');
SELECT flownode.flush_flow('fold_pm') AS windows, flow_diff('fold_pm'), folds('fold_pm');
SELECT pbatch(52, '{1,3}');
SELECT flownode.flush_flow('fold_pm') AS windows, flow_diff('fold_pm'), folds('fold_pm');
TRUNCATE fpm_c;
SELECT flownode.flush_flow('fold_pm') AS windows, flow_diff('fold_pm'), folds('fold_pm');
SELECT flownode.drop_flow('fold_pm');
DROP TABLE fpm, fpm_b, fold_pm;
DROP FUNCTION pbatch(int, int[]);

-- queries that do not fold are recomputed every time: avg and sums of floats,
-- expressions over aggregates, HAVING
CREATE TABLE f (ts timestamptz NOT NULL, v float8 NOT NULL);
CREATE INDEX ON f (ts);
SELECT flownode.create_flow('fold_avg', 'fold_avg',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, avg(v) AS a, sum(v) AS s,
           count(*) + 1 AS n1 FROM f GROUP BY 1$$, eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('fold_having', 'fold_having',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n
      FROM f GROUP BY 1 HAVING count(*) > 1$$, eval_interval => '1 hour') > 0;
INSERT INTO f SELECT timestamptz '2026-01-01 10:00:00+00' + i * interval '1 second', i * 0.1 FROM generate_series(0, 9) i;
SELECT flownode.flush_flow('fold_avg'), flownode.flush_flow('fold_having');
INSERT INTO f SELECT timestamptz '2026-01-01 10:00:20+00' + i * interval '1 second', i * 0.1 FROM generate_series(0, 9) i;
SELECT flownode.flush_flow('fold_avg'), flownode.flush_flow('fold_having');
SELECT flow_diff('fold_avg'), folds('fold_avg'), flow_diff('fold_having'), folds('fold_having');

-- a source without an index on its time column reads the whole table either way:
-- no fold
CREATE TABLE noidx (ts timestamp NOT NULL, v int NOT NULL);
SELECT flownode.create_flow('fold_noidx', 'fold_noidx',
  $$SELECT date_bin('1 minute', ts, timestamp '2000-01-01') AS w, sum(v) AS s FROM noidx GROUP BY 1$$,
  eval_interval => '1 hour') > 0;
INSERT INTO noidx VALUES ('2026-01-01 10:00:00', 1);
SELECT flownode.flush_flow('fold_noidx');
INSERT INTO noidx VALUES ('2026-01-01 10:00:30', 2);
SELECT flownode.flush_flow('fold_noidx'), flow_diff('fold_noidx'), folds('fold_noidx');

SELECT flownode.drop_flow('fold_m'), flownode.drop_flow('fold_avg'), flownode.drop_flow('fold_having'),
       flownode.drop_flow('fold_noidx');
DROP TABLE fm, fold_m, f, fold_avg, fold_having, noidx, fold_noidx;
DROP FUNCTION folds(text), batch(int, timestamp);
