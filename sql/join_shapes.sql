-- Joins beyond an equality with a plain table (docs/reference.md "Joins with
-- dimension tables"): a condition with OR, <> or a range, a dimension reached through
-- another dimension, a view (over two tables, nested) and a LATERAL subquery. A write
-- to a table such a dimension reads marks every window that is not frozen (a NOTICE
-- at create_flow says so); the sink stays equal to the query after writes to the
-- source and to every table, TRUNCATE of a table under the view included. What a
-- write flownode sees cannot mark is refused, naming it.
SET timezone = 'UTC';
CREATE TABLE js_cpu (ts timestamptz NOT NULL, host text, v int);
CREATE INDEX ON js_cpu (ts);
CREATE INDEX ON js_cpu (host);
CREATE TABLE js_hosts (host text PRIMARY KEY, region text);
CREATE TABLE js_regions (region text PRIMARY KEY, zone text);
CREATE TABLE js_bands (lo int, hi int, label text);
CREATE TABLE js_tags (host text, tag text);
INSERT INTO js_hosts VALUES ('a', 'us'), ('b', 'eu'), ('c', 'us'), ('d', 'ap');
INSERT INTO js_regions VALUES ('us', 'west'), ('eu', 'east'), ('ap', 'east');
INSERT INTO js_bands VALUES (0, 99, 'low'), (100, 499, 'mid'), (500, 999, 'high');
INSERT INTO js_tags VALUES ('a', 'db'), ('b', 'web'), (NULL, 'all');
-- two hours, a row every 20 s
INSERT INTO js_cpu SELECT timestamptz '2024-01-01' + i * interval '20 seconds', chr(97 + i % 5), i % 1000
  FROM generate_series(0, 359) i;
CREATE VIEW js_hv AS SELECT h.host, r.zone FROM js_hosts h JOIN js_regions r USING (region);
CREATE VIEW js_hv2 AS SELECT host, upper(zone) AS zone FROM js_hv WHERE zone <> 'nowhere';

-- a range condition: every window on a write to js_bands
SELECT flownode.create_flow('js_range', 'js_range',
  $$SELECT date_bin('10 minutes', c.ts, timestamptz '2000-01-01') AS w, b.label, count(*) AS n, sum(c.v) AS s
      FROM js_cpu c JOIN js_bands b ON c.v BETWEEN b.lo AND b.hi GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- OR and <> in the condition, a LEFT JOIN
SELECT flownode.create_flow('js_or', 'js_or',
  $$SELECT date_trunc('hour', c.ts) AS w, t.tag, count(*) AS n
      FROM js_cpu c LEFT JOIN js_tags t ON (t.host = c.host OR t.host IS NULL) AND t.tag <> 'none'
     GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- a dimension reached through another: js_hosts by its equality, js_regions every window
SELECT flownode.create_flow('js_chain', 'js_chain',
  $$SELECT date_bin('15 minutes', c.ts, timestamptz '2000-01-01') AS w, r.zone, count(*) AS n
      FROM js_cpu c JOIN js_hosts h ON h.host = c.host JOIN js_regions r ON r.region = h.region
     GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- a view over a view over two tables
SELECT flownode.create_flow('js_view', 'js_view',
  $$SELECT date_bin('10 minutes', c.ts, timestamptz '2000-01-01') AS w, v.zone, count(*) AS n, max(c.v) AS top
      FROM js_cpu c JOIN js_hv2 v ON v.host = c.host GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
-- a LATERAL subquery
SELECT flownode.create_flow('js_lateral', 'js_lateral',
  $$SELECT date_trunc('hour', c.ts) AS w, x.label, count(*) AS n
      FROM js_cpu c CROSS JOIN LATERAL
           (SELECT max(b.label) AS label FROM js_bands b WHERE c.v BETWEEN b.lo AND b.hi) x
     GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;

CREATE FUNCTION js_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; missing bigint; extra bigint;
BEGIN
  SELECT query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT * FROM %s) d', q, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL (%s)) d', s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;
CREATE FUNCTION js_check() RETURNS TABLE (flow text, flushed boolean, diff text) LANGUAGE sql AS $$
  SELECT f, flownode.flush_flow(f) >= 0, js_diff(f)
    FROM unnest(ARRAY['js_range', 'js_or', 'js_chain', 'js_view', 'js_lateral']) f $$;
-- dirty windows after a write, before the flush: every window, or those of the rows
CREATE FUNCTION js_dirty() RETURNS TABLE (flow text, dirty bigint) LANGUAGE sql AS $$
  SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'js\_%' ORDER BY 1 $$;

SELECT * FROM js_check();
-- the catalog: keys for equalities, a row of column 0 for every-write tables and views
SELECT f.flow_name, d.dimension::regclass, d.dim_attnum, d.fact_attnum, d.operator::regoperator
  FROM flownode.flow_dimension d JOIN flownode.flow f USING (flow_id)
 WHERE f.flow_name LIKE 'js\_%' ORDER BY 1, d.dimension::regclass::text, 3;
-- the triggers: column 0 on every-write tables, none on the views
SELECT tgrelid::regclass, tgfoid::regproc, tgisinternal, tgargs, pg_get_triggerdef(oid) LIKE '%true, true%' AS any_row
  FROM pg_trigger WHERE tgrelid IN ('js_hosts'::regclass, 'js_regions'::regclass, 'js_bands'::regclass,
                                    'js_tags'::regclass, 'js_hv'::regclass, 'js_hv2'::regclass)
 ORDER BY tgrelid::regclass::text, tgfoid::regproc::text, tgargs, tgtype;

-- writes to the source
INSERT INTO js_cpu VALUES ('2024-01-01 00:00:01', 'a', 150), ('2024-01-01 01:30:00', 'e', 700);
UPDATE js_cpu SET v = 600, host = 'b' WHERE ts = '2024-01-01 00:20:00';
DELETE FROM js_cpu WHERE ts BETWEEN '2024-01-01 01:00:00' AND '2024-01-01 01:05:00';
SELECT * FROM js_check();
-- writes to each dimension: the flows that read it mark every window
UPDATE js_bands SET hi = 149 WHERE label = 'mid';
INSERT INTO js_bands VALUES (150, 499, 'upper');
SELECT * FROM js_dirty();
SELECT * FROM js_check();
DELETE FROM js_bands WHERE label = 'low';
SELECT * FROM js_check();
INSERT INTO js_tags VALUES ('c', 'db');
UPDATE js_tags SET tag = 'none' WHERE tag = 'web';
SELECT * FROM js_check();
DELETE FROM js_tags WHERE host IS NULL;
SELECT * FROM js_check();
-- a table under the view and reached through js_hosts
UPDATE js_regions SET zone = 'central' WHERE region = 'eu';
SELECT * FROM js_dirty();
SELECT * FROM js_check();
INSERT INTO js_regions VALUES ('sa', 'south');
UPDATE js_hosts SET region = 'sa' WHERE host = 'c';
SELECT * FROM js_check();
DELETE FROM js_regions WHERE region = 'ap';
SELECT * FROM js_check();
-- TRUNCATE of a table under the view, then its rows back
TRUNCATE js_regions;
SELECT * FROM js_check();
INSERT INTO js_regions VALUES ('us', 'west'), ('eu', 'east'), ('ap', 'east'), ('sa', 'nowhere');
SELECT * FROM js_check();
TRUNCATE js_bands;
INSERT INTO js_bands VALUES (0, 999, 'all');
SELECT * FROM js_check();
-- a rolled-back write marks nothing
BEGIN;
UPDATE js_regions SET zone = 'x';
ROLLBACK;
SELECT * FROM js_dirty();

-- windows frozen by expire_after are not marked by a write under a view either
CREATE TABLE js_recent_cpu (ts timestamptz NOT NULL, host text);
CREATE INDEX ON js_recent_cpu (ts);
INSERT INTO js_recent_cpu VALUES ('2024-01-01 00:00:00', 'd'), (now() - interval '1 hour', 'd');
SELECT flownode.create_flow('js_recent', 'js_recent',
  $$SELECT date_trunc('hour', c.ts) AS hour, v.zone, count(*) AS n
      FROM js_recent_cpu c JOIN js_hv v ON v.host = c.host GROUP BY 1, 2$$,
  eval_interval => '1 hour', expire_after => '1 day') > 0 AS created;
UPDATE js_regions SET zone = 'frozen?' WHERE region = 'ap';
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'js_recent';
SELECT flownode.flush_flow('js_recent');
SELECT zone, n FROM js_recent ORDER BY hour;  -- the 2024 window keeps the old zone
SELECT flownode.drop_flow('js_recent');
DROP TABLE js_recent, js_recent_cpu;
UPDATE js_regions SET zone = 'east' WHERE region = 'ap';
SELECT * FROM js_check();

-- the flow's query follows a renamed view and a renamed table under it
ALTER VIEW js_hv2 RENAME TO js_hv3;
ALTER TABLE js_regions RENAME TO js_regions2;
UPDATE js_regions2 SET zone = 'far' WHERE region = 'ap';
SELECT * FROM js_check();
SELECT query LIKE '%js_hv3%' AS follows FROM flownode.flow WHERE flow_name = 'js_view';
ALTER TABLE js_regions2 RENAME TO js_regions;
ALTER VIEW js_hv3 RENAME TO js_hv2;

-- CREATE OR REPLACE VIEW of a view under the flow's: its rows changed without a
-- write, so every window is marked; the new query reads js_tags too, which gets the
-- triggers, and a write to it is marked. A new query that is not deterministic fails
-- the command.
CREATE OR REPLACE VIEW js_hv AS
  SELECT h.host, coalesce(t.tag, r.zone) AS zone
    FROM js_hosts h LEFT JOIN js_regions r USING (region) LEFT JOIN js_tags t ON t.host = h.host;
SELECT * FROM js_dirty();
SELECT d.dimension::regclass FROM flownode.flow_dimension d JOIN flownode.flow f USING (flow_id)
 WHERE f.flow_name = 'js_view' ORDER BY d.dimension::regclass::text;
SELECT * FROM js_check();
UPDATE js_tags SET tag = 'cache' WHERE host = 'a';
SELECT * FROM js_dirty();
SELECT * FROM js_check();
CREATE OR REPLACE VIEW js_hv AS
  SELECT h.host, CASE WHEN random() < 2 THEN r.zone END AS zone FROM js_hosts h JOIN js_regions r USING (region);
SELECT * FROM js_check();
-- DROP VIEW drops the flow, and the triggers only it needed go (js_regions keeps
-- those js_chain needs, js_tags those of js_or)
DROP VIEW js_hv2;
SELECT flow_name FROM flownode.flows WHERE flow_name LIKE 'js\_%' ORDER BY 1;
SELECT tgrelid::regclass, count(*) FROM pg_trigger
 WHERE tgrelid IN ('js_hosts'::regclass, 'js_regions'::regclass) GROUP BY 1 ORDER BY tgrelid::regclass::text;
SELECT flownode.drop_flow('js_chain');
SELECT tgrelid::regclass, count(*) FROM pg_trigger
 WHERE tgrelid IN ('js_hosts'::regclass, 'js_regions'::regclass) GROUP BY 1 ORDER BY tgrelid::regclass::text;
-- DROP TABLE ... CASCADE of a table under a view drops the view and the flow
CREATE VIEW js_bv AS SELECT lo, hi, label FROM js_bands;
SELECT flownode.create_flow('js_bview', 'js_bview',
  $$SELECT date_trunc('hour', c.ts) AS w, b.label, count(*) AS n
      FROM js_cpu c JOIN js_bv b ON c.v BETWEEN b.lo AND b.hi GROUP BY 1, 2$$) > 0 AS created;
SELECT js_diff('js_bview');

-- a table joined by an equality and read again in a subquery: the subquery's NOTICE,
-- and a write to it marks every window
SELECT flownode.create_flow('js_both', 'js_both',
  $$SELECT date_trunc('hour', c.ts) AS w, x.peers, count(*) AS n
      FROM js_cpu c JOIN js_hosts h ON h.host = c.host
      CROSS JOIN LATERAL (SELECT count(*) AS peers FROM js_hosts h2 WHERE h2.region = h.region) x
     GROUP BY 1, 2$$) > 0 AS created;
UPDATE js_hosts SET region = 'eu' WHERE host = 'a';
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'js_both';
SELECT flownode.flush_flow('js_both') >= 0 AS flushed, js_diff('js_both');
SELECT flownode.drop_flow('js_both');
DROP TABLE js_both;

-- refused, each naming the construct
CREATE FOREIGN DATA WRAPPER js_fdw;
CREATE SERVER js_server FOREIGN DATA WRAPPER js_fdw;
CREATE FOREIGN TABLE js_remote (host text, region text) SERVER js_server;
CREATE VIEW js_remote_v AS SELECT * FROM js_remote;
CREATE MATERIALIZED VIEW js_mat AS SELECT * FROM js_hosts;
CREATE VIEW js_vol AS SELECT host, region, random() AS r FROM js_hosts;
CREATE VIEW js_clock AS SELECT host FROM js_hosts WHERE now() > '2000-01-01';
CREATE VIEW js_self AS SELECT host, count(*) AS n FROM js_cpu GROUP BY host;
SELECT flownode.create_flow('js_bad', 'js_bad',  -- a foreign table
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM js_cpu c JOIN js_remote r ON r.host = c.host GROUP BY 1$$);
SELECT flownode.create_flow('js_bad', 'js_bad',  -- a view over a foreign table
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM js_cpu c JOIN js_remote_v r ON r.host = c.host GROUP BY 1$$);
SELECT flownode.create_flow('js_bad', 'js_bad',  -- a foreign table in a LATERAL subquery
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM js_cpu c, LATERAL (SELECT 1 FROM js_remote r WHERE r.host = c.host) x GROUP BY 1$$);
SELECT flownode.create_flow('js_bad', 'js_bad',  -- a materialized view
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM js_cpu c JOIN js_mat m ON m.host = c.host GROUP BY 1$$);
SELECT flownode.create_flow('js_bad', 'js_bad',  -- a view calling a volatile function
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM js_cpu c JOIN js_vol v ON v.host = c.host GROUP BY 1$$);
SELECT flownode.create_flow('js_bad', 'js_bad',  -- a view reading the clock
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM js_cpu c JOIN js_clock v ON v.host = c.host GROUP BY 1$$);
SELECT flownode.create_flow('js_bad', 'js_bad',  -- a view reading the fact table
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM js_cpu c JOIN js_self v ON v.host = c.host GROUP BY 1$$);
SELECT flownode.create_flow('js_bad', 'js_bad',  -- a subquery reading the fact table
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM js_cpu c, LATERAL (SELECT count(*) FROM js_cpu d WHERE d.host = c.host) x GROUP BY 1$$);
SELECT flownode.create_flow('js_bad', 'js_bad',  -- a subquery calling a volatile function
  $$SELECT date_trunc('hour', c.ts) AS h, count(*) AS n
      FROM js_cpu c, LATERAL (SELECT random() AS r FROM js_hosts h WHERE h.host = c.host) x GROUP BY 1$$);
SELECT flownode.create_flow('js_bad', 'js_bad',  -- only a subquery in FROM
  $$SELECT date_trunc('hour', x.ts) AS h, count(*) AS n FROM (SELECT * FROM js_cpu) x GROUP BY 1$$);
SELECT count(*) AS refused_left FROM flownode.flows WHERE flow_name = 'js_bad';

DROP TABLE js_bands CASCADE;
SELECT flow_name FROM flownode.flows WHERE flow_name LIKE 'js\_%' ORDER BY 1;
SELECT flownode.drop_flow('js_or');
SELECT count(*) AS triggers_left FROM pg_trigger
 WHERE tgrelid IN ('js_hosts'::regclass, 'js_regions'::regclass, 'js_tags'::regclass);
DROP VIEW js_remote_v, js_vol, js_clock, js_self, js_hv;
DROP MATERIALIZED VIEW js_mat;
DROP FOREIGN TABLE js_remote;
DROP SERVER js_server;
DROP FOREIGN DATA WRAPPER js_fdw;
DROP FUNCTION js_check(), js_dirty(), js_diff(text);
DROP TABLE js_cpu, js_hosts, js_regions, js_tags, js_range, js_or, js_lateral, js_chain, js_view, js_bview;
