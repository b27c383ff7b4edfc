-- Group keys that are not output columns (docs/reference.md, "Group keys that are
-- not output columns"): the bucket grouped but not selected, another key grouped but
-- not selected, the bucket selected only inside an expression. The sink keeps such
-- keys as hidden key columns ("flownode hidden key N"); its visible columns equal the
-- query as a multiset, after late rows, updates that move rows between groups and
-- deletes of a group's last row.
SET timezone = 'UTC';

-- The rows of a sink (or of read_flow) without its hidden key columns, compared with
-- the query both ways, as multisets.
CREATE FUNCTION hk_diff(p_flow text, p_read bool DEFAULT false) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; cols text; src text; missing bigint; extra bigint;
BEGIN
  SELECT query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols FROM pg_attribute
   WHERE attrelid = s AND attnum > 0 AND NOT attisdropped AND attname NOT LIKE 'flownode hidden key %';
  src := CASE WHEN p_read THEN format('flownode.read_flow(NULL::%s)', s) ELSE s::text END;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT %s FROM %s) d', q, cols, src) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT %s FROM %s EXCEPT ALL (%s)) d', cols, src, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;

CREATE TABLE hm (id int PRIMARY KEY, ts timestamptz NOT NULL, device int NOT NULL, site text, v int);
CREATE INDEX ON hm (ts);
INSERT INTO hm SELECT i, timestamptz '2024-01-01' + i * interval '7 minutes', i % 3,
                      CASE WHEN i % 4 = 0 THEN NULL ELSE 's' || (i % 2) END, i
  FROM generate_series(1, 60) i;

-- a sink's columns and key, as \d+ shows them but the same on every version (18's \d+
-- lists the not-null constraints too)
CREATE FUNCTION hk_describe(t regclass) RETURNS TABLE (col name, type text, not_null bool, comment text)
LANGUAGE sql AS $$
  SELECT attname, format_type(atttypid, atttypmod), attnotnull, col_description(attrelid, attnum)
    FROM pg_attribute WHERE attrelid = t AND attnum > 0 AND NOT attisdropped ORDER BY attnum $$;
CREATE FUNCTION hk_key(t regclass) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = t ORDER BY 1 $$;

-- 1. the bucket grouped but not selected: one visible row per device and hour, the
--    same visible values in many rows
SELECT flownode.create_flow('hk_nobucket', 'hk_nobucket',
  $$SELECT device, count(*) AS n, sum(v) AS sv
      FROM hm GROUP BY date_bin('1 hour', ts, timestamptz '2000-01-01'), device$$) > 0 AS created;
SELECT * FROM hk_describe('hk_nobucket');
SELECT * FROM hk_key('hk_nobucket');
-- 2. another key grouped but not selected (it may be NULL: the key treats NULLs as equal)
SELECT flownode.create_flow('hk_nosite', 'hk_nosite',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS b, avg(v) AS av, count(*) AS n
      FROM hm GROUP BY b, site$$) > 0 AS created;
\d hk_nosite
-- 3. the bucket selected only inside an expression: the window is kept as a hidden key
SELECT flownode.create_flow('hk_shifted', 'hk_shifted',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') + interval '1 minute' AS b2,
           count(*) AS n, max(v) AS mx
      FROM hm GROUP BY date_bin('1 hour', ts, timestamptz '2000-01-01')$$) > 0 AS created;
\d hk_shifted
SELECT flownode.create_flow('hk_day', 'hk_day',
  $$SELECT date_trunc('day', ts)::date AS day, device, count(*) AS n
      FROM hm GROUP BY date_trunc('day', ts), device$$) > 0 AS created;
\d hk_day
-- 4. a key not selected in a flow that folds its open window (count, sum, min, max of
--    NOT NULL keys): folded refreshes group by the hidden key too (created with key
--    marks off: its rows of 2024 would be late rows, marked by their keys, not folded)
SET flownode.key_marks_per_window = 0;
SELECT flownode.create_flow('hk_fold', 'hk_fold',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS b, count(*) AS n, sum(v) AS sv, min(v) AS mn
      FROM hm GROUP BY b, device$$, eval_interval => '1 hour') > 0 AS created;
