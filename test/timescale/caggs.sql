-- caggs.sql: a corpus of TimescaleDB's continuous aggregates, for
-- test/tap/032_timescale_corpus.pl. The definitions are copied from TimescaleDB's own
-- test suite (https://github.com/timescale/timescaledb, tsl/test/sql/cagg*.sql and
-- tsl/test/sql/include/cagg_rewrites_load.sql, Timescale License; each block names
-- its file), as TimescaleDB accepts them: a few dozen, taken in file order from
-- every file read, not chosen by whether flownode takes them. Changed only where the
-- corpus needs it: the hypertables are plain tables (create_hypertable and
-- set_integer_now_func calls removed), each file's tables live in a schema of their
-- own, and a view whose name another file already took gets a prefix (noted).
--
-- Markers (one a line): "-- @schema NAME" starts a file's tables, created with
-- search_path NAME; "-- @cagg VIEW FILE" a definition, run as written through
-- flownode.execute with search_path NAME, public; "-- @writes" the writes made
-- after every definition exists (late rows, updates of values and of times,
-- deletes, dimension writes).

-- @schema multi
CREATE TABLE continuous_agg_test(timeval integer, col1 integer, col2 integer);
INSERT INTO continuous_agg_test VALUES
    (10, - 4, 1), (11, - 3, 5), (12, - 3, 7), (13, - 3, 9), (14,-4, 11),
    (15, -4, 22), (16, -4, 23);
create table foo (a integer, b integer, c integer);
INSERT into foo values( 1 , 10 , 20), ( 1 , 11 , 20), ( 1 , 12 , 20), ( 1 , 13 , 20), ( 1 , 14 , 20),
  ( 5 , 14 , 20), ( 5 , 15 , 20), ( 5 , 16 , 20), ( 20 , 16 , 20), ( 20 , 26 , 20), ( 20 , 16 , 20),
  ( 21 , 15 , 30), ( 21 , 15 , 30), ( 21 , 15 , 30), ( 45 , 14 , 70);

-- @cagg cagg_1 tsl/test/sql/cagg_multi.sql
CREATE MATERIALIZED VIEW cagg_1( timed, cnt )
WITH (timescaledb.continuous,
      timescaledb.materialized_only=true)
AS
    SELECT time_bucket( 2, timeval), COUNT(col1)
    FROM continuous_agg_test
    GROUP BY 1 WITH NO DATA;

-- @cagg cagg_2 tsl/test/sql/cagg_multi.sql
CREATE MATERIALIZED VIEW cagg_2( timed, grp, maxval)
WITH (timescaledb.continuous,
      timescaledb.materialized_only=true)
AS
    SELECT time_bucket(2, timeval), col1, max(col2)
    FROM continuous_agg_test
    GROUP BY 1, 2 WITH NO DATA;

-- @cagg cagg_2b tsl/test/sql/cagg_multi.sql (the second cagg_2 of the file)
CREATE MATERIALIZED VIEW cagg_2b( timed, maxval)
WITH (timescaledb.continuous,
      timescaledb.materialized_only = true)
AS
    SELECT time_bucket(2, timeval), max(col2)
    FROM continuous_agg_test
    GROUP BY 1 WITH NO DATA;

-- @cagg mat_m1 tsl/test/sql/cagg_multi.sql
CREATE MATERIALIZED VIEW mat_m1(a, countb)
WITH (timescaledb.continuous, timescaledb.materialized_only=false)
AS
SELECT time_bucket(10, a), count(*)
FROM foo
GROUP BY time_bucket(10, a) WITH NO DATA;

-- @cagg mat_m2 tsl/test/sql/cagg_multi.sql
CREATE MATERIALIZED VIEW mat_m2(a, countb)
WITH (timescaledb.continuous, timescaledb.materialized_only=false)
AS
SELECT time_bucket(5, a), count(*)
FROM foo
GROUP BY time_bucket(5, a) WITH NO DATA;

