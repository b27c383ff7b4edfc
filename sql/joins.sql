-- Joins with dimension tables (docs/reference.md "Joins with dimension tables", docs/internals.md §3
-- Dimension tables): a fact table, whose time column makes the windows, joined by
-- equalities to dimension tables. The sink stays equal to the query after writes to
-- the fact table and to every dimension: a write to a dimension marks the windows of
-- the fact rows that join the rows it changed (old and new values).
SET timezone = 'UTC';
CREATE TABLE j_hosts (host text PRIMARY KEY, region text);
CREATE TABLE j_dcs (dc int, country text);  -- no key: NULL join keys
CREATE TABLE j_cpu (ts timestamptz NOT NULL, host text, dc int, usage int);
CREATE INDEX ON j_cpu (ts);
CREATE INDEX ON j_cpu (host);                -- dimension writes to j_hosts look up through it
INSERT INTO j_hosts VALUES ('a', 'us'), ('b', 'eu'), ('c', 'us'), ('d', 'ap');
INSERT INTO j_dcs VALUES (1, 'fr'), (2, 'de'), (NULL, 'nowhere');
-- three hours, a row every 10 s; host 'e' has no j_hosts row, dc 3 no j_dcs row
INSERT INTO j_cpu SELECT timestamptz '2024-01-01' + i * interval '10 seconds', chr(97 + i % 5), 1 + i % 3, i
  FROM generate_series(0, 1079) i;
INSERT INTO j_cpu VALUES ('2024-01-01 00:30:05', NULL, NULL, 1000);  -- NULL join keys

