-- Every kind of write marks the windows it touches (invariant 3; docs/internals.md §2), marks follow
-- commits (invariant 2), and a flush makes the sink equal to the query (invariant 1).
SET timezone = 'UTC';
CREATE TABLE metrics (ts timestamptz NOT NULL, host text NOT NULL, v float8);
CREATE INDEX ON metrics (ts);
INSERT INTO metrics SELECT timestamptz '2024-03-01' + i * interval '7 seconds', 'h' || (i % 4), i % 50
  FROM generate_series(0, 999) i;
SELECT flownode.create_flow('m5', 'metrics_5m',
  $$SELECT date_bin('5 minutes', ts, timestamptz '2000-01-01') AS bucket, host,
           sum(v) AS total, min(v) AS lo, max(v) AS hi, count(*) AS n
      FROM metrics GROUP BY 1, 2$$, eval_interval => '1 hour') > 0 AS created;
-- all keys NOT NULL: a primary key
SELECT indexrelid::regclass, indisprimary FROM pg_index WHERE indrelid = 'metrics_5m'::regclass;
SELECT flow_diff('m5');

CREATE FUNCTION dirty() RETURNS bigint LANGUAGE sql AS
  $$SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'm5'$$;

-- single-row and multi-row INSERT
INSERT INTO metrics VALUES ('2024-03-01 00:01:00', 'h0', 1000);
SELECT dirty();
INSERT INTO metrics SELECT timestamptz '2024-03-01 03:00:00' + i * interval '1 minute', 'h9', i
  FROM generate_series(0, 29) i;
SELECT dirty();
SELECT flownode.flush_flow('m5'), dirty(), flow_diff('m5');

-- COPY
COPY metrics FROM stdin;
2024-03-01 00:02:00+00	h1	500
2024-03-01 05:00:00+00	h2	7
\.
SELECT dirty();
SELECT flownode.flush_flow('m5'), flow_diff('m5');

-- UPDATE marks the old and the new window
UPDATE metrics SET ts = ts + interval '2 hours' WHERE host = 'h9' AND ts < '2024-03-01 03:05:00';
SELECT dirty();
SELECT flownode.flush_flow('m5'), flow_diff('m5');

-- DELETE of a whole group: its sink row vanishes
SELECT count(*) FROM metrics_5m WHERE bucket = '2024-03-01 00:00:00+00' AND host = 'h2';
DELETE FROM metrics WHERE ts >= '2024-03-01 00:00:00' AND ts < '2024-03-01 00:05:00' AND host = 'h2';
SELECT flownode.flush_flow('m5'), flow_diff('m5');
SELECT count(*) FROM metrics_5m WHERE bucket = '2024-03-01 00:00:00+00' AND host = 'h2';

-- MERGE inserts, updates and deletes through the same trigger
CREATE TABLE changes (ts timestamptz, host text, v float8, op text);
INSERT INTO changes VALUES
  ('2024-03-01 00:10:00', 'h0', NULL, 'delete'),
  ('2024-03-01 07:00:00', 'h5', 3, 'insert'),
  ('2024-03-01 00:20:06', 'h2', 99, 'update');
INSERT INTO metrics VALUES ('2024-03-01 00:10:00', 'h0', 1);
SELECT flownode.flush_flow('m5') > 0 AS refreshed;
MERGE INTO metrics t USING changes c ON t.ts = c.ts AND t.host = c.host
  WHEN MATCHED AND c.op = 'delete' THEN DELETE
  WHEN MATCHED THEN UPDATE SET v = c.v
  WHEN NOT MATCHED THEN INSERT VALUES (c.ts, c.host, c.v);
SELECT dirty();
SELECT flownode.flush_flow('m5'), flow_diff('m5');

-- a rolled-back transaction publishes nothing
BEGIN;
INSERT INTO metrics VALUES ('2030-01-01', 'x', 1);
SELECT dirty();
ROLLBACK;
SELECT dirty();

-- a rolled-back savepoint publishes nothing of its part; the rest is kept
BEGIN;
INSERT INTO metrics VALUES ('2031-01-01', 'kept', 1);
SAVEPOINT a;
INSERT INTO metrics VALUES ('2032-01-01', 'dropped', 1);
SAVEPOINT b;
INSERT INTO metrics VALUES ('2033-01-01', 'dropped', 1);
ROLLBACK TO a;
SAVEPOINT c;
INSERT INTO metrics VALUES ('2034-01-01', 'kept', 1);
RELEASE c;
COMMIT;
SELECT dirty();
SELECT flownode.flush_flow('m5'), flow_diff('m5');
SELECT DISTINCT host FROM metrics_5m WHERE bucket >= '2030-01-01' ORDER BY 1;

