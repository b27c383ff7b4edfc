-- Partitioned sources (docs/reference.md and docs/operations.md, "Partitioned sources", docs/internals.md §3): a flow
-- over a partitioned table reads the parent; rows written through the parent or
-- straight into a partition are marked; partitions created or attached later are
-- covered without a step by the user; ATTACH, DETACH, DROP TABLE and TRUNCATE of a
-- partition mark the windows of the rows that come or go, except windows frozen by
-- expire_after. After every step the sink equals the query (flow_diff, sql/api.sql).
SET timezone = 'UTC';

-- flownode's triggers on a table tree: per table, what fires and which table the
-- marking names (the flow's source, whose entry holds its flows)
CREATE FUNCTION marking_triggers(p regclass)
RETURNS TABLE (tbl regclass, trigger text, names regclass, enabled "char") LANGUAGE sql AS $$
  SELECT t.tgrelid::regclass,
         CASE WHEN t.tgtype & 2 = 2 THEN 'BEFORE ' ELSE 'AFTER ' END ||
         concat_ws(' OR ', CASE WHEN t.tgtype & 4 = 4 THEN 'INSERT' END, CASE WHEN t.tgtype & 16 = 16 THEN 'UPDATE' END,
                   CASE WHEN t.tgtype & 8 = 8 THEN 'DELETE' END, CASE WHEN t.tgtype & 32 = 32 THEN 'TRUNCATE' END),
         (regexp_match(pg_get_triggerdef(t.oid), '''(\d+)''::oid'))[1]::oid::regclass,
         t.tgenabled
    FROM pg_trigger t
   WHERE (t.tgrelid = p OR t.tgrelid IN (SELECT relid FROM pg_partition_tree(p)))
     AND t.tgfoid::regproc::text LIKE 'flownode.mark%'
   ORDER BY t.tgrelid::regclass::text, 2 $$;

-- ---------------------------------------------------------------------------
-- range by time: daily partitions, a default one, the time index on the parent
CREATE TABLE pm (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL) PARTITION BY RANGE (ts);
CREATE INDEX ON pm (ts);
CREATE TABLE pm_0101 PARTITION OF pm FOR VALUES FROM ('2024-01-01') TO ('2024-01-02');
CREATE TABLE pm_0102 PARTITION OF pm FOR VALUES FROM ('2024-01-02') TO ('2024-01-03');
CREATE TABLE pm_0103 PARTITION OF pm FOR VALUES FROM ('2024-01-03') TO ('2024-01-04');
CREATE TABLE pm_default PARTITION OF pm DEFAULT;
INSERT INTO pm SELECT timestamptz '2024-01-01' + i * interval '17 minutes', 'h' || (i % 3), i
  FROM generate_series(0, 250) i;
INSERT INTO pm VALUES ('2023-06-01 12:00', 'h0', 1000);
SELECT tableoid::regclass AS partition, count(*) FROM pm GROUP BY 1 ORDER BY tableoid::regclass::text;

SELECT flownode.create_flow('pm_1h', 'pm_1h',
  $$SELECT date_trunc('hour', ts) AS hour, host, count(*) AS n, sum(v) AS total FROM pm GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT count(*) AS sink_rows, flow_diff('pm_1h') FROM pm_1h;
SELECT source_table, marking_enabled FROM flownode.flows WHERE flow_name = 'pm_1h';
-- the parent gets the TRUNCATE trigger; each partition the row triggers, naming the
-- parent, and a BEFORE TRUNCATE trigger
SELECT * FROM marking_triggers('pm');

-- writes through the parent, straight into partitions (the default one too), COPY,
-- an UPDATE moving rows across partitions, UPDATE and DELETE of a partition's rows
INSERT INTO pm VALUES ('2024-01-01 05:30', 'h9', 1), ('2025-03-01 00:10', 'h1', 2);
INSERT INTO pm_0102 VALUES ('2024-01-02 07:45', 'h9', 3);
INSERT INTO pm_default VALUES ('2022-12-31 23:59', 'h2', 4);
COPY pm FROM stdin;
2024-01-03 10:00:00+00	h7	5
2024-01-01 20:00:00+00	h7	6
2026-01-01 00:00:00+00	h7	7
\.
COPY pm_0103 FROM stdin;
2024-01-03 11:00:00+00	h8	8
\.
UPDATE pm SET ts = ts + interval '2 days' WHERE ts >= '2024-01-01 03:00' AND ts < '2024-01-01 04:00';
UPDATE pm_0102 SET v = v + 100 WHERE ts >= '2024-01-02 09:00' AND ts < '2024-01-02 10:00';
DELETE FROM pm WHERE ts >= '2024-01-02 12:00' AND ts < '2024-01-02 13:00';
DELETE FROM pm_0103 WHERE ts >= '2024-01-03 01:00' AND ts < '2024-01-03 02:00';
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flownode.flush_flow('pm_1h') > 0 AS refreshed;
SELECT flow_diff('pm_1h');
SELECT count(*) AS moved FROM pm_0103 WHERE ts >= '2024-01-03 03:00' AND ts < '2024-01-03 04:00';

-- a partition created after the flow is covered at once
CREATE TABLE pm_0104 PARTITION OF pm FOR VALUES FROM ('2024-01-04') TO ('2024-01-05');
SELECT * FROM marking_triggers('pm') WHERE tbl = 'pm_0104'::regclass;
INSERT INTO pm VALUES ('2024-01-04 01:00', 'h0', 10);
INSERT INTO pm_0104 VALUES ('2024-01-04 02:00', 'h0', 11);
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flownode.flush_flow('pm_1h');
SELECT flow_diff('pm_1h');

-- ATTACH of a table holding rows marks the windows of its rows: here a table whose
-- columns are in another order, after a dropped one
CREATE TABLE pm_0105 (x int, v int NOT NULL, host text NOT NULL, ts timestamptz NOT NULL);
ALTER TABLE pm_0105 DROP COLUMN x;
INSERT INTO pm_0105 SELECT 1, 'h5', timestamptz '2024-01-05' + i * interval '50 minutes' FROM generate_series(0, 9) i;
ALTER TABLE pm ATTACH PARTITION pm_0105 FOR VALUES FROM ('2024-01-05') TO ('2024-01-06');
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flownode.flush_flow('pm_1h');
SELECT flow_diff('pm_1h');
-- its triggers name the parent and read its own column
INSERT INTO pm_0105 VALUES (7, 'h5', '2024-01-05 23:00');
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flownode.flush_flow('pm_1h');
SELECT flow_diff('pm_1h');

-- DETACH marks the windows of the rows that leave; the detached table loses the
-- triggers and its writes mark nothing any more
ALTER TABLE pm DETACH PARTITION pm_0105;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flownode.flush_flow('pm_1h');
SELECT flow_diff('pm_1h');
SELECT count(*) AS triggers FROM marking_triggers('pm_0105');
INSERT INTO pm_0105 VALUES (8, 'h5', '2024-01-05 23:30');
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';

-- a rolled-back DETACH marks nothing and keeps the triggers
BEGIN;
ALTER TABLE pm DETACH PARTITION pm_0104;
ROLLBACK;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT count(*) AS triggers FROM marking_triggers('pm') WHERE tbl = 'pm_0104'::regclass;

-- DETACH of a table that is not a partition (any more) is PostgreSQL's own error, not
-- flownode's internal one ('could not find tuple for parent of relation', the
-- oracle's seed 472106507)
\set VERBOSITY terse
ALTER TABLE pm DETACH PARTITION pm_0105;
\set VERBOSITY default

-- DROP TABLE of a partition marks the windows of its rows; the flow stays (the
-- partition is not its source)
DROP TABLE pm_0104;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flownode.flush_flow('pm_1h');
SELECT flow_diff('pm_1h');
SELECT flow_name FROM flownode.flows WHERE flow_name = 'pm_1h';

-- TRUNCATE of one partition refreshes only its windows: the sink rows of other days
-- keep their row version
CREATE TEMP TABLE before_truncate AS SELECT hour, host, xmin::text AS x FROM pm_1h;
TRUNCATE pm_0102;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flownode.flush_flow('pm_1h');
SELECT flow_diff('pm_1h');
SELECT count(*) FILTER (WHERE b.x = s.xmin::text) AS kept, count(*) FILTER (WHERE b.x <> s.xmin::text) AS rewritten
  FROM before_truncate b JOIN pm_1h s USING (hour, host);
SELECT count(*) AS gone FROM before_truncate WHERE hour >= '2024-01-02' AND hour < '2024-01-03';

-- TRUNCATE of the parent empties the sink in the truncating transaction; its
-- partitions mark nothing (the sink is emptied anyway)
BEGIN;
TRUNCATE pm;
SELECT count(*) AS sink_rows FROM pm_1h;
COMMIT;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flow_diff('pm_1h');

-- a role that may write one partition only (not the parent) marks what it writes
CREATE ROLE fn_part_writer;
GRANT INSERT ON pm_0101 TO fn_part_writer;
SET ROLE fn_part_writer;
INSERT INTO pm_0101 VALUES ('2024-01-01 08:00', 'h3', 12);
RESET ROLE;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flownode.flush_flow('pm_1h');
SELECT flow_diff('pm_1h');
REVOKE ALL ON pm_0101 FROM fn_part_writer;
DROP ROLE fn_part_writer;

-- triggers disabled on a partition: a WARNING, and the flows view says so; what is
-- written meanwhile is not marked, and refresh_flow repairs it; enabled again, they
-- fire in every replication role
ALTER TABLE pm_0101 DISABLE TRIGGER ALL;
SELECT marking_enabled FROM flownode.flows WHERE flow_name = 'pm_1h';
INSERT INTO pm VALUES ('2024-01-01 09:00', 'h3', 13);
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flow_diff('pm_1h');
ALTER TABLE pm_0101 ENABLE TRIGGER ALL;
SELECT marking_enabled FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT DISTINCT enabled FROM marking_triggers('pm');
SELECT flownode.refresh_flow('pm_1h', '2024-01-01 09:00', '2024-01-01 10:00');
SELECT flow_diff('pm_1h');

-- refused: FROM ONLY of a partitioned table (it reads no rows), a partition of the
-- source as the sink, a foreign table among the partitions, a flow's sink attached
-- into its source
SELECT flownode.create_flow('bad', 'bad_sink',
  $$SELECT date_trunc('hour', ts) AS hour, count(*) AS n FROM ONLY pm GROUP BY 1$$, eval_interval => '1 hour');
SELECT flownode.create_flow('bad', 'pm_0103',
  $$SELECT date_trunc('hour', ts) AS hour, count(*) AS n FROM pm GROUP BY 1$$, eval_interval => '1 hour');
CREATE FOREIGN DATA WRAPPER fn_dummy_fdw;
CREATE SERVER fn_dummy_srv FOREIGN DATA WRAPPER fn_dummy_fdw;
CREATE FOREIGN TABLE pm_0106 PARTITION OF pm FOR VALUES FROM ('2024-01-06') TO ('2024-01-07') SERVER fn_dummy_srv;
CREATE FOREIGN TABLE pm_0106 (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL) SERVER fn_dummy_srv;
ALTER TABLE pm ATTACH PARTITION pm_0106 FOR VALUES FROM ('2024-01-06') TO ('2024-01-07');
DROP FOREIGN TABLE pm_0106;
DROP SERVER fn_dummy_srv;
DROP FOREIGN DATA WRAPPER fn_dummy_fdw;
CREATE TABLE pm_sink2 (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL, PRIMARY KEY (ts, host));
SELECT flownode.create_flow('pm_other', 'pm_sink2',
  $$SELECT date_trunc('day', ts) AS ts, host, sum(v)::int AS v FROM pm WHERE v < 0 GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
ALTER TABLE pm ATTACH PARTITION pm_sink2 FOR VALUES FROM ('2030-01-01') TO ('2030-01-02');
SELECT flownode.drop_flow('pm_other');
DROP TABLE pm_sink2;

-- DROP SCHEMA ... CASCADE takes a partition without its rows being read first: every
-- window the flow may hold is refreshed
CREATE SCHEMA pm_elsewhere;
CREATE TABLE pm_elsewhere.pm_0107 PARTITION OF pm FOR VALUES FROM ('2024-01-07') TO ('2024-01-08');
INSERT INTO pm VALUES ('2024-01-07 01:00', 'h0', 20), ('2024-01-07 02:00', 'h0', 21);
SELECT flownode.flush_flow('pm_1h');
SELECT flow_diff('pm_1h');
DROP SCHEMA pm_elsewhere CASCADE;
SELECT dirty_windows > 0 AS marked FROM flownode.flows WHERE flow_name = 'pm_1h';
SELECT flownode.flush_flow('pm_1h') > 0 AS refreshed;
SELECT flow_diff('pm_1h');

-- a partition whose rows fall in more windows than are looked up one by one (10,000):
-- the windows of the first 10,000 rows are marked one by one, the rest of the
-- partition as one range up to its last row's window
CREATE TABLE pw (ts timestamptz NOT NULL, v int NOT NULL) PARTITION BY RANGE (ts);
CREATE INDEX ON pw (ts);
CREATE TABLE pw_1 PARTITION OF pw FOR VALUES FROM ('2024-01-01') TO ('2024-01-02');
CREATE TABLE pw_2 PARTITION OF pw FOR VALUES FROM ('2024-01-02') TO ('2024-01-03');
INSERT INTO pw SELECT timestamptz '2024-01-01' + i * interval '1 second', 1 FROM generate_series(0, 10049) i;
INSERT INTO pw VALUES ('2024-01-01 05:00', 1), ('2024-01-02 00:00', 1);
SELECT flownode.create_flow('pw_1s', 'pw_1s',
  $$SELECT date_bin('1 second', ts, timestamptz '2000-01-01') AS second, count(*) AS n FROM pw GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
ALTER TABLE pw DETACH PARTITION pw_1;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pw_1s';
SELECT flownode.flush_flow('pw_1s');
SELECT flow_diff('pw_1s'), count(*) AS sink_rows FROM pw_1s;
SELECT flownode.drop_flow('pw_1s');
DROP TABLE pw, pw_1, pw_1s;

-- ---------------------------------------------------------------------------
-- list-partitioned by host, no default: an UPDATE moving rows to another partition,
-- DETACH ... CONCURRENTLY (two transactions), ATTACH again
CREATE TABLE pl (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL) PARTITION BY LIST (host);
CREATE TABLE pl_a PARTITION OF pl FOR VALUES IN ('a');
CREATE TABLE pl_b PARTITION OF pl FOR VALUES IN ('b');
CREATE INDEX ON pl (ts);
INSERT INTO pl SELECT timestamptz '2024-02-01' + i * interval '7 minutes', CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, i
  FROM generate_series(0, 99) i;
SELECT flownode.create_flow('pl_1h', 'pl_1h',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS hour, host, count(*) AS n, sum(v) AS total
      FROM pl GROUP BY 1, 2$$, eval_interval => '1 hour') > 0 AS created;
UPDATE pl SET host = 'b' WHERE v < 10;
SELECT flownode.flush_flow('pl_1h');
SELECT flow_diff('pl_1h');
ALTER TABLE pl DETACH PARTITION pl_b CONCURRENTLY;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pl_1h';
SELECT flownode.flush_flow('pl_1h');
SELECT flow_diff('pl_1h');
SELECT * FROM marking_triggers('pl_b');
ALTER TABLE pl ATTACH PARTITION pl_b FOR VALUES IN ('b');
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'pl_1h';
SELECT flownode.flush_flow('pl_1h');
SELECT flow_diff('pl_1h');

-- hash-partitioned by host: TRUNCATE of one partition marks the windows of its rows,
-- which lie all over the time range
CREATE TABLE ph (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL) PARTITION BY HASH (host);
CREATE TABLE ph_0 PARTITION OF ph FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE ph_1 PARTITION OF ph FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE ph_2 PARTITION OF ph FOR VALUES WITH (MODULUS 3, REMAINDER 2);
INSERT INTO ph SELECT timestamptz '2024-03-01' + i * interval '13 minutes', 'host' || (i % 7), i
  FROM generate_series(0, 299) i;
SELECT flownode.create_flow('ph_1h', 'ph_1h',
  $$SELECT date_trunc('hour', ts) AS hour, count(*) AS n, sum(v) AS total FROM ph GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
TRUNCATE ph_1;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'ph_1h';
SELECT flownode.flush_flow('ph_1h');
SELECT flow_diff('ph_1h');
-- rows moved to another hash partition (host0's rows are in ph_2, host6's in ph_1),
-- rows deleted
UPDATE ph SET host = 'host6' WHERE host = 'host0' AND v < 100;
SELECT tableoid::regclass AS partition, count(*) FROM ph WHERE host = 'host6' GROUP BY 1;
DELETE FROM ph WHERE v % 11 = 0;
SELECT flownode.flush_flow('ph_1h') > 0 AS refreshed;
SELECT flow_diff('ph_1h');

-- ---------------------------------------------------------------------------
-- two levels, a flow on the top and one on a partition that is partitioned itself:
-- the leaves' triggers name the nearest source, whose entry holds both flows
CREATE TABLE p2 (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL) PARTITION BY RANGE (ts);
CREATE TABLE p2_2024 PARTITION OF p2 FOR VALUES FROM ('2024-01-01') TO ('2025-01-01') PARTITION BY LIST (host);
CREATE TABLE p2_2024_a PARTITION OF p2_2024 FOR VALUES IN ('a');
CREATE TABLE p2_2024_b PARTITION OF p2_2024 FOR VALUES IN ('b');
CREATE TABLE p2_2025 PARTITION OF p2 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
INSERT INTO p2 VALUES ('2024-03-01', 'a', 1), ('2024-03-01', 'b', 2), ('2025-03-01', 'a', 3);
SELECT flownode.create_flow('p2_top', 'p2_top',
  $$SELECT date_trunc('day', ts) AS day, count(*) AS n FROM p2 GROUP BY 1$$, eval_interval => '1 hour') > 0;
SELECT flownode.create_flow('p2_sub', 'p2_sub',
  $$SELECT date_trunc('month', ts) AS month, host, sum(v) AS total FROM p2_2024 GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT * FROM marking_triggers('p2');
INSERT INTO p2_2024_a VALUES ('2024-04-01', 'a', 10);
INSERT INTO p2 VALUES ('2024-04-02', 'b', 11), ('2025-04-02', 'b', 12);
UPDATE p2 SET ts = '2025-05-05' WHERE v = 1;
SELECT flownode.flush_flow('p2_top') > 0, flownode.flush_flow('p2_sub') > 0;
SELECT flow_diff('p2_top'), flow_diff('p2_sub');
-- TRUNCATE of the middle table: its own sink is emptied, the top flow's windows marked
TRUNCATE p2_2024;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'p2_%' ORDER BY 1;
SELECT flownode.flush_flow('p2_top');
SELECT flow_diff('p2_top'), flow_diff('p2_sub');
-- the partition's flow dropped: the leaves' triggers name the top source again
SELECT flownode.drop_flow('p2_sub');
SELECT * FROM marking_triggers('p2');
INSERT INTO p2 VALUES ('2024-05-02', 'b', 13);
SELECT flownode.flush_flow('p2_top');
SELECT flow_diff('p2_top');
DROP TABLE p2_sub;

-- DROP TABLE of the parent drops its flow; the sink stays
DROP TABLE pl;
SELECT flow_name FROM flownode.flows WHERE flow_name = 'pl_1h';
SELECT count(*) > 0 AS sink_kept FROM pl_1h;

-- ---------------------------------------------------------------------------
-- expire_after: windows that ended before now() - expire_after are frozen, and a
-- partition dropped, detached or truncated leaves their sink rows alone (retention:
-- old partitions go, the rollups stay); a flow without it follows the source
CREATE TABLE pe (ts timestamptz NOT NULL, v int NOT NULL) PARTITION BY RANGE (ts);
CREATE INDEX ON pe (ts);
DO $$
BEGIN
  FOR d IN -8..1 LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF pe FOR VALUES FROM (%L) TO (%L)', 'pe_d' || (d + 8),
                   date_trunc('day', now()) + d * interval '1 day', date_trunc('day', now()) + (d + 1) * interval '1 day');
  END LOOP;
END $$;
-- a row every 2 hours, from 8 days ago to the end of today
INSERT INTO pe SELECT date_trunc('day', now()) - interval '8 days' + i * interval '2 hours', 1 FROM generate_series(0, 107) i;
SELECT flownode.create_flow('pe_1h', 'pe_1h',
  $$SELECT date_trunc('hour', ts) AS hour, count(*) AS n FROM pe GROUP BY 1$$,
  eval_interval => '1 hour', expire_after => '3 days') > 0;
SELECT flownode.create_flow('pe_1d', 'pe_1d',
  $$SELECT date_trunc('day', ts) AS day, count(*) AS n FROM pe GROUP BY 1$$, eval_interval => '1 hour') > 0;
-- the sink of pe_1h equals the query from the window holding the line on
CREATE FUNCTION pe_open_diff() RETURNS bigint LANGUAGE sql AS $$
  WITH q AS (SELECT date_trunc('hour', ts) AS hour, count(*) AS n FROM pe GROUP BY 1),
       line AS (SELECT date_trunc('hour', now() - interval '3 days') AS l)
  SELECT count(*) FROM (
    (SELECT s.hour, s.n FROM pe_1h s, line WHERE s.hour >= l EXCEPT SELECT q.hour, q.n FROM q, line WHERE q.hour >= l)
    UNION ALL
    (SELECT q.hour, q.n FROM q, line WHERE q.hour >= l EXCEPT SELECT s.hour, s.n FROM pe_1h s, line WHERE s.hour >= l)) d $$;
CREATE TEMP TABLE pe_frozen AS SELECT * FROM pe_1h WHERE hour < date_trunc('day', now()) - interval '4 days';
SELECT count(*) AS frozen_rows FROM pe_frozen;
DROP TABLE pe_d0;
ALTER TABLE pe DETACH PARTITION pe_d1;
TRUNCATE pe_d2;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'pe_%' ORDER BY 1;
SELECT flownode.flush_flow('pe_1h'), flownode.flush_flow('pe_1d');
-- pe_1h keeps the rollups of the days that went; pe_1d follows the source
SELECT count(*) AS frozen_kept FROM pe_frozen f JOIN pe_1h s USING (hour, n);
SELECT pe_open_diff(), flow_diff('pe_1d');
SELECT count(*) AS days FROM pe_1d;
-- a partition of recent days truncated: those windows are refreshed
TRUNCATE pe_d7;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'pe_%' ORDER BY 1;
SELECT flownode.flush_flow('pe_1h'), flownode.flush_flow('pe_1d');
SELECT pe_open_diff(), flow_diff('pe_1d');
SELECT count(*) AS frozen_kept FROM pe_frozen f JOIN pe_1h s USING (hour, n);
DROP TABLE pe_d1;

-- leave no flow behind for the files that follow
SELECT count(flownode.drop_flow(flow_name)) >= 0 AS dropped FROM flownode.flows;
