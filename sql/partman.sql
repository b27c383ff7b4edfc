-- pg_partman (Debian's postgresql-15-partman, 4.7; 5.x for 17 and 18) managing a
-- flow's source: native daily partitions made by create_parent, later ones by
-- run_maintenance, old ones dropped or detached by its retention (docs/operations.md,
-- partman recipe). The hourly flow has expire_after, so the rollups of the days
-- retention takes survive; the daily flow has none and follows the source.
-- Everything else is exact.
SET timezone = 'UTC';
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;

CREATE TABLE metrics (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL) PARTITION BY RANGE (ts);
CREATE INDEX ON metrics (ts);
-- a partition per day from 10 days ago to 2 days ahead, and a default one (4.x
-- calls native partitioning 'native', 5.x 'range')
SELECT CASE WHEN extversion LIKE '4.%' THEN 'native' ELSE 'range' END AS partman_type
  FROM pg_extension WHERE extname = 'pg_partman' \gset
SELECT partman.create_parent(p_parent_table => 'public.metrics', p_control => 'ts', p_type => :'partman_type',
  p_interval => '1 day', p_premake => 2,
  p_start_partition => (date_trunc('day', now()) - interval '10 days')::text);
SELECT count(*) AS partitions FROM pg_partition_tree('metrics') WHERE isleaf;
-- a row every 2 hours, from 10 days ago to the end of today
INSERT INTO metrics SELECT date_trunc('day', now()) - interval '10 days' + i * interval '2 hours', 'h' || (i % 2), i
  FROM generate_series(0, 131) i;

SELECT flownode.create_flow('metrics_1h', 'metrics_1h',
  $$SELECT date_trunc('hour', ts) AS hour, host, count(*) AS n, sum(v) AS total FROM metrics GROUP BY 1, 2$$,
  eval_interval => '1 hour', expire_after => '3 days') > 0 AS created;
SELECT flownode.create_flow('metrics_1d', 'metrics_1d',
  $$SELECT date_trunc('day', ts) AS day, count(*) AS n, sum(v) AS total FROM metrics GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flow_diff('metrics_1h'), flow_diff('metrics_1d');

-- the hourly sink equals the query from the window holding now() - expire_after on
CREATE FUNCTION metrics_open_diff() RETURNS bigint LANGUAGE sql AS $$
  WITH q AS (SELECT date_trunc('hour', ts) AS hour, host, count(*) AS n, sum(v) AS total FROM metrics GROUP BY 1, 2),
       s AS (SELECT hour, host, n, total FROM metrics_1h),
       line AS (SELECT date_trunc('hour', now() - interval '3 days') AS l)
  SELECT count(*) FROM (
    (SELECT s.* FROM s, line WHERE s.hour >= l EXCEPT ALL SELECT q.* FROM q, line WHERE q.hour >= l)
    UNION ALL
    (SELECT q.* FROM q, line WHERE q.hour >= l EXCEPT ALL SELECT s.* FROM s, line WHERE s.hour >= l)) d $$;
-- every leaf partition carries the marking triggers
CREATE FUNCTION leaves_without_triggers() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_partition_tree('metrics') p
   WHERE p.isleaf AND NOT EXISTS (SELECT 1 FROM pg_trigger t
                                   WHERE t.tgrelid = p.relid AND t.tgfoid = 'flownode.mark_insert()'::regprocedure) $$;
SELECT leaves_without_triggers();

-- the rollups of the days older than 5 days: retention drops them below
CREATE TEMP TABLE old_rollups AS SELECT * FROM metrics_1h WHERE hour < date_trunc('day', now()) - interval '5 days';
SELECT count(*) AS old_rollups FROM old_rollups;

-- retention of 5 days, tables dropped; two more days made ahead
UPDATE partman.part_config SET retention = '5 days', retention_keep_table = false, premake = 4
 WHERE parent_table = 'public.metrics';
SELECT partman.run_maintenance('public.metrics');
SELECT count(*) AS partitions FROM pg_partition_tree('metrics') WHERE isleaf;
SELECT leaves_without_triggers();
-- the dropped days' windows: frozen for the hourly flow, marked for the daily one
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'metrics_%' ORDER BY 1;
-- rows into the days run_maintenance made: through the parent and straight into
-- the partition
INSERT INTO metrics VALUES (date_trunc('day', now()) + interval '3 days 1 hour', 'h0', 1000);
SELECT tableoid::regclass AS new_partition FROM metrics WHERE v = 1000 \gset
INSERT INTO :new_partition VALUES (date_trunc('day', now()) + interval '3 days 5 hours', 'h1', 1001);
SELECT flownode.flush_flow('metrics_1h') AS hourly, flownode.flush_flow('metrics_1d') AS daily;
SELECT count(*) AS old_rollups_kept FROM old_rollups JOIN metrics_1h USING (hour, host, n, total);
SELECT metrics_open_diff(), flow_diff('metrics_1d');
SELECT count(*) AS days FROM metrics_1d;

-- retention of 3 days, tables kept: pg_partman detaches them
UPDATE partman.part_config SET retention = '3 days', retention_keep_table = true
 WHERE parent_table = 'public.metrics';
DELETE FROM old_rollups;
INSERT INTO old_rollups SELECT * FROM metrics_1h WHERE hour < date_trunc('day', now()) - interval '3 days';
SELECT count(*) AS old_rollups FROM old_rollups;
SELECT partman.run_maintenance('public.metrics');
SELECT count(*) AS partitions FROM pg_partition_tree('metrics') WHERE isleaf;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'metrics_%' ORDER BY 1;
SELECT flownode.flush_flow('metrics_1h') AS hourly, flownode.flush_flow('metrics_1d') AS daily;
SELECT count(*) AS old_rollups_kept FROM old_rollups JOIN metrics_1h USING (hour, host, n, total);
SELECT metrics_open_diff(), flow_diff('metrics_1d');
SELECT count(*) AS days FROM metrics_1d;
-- the detached tables keep their rows and lose the triggers
SELECT count(*) AS detached, sum((SELECT count(*) FROM pg_trigger t WHERE t.tgrelid = c.oid)) AS triggers
  FROM pg_class c
 WHERE c.relname LIKE 'metrics\_p%' AND c.relkind = 'r' AND NOT c.relispartition
   AND c.relnamespace = 'public'::regnamespace;

-- writes after all that stay exact
INSERT INTO metrics SELECT date_trunc('day', now()) - interval '1 day' + i * interval '45 minutes', 'h2', i
  FROM generate_series(0, 40) i;
UPDATE metrics SET ts = ts + interval '1 day' WHERE host = 'h2' AND v < 10;
SELECT flownode.flush_flow('metrics_1h') > 0 AS hourly, flownode.flush_flow('metrics_1d') > 0 AS daily;
SELECT metrics_open_diff(), flow_diff('metrics_1d');

SELECT flownode.drop_flow('metrics_1h'), flownode.drop_flow('metrics_1d');
DROP TABLE metrics;
DO $$
DECLARE t regclass;
BEGIN
  FOR t IN SELECT oid FROM pg_class WHERE relname LIKE 'metrics\_p%' AND relkind = 'r'
                                     AND relnamespace = 'public'::regnamespace LOOP
    EXECUTE format('DROP TABLE %s', t);
  END LOOP;
END $$;
DROP EXTENSION pg_partman;
DROP SCHEMA partman CASCADE;

-- leave no flow behind for the files that follow
SELECT count(flownode.drop_flow(flow_name)) >= 0 AS dropped FROM flownode.flows;