-- @writes
INSERT INTO continuous_agg_test VALUES (10, -4, 10), (11, - 3, 50), (11, - 3, 70), (10, - 4, 10), (3, -9, 1);
UPDATE continuous_agg_test SET col2 = col2 * 3 WHERE timeval = 14;
UPDATE continuous_agg_test SET timeval = timeval + 7 WHERE timeval = 12;
DELETE FROM continuous_agg_test WHERE timeval = 16;
INSERT INTO foo VALUES (2, 1, 1), (46, 1, 1);
UPDATE foo SET a = a + 10 WHERE a = 5;
DELETE FROM foo WHERE a = 45;

-- @schema query
CREATE TABLE conditions (
      timec        TIMESTAMPTZ       NOT NULL,
      location    TEXT              NOT NULL,
      temperature DOUBLE PRECISION  NULL,
      humidity    DOUBLE PRECISION  NULL
    );
insert into conditions values ( '2018-01-01 09:20:00-08', 'SFO', 55, 45);
insert into conditions values ( '2018-01-02 09:30:00-08', 'por', 100, 100);
insert into conditions values ( '2018-01-02 09:20:00-08', 'SFO', 65, 45);
insert into conditions values ( '2018-01-02 09:10:00-08', 'NYC', 65, 45);
insert into conditions values ( '2018-11-01 09:20:00-08', 'NYC', 45, 30);
insert into conditions values ( '2018-11-01 10:40:00-08', 'NYC', 55, 35);
insert into conditions values ( '2018-11-01 11:50:00-08', 'NYC', 65, 40);
insert into conditions values ( '2018-11-01 12:10:00-08', 'NYC', 75, 45);
insert into conditions values ( '2018-11-01 13:10:00-08', 'NYC', 85, 50);
insert into conditions values ( '2018-11-02 09:20:00-08', 'NYC', 10, 10);
insert into conditions values ( '2018-11-02 10:30:00-08', 'NYC', 20, 15);
insert into conditions values ( '2018-11-02 11:40:00-08', 'NYC', null, null);
insert into conditions values ( '2018-11-03 09:50:00-08', 'NYC', null, null);

-- @cagg q_mat_m1 tsl/test/sql/cagg_query.sql (mat_m1 there)
create materialized view q_mat_m1( location, timec, minl, sumt , sumh)
WITH (timescaledb.continuous, timescaledb.materialized_only=false)
as
select location, time_bucket('1day', timec), min(location), sum(temperature),sum(humidity)
from conditions
group by time_bucket('1day', timec), location WITH NO DATA;

-- @cagg q_mat_m2 tsl/test/sql/cagg_query.sql (mat_m2 there)
create materialized view q_mat_m2(location, timec, firsth, lasth, maxtemp, mintemp)
WITH (timescaledb.continuous, timescaledb.materialized_only=false)
as
select location, time_bucket('1day', timec), first(humidity, timec), last(humidity, timec), max(temperature), min(temperature)
from conditions
group by time_bucket('1day', timec), location WITH NO DATA;

-- @writes
insert into conditions values ( '2018-12-02 20:10:00-08', 'SFO', 55, 45);
insert into conditions values ( '2018-12-02 21:20:00-08', 'SFO', 65, 45);
insert into conditions values ( '2018-11-01 23:30:00-08', 'NYC', 1, 2);
UPDATE conditions SET temperature = temperature + 0.25 WHERE location = 'NYC' AND timec < '2018-11-02';
UPDATE conditions SET timec = timec + interval '1 day' WHERE location = 'por';
DELETE FROM conditions WHERE timec = '2018-01-01 09:20:00-08';

-- @schema monthly
CREATE TABLE conditions(
  day DATE NOT NULL,
  city text NOT NULL,
  temperature INT NOT NULL);