-- per minute and region (INNER JOIN ... USING)
SELECT flownode.create_flow('j_region', 'j_region',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, j_hosts.region,
           sum(usage) AS total, count(*) AS n
      FROM j_cpu JOIN j_hosts USING (host) GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- per hour and region, fact rows without a host kept (LEFT JOIN): j_hosts is shared
SELECT flownode.create_flow('j_left', 'j_left',
  $$SELECT date_trunc('hour', c.ts) AS hour, h.region, count(*) AS n, sum(c.usage) AS total
      FROM j_cpu c LEFT JOIN j_hosts h ON c.host = h.host GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- two dimensions; the fact table has no index on dc: a NOTICE, and a write to j_dcs
-- marks every window
SELECT flownode.create_flow('j_two', 'j_two',
  $$SELECT date_bin('5 minutes', c.ts, timestamptz '2000-01-01') AS w, h.region, d.country,
           count(*) AS n
      FROM j_hosts h JOIN j_cpu c ON h.host = c.host LEFT JOIN j_dcs d ON d.dc = c.dc
     GROUP BY 1, 2, 3$$,
  eval_interval => '1 hour') > 0 AS created;

-- the sink compared with the stored query (which follows renames) both ways
CREATE FUNCTION j_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; missing bigint; extra bigint;
BEGIN
  SELECT query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT * FROM %s) d', q, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL (%s)) d', s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;
CREATE FUNCTION j_exact() RETURNS TABLE (flow text, diff text) LANGUAGE sql AS $$
  SELECT f, j_diff(f) FROM unnest(ARRAY['j_region', 'j_left', 'j_two']) f $$;
CREATE FUNCTION j_flush() RETURNS TABLE (flow text, windows bigint) LANGUAGE sql AS $$
  SELECT f, flownode.flush_flow(f) FROM unnest(ARRAY['j_region', 'j_left', 'j_two']) f $$;
CREATE FUNCTION j_dirty() RETURNS TABLE (flow text, dirty bigint) LANGUAGE sql AS $$
  SELECT flow_name, dirty_windows FROM flownode.flows
   WHERE flow_name IN ('j_region', 'j_left', 'j_two') ORDER BY flow_name $$;

SELECT * FROM j_exact();
SELECT f.flow_name, d.dimension::regclass, a.attname AS dimension_column,
       b.attname AS fact_column, d.operator::regoperator
  FROM flownode.flow_dimension d JOIN flownode.flow f USING (flow_id)
  JOIN pg_attribute a ON a.attrelid = d.dimension AND a.attnum = d.dim_attnum
  JOIN pg_attribute b ON b.attrelid = f.source_table AND b.attnum = d.fact_attnum
 ORDER BY 1, 2;
-- the triggers on the dimensions: one set per join column, and a TRUNCATE trigger
SELECT tgrelid::regclass, tgfoid::regproc, tgenabled, tgisinternal, tgargs
  FROM pg_trigger WHERE tgrelid IN ('j_hosts'::regclass, 'j_dcs'::regclass) ORDER BY 1, 2, 5, tgtype;
SELECT flow_name, source_table, sink_table, time_column FROM flownode.flows
 WHERE flow_name LIKE 'j\_%' ORDER BY 1;

-- writes to the fact table
INSERT INTO j_cpu VALUES ('2024-01-01 00:00:01', 'a', 1, 5000), ('2024-01-01 01:00:01', 'e', 3, 6000);
UPDATE j_cpu SET host = 'b' WHERE ts = '2024-01-01 00:10:00';
DELETE FROM j_cpu WHERE ts BETWEEN '2024-01-01 02:00:00' AND '2024-01-01 02:05:00';
SELECT * FROM j_flush();
SELECT * FROM j_exact();

-- a host moves to another region: exactly the windows of its fact rows are marked
UPDATE j_hosts SET region = 'eu' WHERE host = 'a';
SELECT * FROM j_dirty();
SELECT count(DISTINCT date_bin('1 minute', ts, timestamptz '2000-01-01')) AS minutes_of_a,
       count(DISTINCT date_trunc('hour', ts)) AS hours_of_a,
       count(DISTINCT date_bin('5 minutes', ts, timestamptz '2000-01-01')) AS five_minutes_of_a
  FROM j_cpu WHERE host = 'a';
SELECT * FROM j_flush();
SELECT * FROM j_exact();
SELECT region, sum(n) AS n FROM j_region GROUP BY 1 ORDER BY 1;

-- a dimension row deleted: its fact rows leave the INNER JOIN, get a NULL region in
-- the LEFT JOIN
DELETE FROM j_hosts WHERE host = 'c';
SELECT * FROM j_flush();
SELECT * FROM j_exact();
SELECT region, sum(n) AS n FROM j_left GROUP BY 1 ORDER BY 1;
-- a dimension row inserted for fact rows that had none
INSERT INTO j_hosts VALUES ('e', 'sa');
SELECT * FROM j_flush();
SELECT * FROM j_exact();
SELECT region, sum(n) AS n FROM j_left GROUP BY 1 ORDER BY 1;
-- a join key changed: the fact rows of the old key lose their row, none has the new
UPDATE j_hosts SET host = 'z' WHERE host = 'b';
SELECT * FROM j_dirty();
SELECT * FROM j_flush();
SELECT * FROM j_exact();

-- NULL join keys join nothing: a dimension row with a NULL key marks nothing
UPDATE j_dcs SET country = 'void' WHERE dc IS NULL;
SELECT * FROM j_dirty();
-- a key set to NULL: the old key's windows (j_dcs has no index to look them up: all)
UPDATE j_dcs SET dc = NULL WHERE dc = 2;
SELECT * FROM j_dirty();
SELECT * FROM j_flush();
SELECT * FROM j_exact();
SELECT country, sum(n) AS n FROM j_two GROUP BY 1 ORDER BY 1;

-- nothing is marked for a rolled-back write, nor for a rolled-back savepoint
BEGIN;
UPDATE j_hosts SET region = 'xx' WHERE host = 'd';
ROLLBACK;
BEGIN;
SAVEPOINT s;
DELETE FROM j_hosts WHERE host = 'd';
ROLLBACK TO SAVEPOINT s;
INSERT INTO j_dcs VALUES (7, 'none joins it');  -- no fact row has dc 7, but no index
COMMIT;
SELECT * FROM j_dirty();
SELECT * FROM j_flush();
-- a savepoint released: its values count
BEGIN;
SAVEPOINT s;
UPDATE j_hosts SET region = 'oc' WHERE host = 'd';
RELEASE SAVEPOINT s;
COMMIT;
SELECT * FROM j_dirty();
SELECT * FROM j_flush();
SELECT * FROM j_exact();

-- one transaction writing the fact table and both dimensions
BEGIN;
INSERT INTO j_cpu VALUES ('2024-01-01 01:30:30', 'd', 2, 7);
UPDATE j_hosts SET region = 'us' WHERE host = 'e';
INSERT INTO j_dcs VALUES (3, 'it');
COMMIT;
SELECT * FROM j_flush();
SELECT * FROM j_exact();

-- TRUNCATE of a dimension marks every window; INSERT ... ON CONFLICT, MERGE and COPY
-- are row writes
TRUNCATE j_dcs;
SELECT * FROM j_dirty();
SELECT * FROM j_flush();
SELECT * FROM j_exact();
INSERT INTO j_dcs VALUES (1, 'fr'), (2, 'de');
INSERT INTO j_hosts VALUES ('a', 'ap') ON CONFLICT (host) DO UPDATE SET region = EXCLUDED.region;
MERGE INTO j_hosts h USING (VALUES ('d', 'eu'), ('q', 'nowhere')) v(host, region) ON h.host = v.host
  WHEN MATCHED THEN UPDATE SET region = v.region WHEN NOT MATCHED THEN INSERT VALUES (v.host, v.region);
COPY j_hosts FROM STDIN;
c	us
\.
SELECT * FROM j_flush();
SELECT * FROM j_exact();

-- more changed values than a transaction keeps (10,000): every window of the flows
INSERT INTO j_hosts SELECT 'bulk' || i, 'x' FROM generate_series(1, 10001) i;
SELECT * FROM j_dirty();
SELECT * FROM j_flush();
SELECT * FROM j_exact();
DELETE FROM j_hosts WHERE host LIKE 'bulk%';
SELECT * FROM j_flush();

-- windows frozen by expire_after are not marked by a dimension write either
CREATE TABLE j_recent_cpu (ts timestamptz NOT NULL, host text, v int);
CREATE INDEX ON j_recent_cpu (ts);
CREATE INDEX ON j_recent_cpu (host);
INSERT INTO j_recent_cpu VALUES ('2024-01-01 00:00:00', 'd', 1), (now() - interval '1 hour', 'd', 2);
SELECT flownode.create_flow('j_recent', 'j_recent',
  $$SELECT date_trunc('hour', ts) AS hour, j_hosts.region, sum(v) AS total
      FROM j_recent_cpu JOIN j_hosts USING (host) GROUP BY 1, 2$$,
  eval_interval => '1 hour', expire_after => '1 day') > 0 AS created;
UPDATE j_hosts SET region = 'frozen?' WHERE host = 'd';
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'j_recent';
SELECT flownode.flush_flow('j_recent');
SELECT region, total FROM j_recent ORDER BY hour;  -- the 2024 window keeps the old region
SELECT flownode.drop_flow('j_recent');
DROP TABLE j_recent, j_recent_cpu;
SELECT * FROM j_flush();

-- a window-less flow over a join: any dimension write recomputes it
SELECT flownode.create_flow('j_total', 'j_total',
  $$SELECT h.region, count(*) AS n FROM j_cpu c JOIN j_hosts h ON c.host = h.host GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
UPDATE j_hosts SET region = 'moved' WHERE host = 'e';
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'j_total';
SELECT flownode.flush_flow('j_total');
SELECT j_diff('j_total');
SELECT flownode.drop_flow('j_total');
DROP TABLE j_total;
-- aggregates without GROUP BY over a join (one sink row): likewise
SELECT flownode.create_flow('j_one', 'j_one',
  $$SELECT count(*) AS n, sum(c.usage) AS total FROM j_cpu c JOIN j_hosts h ON c.host = h.host
     WHERE h.region = 'us'$$,
  eval_interval => '1 hour') > 0 AS created;
UPDATE j_hosts SET region = 'us' WHERE host = 'e';
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'j_one';
SELECT flownode.flush_flow('j_one');
SELECT j_diff('j_one');
SELECT n > 0 AS some_rows FROM j_one;
SELECT flownode.drop_flow('j_one');
DROP TABLE j_one;
SELECT * FROM j_flush();
SELECT * FROM j_exact();

-- a dimension write can make a group vanish with no fact row removed: the refresh
-- deletes it (dimension marks count as removals: a refresh of windows that saw only
-- inserts would upsert and keep it)
CREATE TABLE j_tags (host text PRIMARY KEY, tag text);
INSERT INTO j_tags VALUES ('d', 'x');
SELECT flownode.create_flow('j_tagged', 'j_tagged',
  $$SELECT date_trunc('hour', ts) AS hour, count(*) AS n FROM j_cpu JOIN j_tags USING (host) GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT count(*) AS groups FROM j_tagged;
SELECT flownode.flush_flow('j_tagged');  -- the worker is up: what it reloads is not in play
DELETE FROM j_tags;
SELECT flownode.flush_flow('j_tagged');
SELECT count(*) AS groups FROM j_tagged;
SELECT j_diff('j_tagged');
-- a dimension's triggers: disabling them warns; ENABLE TRIGGER ALL keeps them firing
-- in every replication role
ALTER TABLE j_tags DISABLE TRIGGER ALL;
ALTER TABLE j_tags ENABLE TRIGGER ALL;
SELECT tgenabled, count(*) FROM pg_trigger WHERE tgrelid = 'j_tags'::regclass GROUP BY 1;
SELECT flownode.drop_flow('j_tagged');
DROP TABLE j_tagged, j_tags;

-- the flow follows its dimensions as it follows its source: renames rewrite the
-- stored query; the join column is pinned (as the time column is); a dropped column
-- the query reads fails the refresh visibly, and it heals
ALTER TABLE j_hosts RENAME TO j_machines;
ALTER TABLE j_machines RENAME COLUMN region TO area;
SELECT query FROM flownode.flow WHERE flow_name = 'j_region';
UPDATE j_machines SET area = 'eu' WHERE host = 'e';
SELECT * FROM j_flush();
SELECT * FROM j_exact();
\set VERBOSITY terse
ALTER TABLE j_machines DROP COLUMN host;
ALTER TABLE j_machines ALTER COLUMN host TYPE varchar;
\set VERBOSITY default
CREATE TEMP TABLE j_saved AS SELECT host, area FROM j_machines;
ALTER TABLE j_machines DROP COLUMN area;
UPDATE j_machines SET host = host WHERE host = 'e';
SELECT flownode.flush_flow('j_region');
SELECT state, dirty_windows > 0 AS kept FROM flownode.flows WHERE flow_name = 'j_region';
ALTER TABLE j_machines ADD COLUMN area text;
UPDATE j_machines m SET area = s.area FROM j_saved s WHERE s.host = m.host;
SELECT * FROM j_flush();
SELECT * FROM j_exact();
ALTER TABLE j_machines RENAME COLUMN area TO region;
ALTER TABLE j_machines RENAME TO j_hosts;
SELECT query FROM flownode.flow WHERE flow_name = 'j_region';
UPDATE j_hosts SET region = 'us' WHERE host = 'e';
SELECT * FROM j_flush();
SELECT * FROM j_exact();

-- dropping a flow keeps the triggers a flow sharing the dimension needs; DROP TABLE
-- of a dimension drops the flows that join it, with a NOTICE
SELECT flownode.drop_flow('j_left');
SELECT count(*) AS triggers_on_j_hosts FROM pg_trigger WHERE tgrelid = 'j_hosts'::regclass;
DROP TABLE j_dcs;
SELECT flow_name FROM flownode.flows WHERE flow_name LIKE 'j\_%' ORDER BY 1;
SELECT count(*) AS orphan_rows FROM flownode.flow_dimension d
 WHERE NOT EXISTS (SELECT 1 FROM flownode.flow f WHERE f.flow_id = d.flow_id);
SELECT flownode.drop_flow('j_region');
SELECT count(*) AS triggers_on_j_hosts FROM pg_trigger WHERE tgrelid = 'j_hosts'::regclass;
SELECT count(*) AS triggers_on_j_cpu FROM pg_trigger WHERE tgrelid = 'j_cpu'::regclass;
DROP TABLE j_region, j_left, j_two;
CREATE TABLE j_dcs (dc int PRIMARY KEY, country text);

-- privileges: SELECT and TRIGGER on every table the flow reads; the refresh runs as
-- the owner, whose lost privilege on a dimension fails it visibly until granted again
CREATE ROLE j_user;
GRANT EXECUTE ON FUNCTION flownode.create_flow TO j_user;
GRANT CREATE ON SCHEMA public TO j_user;
GRANT SELECT, TRIGGER ON j_cpu TO j_user;
SET ROLE j_user;
SELECT flownode.create_flow('j_priv', 'j_priv',
  $$SELECT date_trunc('hour', ts) AS hour, h.region, count(*) AS n
      FROM j_cpu JOIN j_hosts h USING (host) GROUP BY 1, 2$$, eval_interval => '1 hour');
RESET ROLE;
GRANT SELECT ON j_hosts TO j_user;
SET ROLE j_user;
SELECT flownode.create_flow('j_priv', 'j_priv',
  $$SELECT date_trunc('hour', ts) AS hour, h.region, count(*) AS n
      FROM j_cpu JOIN j_hosts h USING (host) GROUP BY 1, 2$$, eval_interval => '1 hour');
RESET ROLE;
GRANT TRIGGER ON j_hosts TO j_user;
SET ROLE j_user;
SELECT flownode.create_flow('j_priv', 'j_priv',
  $$SELECT date_trunc('hour', ts) AS hour, h.region, count(*) AS n
      FROM j_cpu JOIN j_hosts h USING (host) GROUP BY 1, 2$$, eval_interval => '1 hour') > 0 AS created;
-- j_user may not write j_hosts: calling the marking function directly collects nothing
SELECT flownode.mark_dimension_row('j_hosts'::regclass, 1::int2, 'a'::text, 'a'::text);
RESET ROLE;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'j_priv';
REVOKE SELECT ON j_hosts FROM j_user;
UPDATE j_hosts SET region = 'eu' WHERE host = 'a';
SET ROLE j_user;
SELECT flownode.flush_flow('j_priv');
RESET ROLE;
GRANT SELECT ON j_hosts TO j_user;
SET ROLE j_user;
SELECT flownode.flush_flow('j_priv');
RESET ROLE;
SELECT j_diff('j_priv');
SELECT flownode.drop_flow('j_priv');
DROP TABLE j_priv;
REVOKE ALL ON j_cpu, j_hosts FROM j_user;
REVOKE CREATE ON SCHEMA public FROM j_user;
REVOKE EXECUTE ON FUNCTION flownode.create_flow FROM j_user;
DROP ROLE j_user;

-- refused, each with a message naming the problem (a subquery in FROM, a view, and a
-- dimension joined by no equality are accepted: join_shapes.sql)
CREATE TABLE j_part (dc int, country text) PARTITION BY LIST (dc);
CREATE TABLE j_events (ts timestamptz, host text);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- a CTE
  $$WITH h AS (SELECT * FROM j_hosts) SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM j_cpu c JOIN h USING (host) GROUP BY 1$$);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- a set operation
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM j_cpu GROUP BY 1
    UNION SELECT date_trunc('hour', ts), count(*) FROM j_cpu GROUP BY 1$$);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- RIGHT JOIN
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM j_hosts h RIGHT JOIN j_cpu c USING (host) GROUP BY 1$$);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- FULL JOIN
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM j_cpu c FULL JOIN j_hosts h USING (host) GROUP BY 1$$);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- the fact table on the nullable side
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM j_hosts h LEFT JOIN j_cpu c USING (host) GROUP BY 1$$);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- two fact tables: joined on time
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM j_cpu c JOIN j_events e ON e.ts = c.ts GROUP BY 1$$);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- two fact tables: a self join
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM j_cpu c JOIN j_cpu d ON c.host = d.host GROUP BY 1$$);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- two fact tables: joined on time by USING
  $$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM j_cpu JOIN j_events USING (ts) GROUP BY 1$$);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- a table read twice
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM j_cpu c JOIN j_hosts h USING (host) JOIN j_hosts h2 ON h2.host = c.host GROUP BY 1$$);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- a partitioned dimension
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM j_cpu c JOIN j_part p ON p.dc = c.dc GROUP BY 1$$);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- a function in FROM
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM j_cpu c JOIN generate_series(1, 3) g ON g = c.dc GROUP BY 1$$);
CREATE TABLE j_rows (id int PRIMARY KEY, ts timestamptz NOT NULL, host text);
SELECT flownode.create_flow('j_bad', 'j_bad',  -- no aggregation: a copy of the fact rows
  $$SELECT r.id, r.ts, h.region FROM j_rows r JOIN j_hosts h USING (host)$$);
