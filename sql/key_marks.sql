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
DROP FUNCTION pending_keys(), corrupt(), corrupted();

-- Other time columns and partitioned sources. Each flow's group (day 2026-01-02,
-- dev 5) is corrupted by hand: a key refresh of another group of its window leaves
-- it, a whole window fixes it.
CREATE FUNCTION kmarks(p_flow text) RETURNS bigint LANGUAGE sql AS
  $$SELECT count(*) FROM flownode.pending_keys k JOIN flownode.flow f USING (flow_id) WHERE f.flow_name = p_flow$$;
CREATE FUNCTION kcorrupt(p_flow text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('UPDATE %s SET n = -1 WHERE d::date = ''2026-01-02'' AND dev = 5', p_flow);
END $$;
CREATE FUNCTION kcorrupted(p_flow text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE r bool;
BEGIN
  EXECUTE format('SELECT bool_or(n = -1) FROM %s WHERE d::date = ''2026-01-02'' AND dev = 5', p_flow) INTO r;
  RETURN r;
END $$;
-- every group but the corrupted one equals the query
CREATE FUNCTION kdiff_rest(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; missing bigint; extra bigint;
  rest text := '(d::date, dev) IS DISTINCT FROM (''2026-01-02''::date, 5)';
BEGIN
  SELECT user_query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM (SELECT * FROM (%s) q WHERE %s EXCEPT ALL SELECT * FROM %s WHERE %s) d',
                 q, rest, s, rest) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s WHERE %s EXCEPT ALL SELECT * FROM (%s) q WHERE %s) d',
                 s, rest, q, rest) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;
CREATE FUNCTION kflush(p_flow text) RETURNS text LANGUAGE sql AS
  $$SELECT format('flushed=%s marks=%s corrupted=%s rest: %s', flownode.flush_flow(p_flow) >= 0, kmarks(p_flow),
                  kcorrupted(p_flow), kdiff_rest(p_flow))$$;
CREATE FUNCTION key_triggers(t regclass) RETURNS bigint LANGUAGE sql AS
  $$SELECT count(*) FROM pg_trigger WHERE tgrelid = t AND tgname LIKE 'flownode_mark_keys%'$$;
SET flownode.key_marks_per_window = 64;

