-- Invariant 1 (docs/internals.md §2): a flow refreshes a window only when rows of it
-- are written, so its query must give the same answer for the same rows at any time.
-- create_flow refuses what can change without a write to the source (the clock, the
-- session, the catalogs, other tables, settings a flow does not pin), and accepts
-- what depends only on the rows and the settings every refresh pins (TimeZone,
-- DateStyle, IntervalStyle, extra_float_digits, search_path).
SET timezone = 'UTC';
CREATE TABLE d (ts timestamptz NOT NULL, host text, v int, note text);
INSERT INTO d SELECT timestamptz '2024-03-01' + i * interval '7 minutes', 'h' || (i % 3), i, i::text
  FROM generate_series(0, 399) i;

-- The clock. A sliding filter would keep rows the query no longer returns: now() has a
-- meaning only as the scheduled time of an evaluation (with eval_interval), compared
-- with the time column (sql/greptime_now.sql); anywhere else it is refused.
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n
      FROM d WHERE ts > now() - interval '10 seconds' GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE ts::date < current_date GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE ts < CURRENT_TIMESTAMP GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, max(localtimestamp - ts::timestamp) AS age FROM d GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE ts < transaction_timestamp() GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE ts < statement_timestamp() GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, max(age(ts)) AS oldest FROM d GROUP BY 1$$);
-- clock_timestamp() is VOLATILE
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE ts < clock_timestamp() GROUP BY 1$$);
-- text read as a date accepts 'today' and 'now': the cast follows the clock
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE ts > note::timestamptz GROUP BY 1$$);

-- The session and the settings a flow does not pin.
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, current_user AS who, count(*) AS n FROM d GROUP BY 1, 2$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) FILTER (WHERE host = session_user) AS n FROM d GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE v < current_setting('my.limit')::int GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, current_database() AS db, count(*) AS n FROM d GROUP BY 1, 2$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, current_schema AS s, count(*) AS n FROM d GROUP BY 1, 2$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, version() AS server, count(*) AS n FROM d GROUP BY 1, 2$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE pg_has_role(host, 'MEMBER') GROUP BY 1$$);
-- text search with the default configuration (default_text_search_config)
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE to_tsvector(note) @@ 'x'::tsquery GROUP BY 1$$);
-- to_char: localized names (lc_time), a locale's decimal point (lc_numeric), a template that is not a constant
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, to_char(ts, 'TMMonth') AS month, count(*) AS n FROM d GROUP BY 1, 2$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, to_char(sum(v), '999G999D9') AS total FROM d GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, max(to_char(ts, note)) AS x FROM d GROUP BY 1$$);

-- The catalogs: names resolved at each refresh, labels that can be renamed.
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE to_regclass(note) IS NULL GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE note::regclass IS NOT NULL GROUP BY 1$$);
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE dm (ts timestamptz NOT NULL, m mood);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, m::text AS mood, count(*) AS n FROM dm GROUP BY 1, 2$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, json_agg(m) AS moods FROM dm GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, string_agg('mood ' || m, ',') AS moods FROM dm GROUP BY 1$$);
-- comparing enums follows their order, which never changes: accepted
SELECT flownode.create_flow('det_mood', 'det_mood',
  $$SELECT date_trunc('day', ts) AS w, m, count(*) FILTER (WHERE m > 'sad') AS n FROM dm GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.drop_flow('det_mood');

-- Other tables, through a function that is not IMMUTABLE: it goes stale when they change.
CREATE TABLE regions (host text PRIMARY KEY, region text);
CREATE FUNCTION region_of(h text) RETURNS text LANGUAGE sql STABLE
  AS $$SELECT region FROM regions WHERE host = h$$;
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, region_of(host) AS region, count(*) AS n FROM d GROUP BY 1, 2$$);
-- ... called through an operator
CREATE FUNCTION same_region(a text, b text) RETURNS boolean LANGUAGE sql STABLE
  AS $$SELECT region_of(a) = region_of(b)$$;
