-- flownode 0.3 -> 0.4 (ALTER EXTENSION flownode UPDATE): the flows view at a glance
-- (the counters, backfill progress and last run's duration moved to flow_info; one
-- current error, with its SQLSTATE; how late the last evaluation started), and the
-- run history (flownode.run_history, read through flownode.runs). The flows, their
-- ids, pending work and rights stay as they are; the workers go on.
\echo Use "ALTER EXTENSION flownode UPDATE" to load this file. \quit

DROP VIEW flownode.flow_info;
DROP VIEW flownode.flows;
DROP FUNCTION flownode.flow_status();

-- The update needs the 0.4 library: a server that still runs 0.3's (the package was
-- installed but the server, which preloads it, was not restarted) has no function
-- behind 0.4's flow_status. It stops here, and the update changes nothing.
DO $$
BEGIN
    CREATE FUNCTION flownode.flow_status(
        OUT flow_id bigint,
        OUT state text,
        OUT dirty_windows bigint,
        OUT dirty_ranges integer,
        OUT oldest_dirty_window timestamptz,
        OUT lag interval,
        OUT last_run_at timestamptz,
        OUT last_run_duration interval,
        OUT last_success_at timestamptz,
        OUT last_error text,
        OUT last_error_sqlstate text,
        OUT last_error_at timestamptz,
        OUT consecutive_failures integer,
        OUT runs bigint,
        OUT failures bigint,
        OUT rows_written bigint,
        OUT folded_refreshes bigint,
        OUT worker_pid integer,
        OUT last_start_delay interval,
        OUT backfill_windows_done bigint,
        OUT backfill_windows_total bigint,
        OUT marking_enabled boolean)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'flownode_flow_status_0_4'
    LANGUAGE C STABLE;
EXCEPTION WHEN undefined_function THEN
    RAISE EXCEPTION 'the flownode library loaded by this server is older than version 0.4'
        USING HINT = 'Restart the server so that it loads the flownode library just installed, then run ALTER EXTENSION flownode UPDATE again.';
END $$;
COMMENT ON FUNCTION flownode.flow_status() IS
'each flow''s state from shared memory and its catalog row (internal: read the flows and flow_info views)';

-- The hash naming a group in a key mark (a late row refreshes only the groups it
-- touched): the key values hashed as GROUP BY compares them, NULLs alike, in column
-- order (src/pgutil/key_hash.c). IMMUTABLE, so an index on
-- (flownode.key_hash(<keys>), <time column>) finds a window's rows of a few groups.
CREATE FUNCTION flownode.key_hash(VARIADIC "any")
RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_key_hash'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Key marks (docs/internals.md §3, *Key marks*): a late row into a closed window of
-- a flow whose groups are keyed by plain source columns marks the groups it touched
-- (window, flownode.key_hash of its keys) instead of the whole window. A committing
-- writer adds a row per group here (src/record/key_record.c); the flow's refresh
-- reads them, recomputes those groups and deletes the rows it read, all in one
-- snapshot, so a key mark is pending exactly until its groups are refreshed.
CREATE TABLE flownode.pending_keys (
    flow_id bigint NOT NULL,
    window_start bigint NOT NULL,
    window_end bigint NOT NULL,
    key_hash bigint NOT NULL,
    -- when the writer committed (its PRE_COMMIT): the flows view's lag
    committed_at timestamptz NOT NULL DEFAULT pg_catalog.now()
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
        autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 10000);