INSERT INTO conditions (day, city, temperature) VALUES
  ('2021-06-14', 'Moscow', 26), ('2021-06-15', 'Moscow', 22), ('2021-06-16', 'Moscow', 24),
  ('2021-06-17', 'Moscow', 24), ('2021-06-18', 'Moscow', 27), ('2021-06-19', 'Moscow', 28),
  ('2021-06-20', 'Moscow', 30), ('2021-06-21', 'Moscow', 31), ('2021-06-22', 'Moscow', 34),
  ('2021-06-23', 'Moscow', 34), ('2021-06-24', 'Moscow', 34), ('2021-06-25', 'Moscow', 32),
  ('2021-06-26', 'Moscow', 32), ('2021-06-27', 'Moscow', 31);
CREATE TABLE conditions_large(
  day DATE NOT NULL,
  temperature INT NOT NULL);
INSERT INTO conditions_large(day, temperature)
SELECT ts, date_part('month', ts)*100 + date_part('day', ts)
FROM generate_series('2010-01-01' :: date, '2012-01-01' :: date - interval '1 day', '1 day') as ts;

-- @cagg conditions_summary tsl/test/sql/cagg_monthly.sql
CREATE MATERIALIZED VIEW conditions_summary
WITH (timescaledb.continuous, timescaledb.materialized_only=true) AS
SELECT city,
   timescaledb_experimental.time_bucket_ng('1 month', day) AS bucket,
   MIN(temperature),
   MAX(temperature)
FROM conditions
GROUP BY city, bucket
WITH NO DATA;

-- @cagg conditions_large_2m tsl/test/sql/cagg_monthly.sql
CREATE MATERIALIZED VIEW conditions_large_2m
WITH (timescaledb.continuous) AS
SELECT
   timescaledb_experimental.time_bucket_ng('2 months', day) AS bucket,
   MIN(temperature),
   MAX(temperature)
FROM conditions_large
GROUP BY bucket;

-- @writes
INSERT INTO conditions (day, city, temperature)
SELECT ts :: date, city, row_number() OVER ()
FROM generate_series('2021-07-01' :: date, '2021-08-31', '1 day') as ts,
     unnest(array['Moscow', 'Berlin']) as city;
UPDATE conditions SET temperature = -temperature WHERE day = '2021-06-20';
DELETE FROM conditions_large WHERE day BETWEEN '2011-03-01' AND '2011-03-10';

-- @schema joins
CREATE TABLE conditions(
  day TIMESTAMPTZ NOT NULL,
  city text NOT NULL,
  temperature INT NOT NULL,
device_id int NOT NULL);
INSERT INTO conditions (day, city, temperature, device_id) VALUES
  ('2021-06-14', 'Moscow', 26,1), ('2021-06-15', 'Berlin', 22,2), ('2021-06-16', 'Stockholm', 24,3),
  ('2021-06-17', 'London', 24,4), ('2021-06-18', 'London', 27,4), ('2021-06-19', 'Moscow', 28,4),
  ('2021-06-20', 'Moscow', 30,1), ('2021-06-21', 'Berlin', 31,1), ('2021-06-22', 'Stockholm', 34,1),
  ('2021-06-23', 'Stockholm', 34,2), ('2021-06-24', 'Moscow', 34,2), ('2021-06-25', 'London', 32,3),
  ('2021-06-26', 'Moscow', 32,3), ('2021-06-27', 'Moscow', 31,3);
CREATE TABLE devices ( device_id int not null, name text, location text);
INSERT INTO devices values (1, 'thermo_1', 'Moscow'), (2, 'thermo_2', 'Berlin'),(3, 'thermo_3', 'London'),(4, 'thermo_4', 'Stockholm');

-- @cagg cagg_realtime tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg_realtime
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   name
FROM conditions, devices
WHERE conditions.device_id = devices.device_id
GROUP BY name, bucket
ORDER BY bucket;

-- @cagg cagg_realtime_join tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg_realtime_join
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   name
FROM conditions JOIN devices
ON conditions.device_id = devices.device_id
GROUP BY name, bucket
ORDER BY bucket;