-- windows scattered past the transaction's staging area (256 windows) and past its
-- set's capacity, across savepoints: every committed window reaches the sink (the
-- sets coalesce, never drop), nothing of a rolled-back savepoint does
SET flownode.local_ranges_per_flow = 16;
BEGIN;
INSERT INTO metrics SELECT timestamptz '2040-01-01' + (i * 7919 % 500) * interval '1 hour', 'scatter', i
  FROM generate_series(0, 599) i;
SAVEPOINT s1;
INSERT INTO metrics SELECT timestamptz '2041-01-01' + (i * 104729 % 300) * interval '1 hour', 'scatter', i
  FROM generate_series(0, 299) i;
RELEASE s1;
SAVEPOINT s2;
INSERT INTO metrics SELECT timestamptz '2042-01-01' + i * interval '1 hour', 'gone', i
  FROM generate_series(0, 99) i;
ROLLBACK TO s2;
INSERT INTO metrics VALUES ('2039-06-01', 'scatter', 1);
COMMIT;
RESET flownode.local_ranges_per_flow;
SELECT dirty() >= 801 AS all_marked;
SELECT flownode.flush_flow('m5') >= 801 AS refreshed, flow_diff('m5');
SELECT count(*) AS scatter_rows FROM metrics_5m WHERE host = 'scatter';
SELECT count(*) AS gone_rows FROM metrics_5m WHERE host = 'gone';

-- an error inside a function with an exception block rolls back its marks too
DO $$
BEGIN
  INSERT INTO metrics VALUES ('2035-01-01', 'dropped', 1);
  PERFORM 1 / 0;
EXCEPTION WHEN division_by_zero THEN NULL;
END $$;
SELECT dirty();

-- rows with a NULL or infinite time belong to no window and never reach the sink
ALTER TABLE metrics ALTER COLUMN ts DROP NOT NULL;
INSERT INTO metrics VALUES (NULL, 'h0', 1), ('infinity', 'h0', 1), ('-infinity', 'h0', 1);
SELECT dirty();

-- TRUNCATE empties the sink in the same transaction
BEGIN;
TRUNCATE metrics;
SELECT count(*) FROM metrics_5m;
ROLLBACK;
SELECT count(*) > 0 AS sink_back FROM metrics_5m;
TRUNCATE metrics;
SELECT count(*) FROM metrics_5m;
INSERT INTO metrics VALUES ('2024-03-01 00:00:00', 'h0', 1);
SELECT flownode.flush_flow('m5'), flow_diff('m5');

