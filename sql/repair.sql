-- Marking in every replication role, marking that PostgreSQL bypasses, and the
-- repair call refresh_flow (docs/reference.md and docs/operations.md).
SET timezone = 'UTC';
CREATE TABLE m (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON m (ts);
INSERT INTO m SELECT timestamptz '2024-03-01' + i * interval '10 minutes', 'h' || (i % 2), i
  FROM generate_series(0, 143) i;
SELECT flownode.create_flow('hourly', 'm_hourly',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, host, count(*) AS n, sum(v) AS s
      FROM m GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
-- the triggers fire in every replication role
SELECT tgfoid::regproc, tgenabled FROM pg_trigger WHERE tgrelid = 'm'::regclass ORDER BY 1, 2;
SELECT marking_enabled FROM flownode.flows WHERE flow_name = 'hourly';

-- a replica session's writes (a logical replication apply, an ETL tool) are marked
SET session_replication_role = replica;
INSERT INTO m VALUES ('2024-03-01 00:05', 'h0', 1000);
UPDATE m SET v = v + 1 WHERE ts = '2024-03-01 01:00';
DELETE FROM m WHERE ts = '2024-03-01 02:00';
RESET session_replication_role;
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'hourly';
SELECT flownode.flush_flow('hourly');
SELECT flow_diff('hourly');

-- DISABLE TRIGGER ALL: PostgreSQL bypasses the triggers; flownode says so
ALTER TABLE m DISABLE TRIGGER ALL;
SELECT marking_enabled FROM flownode.flows WHERE flow_name = 'hourly';
INSERT INTO m VALUES ('2024-03-01 03:05', 'h1', 2000), ('2024-03-02 00:05', 'h9', 1);
DELETE FROM m WHERE ts = '2024-03-01 04:00';
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'hourly';
-- ENABLE TRIGGER ALL gives origin-only triggers: flownode keeps its own firing always
ALTER TABLE m ENABLE TRIGGER ALL;
SELECT tgfoid::regproc, tgenabled FROM pg_trigger WHERE tgrelid = 'm'::regclass ORDER BY 1, 2;
SELECT marking_enabled FROM flownode.flows WHERE flow_name = 'hourly';
-- what was written meanwhile is missing until the repair
SELECT flow_diff('hourly');
-- a range: only the windows overlapping it (01:30 to 03:30 is 01:00 to 04:00, 3 hours)
SELECT flownode.refresh_flow('hourly', '2024-03-01 01:30', '2024-03-01 03:30');
SELECT h, host, n, s FROM m_hourly WHERE h >= '2024-03-01 03:00' AND h < '2024-03-01 05:00' ORDER BY 1, 2;
SELECT flow_diff('hourly');
-- unbounded: everything; it returns the windows from the first to the last row
SELECT flownode.refresh_flow('hourly');
SELECT flow_diff('hourly');
-- unchanged rows are not rewritten by a repair either
CREATE TEMP TABLE before AS SELECT h, host, xmin::text AS x FROM m_hourly;
SELECT flownode.refresh_flow('hourly', NULL, '2024-03-02');
SELECT count(*) AS rewritten FROM m_hourly JOIN before USING (h, host) WHERE m_hourly.xmin::text <> x;

-- frozen windows (expire_after) are repaired too: only by this call
CREATE TABLE old (ts timestamptz NOT NULL, v int NOT NULL);
INSERT INTO old VALUES ('2020-01-01 10:00', 1), ('2020-01-02 10:00', 2);
SELECT flownode.create_flow('old_daily', 'old_d',
  $$SELECT date_trunc('day', ts) AS d, sum(v) AS s FROM old GROUP BY 1$$,
  eval_interval => '1 hour', expire_after => '1 day') > 0;
DELETE FROM old WHERE ts < '2020-01-02';
SELECT flownode.flush_flow('old_daily');
SELECT d, s FROM old_d ORDER BY 1;
SELECT flownode.refresh_flow('old_daily', '2020-01-01', '2020-01-02');
SELECT d, s FROM old_d ORDER BY 1;

-- bad input
SELECT flownode.refresh_flow('hourly', '2024-03-02', '2024-03-01');
SELECT flownode.refresh_flow('hourly', '2024-03-01', '2024-03-01');
SELECT flownode.refresh_flow('nope');
SELECT flownode.refresh_flow(NULL);
-- a flow created in this transaction was just filled: nothing to repair yet
BEGIN;
CREATE TABLE fresh (ts timestamptz NOT NULL);
SELECT flownode.create_flow('fresh', 'fresh_m',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n FROM fresh GROUP BY 1$$) > 0;
SELECT flownode.refresh_flow('fresh');
ROLLBACK;

SELECT flownode.drop_flow('hourly');
SELECT flownode.drop_flow('old_daily');
DROP TABLE m, m_hourly, old, old_d;
