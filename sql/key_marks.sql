-- Key marks (docs/internals.md §3 and §6, *Key marks*): a late row into a closed
-- window of a flow whose groups are keyed by source columns refreshes only the
-- groups it touched. A group of the same window corrupted by hand in the sink shows
-- which groups a refresh rewrote: a key refresh leaves it, a whole window fixes it.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS flownode;
RESET client_min_messages;
SET timezone = 'UTC';
-- opt-in: the flows created while it is on mark keys, the writes while it is on
SET flownode.key_marks_per_window = 64;
CREATE FUNCTION kdiff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; missing bigint; extra bigint;
BEGIN
  SELECT user_query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT * FROM %s) d', q, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL (%s)) d', s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;
CREATE TABLE km (ts timestamptz NOT NULL, dev int, site text, v float8);
CREATE INDEX ON km (ts);
INSERT INTO km SELECT '2026-01-01'::timestamptz + i * interval '10 min', i % 20,
                      CASE WHEN i % 7 = 0 THEN NULL ELSE 's' || (i % 3) END, i
  FROM generate_series(0, 1439) i;
-- keyed by two plain columns: key triggers, and a NOTICE naming the index to create
SELECT flownode.create_flow('km_day', 'km_day',
  $$SELECT date_trunc('day', ts) AS d, dev, site, count(*) AS n, avg(v) AS av, max(v) AS mx
      FROM km GROUP BY 1, 2, 3$$, eval_interval => '1 hour') > 0;
CREATE INDEX ON km (flownode.key_hash(dev, site), ts);
-- the sink create_flow made has an index on its keys' hash and window: a key refresh
-- reads the sink's groups of the marked hashes through it, not every group of a window
SELECT indexdef FROM pg_indexes WHERE tablename = 'km_day' ORDER BY indexdef;
-- each key trigger's clause marks open windows from the times first, and hands only
-- late rows, whole, to mark_keys
SELECT count(*) AS gated FROM pg_trigger WHERE tgrelid = 'km'::regclass AND tgname LIKE 'flownode_mark_keys%'
   AND pg_get_triggerdef(oid) LIKE '%WHEN ((flownode.mark_keys_open(%, old.ts, new.ts) AND flownode.mark_keys(%';
CREATE FUNCTION pending_keys() RETURNS bigint LANGUAGE sql AS
  $$SELECT count(*) FROM flownode.pending_keys k JOIN flownode.flow f USING (flow_id) WHERE f.flow_name = 'km_day'$$;
CREATE FUNCTION corrupt() RETURNS void LANGUAGE sql AS
  $$UPDATE km_day SET n = -1 WHERE d = '2026-01-02' AND dev = 5 AND site = 's2'$$;
CREATE FUNCTION corrupted() RETURNS bool LANGUAGE sql AS
  $$SELECT n = -1 FROM km_day WHERE d = '2026-01-02' AND dev = 5 AND site = 's2'$$;