-- a backlog is split across refreshes by the source rows each reads (never more than
-- flownode.max_rows_per_refresh), at window boundaries
ALTER SYSTEM SET flownode.max_rows_per_refresh = 10000;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SELECT runs AS runs_before FROM flownode.flow_info WHERE flow_name = 'm5' \gset
-- (whole windows: a key refresh reads its marks' windows at once, unsplit)
SET flownode.key_marks_per_window = 0;
INSERT INTO metrics SELECT timestamptz '2024-04-01' + i * interval '30 seconds', 'h0', i
  FROM generate_series(0, 29999) i;
SELECT dirty();
SELECT flownode.flush_flow('m5'), flow_diff('m5');
-- 30,000 rows at most 10,000 per refresh: at least three refreshes
SELECT runs - :runs_before >= 3 AS split FROM flownode.flow_info WHERE flow_name = 'm5';
-- many ranges (probed through one cursor), the budget running out inside one of
-- them: 40 ranges of three or four adjacent windows, 700 rows each; 28,000 rows at
-- most 10,000 per refresh, each cut inside the range where its budget ends
SELECT runs AS runs_before FROM flownode.flow_info WHERE flow_name = 'm5' \gset
INSERT INTO metrics SELECT timestamptz '2024-05-01' + g * interval '1 hour' + k * interval '1.2 seconds', 'h' || (k % 3), k
  FROM generate_series(0, 39) g, generate_series(0, 699) k;
RESET flownode.key_marks_per_window;
SELECT flownode.flush_flow('m5'), flow_diff('m5');
SELECT runs - :runs_before >= 3 AS split FROM flownode.flow_info WHERE flow_name = 'm5';
ALTER SYSTEM RESET flownode.max_rows_per_refresh;
SELECT pg_reload_conf();

SELECT flownode.drop_flow('m5');
DROP TABLE metrics, metrics_5m, changes;
DROP FUNCTION dirty();

-- two flows on one table, a savepoint rolled back, then more rows: each flow's rows
-- go to its own set (the freed sets' memory is reused by the next ones, so a marker
-- must not trust a pointer cached before the rollback)
CREATE TABLE pair (ts timestamptz NOT NULL, v int NOT NULL);
SELECT flownode.create_flow('pair_a', 'pair_a_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n FROM pair GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flownode.create_flow('pair_b', 'pair_b_sink',
  $$SELECT date_trunc('hour', ts) AS w, sum(v) AS s FROM pair GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
BEGIN;
SAVEPOINT s;
INSERT INTO pair VALUES ('2024-05-01 10:00:00', 1);
ROLLBACK TO s;
INSERT INTO pair VALUES ('2024-05-01 11:30:00', 2);
SAVEPOINT t;
INSERT INTO pair VALUES ('2024-05-01 12:30:00', 3);
ROLLBACK TO t;
INSERT INTO pair VALUES ('2024-05-01 13:30:00', 4);
COMMIT;
SELECT flow_name, dirty_windows FROM flownode.flows WHERE flow_name LIKE 'pair_%' ORDER BY 1;
SELECT flownode.flush_flow('pair_a'), flow_diff('pair_a');
SELECT flownode.flush_flow('pair_b'), flow_diff('pair_b');
SELECT * FROM pair_b_sink ORDER BY w;
SELECT flownode.drop_flow('pair_a'), flownode.drop_flow('pair_b');
DROP TABLE pair, pair_a_sink, pair_b_sink;

-- the durable record of writers scattered over time: each transaction's windows as
-- one multirange per flow (written directly, checked against PostgreSQL's own
-- constructor), readable and trimmed by PostgreSQL's multirange operators
CREATE TABLE rec (ts timestamptz NOT NULL, v int NOT NULL);
SELECT flownode.create_flow('rec_f', 'rec_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n FROM rec GROUP BY 1$$,
  eval_interval => '1 hour') > 0 AS created;
SELECT flow_id AS rec_flow FROM flownode.flow WHERE flow_name = 'rec_f' \gset
INSERT INTO rec SELECT timestamptz '2024-06-01' + i * 7 * interval '1 minute', i FROM generate_series(0, 6) i;
INSERT INTO rec SELECT timestamptz '2024-06-02' + i * 3 * interval '1 minute', i FROM generate_series(0, 8) i;
INSERT INTO rec SELECT timestamptz '2024-06-03' + i * 2 * interval '1 minute', i FROM generate_series(0, 11) i;
SELECT pg_catalog.array_length(pg_catalog.array_agg(r), 1) AS ranges,
       pg_catalog.bool_and(pg_catalog.upper(r) - pg_catalog.lower(r) = 60000000) AS minute_each,
       pg_catalog.min(pg_catalog.lower(r)) = extract(epoch FROM timestamptz '2024-06-01' - timestamptz '2000-01-01') * 1000000 AS first_ok
  FROM flownode.pending p, pg_catalog.unnest(p.ranges) r WHERE p.flow_id = :rec_flow;
SELECT pg_catalog.bool_and(ranges = (ranges::text)::int8multirange AND ranges::text = ((ranges::text)::int8multirange)::text) AS same_value,
       pg_catalog.count(*) AS records
  FROM flownode.pending WHERE flow_id = :rec_flow;
-- a writer scattered over 200 windows records kilobytes: compressed, kept in the row
-- (no TOAST table inserts in its commit)
INSERT INTO rec SELECT timestamptz '2024-07-01' + i * 3 * interval '1 minute', i FROM generate_series(0, 199) i;
SELECT pg_catalog.pg_column_compression(ranges) IS NOT NULL AS compressed,
       pg_catalog.pg_column_size(ranges) > 2000 AS kilobytes
  FROM flownode.pending WHERE flow_id = :rec_flow ORDER BY pg_catalog.pg_column_size(ranges) DESC LIMIT 1;
SELECT pg_catalog.pg_relation_size(reltoastrelid) AS toast_bytes FROM pg_catalog.pg_class
 WHERE oid = 'flownode.pending'::regclass;
SELECT flownode.flush_flow('rec_f'), flow_diff('rec_f');
SELECT pg_catalog.count(*) AS records_left FROM flownode.pending WHERE flow_id = :rec_flow;
SELECT flownode.drop_flow('rec_f');
DROP TABLE rec, rec_sink;