-- @cagg cagg_realtime_using tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg_realtime_using
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   name
FROM conditions JOIN devices
USING (device_id)
GROUP BY name, bucket
ORDER BY bucket;

-- @cagg cagg_realtime_reorder tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg_realtime_reorder
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   name
FROM devices, conditions
WHERE conditions.device_id = devices.device_id
GROUP BY name, bucket
ORDER BY bucket;

-- @cagg cagg tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg
WITH (timescaledb.continuous, timescaledb.materialized_only = TRUE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   name,
   devices.device_id AS thermo_id
FROM conditions, devices
WHERE conditions.device_id = devices.device_id
GROUP BY bucket, name, thermo_id
ORDER BY bucket;

-- @cagg cagg_using tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg_using
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   name
FROM conditions JOIN devices USING (device_id)
GROUP BY name, bucket
ORDER BY bucket;

-- @cagg j_cagg_more_conds tsl/test/sql/cagg_joins.sql (cagg_more_conds there)
CREATE MATERIALIZED VIEW j_cagg_more_conds
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   name
FROM conditions JOIN devices ON conditions.device_id = devices.device_id
WHERE conditions.city = devices.location AND
      conditions.temperature > 28
GROUP BY name, bucket;

-- @cagg cagg_more_conds_using tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg_more_conds_using
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   name
FROM conditions JOIN devices USING (device_id)
WHERE conditions.city = devices.location AND
      conditions.temperature > 28
GROUP BY name, bucket;

-- @cagg cagg_on_cagg tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg_on_cagg
WITH (timescaledb.continuous, timescaledb.materialized_only=true) AS
SELECT time_bucket(INTERVAL '1 day', bucket) AS bucket,
       SUM(avg) AS temperature
FROM cagg, devices
WHERE devices.device_id = cagg.thermo_id
GROUP BY 1;

-- @cagg cagg_ordered_2 tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg_ordered_2
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   name
FROM conditions JOIN devices ON conditions.device_id = devices.device_id
WHERE conditions.city = devices.location AND
      conditions.temperature > 28
GROUP BY name, bucket
ORDER BY name DESC;

-- @cagg cagg_cagg tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg_cagg
WITH (timescaledb.continuous, timescaledb.materialized_only = TRUE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   devices.device_id device_id,
   name
FROM conditions, devices
WHERE conditions.device_id = devices.device_id
GROUP BY name, bucket, devices.device_id;

-- @cagg cagg_nested tsl/test/sql/cagg_joins.sql
CREATE MATERIALIZED VIEW cagg_nested
WITH (timescaledb.continuous, timescaledb.materialized_only = TRUE) AS
SELECT time_bucket(INTERVAL '1 day', cagg.bucket) AS bucket,
   devices.name
FROM cagg_cagg cagg, devices
WHERE cagg.device_id = devices.device_id
GROUP BY 1,2;

-- @writes
INSERT INTO conditions (day, city, temperature, device_id) VALUES
  ('2021-06-30', 'Moscow', 28, 3), ('2021-06-15 12:00', 'Berlin', 40, 2), ('2021-06-22 23:00', 'Stockholm', 29, 4);
UPDATE conditions SET temperature = temperature + 3 WHERE city = 'Moscow';
UPDATE conditions SET day = day + interval '2 days' WHERE city = 'London';
DELETE FROM conditions WHERE day = '2021-06-21';
UPDATE devices SET name = 'thermo_x' WHERE device_id = 3;
UPDATE devices SET location = 'Moscow' WHERE device_id = 4;

-- @schema rewrites
CREATE TABLE conditions(
  day TIMESTAMPTZ NOT NULL,
  city text NOT NULL,
  temperature INT NOT NULL,
  device_id int NOT NULL
);
INSERT INTO conditions (day, city, temperature, device_id) VALUES
  ('2021-06-14', 'Moscow', 26,1), ('2021-06-15', 'Berlin', 22,2), ('2021-06-16', 'Stockholm', 24,3),
  ('2021-06-17', 'London', 24,4), ('2021-06-18', 'London', 27,4), ('2021-06-19', 'Moscow', 28,4),
  ('2021-06-20', 'Moscow', 30,1), ('2021-06-21', 'Berlin', 31,1), ('2021-06-22', 'Stockholm', 34,1),
  ('2021-06-23', 'Stockholm', 34,2), ('2021-06-24', 'Moscow', 34,2), ('2021-06-25', 'London', 32,3),
  ('2021-06-26', 'Moscow', 32,3), ('2021-06-27', 'Moscow', 31,3);
CREATE TABLE devices ( device_id int not null, name text, location text);
INSERT INTO devices values (1, 'thermo_1', 'Moscow'), (2, 'thermo_2', 'Berlin'),(3, 'thermo_3', 'London'),(4, 'thermo_4', 'Stockholm');
CREATE TABLE location (location_id INTEGER, name TEXT);
INSERT INTO location VALUES (1, 'Moscow'), (2, 'Berlin'), (3, 'London'), (4, 'Stockholm');
CREATE VIEW devices_view AS SELECT * FROM devices;

-- @cagg cagg1 tsl/test/sql/include/cagg_rewrites_load.sql
CREATE MATERIALIZED VIEW cagg1
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature) AS avg,
   device_id
FROM conditions
GROUP BY device_id, bucket
ORDER BY bucket;

-- @cagg cagg1_tz tsl/test/sql/include/cagg_rewrites_load.sql
CREATE MATERIALIZED VIEW cagg1_tz
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day, 'Australia/Sydney') AS bucket,
   AVG(temperature) AS avg,
   device_id