RESET flownode.key_marks_per_window;

-- the open window folded: rows that only add to it, refreshed by folding (the hidden
-- key is a key of the fold too)
INSERT INTO hm SELECT 200 + i, timestamptz '2024-01-02 10:00' + i * interval '1 second', i % 2, 's1', i
  FROM generate_series(0, 9) i;
SELECT flownode.flush_flow('hk_fold') > 0 AS refreshed, hk_diff('hk_fold');
INSERT INTO hm SELECT 220 + i, timestamptz '2024-01-02 10:00:20' + i * interval '1 second', i % 3, 's1', i
  FROM generate_series(0, 9) i;
SELECT flownode.flush_flow('hk_fold') > 0 AS refreshed, hk_diff('hk_fold');
SELECT folded_refreshes > 0 AS folded FROM flownode.flow_info WHERE flow_name = 'hk_fold';

-- the flow's query is stored and shown as written, without the hidden columns
SELECT flow_name, window_expr FROM flownode.flows WHERE flow_name LIKE 'hk%' ORDER BY 1;
SELECT query FROM flownode.flow WHERE flow_name = 'hk_shifted';
SELECT flow_name, flownode.flush_flow(flow_name) >= 0 AS flushed, hk_diff(flow_name)
  FROM flownode.flows WHERE flow_name LIKE 'hk%' ORDER BY 1;
SELECT device, n, sv FROM hk_nobucket ORDER BY 1, 2, 3 LIMIT 6;

-- writes: late rows, an update moving rows between groups (device and hour), a delete
-- of a group's last row, a new group
INSERT INTO hm VALUES (101, '2023-12-31 23:10', 1, 's1', 5), (102, '2024-01-01 00:05', 2, NULL, 7);
UPDATE hm SET device = 9, site = 's9' WHERE id IN (10, 11);
UPDATE hm SET ts = ts + interval '3 hours' WHERE id = 20;
DELETE FROM hm WHERE id = 60;
DELETE FROM hm WHERE site IS NULL AND ts < '2024-01-01 01:00';
-- read_flow answers before the refresh (its rows have the sink's type: hidden columns
-- too); its visible columns equal the query
SELECT flow_name, hk_diff(flow_name, true) FROM flownode.flows WHERE flow_name LIKE 'hk%' ORDER BY 1;
SELECT flow_name, flownode.flush_flow(flow_name) >= 0 AS flushed, hk_diff(flow_name)
  FROM flownode.flows WHERE flow_name LIKE 'hk%' ORDER BY 1;


-- ALTER COLUMN TYPE of a hidden key's column merges groups: their windows are marked
-- and recomputed
ALTER TABLE hm ALTER COLUMN device TYPE int USING device % 2;
SELECT flow_name, flownode.flush_flow(flow_name) >= 0 AS flushed, hk_diff(flow_name)
  FROM flownode.flows WHERE flow_name LIKE 'hk%' ORDER BY 1;
-- a rename of the hidden key's column: the stored query follows it
ALTER TABLE hm RENAME COLUMN site TO place;
SELECT query FROM flownode.flow WHERE flow_name = 'hk_nosite';
UPDATE hm SET place = 's0' WHERE id = 30;
SELECT flownode.flush_flow('hk_nosite') >= 0 AS flushed, hk_diff('hk_nosite');

-- ALTER COLUMN TYPE of a hidden key's column that changes the key's type: the sink's
-- hidden key column follows (the user never chose its type), the windows are marked,
-- and the sink is exact after a flush (before: every refresh failed, "column "flownode
-- hidden key 2" has type text, the query produces character varying")
ALTER TABLE hm ALTER COLUMN place TYPE varchar(10);
SELECT * FROM hk_describe('hk_nosite') WHERE col LIKE 'flownode hidden key %';
INSERT INTO hm VALUES (103, '2024-01-01 00:20', 1, 's7', 3);
SELECT flownode.flush_flow('hk_nosite') > 0 AS refreshed, hk_diff('hk_nosite'),
       (SELECT last_error FROM flownode.flows WHERE flow_name = 'hk_nosite');