CREATE OPERATOR ~~~ (LEFTARG = text, RIGHTARG = text, FUNCTION = same_region);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d WHERE host ~~~ 'h1' GROUP BY 1$$);
-- ... or as the transition function of an aggregate (the aggregate itself is marked IMMUTABLE)
CREATE FUNCTION count_in_region(acc bigint, h text) RETURNS bigint LANGUAGE sql STABLE
  AS $$SELECT acc + (region_of(h) IS NOT NULL)::int$$;
CREATE AGGREGATE regional_count(text) (SFUNC = count_in_region, STYPE = bigint, INITCOND = '0');
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, regional_count(host) AS n FROM d GROUP BY 1$$);
-- an IMMUTABLE user function is taken at its word
CREATE FUNCTION short_host(h text) RETURNS text LANGUAGE sql IMMUTABLE AS $$SELECT upper(h)$$;
SELECT flownode.create_flow('det_short', 'det_short',
  $$SELECT date_trunc('day', ts) AS w, short_host(host) AS h, count(*) AS n FROM d GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
SELECT flownode.drop_flow('det_short');

-- Values that change without a write to the row, and samples.
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, max(xmin::text) AS x FROM d GROUP BY 1$$);
SELECT flownode.create_flow('det', 'det_sink',
  $$SELECT date_trunc('day', ts) AS w, count(*) AS n FROM d TABLESAMPLE BERNOULLI (50) GROUP BY 1$$);

-- Nothing was created by any of these.
SELECT count(*) AS flows FROM flownode.flows;
SELECT count(*) AS sinks FROM pg_class WHERE relname = 'det_sink';

-- Accepted: what depends only on the rows and the pinned settings. Days and text in
-- the flow's time zone, to_char with a fixed template, json over rows holding
-- timestamps, text built from numbers and dates, intervals and date arithmetic.
SELECT flownode.create_flow('det_ok', 'det_ok',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS w, ts::date AS day, host,
           to_char(min(ts), 'YYYY-MM-DD HH24:MI TZ') AS first_seen,
           to_char(sum(v), 'FM999,999.0') AS total,
           json_agg(d ORDER BY ts)::text AS raw,
           jsonb_object_agg(v, ts) AS by_v,
           string_agg(host || ':' || v || '@' || ts, ',' ORDER BY ts) AS trail,
           max(ts - date_trunc('day', ts)) AS latest_in_day,
           count(*) FILTER (WHERE ts < ts::date + interval '12 hours') AS mornings
      FROM d GROUP BY 1, 2, 3$$,
  eval_interval => '1 hour') > 0;
-- the text in the sink was written under the flow's pinned DateStyle (ISO), not this
-- session's (Postgres); flow_diff, which runs the query here, needs the same
SELECT w, day, host, first_seen, total, raw::json -> 0 ->> 'ts' AS first_ts, trail, latest_in_day, mornings
  FROM det_ok ORDER BY w, host LIMIT 2;
SET datestyle = 'ISO, YMD';
SELECT count(*) > 0 AS filled, flow_diff('det_ok') FROM det_ok;
RESET datestyle;
-- exact after writes and a flush, with the session in another time zone: every
-- refresh runs in the flow's zone (UTC), and flow_diff runs the query in UTC too
INSERT INTO d VALUES ('2024-03-01 00:30', 'h9', 1000, 'x'), ('2024-03-02 23:59', 'h1', 5, 'y');
UPDATE d SET v = v + 1 WHERE ts < '2024-03-01 01:00';
DELETE FROM d WHERE ts >= '2024-03-02 10:00' AND ts < '2024-03-02 11:00';
SET timezone = 'Asia/Tokyo';
SELECT flownode.flush_flow('det_ok') > 0 AS refreshed;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SELECT flow_diff('det_ok');
RESET datestyle;
SELECT first_seen, total FROM det_ok WHERE host = 'h9';

SELECT flownode.drop_flow('det_ok');
DROP TABLE d, dm, regions, det_ok, det_mood, det_short;
DROP AGGREGATE regional_count(text);
DROP OPERATOR ~~~ (text, text);
DROP FUNCTION count_in_region(bigint, text), same_region(text, text), region_of(text), short_host(text);
DROP TYPE mood;