FROM conditions
GROUP BY device_id, bucket
ORDER BY bucket;

-- @cagg cagg2 tsl/test/sql/include/cagg_rewrites_load.sql
CREATE MATERIALIZED VIEW cagg2
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '2 days', day) AS bucket,
   AVG(temperature),
   count(device_id)
FROM conditions
GROUP BY bucket;

-- @cagg cagg3 tsl/test/sql/include/cagg_rewrites_load.sql
CREATE MATERIALIZED VIEW cagg3
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '3 days', day) AS bucket,
   AVG(temperature) AS avg,
   count(device_id)
FROM conditions
GROUP BY bucket
HAVING count(device_id) > 1;

-- @cagg cagg_join tsl/test/sql/include/cagg_rewrites_load.sql
CREATE MATERIALIZED VIEW cagg_join
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   name
FROM conditions, devices
WHERE conditions.device_id = devices.device_id
GROUP BY name, bucket
ORDER BY bucket;

-- @cagg cagg_more_conds tsl/test/sql/include/cagg_rewrites_load.sql
CREATE MATERIALIZED VIEW cagg_more_conds
WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   COUNT(location_id),
   devices.name,
   devices.device_id * 2
FROM conditions LEFT JOIN devices ON conditions.device_id = devices.device_id
JOIN location ON conditions.city = location.name
WHERE location_id > 1 AND
      conditions.temperature > 28
GROUP BY devices.name, bucket, devices.device_id;

-- @cagg cagg_on_cagg1 tsl/test/sql/include/cagg_rewrites_load.sql
CREATE MATERIALIZED VIEW cagg_on_cagg1
WITH (timescaledb.continuous, timescaledb.materialized_only=FALSE) AS
SELECT time_bucket(INTERVAL '1 day', bucket) AS bucket,
       SUM(avg) AS temperature
FROM cagg1, devices
WHERE devices.device_id = cagg1.device_id
GROUP BY 1;

-- @cagg cagg_view tsl/test/sql/include/cagg_rewrites_load.sql
CREATE MATERIALIZED VIEW cagg_view
WITH (timescaledb.continuous, timescaledb.materialized_only=FALSE) AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket,
   AVG(temperature),
   devices_view.device_id,
   name
FROM conditions, devices_view
WHERE conditions.device_id = devices_view.device_id
GROUP BY name, bucket, devices_view.device_id;