CREATE INDEX pending_keys_flow_idx ON flownode.pending_keys (flow_id);
REVOKE ALL ON flownode.pending_keys FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('flownode.pending_keys', '');
-- writers add their rows with heap inserts, which fire no trigger: an INSERT or
-- COPY is a restore's, whose rows the flows' workers are told of at commit (a
-- restore may load them after a flow's worker started and looked)
CREATE TRIGGER pending_keys_restored AFTER INSERT ON flownode.pending_keys
    FOR EACH STATEMENT EXECUTE FUNCTION flownode.pending_restored();

-- The WHEN clause of a key-marking flow's row triggers (src/marking/key_marks.c):
-- the flow, its time and key columns, and the whole row(s). Always false.
CREATE FUNCTION flownode.mark_keys(source oid, flow_id bigint, columns int2[], VARIADIC "rows" "any")
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_keys'
LANGUAGE C VOLATILE;

-- Its first half: marks the rows of open windows whole from their times (the time
-- column's values, one per row) and is true only when a row's window is closed, so
-- that mark_keys, which takes whole rows, sees only late rows. Marks only for a role
-- that may write the table, as mark_row.
CREATE FUNCTION flownode.mark_keys_open(source oid, flow_id bigint, VARIADIC times "any")
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_keys_open'
LANGUAGE C VOLATILE;

CREATE FUNCTION flownode.mark_keyed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'flownode_mark_keyed'
LANGUAGE C;

-- The run history: one row per run of a flow, as pg_cron's cron.job_run_details and
-- TimescaleDB's job_history keep theirs. kind: 'refresh' (a scheduled evaluation),
-- 'flush' (a refresh flush_flow asked for), 'repair' (refresh_flow's range),
-- 'backfill' (a background backfill's chunk), 'fill' (create_flow's fill). A
-- success is written in the run's own transaction, a failure in one of its own
-- after the run's rolled back (sqlstate and error set). The worker keeps
-- flownode.run_history_per_flow rows a flow, and a flow's rows go with it. Not in a
-- dump: they describe runs on this server, and a restored flow starts its own.
CREATE TABLE flownode.run_history (
    flow_id      bigint NOT NULL REFERENCES flownode.flow ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('refresh', 'flush', 'repair', 'backfill', 'fill')),
    started_at   timestamptz NOT NULL,
    duration     interval NOT NULL,
    windows      bigint,          -- the windows it refreshed (NULL: not counted)
    rows_read    bigint,          -- the source rows in them, as its take counted (NULL: not counted)
    rows_written bigint NOT NULL, -- sink rows inserted, updated or deleted
    folded       boolean NOT NULL,
    sqlstate     text,            -- NULL: it succeeded
    error        text
);
CREATE INDEX run_history_flow_idx ON flownode.run_history (flow_id, started_at);
COMMENT ON INDEX flownode.run_history_flow_idx IS
'a flow''s runs in time order: flownode.runs by flow, and the worker''s prune of the oldest';
REVOKE ALL ON flownode.run_history FROM PUBLIC;
COMMENT ON TABLE flownode.run_history IS
'one row per run of a flow (refresh, flush, repair, backfill, fill), kept to flownode.run_history_per_flow rows a flow: read it through flownode.runs';

-- Every flow you may see (a member of its owner), its catalog row and its state,
-- defined once for the views that show them: the state (waiting for its source, or
-- as its slot says), and the defaults for a flow flow_status has no row for (one
-- waiting for its source: no counters, no marking).
CREATE VIEW flownode.flow_runtime AS
SELECT f.flow_id,
       f.flow_name,
       f.owner::pg_catalog.regrole AS owner,
       f.source_table::pg_catalog.regclass AS source_table,
       f.sink_table::pg_catalog.regclass AS sink_table,
       f.time_column,
       f.window_expr,
       f.eval_interval,
       f.expire_after,
       f.comment,
       CASE WHEN f.source_table IS NULL THEN 'waiting_for_source'
            ELSE COALESCE(s.state, 'waiting_for_worker') END AS state,
       COALESCE(s.dirty_windows, 0) AS dirty_windows,
       COALESCE(s.dirty_ranges, 0) AS dirty_ranges,
       s.oldest_dirty_window,
       s.lag,
       s.last_run_at,
       s.last_run_duration,
       s.last_success_at,
       s.last_error,
       s.last_error_sqlstate,
       s.last_error_at,
       COALESCE(s.consecutive_failures, 0) AS consecutive_failures,
       COALESCE(s.runs, 0) AS runs,
       COALESCE(s.failures, 0) AS failures,
       COALESCE(s.rows_written, 0) AS rows_written,
       COALESCE(s.folded_refreshes, 0) AS folded_refreshes,
       s.worker_pid,
       s.last_start_delay,
       s.backfill_windows_done,
       s.backfill_windows_total,
       COALESCE(s.marking_enabled, false) AS marking_enabled
  FROM flownode.flow f
  LEFT JOIN flownode.flow_status() s ON s.flow_id = f.flow_id
 WHERE pg_catalog.pg_has_role(f.owner, 'MEMBER');
REVOKE ALL ON flownode.flow_runtime FROM PUBLIC;
COMMENT ON VIEW flownode.flow_runtime IS
'every flow you may see with its state, defined once for the flows and flow_info views (internal)';

-- On a flow server (docs/operations.md, "Flow servers"): why the flow's sink is
-- behind its publishers, for the flows view's replication column. NULL when no
-- subscription replicates into a table the flow reads (its source and dimensions, and
-- those of the flows it reads from) and for a flow the caller may not see; else one
-- sentence per such subscription, the worst first: failing, disabled, without apply
-- worker, copying a table, or streaming and how far it has applied.
CREATE FUNCTION flownode.flow_replication(flow_id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'flownode_flow_replication'
LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION flownode.flow_replication(bigint) IS
'on a flow server: what each subscription feeding the flow is doing (failing, disabled, no apply worker, copying, streaming), NULL when none feeds it (internal: read the flows view)';

-- The flows at a glance, for the roles that are members of their owner: what each
-- is, its state and whether its source's writes are marked, how far behind it is,
-- its last run and current error, the worker serving it and how late its last
-- evaluation started, and its chains. The counters and a backfill's progress are in
-- flow_info; past runs, their durations and errors in flownode.runs.
CREATE VIEW flownode.flows AS
SELECT r.flow_id,
       r.flow_name,
       r.source_table,
       r.sink_table,
       r.time_column,
       r.window_expr,
       r.eval_interval,
       r.owner,
       r.state,
       r.marking_enabled,
       r.dirty_windows,
       r.lag,
       r.last_run_at,
       r.last_success_at,
       r.last_error,
       r.last_error_sqlstate,
       r.last_error_at,
       r.consecutive_failures,
       r.worker_pid,
       r.last_start_delay,
       -- chains of flows: the flows whose sink this flow reads (its source, or a
       -- partition under it), and the flows that read its sink; only flows of roles
       -- you are a member of are named
       ARRAY(SELECT u.flow_name FROM flownode.flow u
              WHERE (u.sink_table = r.source_table
                     OR u.sink_table IN (SELECT p.relid FROM pg_catalog.pg_partition_tree(r.source_table) p))
                AND pg_catalog.pg_has_role(u.owner, 'MEMBER')
              ORDER BY u.flow_name) AS upstream_flows,
       ARRAY(SELECT d.flow_name FROM flownode.flow d
              WHERE (d.source_table = r.sink_table
                     OR r.sink_table IN (SELECT p.relid FROM pg_catalog.pg_partition_tree(d.source_table) p))
                AND pg_catalog.pg_has_role(d.owner, 'MEMBER')
              ORDER BY d.flow_name) AS downstream_flows,
       -- on a flow server: why the sink is behind its publishers (NULL: no
       -- subscription feeds the flow)
       flownode.flow_replication(r.flow_id) AS replication
  FROM flownode.flow_runtime r;
GRANT SELECT ON flownode.flows TO PUBLIC;
COMMENT ON VIEW flownode.flows IS
'the flows of roles you are a member of, at a glance: identity, state, lag, last run and error, worker, start delay, chains, the subscriptions feeding it';

-- What GreptimeDB's information_schema.flows shows, for the flows of roles you are a
-- member of: the definition, the options, the times, the source, and the flow's
-- state: its dirty windows and ranges in shared memory and its durable record. Then
-- what the flows view leaves out: the counters since the server started (runs,
-- failures, rows written, folded refreshes), the oldest dirty window, a background
-- backfill's progress, and the last run's duration.
CREATE VIEW flownode.flow_info AS
SELECT r.flow_name,
       r.flow_id,
       r.dirty_ranges::bigint * 16 + COALESCE(p.record_bytes, 0) AS state_size,
       pg_catalog.current_database()::text AS table_catalog,
       flownode.flow_definition(r.flow_id) AS flow_definition,
       r.comment,
       r.expire_after,
       r.eval_interval,
       CASE WHEN r.source_table IS NULL THEN '{}'::oid[] ELSE ARRAY[r.source_table::pg_catalog.oid] END AS source_table_ids,
       (SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||)
               pg_catalog.quote_ident(c.relname)
          FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE c.oid = r.source_table) AS source_table_names,
       COALESCE((SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||)
                        pg_catalog.quote_ident(c.relname)
                   FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                  WHERE c.oid = r.sink_table), f.sink_name) AS sink_table_name,
       f.options,
       f.created_at AS created_time,
       f.updated_at AS updated_time,
       r.last_run_at AS last_execution_time,
       r.state,
       r.dirty_windows,
       r.dirty_ranges,
       COALESCE(p.record_rows, 0) AS record_rows,
       COALESCE(p.record_bytes, 0) AS record_bytes,
       k.evaluated_at AS clock,
       r.runs,
       r.failures,
       r.rows_written,
       r.folded_refreshes,
       r.oldest_dirty_window,
       r.backfill_windows_done,
       r.backfill_windows_total,
       r.last_run_duration
  FROM flownode.flow_runtime r
  JOIN flownode.flow f ON f.flow_id = r.flow_id
  -- the durable record: the windows of flownode.pending and the key marks
  LEFT JOIN (SELECT d.flow_id, pg_catalog.count(*) AS record_rows,
                    pg_catalog.sum(d.size)::bigint AS record_bytes
               FROM (SELECT e.flow_id, pg_catalog.pg_column_size(e.*) AS size FROM flownode.pending e
                     UNION ALL
                     SELECT g.flow_id, pg_catalog.pg_column_size(g.*) FROM flownode.pending_keys g) d
              GROUP BY d.flow_id) p ON p.flow_id = r.flow_id
  LEFT JOIN flownode.flow_clock k ON k.flow_id = r.flow_id;
GRANT SELECT ON flownode.flow_info TO PUBLIC;
COMMENT ON VIEW flownode.flow_info IS
'the flows of roles you are a member of in detail: GreptimeDB''s information_schema.flows, then counters, backfill progress and the last run''s duration';

-- The run history of the flows of roles you are a member of, newest first when
-- ordered by started_at DESC: succeeded is false for a failure, whose SQLSTATE and
-- message are in sqlstate and error.
CREATE VIEW flownode.runs AS
SELECT f.flow_name,
       h.flow_id,
       h.kind,
       h.started_at,
       h.duration,
       h.windows,
       h.rows_read,
       h.rows_written,
       h.folded,
       h.sqlstate IS NULL AS succeeded,
       h.sqlstate,
       h.error
  FROM flownode.run_history h
  JOIN flownode.flow f ON f.flow_id = h.flow_id
 WHERE pg_catalog.pg_has_role(f.owner, 'MEMBER');
GRANT SELECT ON flownode.runs TO PUBLIC;
COMMENT ON VIEW flownode.runs IS
'one row per run of the flows of roles you are a member of: kind, start, duration, windows, rows read and written, folded, and a failure''s SQLSTATE and error';

-- wait_for_publishers: begin
-- Flow servers (docs/operations.md, "Flow servers"): on a server whose flows read
-- tables that logical replication fills, returns once every change committed on the
-- publishers of the subscriptions feeding the flow (its source and dimensions, and
-- those of the flows it reads from) before their WAL position now (or the position
-- positions names per subscription: {"subscription": "pg_lsn"}) is applied here and
-- flushed into the sink, as flush_flow(flow_name, cascade => true) does. It connects
-- to each publisher with the subscription's conninfo, so only roles granted it may.
CREATE FUNCTION flownode.wait_for_publishers(flow_name text, timeout interval DEFAULT '1 minute',
                                             positions jsonb DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_wait_for_publishers'
LANGUAGE C VOLATILE;
REVOKE EXECUTE ON FUNCTION flownode.wait_for_publishers(text, interval, jsonb) FROM PUBLIC;
COMMENT ON FUNCTION flownode.wait_for_publishers(text, interval, jsonb) IS
'on a flow server: returns once every change committed on the publishers feeding the flow before their current WAL position (or the positions passed per subscription) is applied here and in the sink (flush_flow with cascade); fails naming a subscription that is disabled, failing, without apply worker or late past the timeout';
-- wait_for_publishers: end

-- time_bucket: begin
-- flownode.time_bucket: TimescaleDB's bucketing function, with its signatures,
-- volatility and results (docs/reference.md, "flownode.time_bucket"). A flow may group by it:
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
-- first_last: begin
-- flownode.first / flownode.last: TimescaleDB's first(value, time) and last(value,
-- time) (docs/reference.md, "flownode.first, flownode.last"): the value at the
-- smallest / largest time, rows with a NULL time left out; rows of one time ordered
-- by their value, so that the answer is a function of the rows. IMMUTABLE support
-- functions, which a flow's determinism check accepts.
CREATE FUNCTION flownode.first_sfunc(internal, anyelement, "any") RETURNS internal
AS 'MODULE_PATHNAME', 'flownode_first_sfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION flownode.last_sfunc(internal, anyelement, "any") RETURNS internal
AS 'MODULE_PATHNAME', 'flownode_last_sfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION flownode.first_last_final(internal, anyelement, "any") RETURNS anyelement
AS 'MODULE_PATHNAME', 'flownode_first_last_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE flownode.first(value anyelement, "time" "any") (
    SFUNC = flownode.first_sfunc, STYPE = internal,
    FINALFUNC = flownode.first_last_final, FINALFUNC_EXTRA, PARALLEL = SAFE);
