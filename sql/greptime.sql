-- GreptimeDB's flow statements, as text (docs/reference.md, "Coming from
-- GreptimeDB"): flownode.execute runs CREATE [OR REPLACE] FLOW, DROP FLOW, ADMIN
-- FLUSH_FLOW, SHOW FLOWS and SHOW CREATE FLOW as GreptimeDB's documentation and parser
-- write them. The statements below are GreptimeDB's own (its user guide, its blog, its
-- test cases tests/cases/standalone/common/flow/*.sql), unchanged; their tables are
-- translated to PostgreSQL (STRING is text, DOUBLE double precision, a TIME INDEX a
-- NOT NULL timestamp). Each sink is compared with its query (flow_diff) and with the
-- answer GreptimeDB's test expects.
SET timezone = 'UTC';

-- A sink against its stored query, both ways (flow_diff of sql/api.sql runs the
-- user's text, which here is GreptimeDB's; the stored query is PostgreSQL's), leaving
-- out the columns GreptimeDB's sinks have besides the query's (update_at...).
CREATE FUNCTION gt_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; cols text; missing bigint; extra bigint;
BEGIN
  SELECT query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols FROM pg_attribute
   WHERE attrelid = s AND attnum > 0 AND NOT attisdropped AND attname NOT IN ('update_at', '__ts_placeholder');
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL SELECT %s FROM %s) d', q, cols, s) INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT %s FROM %s EXCEPT ALL (%s)) d', cols, s, q) INTO extra;
  RETURN format('missing=%s extra=%s', missing, extra);
END $$;

-- 1. The user guide (manage-flow): a window, HAVING on an output's name, '10
-- seconds'::INTERVAL, date_bin(stride, ts) with GreptimeDB's origin (the Unix epoch),
-- a sink created by the flow.
CREATE TABLE temp_sensor_data (sensor_id int, loc text, temperature double precision,
                               ts timestamp NOT NULL);
SELECT * FROM flownode.execute($$
CREATE FLOW temp_monitoring
SINK TO temp_alerts
AS
SELECT
  sensor_id,
  loc,
  max(temperature) AS max_temp,
  date_bin('10 seconds'::INTERVAL, ts) AS time_window
FROM temp_sensor_data
GROUP BY
  sensor_id,
  loc,
  time_window
HAVING max_temp > 100;
$$);
\d temp_alerts
-- the stored query: PostgreSQL's date_bin with the epoch, HAVING on the expression
SELECT query FROM flownode.flow WHERE flow_name = 'temp_monitoring';
INSERT INTO temp_sensor_data VALUES (1, 'room1', 98.5, '2022-01-01 00:00:00'), (2, 'room2', 99.5, '2022-01-01 00:00:01'),
                                    (1, 'room1', 101.5, '2022-01-01 00:00:12'), (2, 'room2', 102.5, '2022-01-01 00:00:13');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('temp_monitoring')$$);
SELECT sensor_id, loc, max_temp, time_window FROM temp_alerts ORDER BY 1, 4;
SELECT gt_diff('temp_monitoring');
UPDATE temp_sensor_data SET temperature = 99 WHERE sensor_id = 1;
DELETE FROM temp_sensor_data WHERE sensor_id = 2 AND temperature < 100;
INSERT INTO temp_sensor_data VALUES (3, 'room3', 150, '2022-01-01 00:00:14');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('temp_monitoring')$$);
SELECT sensor_id, loc, max_temp, time_window FROM temp_alerts ORDER BY 1, 4;
SELECT gt_diff('temp_monitoring');

-- the first example of the grammar: EXPIRE AFTER, COMMENT, IF NOT EXISTS
SELECT * FROM flownode.execute($$
CREATE FLOW IF NOT EXISTS my_flow
SINK TO my_sink_table
EXPIRE AFTER '1 hour'::INTERVAL
COMMENT 'My first flow in GreptimeDB'
AS
SELECT
    max(temperature) as max_temp,
    date_bin('10 seconds'::INTERVAL, ts) as time_window
FROM temp_sensor_data
GROUP BY time_window;
$$);
SELECT flow_name, expire_after, comment, time_column FROM flownode.flows NATURAL JOIN (SELECT flow_id, expire_after, comment FROM flownode.flow_info) i WHERE flow_name = 'my_flow';
-- again, IF NOT EXISTS: kept, with a NOTICE
SELECT * FROM flownode.execute($$CREATE FLOW IF NOT EXISTS my_flow SINK TO other AS SELECT 1$$);
SELECT * FROM flownode.execute('SHOW FLOWS');
SELECT * FROM flownode.execute($$SHOW FLOWS LIKE 'my%'$$);
SELECT * FROM flownode.execute('DROP FLOW my_flow');
SELECT * FROM flownode.execute('DROP FLOW IF EXISTS my_flow');
SELECT * FROM flownode.execute('DROP FLOW temp_monitoring');
DROP TABLE temp_sensor_data, temp_alerts, my_sink_table;

-- 2. GreptimeDB's test of its user guide (flow_user_guide.sql): `backquoted` names, a
-- comma ending the SELECT list, INTERVAL '1 minutes', a CASE inside sum(), a sink
-- created beforehand (with GreptimeDB's update_at column, which flownode leaves NULL).
CREATE TABLE "ngx_access_log" (
    "client" text NULL,
    "ua_platform" text NULL,
    "referer" text NULL,
    "method" text NULL,
    "endpoint" text NULL,
    "trace_id" text NULL,
    "protocol" text NULL,
    "status" int NULL,
    "size" double precision NULL,
    "agent" text NULL,
    "access_time" timestamp(3) NOT NULL
);
CREATE TABLE "ngx_statistics" (
    "status" int NULL,
    "total_logs" bigint NULL,
    "min_size" double precision NULL,
    "max_size" double precision NULL,
    "avg_size" double precision NULL,
    "high_size_count" bigint NULL,
    "time_window" timestamp NOT NULL,
    "update_at" timestamp NULL,
    UNIQUE NULLS NOT DISTINCT ("status", "time_window")
);
SELECT * FROM flownode.execute($$
CREATE FLOW ngx_aggregation SINK TO ngx_statistics COMMENT 'Aggregate statistics for ngx_access_log' AS
SELECT
    status,
    count(client) AS total_logs,
    min(size) as min_size,
    max(size) as max_size,
    avg(size) as avg_size,
    sum(
        case
            when `size` > 550 then 1
            else 0
        end
    ) as high_size_count,
    date_bin(INTERVAL '1 minutes', access_time) as time_window,
FROM
    ngx_access_log
GROUP BY
    status,
    time_window;
$$);
INSERT INTO ngx_access_log VALUES
    ('android', 'Android', 'referer', 'GET', '/api/v1', 'trace_id', 'HTTP', 200, 1000, 'agent', '2021-07-01 00:00:01.000'),
    ('ios', 'iOS', 'referer', 'GET', '/api/v1', 'trace_id', 'HTTP', 200, 500, 'agent', '2021-07-01 00:00:30.500'),
    ('android', 'Android', 'referer', 'GET', '/api/v1', 'trace_id', 'HTTP', 200, 600, 'agent', '2021-07-01 00:01:01.000'),
    ('ios', 'iOS', 'referer', 'GET', '/api/v1', 'trace_id', 'HTTP', 404, 700, 'agent', '2021-07-01 00:01:01.500');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('ngx_aggregation')$$);
-- GreptimeDB: (200, 2, 500, 1000, 750, 1, 00:00), (200, 1, 600, ...), (404, 1, 700, ...)
SELECT status, total_logs, min_size, max_size, avg_size, high_size_count, time_window, update_at
  FROM ngx_statistics ORDER BY status, time_window;
INSERT INTO ngx_access_log VALUES
    ('android', 'Android', 'referer', 'GET', '/api/v1', 'trace_id', 'HTTP', 200, 500, 'agent', '2021-07-01 00:01:01.000'),
    ('ios', 'iOS', 'referer', 'GET', '/api/v1', 'trace_id', 'HTTP', 404, 800, 'agent', '2021-07-01 00:01:01.500');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('ngx_aggregation')$$);
-- GreptimeDB: (200, 2, 500, 1000, 750, 1), (200, 2, 500, 600, 550, 1), (404, 2, 700, 800, 750, 2)
SELECT status, total_logs, min_size, max_size, avg_size, high_size_count, time_window
  FROM ngx_statistics ORDER BY status, time_window;
-- and what GreptimeDB's test does not do: an UPDATE and a DELETE
UPDATE ngx_access_log SET size = 10 WHERE size = 1000;
DELETE FROM ngx_access_log WHERE status = 404;
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('ngx_aggregation')$$);
SELECT status, total_logs, min_size, max_size, avg_size, high_size_count, time_window
  FROM ngx_statistics ORDER BY status, time_window;
SELECT gt_diff('ngx_aggregation');
SELECT * FROM flownode.execute('DROP FLOW ngx_aggregation');
DROP TABLE ngx_statistics, ngx_access_log;

-- Real-time analytics: SELECT DISTINCT without a window is recomputed whole, so it
-- needs EVAL INTERVAL (GreptimeDB's current guide adds it too)
CREATE TABLE ngx_access_log (client text, country text, access_time timestamp NOT NULL);
CREATE TABLE ngx_country (country text PRIMARY KEY, update_at timestamp, __ts_placeholder timestamp);
SELECT * FROM flownode.execute($$
CREATE FLOW calc_ngx_country SINK TO ngx_country AS
SELECT
    DISTINCT country,
FROM
    ngx_access_log;
$$);
SELECT * FROM flownode.execute($$
CREATE FLOW calc_ngx_country SINK TO ngx_country EVAL INTERVAL '1 hour' AS
SELECT
    DISTINCT country,
FROM
    ngx_access_log;
$$);
INSERT INTO ngx_access_log VALUES
    ('client1', 'US', '2022-01-01 00:00:00'), ('client2', 'US', '2022-01-01 00:00:01'),
    ('client3', 'UK', '2022-01-01 00:00:02'), ('client4', 'UK', '2022-01-01 00:00:03'),
    ('client5', 'CN', '2022-01-01 00:00:04'), ('client6', 'CN', '2022-01-01 00:00:05'),
    ('client7', 'JP', '2022-01-01 00:00:06'), ('client8', 'JP', '2022-01-01 00:00:07'),
    ('client9', 'KR', '2022-01-01 00:00:08'), ('client10', 'KR', '2022-01-01 00:00:09');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('calc_ngx_country')$$);
SELECT country FROM ngx_country ORDER BY country;
DELETE FROM ngx_access_log WHERE country = 'JP';
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('calc_ngx_country')$$);
SELECT country FROM ngx_country ORDER BY country;
SELECT * FROM flownode.execute('DROP FLOW calc_ngx_country');
DROP TABLE ngx_country;
-- with a window: DISTINCT over a GROUP BY of all its outputs, over the same rows
INSERT INTO ngx_access_log VALUES ('client7', 'JP', '2022-01-01 00:00:06'), ('client8', 'JP', '2022-01-01 00:00:07');
CREATE TABLE ngx_country (country text, time_window timestamp, update_at timestamp,
                          PRIMARY KEY (country, time_window));
SELECT * FROM flownode.execute($$
CREATE FLOW calc_ngx_country SINK TO ngx_country AS
SELECT
    DISTINCT country,
    date_bin(INTERVAL '1 hour', access_time) as time_window,
FROM
    ngx_access_log
GROUP BY
    country,
    time_window;
$$);
-- GreptimeDB: CN, JP, KR, UK, US at 2022-01-01T00:00:00
SELECT country, time_window FROM ngx_country ORDER BY country;
SELECT gt_diff('calc_ngx_country');
SELECT * FROM flownode.execute('DROP FLOW calc_ngx_country');
DROP TABLE ngx_access_log, ngx_country;

-- Real-time monitoring without a window (GROUP BY sensor, HAVING on an output name)
CREATE TABLE temp_sensor_data (sensor_id int, loc text, temperature double precision, ts timestamp NOT NULL);
CREATE TABLE temp_alerts (sensor_id int NOT NULL, loc text NOT NULL, max_temp double precision,
                          update_at timestamp, PRIMARY KEY (sensor_id, loc));
SELECT * FROM flownode.execute($$
CREATE FLOW temp_monitoring SINK TO temp_alerts EVAL INTERVAL '1 hour' AS
SELECT
    sensor_id,
    loc,
    max(temperature) as max_temp,
FROM
    temp_sensor_data
GROUP BY
    sensor_id,
    loc
HAVING
    max_temp > 100;
$$);
INSERT INTO temp_sensor_data VALUES (1, 'room1', 98.5, '2022-01-01 00:00:00'), (2, 'room2', 99.5, '2022-01-01 00:00:01');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('temp_monitoring')$$);
SELECT sensor_id, loc, max_temp FROM temp_alerts ORDER BY 1;
INSERT INTO temp_sensor_data VALUES (1, 'room1', 101.5, '2022-01-01 00:00:02'), (2, 'room2', 102.5, '2022-01-01 00:00:03');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('temp_monitoring')$$);
-- GreptimeDB: (1, room1, 101.5), (2, room2, 102.5)
SELECT sensor_id, loc, max_temp FROM temp_alerts ORDER BY 1;
SELECT * FROM flownode.execute('DROP FLOW temp_monitoring');
DROP TABLE temp_sensor_data, temp_alerts;

-- Real-time dashboard: trunc(size, -1) :: INT as bucket_size
CREATE TABLE ngx_access_log (client text, stat int, size int, access_time timestamp NOT NULL);
CREATE TABLE ngx_distribution (stat int NOT NULL, bucket_size int NOT NULL, total_logs bigint,
                               time_window timestamp NOT NULL, update_at timestamp,
                               PRIMARY KEY (stat, bucket_size, time_window));
SELECT * FROM flownode.execute($$
CREATE FLOW calc_ngx_distribution SINK TO ngx_distribution AS
SELECT
    stat,
    trunc(size, -1) :: INT as bucket_size,
    count(client) AS total_logs,
    date_bin(INTERVAL '1 minutes', access_time) as time_window,
FROM
    ngx_access_log
GROUP BY
    stat,
    time_window,
    bucket_size;
$$);
INSERT INTO ngx_access_log VALUES
    ('cli1', 200, 100, '2022-01-01 00:00:00'), ('cli2', 200, 104, '2022-01-01 00:00:01'),
    ('cli3', 200, 120, '2022-01-01 00:00:02'), ('cli4', 200, 124, '2022-01-01 00:00:03'),
    ('cli5', 200, 140, '2022-01-01 00:00:04'), ('cli6', 404, 144, '2022-01-01 00:00:05'),
    ('cli7', 404, 160, '2022-01-01 00:00:06'), ('cli8', 404, 164, '2022-01-01 00:00:07'),
    ('cli9', 404, 180, '2022-01-01 00:00:08'), ('cli10', 404, 184, '2022-01-01 00:00:09');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('calc_ngx_distribution')$$);
-- GreptimeDB: (200,100,2) (200,120,2) (200,140,1) (404,140,1) (404,160,2) (404,180,2)
SELECT stat, bucket_size, total_logs, time_window FROM ngx_distribution ORDER BY 1, 2;
SELECT * FROM flownode.execute('DROP FLOW calc_ngx_distribution');
DROP TABLE ngx_access_log, ngx_distribution;

-- 3. The blog (flow_blog.sql): an output computed from the window, WHERE, a sink whose
-- window is its key
CREATE TABLE velocity (ts timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP, left_wheel FLOAT, right_wheel FLOAT);
CREATE TABLE avg_speed (avg_speed double precision, start_window timestamp PRIMARY KEY, end_window timestamp,
                        update_at timestamp);
SELECT * FROM flownode.execute($$
CREATE FLOW calc_avg_speed SINK TO avg_speed AS
SELECT
    avg((left_wheel + right_wheel) / 2) as avg_speed,
    date_bin(INTERVAL '5 second', ts) as start_window,
    date_bin(INTERVAL '5 second', ts) + INTERVAL '5 second' as end_window,
FROM
    velocity
WHERE
    left_wheel > 0.5
    AND right_wheel > 0.5
    AND left_wheel < 60
    AND right_wheel < 60
GROUP BY
    start_window;
$$);
INSERT INTO velocity VALUES ('2021-07-01 00:00:00.200', 0.0, 0.7), ('2021-07-01 00:00:00.200', 0.0, 61.0),
                            ('2021-07-01 00:00:02.500', 2.0, 1.0);
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('calc_avg_speed')$$);
SELECT avg_speed, start_window, end_window FROM avg_speed ORDER BY start_window;
INSERT INTO velocity VALUES ('2021-07-01 00:00:05.100', 5.0, 4.0), ('2021-07-01 00:00:09.600', 2.3, 2.1);
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('calc_avg_speed')$$);
-- GreptimeDB: 1.5 at 00:00:00, 3.35 at 00:00:05 (its FLOAT is 32 bits: 3.3499999046325684)
SELECT avg_speed, start_window, end_window FROM avg_speed ORDER BY start_window;
SELECT gt_diff('calc_avg_speed');
SELECT * FROM flownode.execute('DROP FLOW calc_avg_speed');
DROP TABLE velocity, avg_speed;

-- 4. show_create_flow.sql: a flow without aggregation (a filtered copy, keyed by the
-- source's primary key), CREATE OR REPLACE and IF NOT EXISTS, SHOW CREATE FLOW, the
-- catalog. GreptimeDB's tables are keyed by their tags and time index: here the
-- primary key is ("number", ts).
CREATE TABLE numbers_input_show ("number" int, ts timestamp DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY ("number", ts));
CREATE TABLE out_num_cnt_show ("number" int, ts timestamp DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY ("number", ts));
SELECT flow_name, table_catalog, flow_definition, source_table_names FROM flownode.flow_info
 WHERE flow_name = 'filter_numbers_show';
SELECT * FROM flownode.execute($$SHOW FLOWS LIKE 'filter_numbers_show'$$);
-- without the key's second column: the declared sink has no hidden key column for it
SELECT * FROM flownode.execute($$CREATE FLOW filter_numbers_show SINK TO out_num_cnt_show AS SELECT number FROM numbers_input_show where number > 10;$$);
SELECT * FROM flownode.execute($$CREATE FLOW filter_numbers_show SINK TO out_num_cnt_show AS SELECT number, ts FROM numbers_input_show where number > 10;$$);
SELECT * FROM flownode.execute('SHOW CREATE FLOW filter_numbers_show');
SELECT flow_name, table_catalog, flow_definition, source_table_names, sink_table_name, options
  FROM flownode.flow_info WHERE flow_name = 'filter_numbers_show';
SELECT * FROM flownode.execute($$SHOW FLOWS LIKE 'filter_numbers_show'$$);
CREATE TEMP TABLE created AS SELECT created_time, updated_time FROM flownode.flow_info;
-- (flow exists, replace, if not exists) = (true, false, false): an error
SELECT * FROM flownode.execute($$CREATE FLOW filter_numbers_show SINK TO out_num_cnt_show AS SELECT number, ts FROM numbers_input_show where number > 15;$$);
INSERT INTO numbers_input_show VALUES (10, '1970-01-01 00:00:00'), (15, '1970-01-01 00:00:00.001'), (16, '1970-01-01 00:00:00.002');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('filter_numbers_show')$$);
SELECT number, ts FROM out_num_cnt_show ORDER BY 1, 2;
-- (true, false, true): kept
SELECT * FROM flownode.execute($$CREATE FLOW IF NOT EXISTS filter_numbers_show SINK TO out_num_cnt_show AS SELECT number, ts FROM numbers_input_show where number > 5;$$);
INSERT INTO numbers_input_show VALUES (4, '1970-01-01 00:00:00.004'), (5, '1970-01-01 00:00:00.004'),
                                      (10, '1970-01-01 00:00:00.003'), (11, '1970-01-01 00:00:00.004');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('filter_numbers_show')$$);
SELECT number, ts FROM out_num_cnt_show ORDER BY 1, 2;
-- (true, true, false): replaced; the new flow's sink is its query over every row of
-- the source (GreptimeDB's keeps rows of the old query and misses older rows)
SELECT * FROM flownode.execute($$CREATE OR REPLACE FLOW filter_numbers_show SINK TO out_num_cnt_show AS SELECT number, ts FROM numbers_input_show where number > 3;$$);
INSERT INTO numbers_input_show VALUES (3, '1970-01-01 00:00:00.001'), (4, '1970-01-01 00:00:00.002'),
                                      (10, '1970-01-01 00:00:00.004'), (11, '1970-01-01 00:00:00.005');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('filter_numbers_show')$$);
SELECT number, ts FROM out_num_cnt_show ORDER BY 1, 2;
SELECT gt_diff('filter_numbers_show');
SELECT flow_definition FROM flownode.flow_info WHERE flow_name = 'filter_numbers_show';
-- replaced, it keeps its creation time; its definition changed now
SELECT i.created_time = c.created_time AS created_kept, i.updated_time > c.updated_time AS updated
  FROM flownode.flow_info i, created c;
-- (true, true, true) and (false, true, true): errors
SELECT * FROM flownode.execute($$CREATE OR REPLACE FLOW IF NOT EXISTS filter_numbers_show SINK TO out_num_cnt_show AS SELECT number, ts FROM numbers_input_show where number > 0;$$);
SELECT * FROM flownode.execute('DROP FLOW filter_numbers_show');
SELECT * FROM flownode.execute($$CREATE OR REPLACE FLOW IF NOT EXISTS filter_numbers_show SINK TO out_num_cnt_show AS SELECT number, ts FROM numbers_input_show where number > -1;$$);
SELECT * FROM flownode.execute('DROP FLOW filter_numbers_show');
-- (false, true, false): created
SELECT * FROM flownode.execute($$CREATE OR REPLACE FLOW filter_numbers_show SINK TO out_num_cnt_show AS SELECT number, ts FROM numbers_input_show where number > -2;$$);
-- the copy under UPDATE and DELETE: a key changed, a row moved in time, rows across the filter
UPDATE numbers_input_show SET number = -5 WHERE number = 16;
UPDATE numbers_input_show SET ts = ts + interval '1 hour' WHERE number = 15;
DELETE FROM numbers_input_show WHERE number = 4;
INSERT INTO numbers_input_show VALUES (-3, '1970-01-01 00:00:00.001'), (-1, '1970-01-01 00:00:00.003');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('filter_numbers_show')$$);
SELECT number, ts FROM out_num_cnt_show ORDER BY 1, 2;
SELECT gt_diff('filter_numbers_show');
SELECT * FROM flownode.execute('DROP FLOW filter_numbers_show');
DROP TABLE numbers_input_show, out_num_cnt_show;

-- 5. defer_on_missing_source (flow_pending.sql): a flow before its source table.
SELECT * FROM flownode.execute($$
CREATE FLOW pending_without_defer
SINK TO pending_sink
AS SELECT val FROM pending_source;
$$);
SELECT * FROM flownode.execute($$
CREATE FLOW pending_with_defer
SINK TO pending_sink
WITH (defer_on_missing_source = true)
AS SELECT val FROM pending_source WHERE val > 10;
$$);
SELECT * FROM flownode.execute('SHOW CREATE FLOW pending_with_defer');
SELECT flow_definition, source_table_ids, source_table_names, options->>'defer_on_missing_source' AS has_defer_option,
       state, sink_table_name
  FROM flownode.flow_info WHERE flow_name = 'pending_with_defer';
SELECT flow_name, state, source_table, sink_table FROM flownode.flows WHERE flow_name = 'pending_with_defer';
-- it cannot be flushed yet; nothing else exists for it
SELECT * FROM flownode.execute($$ADMIN FLUSH_FLOW('pending_with_defer')$$);
SELECT count(*) AS sinks FROM pg_class WHERE relname = 'pending_sink';
-- a table of that name appears and rolls back: still waiting. (A copy of the rows
-- that outputs no timestamp has no windows: it needs EVAL INTERVAL, as the flow's
-- WARNING says.)
BEGIN;
CREATE TABLE pending_source (val int PRIMARY KEY, ts timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP);
ROLLBACK;
SELECT state FROM flownode.flows WHERE flow_name = 'pending_with_defer';
-- with EVAL INTERVAL (as in GreptimeDB's tests of the option), replaced: still waiting
SELECT * FROM flownode.execute($$
CREATE OR REPLACE FLOW pending_with_defer
SINK TO pending_sink
EVAL INTERVAL '10s'
WITH (defer_on_missing_source = true)
AS SELECT val FROM pending_source WHERE val > 10;
$$);
-- the table appears without the primary key a copy needs: the flow says why and
-- keeps waiting; once the key is there, ADMIN FLUSH_FLOW starts it
CREATE TABLE pending_source (val int, ts timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP);
SELECT state FROM flownode.flows WHERE flow_name = 'pending_with_defer';
ALTER TABLE pending_source ADD PRIMARY KEY (val);
SELECT * FROM flownode.execute($$ADMIN FLUSH_FLOW('pending_with_defer')$$);
SELECT flow_definition, source_table_names, state IN ('active', 'waiting_for_worker') AS started
  FROM flownode.flow_info WHERE flow_name = 'pending_with_defer';
INSERT INTO pending_source VALUES (10, '1970-01-01 00:00:00'), (11, '1970-01-01 00:00:00.001'), (12, '1970-01-01 00:00:00.002');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('pending_with_defer')$$);
SELECT val FROM pending_sink ORDER BY val;
-- replaced by a flow on a table that does not exist yet: it waits again, and starts
-- when that table is created (keeping its id)
SELECT * FROM flownode.execute($$
CREATE OR REPLACE FLOW pending_with_defer
SINK TO pending_sink
EVAL INTERVAL '10s'
WITH (defer_on_missing_source = true)
AS SELECT val FROM pending_replacement_source WHERE val > 100;
$$);
CREATE TEMP TABLE ids AS SELECT flow_id FROM flownode.flows WHERE flow_name = 'pending_with_defer';
SELECT flow_definition, source_table_ids, state FROM flownode.flow_info WHERE flow_name = 'pending_with_defer';
CREATE TABLE pending_replacement_source (val int PRIMARY KEY, ts timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP);
SELECT source_table_names, state IN ('active', 'waiting_for_worker') AS started,
       flow_id = (SELECT flow_id FROM ids) AS same_id
  FROM flownode.flow_info WHERE flow_name = 'pending_with_defer';
INSERT INTO pending_replacement_source VALUES (99, '1970-01-01 00:00:00.003'), (101, '1970-01-01 00:00:00.004'),
                                              (102, '1970-01-01 00:00:00.005');
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('pending_with_defer')$$);
-- GreptimeDB's test expects 101 and 102 (its own run failed: no flownode alive)
SELECT val FROM pending_sink ORDER BY val;
SELECT gt_diff('pending_with_defer');
SELECT * FROM flownode.execute('DROP FLOW pending_with_defer');
-- a waiting flow is dropped like any other, and its name is free again
SELECT * FROM flownode.execute($$CREATE FLOW w SINK TO w_sink WITH (defer_on_missing_source = 'true') AS SELECT 1 AS x FROM nowhere$$);
SELECT * FROM flownode.execute('DROP FLOW w');
SELECT count(*) AS flows FROM flownode.flows WHERE flow_name = 'w';
-- the source is found with the search_path the flow was created with, by its owner;
-- a table the owner cannot read yet starts it once granted
CREATE SCHEMA later_schema;
CREATE ROLE gt_owner;
GRANT EXECUTE ON FUNCTION flownode.create_flow TO gt_owner;
GRANT CREATE, USAGE ON SCHEMA later_schema TO gt_owner;
GRANT CREATE ON SCHEMA public TO gt_owner;
SET ROLE gt_owner;
SET search_path = later_schema;
SELECT * FROM flownode.execute($$
CREATE FLOW waits_for_later SINK TO later_sink EVAL INTERVAL '1 hour' WITH (defer_on_missing_source = true)
AS SELECT count(*) AS n FROM later_table$$);
RESET ROLE;
RESET search_path;
CREATE TABLE later_table (x int);   -- in public, off its search_path: not the one it waits for
CREATE TABLE later_schema.later_table (x int);
SELECT state FROM flownode.flows WHERE flow_name = 'waits_for_later';
GRANT SELECT, TRIGGER ON later_schema.later_table TO gt_owner;
SELECT state <> 'waiting_for_source' AS started, source_table, sink_table, owner
  FROM flownode.flows WHERE flow_name = 'waits_for_later';
INSERT INTO later_schema.later_table VALUES (1), (2);
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('waits_for_later')$$);
SELECT n FROM later_schema.later_sink;
SELECT * FROM flownode.execute('DROP FLOW waits_for_later');
DROP TABLE later_table, later_schema.later_table, later_schema.later_sink;
DROP SCHEMA later_schema;
REVOKE CREATE ON SCHEMA public FROM gt_owner;
REVOKE EXECUTE ON FUNCTION flownode.create_flow FROM gt_owner;
DROP ROLE gt_owner;

-- 6. SHOW CREATE FLOW round-trips: drop the flow, run its output, and the flow is the
-- same (stored query, sink, intervals, comment, options, window).
CREATE FUNCTION roundtrip(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  def text; before text; after text;
BEGIN
  SELECT result INTO def FROM flownode.execute(format('SHOW CREATE FLOW %I', p_flow));
  SELECT row(query, sink_table, eval_interval, expire_after, comment, options, window_expr, time_column)::text
    INTO before FROM flownode.flow WHERE flow_name = p_flow;
  PERFORM flownode.execute(format('DROP FLOW %I', p_flow));
  PERFORM flownode.execute(def);
  SELECT row(query, sink_table, eval_interval, expire_after, comment, options, window_expr, time_column)::text
    INTO after FROM flownode.flow WHERE flow_name = p_flow;
  RETURN CASE WHEN before = after THEN 'same flow' ELSE format('differs: %s / %s', before, after) END;
END $$;
CREATE TABLE gt_cpu (ts timestamptz NOT NULL, host text, usage double precision);
SELECT * FROM flownode.execute($$
CREATE FLOW "CPU per minute"
SINK TO cpu_1m
EXPIRE AFTER INTERVAL '7 days'
EVAL INTERVAL '90 seconds'
COMMENT 'per minute; it''s "quoted"'
AS SELECT date_bin('1 minute'::INTERVAL, ts) AS minute, host, avg(usage) AS avg_usage, count(*) AS n
     FROM gt_cpu WHERE usage >= 0 GROUP BY minute, host
$$);
SELECT result FROM flownode.execute($$SHOW CREATE FLOW "CPU per minute"$$);
SELECT roundtrip('CPU per minute');
-- the sliding filter of now(), with a sub-second EVAL INTERVAL
SELECT * FROM flownode.execute($$
CREATE FLOW cpu_recent SINK TO cpu_recent EVAL INTERVAL '500 ms'
AS SELECT date_bin('1 second'::INTERVAL, ts) AS second, host, max(usage) AS peak
     FROM gt_cpu WHERE ts > now() - INTERVAL '1 hour' GROUP BY second, host
$$);
SELECT result FROM flownode.execute('SHOW CREATE FLOW cpu_recent');
SELECT roundtrip('cpu_recent');
-- a flow made with create_flow shows its own text too
SELECT flownode.create_flow('cpu_hosts', 'cpu_hosts', 'SELECT DISTINCT host FROM gt_cpu', eval_interval => '1 day') > 0;
SELECT result FROM flownode.execute('SHOW CREATE FLOW cpu_hosts');
SELECT roundtrip('cpu_hosts');
-- after the source is renamed, the user's text names a table that is gone: the
-- statement shows the stored query, which follows the rename
ALTER TABLE gt_cpu RENAME TO gt_cpu_renamed;
SELECT result FROM flownode.execute($$SHOW CREATE FLOW "CPU per minute"$$);
SELECT roundtrip('CPU per minute');
SELECT * FROM flownode.execute($$DROP FLOW "CPU per minute"$$);
SELECT * FROM flownode.execute('DROP FLOW cpu_recent');
SELECT * FROM flownode.execute('DROP FLOW cpu_hosts');

-- 7. The catalog: what information_schema.flows shows, and the flow's state.
SELECT * FROM flownode.execute($$
CREATE FLOW cpu_state SINK TO cpu_state EVAL INTERVAL '1 hour' COMMENT 'state'
AS SELECT date_bin('1 minute'::INTERVAL, ts) AS minute, count(*) AS n FROM gt_cpu_renamed GROUP BY minute
$$);
INSERT INTO gt_cpu_renamed VALUES ('2024-01-01 00:00:10', 'a', 1), ('2024-01-01 00:05:10', 'a', 1);
SELECT flow_name, table_catalog, comment, eval_interval, expire_after, source_table_names, sink_table_name,
       options, state_size > 0 AS has_state, dirty_windows, dirty_ranges, record_rows, record_bytes > 0 AS recorded,
       created_time <= updated_time AS times, last_execution_time IS NOT NULL AS filled, clock
  FROM flownode.flow_info WHERE flow_name = 'cpu_state';
SELECT 'FLOW_FLUSHED' FROM flownode.execute($$ADMIN FLUSH_FLOW('cpu_state')$$);
SELECT state_size, dirty_windows, record_rows, last_execution_time IS NOT NULL AS ran
  FROM flownode.flow_info WHERE flow_name = 'cpu_state';
-- another role sees neither the flows nor their definitions
SELECT flow_id AS state_id FROM flownode.flows WHERE flow_name = 'cpu_state' \gset
CREATE ROLE gt_other;
SET ROLE gt_other;
SELECT count(*) AS visible FROM flownode.flow_info;
SELECT * FROM flownode.execute('SHOW FLOWS');
SELECT flownode.flow_definition(:state_id) IS NULL AS hidden;
SELECT * FROM flownode.execute('SHOW CREATE FLOW cpu_state');
SELECT * FROM flownode.execute('DROP FLOW cpu_state');
RESET ROLE;
DROP ROLE gt_other;
SELECT * FROM flownode.execute('DROP FLOW cpu_state');
DROP TABLE gt_cpu_renamed, cpu_1m, cpu_recent, cpu_hosts, cpu_state;
DROP FUNCTION roundtrip(text);

-- 8. Malformed statements: each error points at the offending token.
CREATE TABLE t (ts timestamptz NOT NULL, v int);
SELECT * FROM flownode.execute('');
SELECT * FROM flownode.execute('SELECT 1');
SELECT * FROM flownode.execute('CREATE TABLE x (a int)');
SELECT * FROM flownode.execute('CREATE FLOW');
SELECT * FROM flownode.execute('CREATE FLOW f');
SELECT * FROM flownode.execute('CREATE FLOW f SINK t AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW public.f SINK TO s AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO a.b.c.d AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO otherdb.public.s AS SELECT 1');
SELECT * FROM flownode.execute('CREATE OR FLOW f SINK TO s AS SELECT 1');
SELECT * FROM flownode.execute('CREATE OR REPLACE FLOW IF NOT EXISTS f SINK TO s AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW IF EXISTS f SINK TO s AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s EXPIRE AFTER 5 AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s EXPIRE AFTER ''banana'' AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s EXPIRE AFTER ''1 month'' AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s EXPIRE AFTER ''-1 hour'' AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s EVAL INTERVAL ''10 ms'' AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s EVAL INTERVAL ''1 s''::TEXT AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s EVAL INTERVAL INTERVAL AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s EVAL INTERVAL ''1 s'' EXPIRE AFTER ''1 h'' AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s COMMENT 42 AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s COMMENT ''unterminated AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s WITH defer_on_missing_source = true AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s WITH () AS SELECT 1');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s WITH (defer_on_missing_source = maybe) AS SELECT 1');
SELECT * FROM flownode.execute($$CREATE FLOW f SINK TO s WITH (defer_on_missing_source = 'true', defer_on_missing_source = 'false') AS SELECT 1$$);
SELECT * FROM flownode.execute($$CREATE FLOW f SINK TO s WITH (experimental_enable_incremental_read = 'true') AS SELECT 1$$);
SELECT * FROM flownode.execute($$CREATE FLOW f SINK TO s WITH ('ttl' = 'instant') AS SELECT 1$$);
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s AS');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s AS ;');
-- errors in the query point into the statement too
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s AS SELEC ts FROM t');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s AS SELECT date_bin(''1 minute''::INTERVAL, ts) AS w, count(nope) AS n FROM t GROUP BY w');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s AS SELECT date_bin(''1 minute''::INTERVAL, ts) AS w, now() AS at, count(*) AS n FROM t GROUP BY w');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s AS SELECT count(*) AS n FROM t');
SELECT * FROM flownode.execute('CREATE FLOW f SINK TO s AS SELECT date_bin(''1 minute''::INTERVAL, ts) AS w, count(*) AS n FROM t GROUP BY w; DROP TABLE t');
SELECT * FROM flownode.execute('DROP FLOW');
SELECT * FROM flownode.execute('DROP FLOW IF f');
SELECT * FROM flownode.execute('DROP FLOW f g');
SELECT * FROM flownode.execute('DROP FLOW nope');
SELECT * FROM flownode.execute('DROP TABLE t');
SELECT * FROM flownode.execute('ADMIN FLUSH_FLOW(f)');
SELECT * FROM flownode.execute($$ADMIN FLUSH_FLOW('nope')$$);
SELECT * FROM flownode.execute($$ADMIN FLUSH_FLOW('f') x$$);
SELECT * FROM flownode.execute($$ADMIN FLUSH_TABLE('t')$$);
SELECT * FROM flownode.execute('SHOW TABLES');
SELECT * FROM flownode.execute('SHOW FLOWS LIKE x');
SELECT * FROM flownode.execute('SHOW CREATE FLOW');
SELECT * FROM flownode.execute('SHOW CREATE FLOW nope');
SELECT * FROM flownode.execute('SHOW CREATE TABLE t');
-- nothing was left behind by any of these
SELECT count(*) AS flows, (SELECT count(*) FROM pg_class WHERE relname IN ('s', 'y', 'x')) AS tables
  FROM flownode.flows;
DROP TABLE t;
DROP FUNCTION gt_diff(text);