-- @cagg cagg_lateral tsl/test/sql/include/cagg_rewrites_load.sql
CREATE MATERIALIZED VIEW cagg_lateral WITH (timescaledb.continuous, timescaledb.materialized_only = FALSE)
AS
SELECT time_bucket(INTERVAL '1 day', day) AS bucket, q.name, avg(temperature)  from conditions,
LATERAL (SELECT * FROM devices WHERE devices.device_id = conditions.device_id) q
GROUP BY bucket, q.name;

-- @writes
INSERT INTO conditions (day, city, temperature, device_id) VALUES
  ('2021-06-30', 'Moscow', 28, 3), ('2021-06-16 06:00', 'Berlin', 35, 2), ('2021-06-24 21:00', 'London', 29, 1);
UPDATE conditions SET temperature = temperature * 2 WHERE device_id = 4;
UPDATE conditions SET day = day - interval '30 hours' WHERE city = 'Stockholm';
DELETE FROM conditions WHERE day = '2021-06-26';
UPDATE devices SET name = 'thermo_y' WHERE device_id = 2;
INSERT INTO location VALUES (5, 'London');

-- @schema usage
CREATE TABLE device_readings (
      observation_time  TIMESTAMPTZ       NOT NULL,
      device_id         TEXT              NOT NULL,
      metric            DOUBLE PRECISION  NOT NULL,
      PRIMARY KEY(observation_time, device_id)
);
INSERT INTO device_readings
SELECT ts, 'device_1', (EXTRACT(EPOCH FROM ts)) from generate_series('2018-12-01 00:00'::timestamp, '2018-12-31 00:00'::timestamp, '30 minutes') ts;
INSERT INTO device_readings
SELECT ts, 'device_2', (EXTRACT(EPOCH FROM ts)) from generate_series('2018-12-01 00:00'::timestamp, '2018-12-31 00:00'::timestamp, '30 minutes') ts;
CREATE TABLE device_readings_int(time int, value float);
INSERT INTO device_readings_int SELECT i, i*10 FROM generate_series(10,40,10) AS g(i);
CREATE TABLE whatever(time TIMESTAMPTZ NOT NULL, metric INTEGER);
INSERT INTO whatever SELECT t, extract(hour FROM t)::int FROM generate_series('2020-01-01'::timestamptz, '2020-01-03', '17 minutes') t;
CREATE TABLE metrics(time timestamptz, device TEXT, value float);
INSERT INTO metrics SELECT generate_series('1999-12-20'::timestamptz,'2000-02-01'::timestamptz,'12 day'::interval), 'dev1', 0.25;

-- @cagg device_summary tsl/test/sql/cagg_usage.sql
CREATE MATERIALIZED VIEW device_summary
WITH (timescaledb.continuous, timescaledb.materialized_only=true) --This flag is what makes the view continuous
AS
SELECT
  time_bucket('1 hour', observation_time) as bucket, --time_bucket is required
  device_id,
  avg(metric) as metric_avg, --We can use regular aggregates
  max(metric)-min(metric) as metric_spread --We can also use expressions on aggregates and constants
FROM
  device_readings
GROUP BY bucket, device_id WITH NO DATA; --We have to group by the bucket column, but can also add other group-by columns

-- @cagg device_summary_2 tsl/test/sql/cagg_usage.sql (the second device_summary)
CREATE MATERIALIZED VIEW device_summary_2
WITH (timescaledb.continuous, timescaledb.materialized_only=true)
AS
SELECT
  time_bucket('1 hour', observation_time) as bucket,
  min(observation_time AT TIME ZONE 'EST') as min_time, --note the explict timezone
  device_id,
  avg(metric) as metric_avg,
  max(metric)-min(metric) as metric_spread
FROM
  device_readings
GROUP BY bucket, device_id WITH NO DATA;