-- a read view shows the query's columns only
SELECT flownode.create_read_view('hk_nosite', 'hk_nosite_now') IS NOT NULL AS created;
\d hk_nosite_now
SELECT count(*) = (SELECT count(*) FROM hk_nosite) AS same_rows FROM hk_nosite_now;
-- read_flow with the read view's row type returns the query's columns, as the query
-- returns them (with the sink's it returns the sink's columns, hidden ones too: a
-- function's result has its argument's type), here with a window computed at read
-- time and a range the view cannot take
UPDATE hm SET v = v + 100 WHERE id = 31;
SELECT * FROM flownode.read_flow(NULL::hk_nosite_now, '2024-01-01 03:00', '2024-01-01 04:00') ORDER BY 1, 2, 3;
SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS b, avg(v) AS av, count(*) AS n
  FROM hm WHERE ts >= '2024-01-01 03:00' AND ts < '2024-01-01 04:00' GROUP BY b, place ORDER BY 1, 2, 3;
SELECT count(*) AS differ FROM (
  (SELECT * FROM flownode.read_flow(NULL::hk_nosite_now)
   EXCEPT ALL SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS b, avg(v) AS av, count(*) AS n
     FROM hm GROUP BY b, place)
  UNION ALL
  (SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS b, avg(v) AS av, count(*) AS n
     FROM hm GROUP BY b, place
   EXCEPT ALL SELECT * FROM flownode.read_flow(NULL::hk_nosite_now))) d;
SELECT count(*) AS sink_columns FROM flownode.read_flow(NULL::hk_nosite) r
 WHERE r."flownode hidden key 2" IS NOT NULL;
-- a view that no longer has the query's columns, or any other view: refused
ALTER VIEW hk_nosite_now RENAME COLUMN av TO average;
SELECT count(*) FROM flownode.read_flow(NULL::hk_nosite_now);
ALTER VIEW hk_nosite_now RENAME COLUMN average TO av;
CREATE VIEW hk_nosite_plain AS SELECT b, av, n FROM hk_nosite;
SELECT count(*) FROM flownode.read_flow(NULL::hk_nosite_plain);
DROP VIEW hk_nosite_plain;