CREATE TABLE j_rollup (h timestamptz NOT NULL UNIQUE, n bigint);
SELECT flownode.create_flow('j_bad', 'j_rollup',  -- a dimension as the sink
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM j_cpu c JOIN j_rollup r ON r.n = c.dc GROUP BY 1$$);
-- accepted: the fact table second in an INNER JOIN, equalities in WHERE
SELECT flownode.create_flow('j_ok', 'j_ok',
  $$SELECT date_trunc('hour', c.ts) AS h, d.country, count(*) AS n
      FROM j_dcs d, j_cpu c WHERE d.dc = c.dc GROUP BY 1, 2$$, eval_interval => '1 hour') > 0 AS created;
SELECT flow_name, source_table FROM flownode.flows WHERE flow_name = 'j_ok';
SELECT flownode.drop_flow('j_ok');
SELECT count(*) AS flows_left FROM flownode.flows WHERE flow_name LIKE 'j\_%';
DROP TABLE j_ok, j_part, j_events, j_dcs, j_rollup, j_rows;
-- A dimension write marks the windows of the fact rows it joins, read from the fact
-- table's time column as the flow's query reads it: a date column (each date cast to
-- timestamptz at midnight in the flow's zone) and an integer epoch column (compared
-- with bigint bounds, not with timestamps). Before the time column was read in one
-- place, the date flow's marks landed on the 2000-01-01 window (30 rows wrong after
-- an UPDATE of one host's region) and every write to the epoch flow's dimension
-- failed at COMMIT (operator does not exist: bigint >= timestamp with time zone).
SET timezone = 'Europe/Berlin';
CREATE TABLE jt_hosts (host text PRIMARY KEY, region text);
INSERT INTO jt_hosts SELECT 'h' || i, 'r' || (i % 3) FROM generate_series(0, 9) i;
CREATE TABLE jt_days (d date NOT NULL, host text, v int);
CREATE INDEX ON jt_days (d);
CREATE INDEX ON jt_days (host);
INSERT INTO jt_days SELECT date '2024-01-01' + (i % 30), 'h' || (i % 10), i FROM generate_series(1, 600) i;
CREATE TABLE jt_ms (ts bigint NOT NULL, host text, v int);  -- no index on host: every window
CREATE INDEX ON jt_ms (ts);
INSERT INTO jt_ms SELECT 1704067200000 + i * 60000, 'h' || (i % 10), i FROM generate_series(1, 600) i;
SELECT flownode.create_flow('jt_week', 'jt_week',
  $$SELECT date_trunc('week', d::timestamptz) AS w, h.region, count(*) AS n, sum(v) AS s
      FROM jt_days JOIN jt_hosts h USING (host) GROUP BY 1, 2$$, eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('jt_hour', 'jt_hour',
  $$SELECT date_bin('1 hour', to_timestamp(ts / 1000.0), timestamptz '2000-01-01') AS w, h.region,
           count(*) AS n
      FROM jt_ms LEFT JOIN jt_hosts h USING (host) GROUP BY 1, 2$$, eval_interval => '1 hour') > 0 AS created;
CREATE FUNCTION jt_read_diff() RETURNS TABLE (flow text, diff bigint) LANGUAGE sql AS $$
  SELECT 'jt_week', count(*) FROM ((SELECT * FROM flownode.read_flow(NULL::jt_week) EXCEPT ALL
      SELECT date_trunc('week', d::timestamptz), h.region, count(*), sum(v)
        FROM jt_days JOIN jt_hosts h USING (host) GROUP BY 1, 2)
    UNION ALL (SELECT date_trunc('week', d::timestamptz), h.region, count(*), sum(v)
        FROM jt_days JOIN jt_hosts h USING (host) GROUP BY 1, 2 EXCEPT ALL
      SELECT * FROM flownode.read_flow(NULL::jt_week))) x
  UNION ALL
  SELECT 'jt_hour', count(*) FROM ((SELECT * FROM flownode.read_flow(NULL::jt_hour) EXCEPT ALL
      SELECT date_bin('1 hour', to_timestamp(ts / 1000.0), timestamptz '2000-01-01'), h.region, count(*)
        FROM jt_ms LEFT JOIN jt_hosts h USING (host) GROUP BY 1, 2)
    UNION ALL (SELECT date_bin('1 hour', to_timestamp(ts / 1000.0), timestamptz '2000-01-01'), h.region, count(*)
        FROM jt_ms LEFT JOIN jt_hosts h USING (host) GROUP BY 1, 2 EXCEPT ALL
      SELECT * FROM flownode.read_flow(NULL::jt_hour))) x $$;
UPDATE jt_hosts SET region = 'moved' WHERE host = 'h1';
SELECT dirty_windows > 0 AS marked FROM flownode.flows WHERE flow_name IN ('jt_week', 'jt_hour') ORDER BY flow_name;
SELECT * FROM jt_read_diff();
SELECT flownode.flush_flow('jt_week') > 0 AS refreshed, flownode.flush_flow('jt_hour') > 0 AS refreshed;
SELECT flow_diff('jt_week'), flow_diff('jt_hour');
DELETE FROM jt_hosts WHERE host = 'h2';
INSERT INTO jt_hosts VALUES ('h10', 'new');
UPDATE jt_days SET host = 'h10' WHERE d = '2024-01-05';
SELECT * FROM jt_read_diff();
SELECT flownode.flush_flow('jt_week') >= 0 AS flushed, flownode.flush_flow('jt_hour') >= 0 AS flushed;
SELECT flow_diff('jt_week'), flow_diff('jt_hour');
TRUNCATE jt_hosts;
SELECT * FROM jt_read_diff();
SELECT flownode.flush_flow('jt_week') > 0 AS refreshed, flownode.flush_flow('jt_hour') > 0 AS refreshed;
SELECT flow_diff('jt_week'), flow_diff('jt_hour'), (SELECT count(*) FROM jt_week) AS week_rows;
SELECT flownode.drop_flow('jt_week'), flownode.drop_flow('jt_hour');
DROP FUNCTION jt_read_diff();
DROP TABLE jt_week, jt_hour, jt_days, jt_ms, jt_hosts;
SET timezone = 'UTC';
DROP FUNCTION j_exact(), j_flush(), j_dirty(), j_diff(text);
DROP TABLE j_cpu, j_hosts;