-- @cagg device_summary_3 tsl/test/sql/cagg_usage.sql (the third device_summary)
CREATE MATERIALIZED VIEW device_summary_3
WITH (timescaledb.continuous, timescaledb.materialized_only=true)
AS
SELECT
  time_bucket('1 hour', observation_time) as bucket,
  min(observation_time) as min_time, --this is a TIMESTAMPTZ
  device_id,
  avg(metric) as metric_avg,
  max(metric)-min(metric) as metric_spread
FROM
  device_readings
GROUP BY bucket, device_id WITH DATA;

-- @cagg device_summary_4 tsl/test/sql/cagg_usage.sql (the fourth device_summary)
CREATE MATERIALIZED VIEW device_summary_4
WITH (timescaledb.continuous, timescaledb.materialized_only=true)
AS
SELECT
  time_bucket('1 hour', observation_time) as bucket,
  min(observation_time::timestamp) as min_time, --note the cast to localtime
  device_id,
  avg(metric) as metric_avg,
  max(metric)-min(metric) as metric_spread
FROM
  device_readings
GROUP BY bucket, device_id WITH NO DATA;

-- @cagg device_readings_mat_only tsl/test/sql/cagg_usage.sql
CREATE MATERIALIZED VIEW device_readings_mat_only
  WITH (timescaledb.continuous, timescaledb.materialized_only=true)
AS
  SELECT time_bucket(10,time), avg(value) FROM device_readings_int GROUP BY 1 WITH NO DATA;

-- @cagg device_readings_jit tsl/test/sql/cagg_usage.sql
CREATE MATERIALIZED VIEW device_readings_jit
  WITH (timescaledb.continuous, timescaledb.materialized_only=false)
AS
  SELECT time_bucket(10,time), avg(value) FROM device_readings_int GROUP BY 1 WITH NO DATA;

-- @cagg whatever_summary tsl/test/sql/cagg_usage.sql
CREATE MATERIALIZED VIEW whatever_summary WITH (timescaledb.continuous) AS
SELECT time_bucket('1 hour', time) AS bucket, avg(metric)
  FROM whatever GROUP BY bucket WITH NO DATA;

-- @cagg u_cagg1 tsl/test/sql/cagg_usage.sql (cagg1 there)
CREATE MATERIALIZED VIEW u_cagg1 WITH (timescaledb.continuous,timescaledb.materialized_only=true) AS
SELECT time_bucket('1 day', time, 'PST8PDT') FROM metrics GROUP BY 1;

-- @cagg u_cagg2 tsl/test/sql/cagg_usage.sql (cagg2 there)
CREATE MATERIALIZED VIEW u_cagg2 WITH (timescaledb.continuous,timescaledb.materialized_only=true) AS
SELECT time_bucket('1 month', time, 'PST8PDT') FROM metrics GROUP BY 1;

-- @cagg u_cagg3 tsl/test/sql/cagg_usage.sql (cagg3 there)
CREATE MATERIALIZED VIEW u_cagg3 WITH (timescaledb.continuous,timescaledb.materialized_only=true) AS
SELECT time_bucket('1 month', time, 'PST8PDT', '2000-01-01'::timestamptz) FROM metrics GROUP BY 1;

-- @cagg u_cagg4 tsl/test/sql/cagg_usage.sql (cagg4 there)
CREATE MATERIALIZED VIEW u_cagg4 WITH (timescaledb.continuous,timescaledb.materialized_only=true) AS
SELECT time_bucket('1 month', time, 'PST8PDT', "offset":= INTERVAL '15 day') FROM metrics GROUP BY 1;

