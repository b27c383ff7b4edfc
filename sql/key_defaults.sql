-- Key marks by default (docs/reference.md, *Late rows: marks that carry keys*): a
-- flow created without any setting marks the groups of late rows, and what they
-- leave pending is reported as any other pending work: flush_flow's count of
-- windows, the flows view's dirty_windows, dirty_ranges and lag, flow_info's
-- oldest_dirty_window, record_rows and state_size.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS flownode;
RESET client_min_messages;
SET timezone = 'UTC';
SHOW flownode.key_marks_per_window;
CREATE TABLE kd (ts timestamptz NOT NULL, dev int, v float8);
CREATE INDEX ON kd (ts);
CREATE INDEX ON kd (flownode.key_hash(dev), ts);
INSERT INTO kd SELECT '2026-01-01'::timestamptz + i * interval '1 hour', i % 5, i
  FROM generate_series(0, 24 * 6 - 1) i;
SELECT flownode.create_flow('kd_day', 'kd_day',
  $$SELECT date_trunc('day', ts) AS d, dev, count(*) AS n, sum(v) AS s FROM kd GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT count(*) AS key_triggers FROM pg_trigger
 WHERE tgrelid = 'kd'::regclass AND tgname LIKE 'flownode_mark_keys%';
CREATE VIEW kd_pending AS
  SELECT f.dirty_windows, i.dirty_ranges, i.oldest_dirty_window, f.lag IS NOT NULL AS lagging,
         i.record_rows, i.state_size > 0 AS has_state,
         (SELECT count(*) FROM flownode.pending_keys k WHERE k.flow_id = f.flow_id) AS key_marks
    FROM flownode.flows f JOIN flownode.flow_info i USING (flow_id) WHERE f.flow_name = 'kd_day';
CREATE FUNCTION kd_exact() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM ((SELECT date_trunc('day', ts) AS d, dev, count(*) AS n, sum(v) AS s FROM kd GROUP BY 1, 2
                         EXCEPT ALL SELECT * FROM kd_day)
                        UNION ALL (SELECT * FROM kd_day EXCEPT ALL
                                   SELECT date_trunc('day', ts), dev, count(*), sum(v) FROM kd GROUP BY 1, 2)) x $$;
SELECT * FROM kd_pending;

-- late rows for two keys in two closed days: three key marks, two windows pending,
-- the windows apart (two ranges), the oldest the earlier day; nothing in the range
-- record, yet the flow lags
INSERT INTO kd VALUES ('2026-01-02 05:00', 1, 100), ('2026-01-02 06:00', 2, 100),
                      ('2026-01-04 07:00', 1, 100);
SELECT * FROM kd_pending;
SELECT count(*) AS range_records FROM flownode.pending p JOIN flownode.flow f USING (flow_id)
 WHERE f.flow_name = 'kd_day';
-- flush_flow returns the two windows the key marks refreshed
SELECT flownode.flush_flow('kd_day') AS windows_flushed, kd_exact() AS diff;
SELECT * FROM kd_pending;

-- a window marked whole (a writer with the setting at 0) and by keys (another one):
-- flush_flow counts it once; the key-marked window beside it counts too
SET flownode.key_marks_per_window = 0;
INSERT INTO kd VALUES ('2026-01-03 01:00', 3, 7);
RESET flownode.key_marks_per_window;
INSERT INTO kd VALUES ('2026-01-03 02:00', 4, 7), ('2026-01-05 02:00', 4, 7);
SELECT dirty_windows, dirty_ranges, key_marks FROM kd_pending;
SELECT flownode.flush_flow('kd_day') AS windows_flushed, kd_exact() AS diff;
SELECT * FROM kd_pending;

-- the runs view says how many windows the key refresh read
SELECT kind, windows FROM flownode.runs WHERE flow_name = 'kd_day' ORDER BY started_at DESC LIMIT 1;

-- a flow created while the setting is 0 gets no key triggers: whole windows
SET flownode.key_marks_per_window = 0;
SELECT flownode.create_flow('kd_off', 'kd_off',
  $$SELECT date_trunc('day', ts) AS d, dev, count(*) AS n FROM kd GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
RESET flownode.key_marks_per_window;
SELECT count(*) / 3 AS flows_with_key_triggers FROM pg_trigger
 WHERE tgrelid = 'kd'::regclass AND tgname LIKE 'flownode_mark_keys%';
INSERT INTO kd VALUES ('2026-01-02 08:00', 1, 1);
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name IN ('kd_day', 'kd_off') ORDER BY 1;
SELECT flownode.flush_flow('kd_day') AS day_windows, flownode.flush_flow('kd_off') AS off_windows, kd_exact() AS diff;

-- two flows created in one transaction on one table: each names the index once
CREATE TABLE kd2 (ts timestamptz NOT NULL, dev int, site text);
CREATE INDEX ON kd2 (ts);
BEGIN;
SELECT flownode.create_flow('kd2_a', 'kd2_a',
  $$SELECT date_trunc('day', ts) AS d, dev, count(*) AS n FROM kd2 GROUP BY 1, 2$$) > 0;
SELECT flownode.create_flow('kd2_b', 'kd2_b',
  $$SELECT date_trunc('hour', ts) AS h, site, count(*) AS n FROM kd2 GROUP BY 1, 2$$) > 0;
COMMIT;
SELECT flownode.drop_flow('kd2_a'), flownode.drop_flow('kd2_b');
DROP TABLE kd2, kd2_a, kd2_b;

SELECT flownode.drop_flow('kd_off');
SELECT flownode.drop_flow('kd_day');
DROP VIEW kd_pending;
DROP FUNCTION kd_exact();
DROP TABLE kd, kd_day, kd_off;
