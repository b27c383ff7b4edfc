-- flownode.first(value, time) and flownode.last(value, time): TimescaleDB's
-- aggregates (docs: api/first, api/last, "the value ... at the earliest/latest
-- time"; src/agg_bookend.c: rows with a NULL time left out, NULL when none has one).
-- The one difference: rows of one time are ordered by their value (first takes the
-- smallest, last the largest, NULL after every value), so that a flow's sink equals
-- its query run again whatever order a scan meets tied rows in.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS flownode;
RESET client_min_messages;
SET timezone = 'UTC';

CREATE TABLE fl (g int NOT NULL, ts timestamptz, v numeric, s text);
-- the documented cases: the value at the earliest and at the latest time
INSERT INTO fl VALUES (1, '2024-01-01 00:03', 3, 'c'), (1, '2024-01-01 00:01', 1, 'a'),
                      (1, '2024-01-01 00:02', 2, 'b');
SELECT flownode.first(v, ts), flownode.last(v, ts), flownode.first(s, ts), flownode.last(s, ts) FROM fl;
-- NULL times are left out; no row with a time: NULL; a NULL value at the first time is the answer
INSERT INTO fl VALUES (1, NULL, -100, 'z');
SELECT flownode.first(v, ts), flownode.last(v, ts) FROM fl;
SELECT flownode.first(v, ts) IS NULL AS none FROM fl WHERE ts IS NULL;
SELECT flownode.first(v, ts) IS NULL AS none FROM fl WHERE false;
SELECT flownode.first(v, ts) IS NULL AS null_value FROM (VALUES (NULL::numeric, 1), (5, 2)) x(v, ts);
-- ties on the time: the smallest value for first, the largest for last, NULL after
-- every value, in whichever order the rows come
SELECT flownode.first(v, t) AS f, flownode.last(v, t) AS l FROM (VALUES (7, 1), (5, 1), (9, 2), (8, 2)) x(v, t);
SELECT flownode.first(v, t) AS f, flownode.last(v, t) AS l FROM (VALUES (8, 2), (9, 2), (5, 1), (7, 1)) x(v, t);
SELECT flownode.first(v, t) AS f, flownode.last(v, t) IS NULL AS l_null
  FROM (VALUES (NULL::int, 1), (5, 1), (NULL, 2), (6, 2)) x(v, t);
-- any ordered time type, integers too; an unordered one is refused
SELECT flownode.first(s, n), flownode.last(s, n) FROM (VALUES ('x', 10), ('y', -3)) x(s, n);
SELECT flownode.first(1, p) FROM (VALUES (point '(1,2)')) x(p);

-- as a flow's aggregate: the sink equals the query after writes, ties and NULLs included
CREATE FUNCTION fl_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; missing bigint; extra bigint;
BEGIN
  SELECT query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL TABLE %s) d', q, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (TABLE %s EXCEPT ALL (%s)) d', s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;
CREATE TABLE m (ts timestamptz NOT NULL, at timestamptz, dev int NOT NULL, v numeric, label text);
CREATE INDEX ON m (ts);
INSERT INTO m SELECT timestamptz '2024-01-01' + i * interval '7 minutes',
                     timestamptz '2024-01-01' + (i / 3) * interval '7 minutes',  -- ties in threes
                     i % 4, i % 11, 'l' || (i % 5)
  FROM generate_series(1, 600) i;
SELECT flownode.create_flow('fl_hourly', 'fl_hourly',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS b, dev,
           flownode.first(v, at) AS fv, flownode.last(v, at) AS lv,
           flownode.first(label, ts) AS fl, flownode.last(label, ts) AS ll
      FROM m GROUP BY 1, 2$$) > 0;
SELECT fl_diff('fl_hourly');
-- late rows tying with the first and last times, NULL values, NULL times, updates, deletes
INSERT INTO m VALUES ('2024-01-01 00:10', '2024-01-01 00:00', 1, -1, 'tie-low'),
                     ('2024-01-01 00:20', '2024-01-01 00:00', 1, NULL, NULL),
                     ('2024-01-01 00:30', NULL, 1, -50, 'no time'),
                     ('2024-01-01 00:59', '2024-01-01 00:49', 1, 1000, 'tie-high');
UPDATE m SET at = NULL WHERE dev = 2 AND ts < '2024-01-01 06:00';
UPDATE m SET v = NULL WHERE dev = 3 AND ts BETWEEN '2024-01-01 10:00' AND '2024-01-01 14:00';
UPDATE m SET at = at - interval '1 day' WHERE dev = 0 AND ts BETWEEN '2024-01-02' AND '2024-01-02 03:00';
DELETE FROM m WHERE dev = 1 AND ts BETWEEN '2024-01-01 20:00' AND '2024-01-01 22:00';
SELECT flownode.flush_flow('fl_hourly') > 0 AS refreshed;
SELECT fl_diff('fl_hourly');
SELECT fv, lv, fl, ll FROM fl_hourly WHERE b = '2024-01-01 00:00' AND dev = 1;
SELECT count(*) AS groups_without_time FROM fl_hourly WHERE fv IS NULL AND lv IS NULL AND dev = 2;
SELECT flownode.drop_flow('fl_hourly');
DROP TABLE m, fl;
DROP FUNCTION fl_diff(text);
RESET timezone;