-- @writes
INSERT INTO device_readings VALUES ('Sun Dec 30 13:01:00 2018 PST', 'device_1', 1.0), ('2018-12-02 03:07', 'device_3', 5);
UPDATE device_readings SET metric = metric / 2 WHERE device_id = 'device_2' AND observation_time < '2018-12-03';
UPDATE device_readings SET observation_time = observation_time + interval '17 minutes' WHERE device_id = 'device_1' AND observation_time BETWEEN '2018-12-10' AND '2018-12-11';
DELETE FROM device_readings WHERE observation_time > '2018-12-29' AND device_id = 'device_2';
INSERT INTO device_readings_int SELECT i, i*10 FROM generate_series(50,60,10) AS g(i);
UPDATE device_readings_int SET time = 11 WHERE time = 30;
INSERT INTO whatever VALUES ('2020-01-01 05:30', 1000);
DELETE FROM whatever WHERE time BETWEEN '2020-01-02 00:00' AND '2020-01-02 03:00';
INSERT INTO metrics VALUES ('2000-03-05', 'dev2', 1), ('1999-12-31 23:30-08', 'dev1', 2);
UPDATE metrics SET time = time + interval '20 days' WHERE time = '2000-01-13';

-- @schema invalidation
CREATE TABLE conditions (time bigint NOT NULL, device int, temp float);
CREATE TABLE measurements (time int NOT NULL, device int, temp float);
INSERT INTO conditions
SELECT t, ceil(abs(timestamp_hash(to_timestamp(t)::timestamp))%4)::int,
       abs(timestamp_hash(to_timestamp(t)::timestamp))%40
FROM generate_series(1, 100, 1) t;
INSERT INTO measurements SELECT * FROM conditions;
CREATE table threshold_test (time int, value int);
INSERT INTO threshold_test SELECT v, v FROM generate_series(1, 10) v;

-- @cagg cond_10 tsl/test/sql/cagg_invalidation.sql
CREATE MATERIALIZED VIEW cond_10
WITH (timescaledb.continuous,
      timescaledb.materialized_only=true)
AS
SELECT time_bucket(BIGINT '10', time) AS bucket, device, avg(temp) AS avg_temp
FROM conditions
GROUP BY 1,2 WITH NO DATA;

-- @cagg cond_20 tsl/test/sql/cagg_invalidation.sql
CREATE MATERIALIZED VIEW cond_20
WITH (timescaledb.continuous,
      timescaledb.materialized_only=true)
AS
SELECT time_bucket(BIGINT '20', time) AS bucket, device, avg(temp) AS avg_temp
FROM conditions
GROUP BY 1,2 WITH NO DATA;

-- @cagg measure_10 tsl/test/sql/cagg_invalidation.sql
CREATE MATERIALIZED VIEW measure_10
WITH (timescaledb.continuous,
      timescaledb.materialized_only=true)
AS
SELECT time_bucket(10, time) AS bucket, device, avg(temp) AS avg_temp
FROM measurements
GROUP BY 1,2 WITH NO DATA;

-- @cagg cond_1 tsl/test/sql/cagg_invalidation.sql
CREATE MATERIALIZED VIEW cond_1
WITH (timescaledb.continuous,
      timescaledb.materialized_only=true)
AS
SELECT time_bucket(BIGINT '1', time) AS bucket, device, avg(temp) AS avg_temp
FROM conditions
GROUP BY 1,2 WITH NO DATA;

-- @cagg thresh_2 tsl/test/sql/cagg_invalidation.sql
CREATE MATERIALIZED VIEW thresh_2
WITH (timescaledb.continuous,
      timescaledb.materialized_only=true)
AS
SELECT time_bucket(2, time) AS bucket, max(value) AS max
FROM threshold_test
GROUP BY 1 WITH NO DATA;

-- @writes
INSERT INTO conditions VALUES (10, 4, 23.7), (10, 5, 23.8), (19, 3, 23.6), (60, 3, 23.7), (70, 4, 23.7);
INSERT INTO measurements VALUES (20, 4, 23.7), (30, 5, 23.8), (80, 3, 23.6);
UPDATE conditions SET temp = temp + 1 WHERE device = 1;
UPDATE conditions SET time = time + 25 WHERE time BETWEEN 40 AND 45;
DELETE FROM conditions WHERE time BETWEEN 90 AND 95;
DELETE FROM measurements WHERE device = 2;
INSERT INTO threshold_test VALUES (3, 100), (50, 1);