-- a key that is an expression: whole windows, no key triggers
SELECT flownode.create_flow('km_mod', 'km_mod',
  $$SELECT date_trunc('day', ts) AS d, dev % 3 AS g, count(*) AS n FROM km GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT count(*) AS key_triggers FROM pg_trigger WHERE tgrelid = 'km'::regclass AND tgname LIKE 'flownode_mark_keys%';
SELECT kdiff('km_day'), kdiff('km_mod');

-- one late row for one key: only its group is refreshed
SELECT corrupt();
INSERT INTO km VALUES ('2026-01-02 12:34', 3, 's1', 1000);
SELECT pending_keys() AS marks, dirty_windows FROM flownode.flows WHERE flow_name = 'km_day';
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, pending_keys() AS marks, corrupted(), kdiff('km_day');
SELECT n, mx FROM km_day WHERE d = '2026-01-02' AND dev = 3 AND site = 's1';
SELECT flownode.flush_flow('km_mod') >= 0 AS flushed, kdiff('km_mod');

-- a key no row had before; then its last row deleted
INSERT INTO km VALUES ('2026-01-02 01:00', 99, 'new', 1);
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');
SELECT count(*) AS new_group FROM km_day WHERE dev = 99;
DELETE FROM km WHERE dev = 99;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');
SELECT count(*) AS new_group FROM km_day WHERE dev = 99;

-- a key that moves (UPDATE of a key column): both groups, in both windows
UPDATE km SET dev = 42, ts = ts + interval '1 day' WHERE dev = 4 AND site = 's0' AND ts < '2026-01-03';
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');
SELECT count(*) AS moved FROM km_day WHERE dev = 42;

-- NULL keys: late rows into the groups whose site is NULL, and a NULL dev
INSERT INTO km VALUES ('2026-01-02 03:00', 7, NULL, 5), ('2026-01-02 04:00', NULL, NULL, 6);
SELECT pending_keys() AS marks;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');
DELETE FROM km WHERE dev IS NULL;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');

-- a rolled-back write and a rolled-back savepoint mark nothing
BEGIN;
INSERT INTO km VALUES ('2026-01-02 05:00', 8, 's1', 7);
ROLLBACK;
BEGIN;
SAVEPOINT a;
INSERT INTO km VALUES ('2026-01-02 05:00', 8, 's1', 7);
ROLLBACK TO a;
INSERT INTO km VALUES ('2026-01-03 05:00', 8, 's1', 7);
SAVEPOINT b;
INSERT INTO km VALUES ('2026-01-04 05:00', 8, 's1', 7);
RELEASE b;
COMMIT;
SELECT pending_keys() AS marks;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');

-- read_flow sees the groups of pending key marks (the sink does not yet); the
-- window of the corrupted group is left out
INSERT INTO km VALUES ('2026-01-05 05:00', 9, 's2', 70000);
CREATE VIEW km_q AS SELECT date_trunc('day', ts) AS d, dev, site, count(*) AS n, avg(v) AS av, max(v) AS mx
  FROM km GROUP BY 1, 2, 3;
SELECT (SELECT count(*) FROM ((SELECT * FROM flownode.read_flow(NULL::km_day) WHERE d <> '2026-01-02'
                               EXCEPT ALL SELECT * FROM km_q WHERE d <> '2026-01-02')
                              UNION ALL (SELECT * FROM km_q WHERE d <> '2026-01-02' EXCEPT ALL
                                         SELECT * FROM flownode.read_flow(NULL::km_day) WHERE d <> '2026-01-02')) x)
         AS read_diff,
       (SELECT mx FROM km_day WHERE d = '2026-01-05' AND dev = 9 AND site = 's2') AS sink_mx;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');

-- past the budget: the window is marked whole, and the corrupted group is fixed
SET flownode.key_marks_per_window = 2;
INSERT INTO km SELECT '2026-01-02 06:00', d, 's1', 1 FROM generate_series(10, 14) d;
SET flownode.key_marks_per_window = 64;
SELECT pending_keys() AS marks;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');

-- 0 disables key marks: whole windows
SELECT corrupt();
SET flownode.key_marks_per_window = 0;
INSERT INTO km VALUES ('2026-01-02 07:00', 11, 's1', 1);
SET flownode.key_marks_per_window = 64;
SELECT pending_keys() AS marks;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');

-- the open window (it ends after the transaction started) is marked whole: it folds
INSERT INTO km VALUES (now(), 1, 's1', 1);
SELECT pending_keys() AS marks;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, kdiff('km_day');

-- a row moved from a closed window into the open one, and back: the closed window's
-- group by its key (its late time, old or new, makes mark_keys_open true), the open
-- window whole
SELECT corrupt();
UPDATE km SET ts = now() WHERE ts = '2026-01-02 12:34';
SELECT pending_keys() AS marks;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');
UPDATE km SET ts = '2026-01-02 12:34' WHERE ts >= date_trunc('day', now()) AND dev = 3;
SELECT pending_keys() AS marks;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');

-- many late rows over a few keys of one day, with deletes among them
SELECT corrupt();
INSERT INTO km SELECT '2026-01-06'::timestamptz + i * interval '1 min', i % 4, 's' || (i % 2), i
  FROM generate_series(1, 1000) i;
DELETE FROM km WHERE ts >= '2026-01-06' AND ts < '2026-01-07' AND dev = 2 AND site = 's0';
SELECT pending_keys() AS marks;
SELECT flownode.flush_flow('km_day') >= 0 AS flushed, corrupted(), kdiff('km_day');

-- a fold of a past window written past the budget, then a key mark below its line:
-- the fold is reported a removal (the prefix lacks the row) and recomputes; the
-- cluster runs with flownode.verify_folds, which fails a folded refresh that differs
CREATE TABLE kf (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON kf (ts);
SELECT flownode.create_flow('kf_m', 'kf_m',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, host, count(*) AS n, sum(v) AS s
      FROM kf GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
CREATE FUNCTION kf_batch(k int) RETURNS void LANGUAGE sql AS $$
  INSERT INTO kf SELECT '2026-01-01 10:00:00+00'::timestamptz + (k * 10) * interval '1 second' + i * interval '500 ms',
                       'h' || (i % 5), i FROM generate_series(0, 19) i $$;
SET flownode.key_marks_per_window = 2;
SELECT kf_batch(0);
SELECT flownode.flush_flow('kf_m') AS windows, kdiff('kf_m');
SELECT kf_batch(1);
SELECT kf_batch(2);
SELECT flownode.flush_flow('kf_m') AS windows, kdiff('kf_m');
SELECT folded_refreshes AS folds FROM flownode.flow_info WHERE flow_name = 'kf_m';
SET flownode.key_marks_per_window = 64;
INSERT INTO kf VALUES ('2026-01-01 10:00:00.25+00', 'h1', 1000);
SET flownode.key_marks_per_window = 2;
SELECT kf_batch(3);
SET flownode.key_marks_per_window = 64;
SELECT flownode.flush_flow('kf_m') AS windows, kdiff('kf_m');
SELECT folded_refreshes AS folds, failures FROM flownode.flow_info WHERE flow_name = 'kf_m';
SELECT flownode.drop_flow('kf_m');
DROP FUNCTION kf_batch(int);
DROP TABLE kf;

-- a NULL time is in no window: an UPDATE from NULL to a late time marks the late
-- row's key (mark_keys_open is not strict: a NULL does not stop the clause)
CREATE TABLE kn (ts timestamptz, dev int, v int);
SET client_min_messages = warning;
SELECT flownode.create_flow('kn_day', 'kn_day',
  $$SELECT date_trunc('day', ts) AS d, dev, count(*) AS n FROM kn GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
RESET client_min_messages;
INSERT INTO kn VALUES (NULL, 1, 1), ('2026-01-01 10:00', 2, 1);
SELECT flownode.flush_flow('kn_day') >= 0 AS flushed;
UPDATE kn SET ts = '2026-01-01 11:00' WHERE dev = 1;
SELECT count(*) AS marks FROM flownode.pending_keys k JOIN flownode.flow f USING (flow_id) WHERE f.flow_name = 'kn_day';
SELECT flownode.flush_flow('kn_day') >= 0 AS flushed;
SELECT * FROM kn_day ORDER BY dev;
SELECT flownode.drop_flow('kn_day');
DROP TABLE kn, kn_day;

-- the marks go with their flow
INSERT INTO km VALUES ('2026-01-02 08:00', 12, 's1', 1);
SELECT pending_keys() AS marks;
SELECT flownode.drop_flow('km_day');
SELECT count(*) AS marks_left FROM flownode.pending_keys;
SELECT count(*) AS key_triggers FROM pg_trigger WHERE tgrelid = 'km'::regclass AND tgname LIKE 'flownode_mark_keys%';
SELECT flownode.drop_flow('km_mod');
-- opt-in: a flow created while the setting is 0 gets no key triggers
SET flownode.key_marks_per_window = 0;
SELECT flownode.create_flow('km_off', 'km_off',
  $$SELECT date_trunc('day', ts) AS d, dev, count(*) AS n FROM km GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
SELECT count(*) AS key_triggers FROM pg_trigger WHERE tgrelid = 'km'::regclass AND tgname LIKE 'flownode_mark_keys%';
SELECT flownode.drop_flow('km_off');
RESET flownode.key_marks_per_window;
DROP VIEW km_q;
DROP TABLE km;
DROP FUNCTION kdiff(text), pending_keys(), corrupt(), corrupted();