-- a date column, its windows timestamps without time zone (date_bin of day::timestamp)
CREATE TABLE kdate (day date NOT NULL, dev int, v int);
CREATE INDEX ON kdate (day);
INSERT INTO kdate SELECT '2026-01-01'::date + i % 4, i % 10, i FROM generate_series(0, 199) i;
SELECT flownode.create_flow('kdate_f', 'kdate_f',
  $$SELECT date_bin('2 days', day::timestamp, timestamp '2026-01-02') AS d, dev, count(*) AS n, sum(v) AS s
      FROM kdate GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
SELECT key_triggers('kdate') AS key_triggers, kdiff('kdate_f');
SELECT kcorrupt('kdate_f');
INSERT INTO kdate VALUES ('2026-01-01', 3, 1000);   -- window [12-31, 01-02): not the corrupted one
INSERT INTO kdate VALUES ('2026-01-03', 4, 1000);   -- the corrupted group's window [01-02, 01-04), another group
SELECT kmarks('kdate_f') AS marks;
SELECT kflush('kdate_f');
-- a new key, then its last row deleted; a key that moves; NULL keys
INSERT INTO kdate VALUES ('2026-01-01', 77, 1), ('2026-01-02', NULL, 2);
SELECT kmarks('kdate_f') AS marks, kflush('kdate_f');
DELETE FROM kdate WHERE dev = 77;
UPDATE kdate SET dev = 78 WHERE dev = 6 AND day = '2026-01-01';
SELECT kmarks('kdate_f') AS marks, kflush('kdate_f');
SELECT count(*) AS gone FROM kdate_f WHERE dev IN (77, 6) AND d = '2025-12-31';

-- a timestamp column (without time zone), its windows in local time
CREATE TABLE kts (ts timestamp NOT NULL, dev int, site text, v int);
CREATE INDEX ON kts (ts);
INSERT INTO kts SELECT '2026-01-01'::timestamp + i * interval '37 min', i % 10, 's' || (i % 2), i
  FROM generate_series(0, 299) i;
SELECT flownode.create_flow('kts_f', 'kts_f',
  $$SELECT date_trunc('day', ts) AS d, dev, site, count(*) AS n, max(v) AS mx FROM kts GROUP BY 1, 2, 3$$,
  eval_interval => '1 hour') > 0;
SELECT kcorrupt('kts_f');
INSERT INTO kts VALUES ('2026-01-02 10:00', 3, 's1', 1000), ('2026-01-02 11:00', NULL, NULL, 5);
SELECT kmarks('kts_f') AS marks, kflush('kts_f');
DELETE FROM kts WHERE dev IS NULL;
UPDATE kts SET site = 'moved' WHERE dev = 2 AND ts < '2026-01-03';
SELECT kmarks('kts_f') AS marks, kflush('kts_f');

-- key marks that a restore adds after the flow's worker started (pg_dump dumps
-- flownode.pending_keys; its rows may be loaded after the flow is bound): the commit
-- tells the worker, whose next refresh runs them (here the corrupted group's)
INSERT INTO flownode.pending_keys
  SELECT f.flow_id, ((extract(epoch FROM s.d) - 946684800) * 1000000)::bigint,
         ((extract(epoch FROM s.d) - 946684800 + 86400) * 1000000)::bigint, flownode.key_hash(s.dev, s.site)
    FROM kts_f s, flownode.flow f WHERE f.flow_name = 'kts_f' AND s.d = '2026-01-02' AND s.dev = 5;
SELECT kmarks('kts_f') AS marks, kflush('kts_f');

-- an integer epoch in milliseconds
CREATE TABLE kep (t_ms bigint NOT NULL, dev int, v int);
CREATE INDEX ON kep (t_ms);
INSERT INTO kep SELECT extract(epoch FROM '2026-01-01'::timestamptz)::bigint * 1000 + i * 900000, i % 10, i
  FROM generate_series(0, 299) i;
SELECT flownode.create_flow('kep_f', 'kep_f',
  $$SELECT date_trunc('day', to_timestamp(t_ms / 1000.0)) AS d, dev, count(*) AS n, sum(v) AS s
      FROM kep GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
SELECT kcorrupt('kep_f');
INSERT INTO kep VALUES (extract(epoch FROM '2026-01-02 06:00+00'::timestamptz)::bigint * 1000 + 1, 3, 1000);
SELECT kmarks('kep_f') AS marks, kflush('kep_f');
DELETE FROM kep WHERE dev = 3 AND t_ms < extract(epoch FROM '2026-01-03'::timestamptz)::bigint * 1000;
SELECT kmarks('kep_f') AS marks, kflush('kep_f');
SELECT count(*) AS gone FROM kep_f WHERE dev = 3 AND d < '2026-01-03';

-- a partitioned source, partitioned by the key: rows move between partitions. One
-- partition attached with its columns numbered otherwise (a dropped column, another
-- order), one created later, one detached; the key triggers are on every partition,
-- naming the source, each reading its own columns
CREATE TABLE kp (id int, ts timestamptz NOT NULL, dev int, v int) PARTITION BY LIST (dev);
CREATE TABLE kp_a PARTITION OF kp FOR VALUES IN (0, 1, 2, 3, 4);
CREATE TABLE kp_b (junk int, v int, dev int, ts timestamptz NOT NULL, id int);
ALTER TABLE kp_b DROP COLUMN junk;
ALTER TABLE kp ATTACH PARTITION kp_b FOR VALUES IN (5, 6, 7, 8, 9);
CREATE TABLE kp_def PARTITION OF kp DEFAULT;
CREATE INDEX ON kp (ts);
INSERT INTO kp SELECT i, '2026-01-01'::timestamptz + i * interval '17 min', i % 10, i FROM generate_series(0, 499) i;
SELECT flownode.create_flow('kp_f', 'kp_f',
  $$SELECT date_trunc('day', ts) AS d, dev, count(*) AS n, sum(v) AS s, max(id) AS mx FROM kp GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT key_triggers('kp') AS on_kp, key_triggers('kp_a') AS on_a, key_triggers('kp_b') AS on_b,
       key_triggers('kp_def') AS on_def;
SELECT kcorrupt('kp_f');
-- into the partition whose columns are numbered otherwise, and into the first
INSERT INTO kp VALUES (1000, '2026-01-02 05:00', 6, 1000), (1001, '2026-01-02 06:00', 1, 1000);
SELECT kmarks('kp_f') AS marks, kflush('kp_f');
-- keys that move between partitions (a DELETE from one, an INSERT into the other)
UPDATE kp SET dev = dev + 5 WHERE dev IN (1, 2) AND ts < '2026-01-03';
SELECT kmarks('kp_f') AS marks, kflush('kp_f');
-- NULL keys, in the default partition; then gone
INSERT INTO kp VALUES (1002, '2026-01-02 07:00', NULL, 1);
SELECT kmarks('kp_f') AS marks, kflush('kp_f');
DELETE FROM kp WHERE dev IS NULL;
SELECT kmarks('kp_f') AS marks, kflush('kp_f');
-- a partition created later, while the creating session's setting is 0: it gets the
-- flow's key triggers all the same (the flow keeps its keys)
SET flownode.key_marks_per_window = 0;
CREATE TABLE kp_c PARTITION OF kp FOR VALUES IN (20, 21);
SET flownode.key_marks_per_window = 64;
SELECT key_triggers('kp_c') AS on_c;
INSERT INTO kp VALUES (1003, '2026-01-02 08:00', 20, 5);
SELECT kmarks('kp_f') AS marks, kflush('kp_f');
-- a table attached with rows: its windows are marked whole (the corrupted group is
-- fixed), and it gets the key triggers
SELECT kcorrupt('kp_f');
CREATE TABLE kp_d (id int, ts timestamptz NOT NULL, dev int, v int);
INSERT INTO kp_d VALUES (1004, '2026-01-02 09:00', 30, 1);
ALTER TABLE kp ATTACH PARTITION kp_d FOR VALUES IN (30);
SELECT key_triggers('kp_d') AS on_d, kflush('kp_f');
-- a partition detached: its rows' windows whole; it loses the key triggers
SELECT kcorrupt('kp_f');
ALTER TABLE kp DETACH PARTITION kp_c;
SELECT key_triggers('kp_c') AS on_c, kflush('kp_f');
-- a write straight into a partition marks its key too
SELECT kcorrupt('kp_f');
INSERT INTO kp_b (id, ts, dev, v) VALUES (1005, '2026-01-02 10:00', 8, 9);
SELECT kmarks('kp_f') AS marks, kflush('kp_f');
SELECT flownode.drop_flow('kp_f');
SELECT key_triggers('kp_a') + key_triggers('kp_b') + key_triggers('kp_d') AS key_triggers_left;

-- a flow created while the setting is 0, then a partition created while it is on:
-- only the new partition gets key triggers, so the flow still marks whole windows
-- (a row into a partition without them would be marked by neither path); another
-- flow created on the source syncs every partition, and then it marks groups
SET flownode.key_marks_per_window = 0;
CREATE TABLE kr (ts timestamptz NOT NULL, dev int, v int) PARTITION BY LIST (dev);
CREATE TABLE kr_a PARTITION OF kr FOR VALUES IN (0, 1, 2, 3, 4);
CREATE TABLE kr_b PARTITION OF kr FOR VALUES IN (5, 6, 7, 8, 9);
CREATE INDEX ON kr (ts);
INSERT INTO kr SELECT '2026-01-01'::timestamptz + i * interval '29 min', i % 10, i FROM generate_series(0, 299) i;
SELECT flownode.create_flow('kr_f', 'kr_f',
  $$SELECT date_trunc('day', ts) AS d, dev, count(*) AS n FROM kr GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
SET flownode.key_marks_per_window = 64;
CREATE TABLE kr_c PARTITION OF kr FOR VALUES IN (20);
SELECT key_triggers('kr_a') AS on_a, key_triggers('kr_c') AS on_c;
SELECT kcorrupt('kr_f');
INSERT INTO kr VALUES ('2026-01-02 01:00', 20, 1);
SELECT kmarks('kr_f') AS marks, kflush('kr_f');
SELECT flownode.create_flow('kr_g', 'kr_g',
  $$SELECT date_trunc('day', ts) AS d, count(*) AS n FROM kr GROUP BY 1$$, eval_interval => '1 hour') > 0;
SELECT key_triggers('kr_a') AS on_a, key_triggers('kr_b') AS on_b, key_triggers('kr_c') AS on_c;
SELECT kcorrupt('kr_f');
INSERT INTO kr VALUES ('2026-01-02 02:00', 20, 1);
SELECT kmarks('kr_f') AS marks, kflush('kr_f');
SELECT flownode.drop_flow('kr_g'), flownode.drop_flow('kr_f');
DROP TABLE kr;

-- a flow over a partition of a partitioned table whose own flow is keyed too
CREATE TABLE kq (ts timestamptz NOT NULL, dev int, v int) PARTITION BY RANGE (ts);
CREATE TABLE kq_1 PARTITION OF kq FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE INDEX ON kq (ts);
INSERT INTO kq SELECT '2026-01-01'::timestamptz + i * interval '31 min', i % 10, i FROM generate_series(0, 299) i;
SELECT flownode.create_flow('kq_f', 'kq_f',
  $$SELECT date_trunc('day', ts) AS d, dev, count(*) AS n FROM kq GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('kq1_f', 'kq1_f',
  $$SELECT date_trunc('day', ts) AS d, dev, count(*) AS n FROM kq_1 GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
SELECT key_triggers('kq_1') AS on_kq_1;
SELECT kcorrupt('kq_f'), kcorrupt('kq1_f');
INSERT INTO kq VALUES ('2026-01-02 03:00', 2, 1);
SELECT kmarks('kq_f') AS marks, kmarks('kq1_f') AS marks1, kflush('kq_f'), kflush('kq1_f');
SELECT flownode.drop_flow('kq1_f'), flownode.drop_flow('kq_f');

-- a chain: the flow below writes the source of the flow above in its refresh, whose
-- key triggers mark the groups it wrote (an upsert marks the old row's group and
-- the new one's). The writer is the worker: its setting, the database's, decides
-- (workers started after it is set)
DO $$BEGIN EXECUTE format('ALTER DATABASE %I SET flownode.key_marks_per_window = 64', current_database()); END$$;
CREATE TABLE kc (ts timestamptz NOT NULL, dev int, v int);
CREATE INDEX ON kc (ts);
INSERT INTO kc SELECT '2026-01-01'::timestamptz + i * interval '13 min', i % 10, i FROM generate_series(0, 399) i;
SELECT flownode.create_flow('kc_h', 'kc_h',
  $$SELECT date_trunc('hour', ts) AS h, dev, count(*) AS n FROM kc GROUP BY 1, 2$$, eval_interval => '1 hour') > 0;
CREATE INDEX ON kc_h (h);
SELECT flownode.create_flow('kc_d', 'kc_d',
  $$SELECT date_trunc('day', h) AS d, dev, sum(n) AS n, count(*) AS hours FROM kc_h GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT key_triggers('kc') AS on_kc, key_triggers('kc_h') AS on_kc_h;
SELECT kcorrupt('kc_d');
INSERT INTO kc VALUES ('2026-01-02 12:34', 3, 1), ('2026-01-02 23:59', 77, 1);
SELECT flownode.flush_flow('kc_h') >= 0 AS flushed, kmarks('kc_h') AS marks_below, kmarks('kc_d') AS marks_above;
SELECT kflush('kc_d');
DELETE FROM kc WHERE dev = 77;
SELECT flownode.flush_flow('kc_h') >= 0 AS flushed, kmarks('kc_d') AS marks_above, kflush('kc_d');
SELECT count(*) AS gone FROM kc_d WHERE dev = 77;
SELECT flownode.drop_flow('kc_d'), flownode.drop_flow('kc_h');
DO $$BEGIN EXECUTE format('ALTER DATABASE %I RESET flownode.key_marks_per_window', current_database()); END$$;

SELECT flownode.drop_flow('kdate_f'), flownode.drop_flow('kts_f'), flownode.drop_flow('kep_f');
RESET flownode.key_marks_per_window;
DROP TABLE kdate, kts, kep, kp, kp_c, kq, kc, kc_h, kc_d;
DROP FUNCTION kdiff(text), kdiff_rest(text), kmarks(text), kcorrupt(text), kcorrupted(text), kflush(text),
  key_triggers(regclass);
