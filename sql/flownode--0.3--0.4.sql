-- flownode 0.3 -> 0.4 (ALTER EXTENSION flownode UPDATE).
\echo Use "ALTER EXTENSION flownode UPDATE" to load this file. \quit

-- time_bucket: begin
-- flownode.time_bucket: TimescaleDB's bucketing function, with its signatures,
-- volatility and results (docs/user-guide.md, Windows). A flow may group by it:
-- widths without months over a column without a time zone are date_bin windows,
-- month widths and the timezone form are windows computed by this very function
-- (window_kind 'time_bucket', its offset kept in window_unit).
ALTER TABLE flownode.flow DROP CONSTRAINT flow_window_kind_check;
ALTER TABLE flownode.flow ADD CONSTRAINT flow_window_kind_check
    CHECK (window_kind IN ('date_bin', 'date_trunc', 'time_bucket'));

CREATE FUNCTION flownode.time_bucket(bucket_width interval, ts timestamp) RETURNS timestamp
AS 'MODULE_PATHNAME', 'flownode_time_bucket_ts' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width interval, ts timestamptz) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'flownode_time_bucket_ts' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width interval, ts date) RETURNS date
AS 'MODULE_PATHNAME', 'flownode_time_bucket_date' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width interval, ts timestamp, origin timestamp) RETURNS timestamp
AS 'MODULE_PATHNAME', 'flownode_time_bucket_ts' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width interval, ts timestamptz, origin timestamptz) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'flownode_time_bucket_ts' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width interval, ts date, origin date) RETURNS date
AS 'MODULE_PATHNAME', 'flownode_time_bucket_date' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width interval, ts timestamp, "offset" interval) RETURNS timestamp
AS 'MODULE_PATHNAME', 'flownode_time_bucket_ts_offset' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width interval, ts timestamptz, "offset" interval) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'flownode_time_bucket_tstz_offset' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width interval, ts date, "offset" interval) RETURNS date
AS 'MODULE_PATHNAME', 'flownode_time_bucket_date_offset' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- IMMUTABLE as TimescaleDB declares it (a zone's rules are taken as fixed); not
-- STRICT: a NULL origin or offset is the default
CREATE FUNCTION flownode.time_bucket(bucket_width interval, ts timestamptz, timezone text,
                                     origin timestamptz DEFAULT NULL, "offset" interval DEFAULT NULL)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'flownode_time_bucket_tz' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width smallint, ts smallint) RETURNS smallint
AS 'MODULE_PATHNAME', 'flownode_time_bucket_int2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width integer, ts integer) RETURNS integer
AS 'MODULE_PATHNAME', 'flownode_time_bucket_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width bigint, ts bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_time_bucket_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width smallint, ts smallint, "offset" smallint) RETURNS smallint
AS 'MODULE_PATHNAME', 'flownode_time_bucket_int2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width integer, ts integer, "offset" integer) RETURNS integer
AS 'MODULE_PATHNAME', 'flownode_time_bucket_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION flownode.time_bucket(bucket_width bigint, ts bigint, "offset" bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_time_bucket_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- time_bucket: end