-- 5. a flow without aggregation that does not output its source's primary key: the
--    key is a hidden column, and two source rows may show the same values
SELECT flownode.create_flow('hk_copy', 'hk_copy', $$SELECT ts, device FROM hm WHERE v > 50$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT * FROM hk_describe('hk_copy');
SELECT * FROM hk_key('hk_copy');
INSERT INTO hm VALUES (300, '2024-01-01 03:00', 1, 's1', 99), (301, '2024-01-01 03:00', 1, 's1', 99);
UPDATE hm SET v = 1 WHERE id = 55;
SELECT flownode.flush_flow('hk_copy') > 0 AS refreshed, hk_diff('hk_copy');
-- ALTER COLUMN TYPE of that key (it changes its values too): the hidden key column
-- follows the new type, the windows are marked, and after a flush the sink holds
-- each row's new key (before: the windows were not marked, and once one was, every
-- refresh failed, "column "flownode hidden key 1" has type integer, the query
-- produces bigint")
ALTER TABLE hm ALTER COLUMN id TYPE bigint USING id + 1000;
SELECT * FROM hk_describe('hk_copy') WHERE col LIKE 'flownode hidden key %';
INSERT INTO hm VALUES (5000000000, '2024-01-01 03:00', 1, 's1', 99);
SELECT flownode.flush_flow('hk_copy') > 0 AS refreshed, hk_diff('hk_copy'),
       (SELECT last_error FROM flownode.flows WHERE flow_name = 'hk_copy');
SELECT count(*) AS keys_differ FROM hk_copy c FULL JOIN (SELECT id FROM hm WHERE v > 50) s
    ON c."flownode hidden key 1" = s.id
 WHERE c."flownode hidden key 1" IS NULL OR s.id IS NULL;
-- a new type the sink's values cannot be cast to: refused at the ALTER, naming the flow
ALTER TABLE hm ALTER COLUMN id TYPE uuid USING md5(id::text)::uuid;
-- an ALTER of the sink's hidden key column itself is the user's: it stays, and the
-- flow fails naming the column and both types until the column has the query's type
ALTER TABLE hk_copy ALTER COLUMN "flownode hidden key 1" TYPE numeric;
SELECT * FROM hk_describe('hk_copy') WHERE col LIKE 'flownode hidden key %';
INSERT INTO hm VALUES (5000000001, '2024-01-01 03:00', 1, 's1', 99);
SELECT flownode.flush_flow('hk_copy');
ALTER TABLE hk_copy ALTER COLUMN "flownode hidden key 1" TYPE bigint;
SELECT flownode.flush_flow('hk_copy') > 0 AS refreshed, hk_diff('hk_copy'),
       (SELECT last_error FROM flownode.flows WHERE flow_name = 'hk_copy');

-- 6. a sink the user declares: it must have the hidden key column, in its unique key
CREATE TABLE hk_user (b timestamptz NOT NULL, n bigint);
SELECT flownode.create_flow('hk_user', 'hk_user',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS b, count(*) AS n FROM hm GROUP BY b, device$$);
ALTER TABLE hk_user ADD COLUMN "flownode hidden key 2" int NOT NULL, ADD PRIMARY KEY (b);
SELECT flownode.create_flow('hk_user', 'hk_user',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS b, count(*) AS n FROM hm GROUP BY b, device$$);
ALTER TABLE hk_user DROP CONSTRAINT hk_user_pkey, ADD PRIMARY KEY (b, "flownode hidden key 2");
SELECT flownode.create_flow('hk_user', 'hk_user',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS b, count(*) AS n FROM hm GROUP BY b, device$$) > 0
  AS created;
SELECT hk_diff('hk_user');
CREATE TABLE hk_user_copy (ts timestamptz, device int);
SELECT flownode.create_flow('hk_user_copy', 'hk_user_copy', $$SELECT ts, device FROM hm$$,
  eval_interval => '1 hour');

-- 7. a chain: a flow reading a sink with hidden columns reads its visible ones as it
--    names them, and may group by a hidden one too
SELECT flownode.create_flow('hk_chain', 'hk_chain',
  $$SELECT date_trunc('day', b) AS d, "flownode hidden key 2" AS place, sum(n) AS n
      FROM hk_nosite GROUP BY 1, 2$$) > 0 AS created;
INSERT INTO hm VALUES (400, '2024-01-01 05:30', 0, 's5', 1);
SELECT flownode.flush_flow('hk_chain', cascade => true) >= 0 AS flushed, hk_diff('hk_nosite'), hk_diff('hk_chain');

-- refused, with what to do
SELECT flownode.create_flow('hk_bad', 'hk_bad',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS b, count(*) AS "flownode hidden key 2"
      FROM hm GROUP BY b, device$$);
SELECT flownode.create_flow('hk_bad', 'hk_bad',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS b, count(*) AS n
      FROM hm GROUP BY b, ROW(device, place)$$);
-- a key computed from the window is no window: group by the window itself
SELECT flownode.create_flow('hk_bad', 'hk_bad',
  $$SELECT date_trunc('day', ts)::date AS day, count(*) AS n FROM hm GROUP BY 1$$);
SELECT count(*) AS bad_sinks FROM pg_class WHERE relname = 'hk_bad';

-- drop_flow: the sink stays, hidden columns included; the read view goes
SELECT flownode.drop_flow('hk_chain');
SELECT flownode.drop_flow('hk_nosite');
SELECT to_regclass('hk_nosite_now') IS NULL AS view_dropped, count(*) > 0 AS sink_kept FROM hk_nosite;
SELECT flownode.drop_flow(flow_name) FROM flownode.flows WHERE flow_name LIKE 'hk%' ORDER BY flow_name;
DROP TABLE hm, hk_nobucket, hk_nosite, hk_shifted, hk_day, hk_fold, hk_copy, hk_user, hk_user_copy, hk_chain;
DROP FUNCTION hk_diff(text, bool);