CREATE AGGREGATE flownode.last(value anyelement, "time" "any") (
    SFUNC = flownode.last_sfunc, STYPE = internal,
    FINALFUNC = flownode.first_last_final, FINALFUNC_EXTRA, PARALLEL = SAFE);
COMMENT ON FUNCTION flownode.first_sfunc(internal, anyelement, "any") IS
'Transition function of flownode.first: keeps the row of the smallest time (then value).';
COMMENT ON FUNCTION flownode.last_sfunc(internal, anyelement, "any") IS
'Transition function of flownode.last: keeps the row of the largest time (then value).';
COMMENT ON FUNCTION flownode.first_last_final(internal, anyelement, "any") IS
'Final function of flownode.first and flownode.last: the value kept, NULL when no row had a time.';
COMMENT ON AGGREGATE flownode.first(anyelement, "any") IS
'TimescaleDB''s first(value, time): the value at the smallest time; ties broken by the smallest value.';
COMMENT ON AGGREGATE flownode.last(anyelement, "any") IS
'TimescaleDB''s last(value, time): the value at the largest time; ties broken by the largest value.';
-- first_last: end

-- flownode.execute also runs TimescaleDB's continuous-aggregate statements
COMMENT ON FUNCTION flownode.execute(text) IS
'runs one of GreptimeDB''s flow statements (CREATE [OR REPLACE] FLOW, DROP FLOW, ADMIN FLUSH_FLOW, SHOW FLOWS, SHOW CREATE FLOW) or of TimescaleDB''s continuous-aggregate statements (CREATE, DROP and ALTER MATERIALIZED VIEW, CALL refresh_continuous_aggregate, SELECT add_continuous_aggregate_policy and remove_continuous_aggregate_policy)';

-- read_flow also takes a read view's row type (the query's columns)
COMMENT ON FUNCTION flownode.read_flow(anyelement, timestamptz, timestamptz) IS
'the flow''s current answer: read_flow(NULL::sink_table) in the sink''s row type, or read_flow(NULL::read_view) in a create_read_view view''s (the query''s columns, no hidden key columns); optionally only the windows overlapping [from, to)';
