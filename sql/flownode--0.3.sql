-- flownode 0.3: continuous aggregation for PostgreSQL.
\echo Use "CREATE EXTENSION flownode" to load this file. \quit

-- The registry of flows (GreptimeDB's BatchingEngine map). Written only by
-- create_flow/drop_flow; users read it through the flows view. Tables and the owner
-- are regclass and regrole: pg_dump writes them as names, which a restore reads back
-- as the new database's OIDs (docs/internals.md §9).
CREATE TABLE flownode.flow (
    flow_id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    flow_name      text NOT NULL UNIQUE,
    owner          pg_catalog.regrole NOT NULL,
    source_table   pg_catalog.regclass, -- NULL while the flow waits for its source
    sink_table     pg_catalog.regclass, -- (defer_on_missing_source, flownode.execute)
    time_column    name,
    time_attnum    smallint,        -- this database's attnum of time_column: found again by binding
    window_expr    text,
    window_kind    text CHECK (window_kind IN ('date_bin', 'date_trunc')),
    window_stride  interval,
    window_origin  bigint,
    window_unit    text,
    window_zone    text,
    with_time_zone boolean,
    query          text,            -- deparsed, every name schema-qualified (NULL while waiting)
    user_query     text NOT NULL,   -- as the user wrote it
    timezone       text NOT NULL,   -- TimeZone the query is evaluated in
    eval_interval  interval,
    expire_after   interval,
    comment        text,
    created_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- GreptimeDB compatibility (flownode.execute, docs/user-guide.md "Coming from
    -- GreptimeDB"): user_query is in this dialect; the WITH options as given; when the
    -- definition last changed (CREATE OR REPLACE, a rename it follows, its start
    -- after waiting); and, while it waits for its source, the sink as written and the
    -- search_path the names are read with
    dialect        text NOT NULL DEFAULT 'postgres' CHECK (dialect IN ('postgres', 'greptimedb')),
    options        jsonb NOT NULL DEFAULT '{}',
    updated_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    sink_name      text,
    search_path    text,
    CONSTRAINT flow_waiting_check CHECK ((source_table IS NULL) = (query IS NULL)
                                         AND (source_table IS NULL) = (sink_table IS NULL)
                                         AND (source_table IS NOT NULL OR sink_name IS NOT NULL)),
    -- pause_flow/resume_flow: a paused flow records its marks and refreshes nothing
    paused         boolean NOT NULL DEFAULT false,
    -- backfill => 'background': the windows [backfill_from, backfill_to) the worker
    -- still fills from backfill_next on, oldest first (NULL once filled)
    backfill_from  bigint,
    backfill_next  bigint,
    backfill_to    bigint,
    -- how the time column becomes the window's timestamp: NULL (it is a timestamp
    -- column), 'date', or an integer epoch: 'epoch' (to_timestamp(col)),
    -- 'epoch/1000.0' (to_timestamp(col / 1000.0), the divisor as written),
    -- 'epoch::float8/1000' (to_timestamp(col::float8 / 1000))
    time_input     text
);
CREATE INDEX flow_source_idx ON flownode.flow (source_table);
REVOKE ALL ON flownode.flow FROM PUBLIC;
GRANT USAGE ON SCHEMA flownode TO PUBLIC;

-- The flows bound to this database's tables: their marking triggers exist here, in
-- the cluster of that system identifier. Not part of a dump: the flows a restore
-- brings back are unbound ('restored') until the restore builds their sink's key, or
-- refresh_flow binds them. pg_upgrade keeps the rows but not the (internal)
-- triggers, in a cluster of another system identifier: unbound there too.
CREATE TABLE flownode.flow_binding (
    flow_id bigint PRIMARY KEY REFERENCES flownode.flow ON DELETE CASCADE,
    system_identifier bigint NOT NULL
);
REVOKE ALL ON flownode.flow_binding FROM PUBLIC;

-- The durable record of pending work (docs/internals.md §4, invariant 4): each committing writer adds one
-- row per flow it dirtied, in its own transaction, holding its merged windows;
-- a refresh removes the windows it covered in its own transaction. Shared memory is
-- rebuilt from it whenever a flow's worker starts.
CREATE TABLE flownode.pending (
    flow_id bigint NOT NULL,
    ranges  int8multirange NOT NULL,
    -- when the writer committed (its PRE_COMMIT): the flows view's lag after a restart
    committed_at timestamptz NOT NULL DEFAULT pg_catalog.now()
) WITH (autovacuum_vacuum_scale_factor = 0.0, autovacuum_vacuum_threshold = 1000,
        autovacuum_vacuum_insert_threshold = 10000);
-- a writer into windows scattered over time records hundreds of ranges at once
-- (kilobytes, compressed in its commit): lz4 does that at a fraction of pglz's cost;
-- a server built without lz4 keeps pglz
DO $$
BEGIN
    ALTER TABLE flownode.pending ALTER COLUMN ranges SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN NULL;
END $$;
-- and keeps them in the row (compressed) rather than in a TOAST table, which would
-- cost each such commit two more heap and index inserts; only a record too large
-- for a page even compressed goes out of line
ALTER TABLE flownode.pending ALTER COLUMN ranges SET STORAGE MAIN;
-- a refresh reads and trims only its own flow's rows, however many other flows have
CREATE INDEX pending_flow_idx ON flownode.pending (flow_id);
REVOKE ALL ON flownode.pending FROM PUBLIC;

-- The dimension tables a flow joins (docs/internals.md §3, Dimension tables): one row
-- per equality `fact_column = dimension_column` that joins a dimension to the flow's
-- source (its fact table). Written by create_flow, removed with the flow; a write
-- to a dimension marks the windows of the source rows whose fact_attnum holds the
-- changed rows' dim_attnum (under operator).
CREATE TABLE flownode.flow_dimension (
    flow_id     bigint NOT NULL,
    dimension   oid NOT NULL,
    dim_attnum  smallint NOT NULL,
    fact_attnum smallint NOT NULL,
    operator    oid NOT NULL
);
CREATE INDEX flow_dimension_flow_idx ON flownode.flow_dimension (flow_id);
CREATE INDEX flow_dimension_dimension_idx ON flownode.flow_dimension (dimension);
REVOKE ALL ON flownode.flow_dimension FROM PUBLIC;

-- The triggers create_flow puts on a dimension table, per join column: AFTER ROW
-- triggers for INSERT, UPDATE and DELETE whose WHEN clause collects the row's old
-- and new value of that column (mark_dimension_row, always false, so their function
-- mark_dimension never runs), and a TRUNCATE statement trigger. The windows are
-- looked up when the writer commits. mark_dimension_row collects nothing for a role
-- that may not write the table.
CREATE FUNCTION flownode.mark_dimension_row(dimension oid, key_column int2, old_key anyelement,
                                            new_key anyelement)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_dimension_row'
LANGUAGE C VOLATILE;

CREATE FUNCTION flownode.mark_dimension()
RETURNS trigger
AS 'MODULE_PATHNAME', 'flownode_mark_dimension'
LANGUAGE C;

CREATE FUNCTION flownode.mark_dimension_truncate()
RETURNS trigger
AS 'MODULE_PATHNAME', 'flownode_mark_dimension_truncate'
LANGUAGE C;

-- The clock of a flow that compares its time column with now() (docs/internals.md
-- §6): the scheduled time its sink follows. Each evaluation marks the windows whose
-- rows' answer changed between it and its own scheduled time, then moves it, in the
-- refresh's transaction; a worker that starts again (after a restart or a crash)
-- marks from here.
CREATE TABLE flownode.flow_clock (
    flow_id      bigint PRIMARY KEY REFERENCES flownode.flow ON DELETE CASCADE,
    evaluated_at timestamptz NOT NULL
);
REVOKE ALL ON flownode.flow_clock FROM PUBLIC;

-- pg_dump writes the flows, their ids' sequence, their pending windows and their
-- clocks (the record, the clocks and the sinks come from one snapshot: every window
-- not in the record was exact there, at its flow's clock), so that a restore brings
-- them back without refilling the sinks.
SELECT pg_catalog.pg_extension_config_dump('flownode.flow', '');
SELECT pg_catalog.pg_extension_config_dump('flownode.flow_flow_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('flownode.pending', '');
SELECT pg_catalog.pg_extension_config_dump('flownode.flow_clock', '');

-- Writers record with heap inserts, which fire no trigger: an INSERT or COPY into
-- flownode.pending is a restore's, whose rows the bound flows' workers read again.
CREATE FUNCTION flownode.pending_restored()
RETURNS trigger
AS 'MODULE_PATHNAME', 'flownode_pending_restored'
LANGUAGE C;
CREATE TRIGGER pending_restored AFTER INSERT ON flownode.pending
    FOR EACH STATEMENT EXECUTE FUNCTION flownode.pending_restored();

CREATE FUNCTION flownode.create_flow(
    flow_name text,
    sink_table text,
    query text,
    eval_interval interval DEFAULT NULL,
    expire_after interval DEFAULT NULL,
    comment text DEFAULT NULL,
    if_not_exists boolean DEFAULT false,
    or_replace boolean DEFAULT false,
    backfill text DEFAULT 'now')
RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_create_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.create_flow(text, text, text, interval, interval, text, boolean, boolean, text) IS
'creates a flow: validates the query, creates the sink if absent, installs the source triggers, fills the sink (backfill => ''background'': its worker does, in chunks), starts the worker';
-- Who may create flows (docs/user-guide.md, Privileges): each flow takes one of the
-- server's flownode.max_flows slots and a worker process, so creating one needs
-- EXECUTE on create_flow, which a superuser grants; flownode.execute's CREATE FLOW
-- asks for the same right. Managing one's own flows needs no grant.
REVOKE EXECUTE ON FUNCTION flownode.create_flow(text, text, text, interval, interval, text, boolean, boolean, text)
    FROM PUBLIC;

-- The caps on flows (flownode.max_flows_per_database and flownode.max_flows_per_role)
-- that apply to this session, NULL where there is none, and the counts create_flow
-- checks them against: the flows of this database, and those the current user owns.
CREATE FUNCTION flownode.flow_caps(
    OUT database_flows bigint,
    OUT max_flows_per_database integer,
    OUT role_flows bigint,
    OUT max_flows_per_role integer)
RETURNS record
AS 'MODULE_PATHNAME', 'flownode_flow_caps'
LANGUAGE C STABLE;
COMMENT ON FUNCTION flownode.flow_caps() IS
'the caps on flows that apply to this session (NULL: none), with the flows of this database and those the current user owns';

CREATE FUNCTION flownode.drop_flow(flow_name text, if_exists boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'flownode_drop_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.drop_flow(text, boolean) IS
'stops the flow''s worker and removes the flow and its triggers; the sink table stays';

CREATE FUNCTION flownode.flush_flow(flow_name text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_flush_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.flush_flow(text) IS
'returns once every change committed before the call is in the sink; returns the number of windows refreshed';

-- flush_flow(flow_name, cascade): with cascade => true, the flows it reads from
-- (a chain of flows) are flushed first, bottom up. An overload rather than a new
-- parameter of flush_flow(text): that function stays as it was, with its grants.
CREATE FUNCTION flownode.flush_flow(flow_name text, cascade boolean)
RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_flush_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.flush_flow(text, boolean) IS
'flush_flow, and with cascade => true every flow it reads from first, bottom up: returns once every change committed before the call is in the sink; returns the number of windows refreshed by all of them';

CREATE FUNCTION flownode.refresh_flow(flow_name text, "from" timestamptz DEFAULT NULL,
                                      "to" timestamptz DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_refresh_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.refresh_flow(text, timestamptz, timestamptz) IS
'recomputes every window of the flow that overlaps [from, to) (NULL: unbounded), windows past expire_after included; returns the windows between the first and last row there';

-- Exact real-time reads (docs/user-guide.md §3, read_flow): in one snapshot, the
-- sink's rows of the clean windows and the flow's query over the dirty ones.
CREATE FUNCTION flownode.read_flow(sink anyelement, "from" timestamptz DEFAULT NULL,
                                   "to" timestamptz DEFAULT NULL)
RETURNS SETOF anyelement
AS 'MODULE_PATHNAME', 'flownode_read_flow'
LANGUAGE C STABLE;
COMMENT ON FUNCTION flownode.read_flow(anyelement, timestamptz, timestamptz) IS
'the flow''s current answer in the sink''s row type: read_flow(NULL::sink_table), optionally only the windows overlapping [from, to)';

CREATE FUNCTION flownode.create_read_view(flow_name text, view_name text)
RETURNS regclass
AS 'MODULE_PATHNAME', 'flownode_create_read_view'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.create_read_view(text, text) IS
'creates a view over read_flow of the flow''s sink; it goes with the sink and with drop_flow';

-- steering a flow in place: the flow keeps its id, its sink and its pending work
CREATE FUNCTION flownode.alter_flow(
    flow_name text,
    eval_interval interval DEFAULT NULL,
    expire_after interval DEFAULT NULL,
    comment text DEFAULT NULL,
    new_name text DEFAULT NULL,
    reset_eval_interval boolean DEFAULT false,
    reset_expire_after boolean DEFAULT false,
    reset_comment boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'flownode_alter_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.alter_flow(text, interval, interval, text, text, boolean, boolean, boolean) IS
'changes what is named (reset_*: back to none) and nothing else; the worker follows when the transaction commits';

CREATE FUNCTION flownode.pause_flow(flow_name text)
RETURNS void
AS 'MODULE_PATHNAME', 'flownode_pause_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.pause_flow(text) IS
'stops refreshing the flow (its writes are still recorded) until resume_flow, across restarts';

CREATE FUNCTION flownode.resume_flow(flow_name text)
RETURNS void
AS 'MODULE_PATHNAME', 'flownode_resume_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.resume_flow(text) IS
'resumes a paused flow: it catches up on what was written meanwhile';

-- The triggers that create_flow installs on a source table: AFTER ROW triggers for
-- INSERT, UPDATE and DELETE whose WHEN clause marks the row's window (mark_row /
-- mark_row_removed, always false: no trigger event is ever queued, so their
-- functions mark_insert/mark_dirty never run), and a TRUNCATE statement trigger.
-- mark_row marks only for a role that may write the table: a direct call by anyone
-- else does nothing.
CREATE FUNCTION flownode.mark_row(source oid, time_column int2, ts timestamptz)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_row'
LANGUAGE C VOLATILE;

CREATE FUNCTION flownode.mark_row(source oid, time_column int2, ts timestamp)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_row'
LANGUAGE C VOLATILE;

CREATE FUNCTION flownode.mark_row_removed(source oid, time_column int2, old_ts timestamptz, new_ts timestamptz)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_row_removed'
LANGUAGE C VOLATILE;

CREATE FUNCTION flownode.mark_row_removed(source oid, time_column int2, old_ts timestamp, new_ts timestamp)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_row_removed'
LANGUAGE C VOLATILE;

-- a date time column and an integer epoch column (of any integer type, read as
-- bigint) are marked through their own overloads: their value is converted to the
-- window's timestamp as the flow's query converts it (a date is never cast in the
-- writer's time zone)
CREATE FUNCTION flownode.mark_row(source oid, time_column int2, ts date)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_row'
LANGUAGE C VOLATILE;

CREATE FUNCTION flownode.mark_row(source oid, time_column int2, ts bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_row'
LANGUAGE C VOLATILE;

CREATE FUNCTION flownode.mark_row_removed(source oid, time_column int2, old_ts date, new_ts date)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_row_removed'
LANGUAGE C VOLATILE;

CREATE FUNCTION flownode.mark_row_removed(source oid, time_column int2, old_ts bigint, new_ts bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_mark_row_removed'
LANGUAGE C VOLATILE;

-- The filter of a refresh that reads a source without an index on its time column
-- (the table once, each row looked up in the refresh's ranges [lo[i], hi[i])):
-- faster than `ts <@ multirange` (src/query/range_filter.c). Callable by anyone.
CREATE FUNCTION flownode.in_ranges(ts timestamptz, lo timestamptz[], hi timestamptz[])
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_in_ranges'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION flownode.in_ranges(ts timestamp, lo timestamp[], hi timestamp[])
RETURNS boolean
AS 'MODULE_PATHNAME', 'flownode_in_ranges'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;


CREATE FUNCTION flownode.mark_dirty()
RETURNS trigger
AS 'MODULE_PATHNAME', 'flownode_mark_dirty'
LANGUAGE C;

CREATE FUNCTION flownode.mark_insert()
RETURNS trigger
AS 'MODULE_PATHNAME', 'flownode_mark_insert'
LANGUAGE C;

CREATE FUNCTION flownode.mark_truncate()
RETURNS trigger
AS 'MODULE_PATHNAME', 'flownode_mark_truncate'
LANGUAGE C;

CREATE FUNCTION flownode.flow_status(
    OUT flow_id bigint,
    OUT state text,
    OUT dirty_windows bigint,
    OUT last_run_at timestamptz,
    OUT last_run_duration interval,
    OUT last_error text,
    OUT runs bigint,
    OUT failures bigint,
    OUT rows_written bigint,
    OUT worker_pid integer,
    OUT last_error_at timestamptz,
    OUT consecutive_failures integer,
    OUT last_failure text,
    OUT last_failure_at timestamptz,
    OUT dirty_ranges integer,
    OUT lag interval,
    OUT oldest_dirty_window timestamptz,
    OUT last_success_at timestamptz,
    OUT backfill_windows_done bigint,
    OUT backfill_windows_total bigint,
    OUT folded_refreshes bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flownode_flow_status'
LANGUAGE C STABLE;

CREATE VIEW flownode.flows AS
SELECT f.flow_id,
       f.flow_name,
       f.source_table::pg_catalog.regclass AS source_table,
       f.sink_table::pg_catalog.regclass AS sink_table,
       f.time_column,
       f.window_expr,
       f.eval_interval,
       f.expire_after,
       f.comment,
       f.owner::pg_catalog.regrole AS owner,
       CASE WHEN f.source_table IS NULL THEN 'waiting_for_source'
            ELSE COALESCE(s.state, 'waiting_for_worker') END AS state,
       COALESCE(s.dirty_windows, 0) AS dirty_windows,
       s.last_run_at,
       s.last_run_duration,
       s.last_error,
       COALESCE(s.runs, 0) AS runs,
       COALESCE(s.failures, 0) AS failures,
       COALESCE(s.rows_written, 0) AS rows_written,
       s.last_error_at,
       COALESCE(s.consecutive_failures, 0) AS consecutive_failures,
       s.worker_pid,
       s.last_failure,
       s.last_failure_at,
       -- every marking trigger of the source (and of its partitions) fires, in
       -- every replication role
       (SELECT pg_catalog.count(*) > 0 AND pg_catalog.bool_and(t.tgenabled = 'A')
          FROM pg_catalog.pg_trigger t
         WHERE (t.tgrelid = f.source_table
                OR t.tgrelid IN (SELECT p.relid FROM pg_catalog.pg_partition_tree(f.source_table) p))
           AND t.tgfoid IN ('flownode.mark_insert()'::pg_catalog.regprocedure,
                            'flownode.mark_dirty()'::pg_catalog.regprocedure,
                            'flownode.mark_truncate()'::pg_catalog.regprocedure)) AS marking_enabled,
       s.lag,
       s.oldest_dirty_window,
       s.last_success_at,
       s.backfill_windows_done,
       s.backfill_windows_total,
       -- refreshes of the open window that folded only its new rows in
       COALESCE(s.folded_refreshes, 0) AS folded_refreshes,
       -- chains of flows: the flows whose sink this flow reads (its source, or a
       -- partition under it), and the flows that read its sink; only flows of roles
       -- you are a member of are named
       ARRAY(SELECT u.flow_name FROM flownode.flow u
              WHERE (u.sink_table = f.source_table
                     OR u.sink_table IN (SELECT p.relid FROM pg_catalog.pg_partition_tree(f.source_table) p))
                AND pg_catalog.pg_has_role(u.owner, 'MEMBER')
              ORDER BY u.flow_name) AS upstream_flows,
       ARRAY(SELECT d.flow_name FROM flownode.flow d
              WHERE (d.source_table = f.sink_table
                     OR f.sink_table IN (SELECT p.relid FROM pg_catalog.pg_partition_tree(d.source_table) p))
                AND pg_catalog.pg_has_role(d.owner, 'MEMBER')
              ORDER BY d.flow_name) AS downstream_flows
  FROM flownode.flow f
  LEFT JOIN flownode.flow_status() s ON s.flow_id = f.flow_id
 WHERE pg_catalog.pg_has_role(f.owner, 'MEMBER');
GRANT SELECT ON flownode.flows TO PUBLIC;

-- flownode.execute: GreptimeDB's flow statements, as text (docs/user-guide.md "Coming
-- from GreptimeDB"): CREATE [OR REPLACE] FLOW ..., DROP FLOW, ADMIN FLUSH_FLOW('name'),
-- SHOW FLOWS [LIKE 'pattern'], SHOW CREATE FLOW name. One column of text per row:
-- a flow's name per row for SHOW FLOWS, the CREATE FLOW text for SHOW CREATE FLOW,
-- the windows refreshed for ADMIN FLUSH_FLOW, no row for CREATE and DROP.
CREATE FUNCTION flownode.execute(statement text)
RETURNS TABLE (result text)
AS 'MODULE_PATHNAME', 'flownode_execute'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION flownode.execute(text) IS
'runs one of GreptimeDB''s flow statements: CREATE [OR REPLACE] FLOW, DROP FLOW, ADMIN FLUSH_FLOW, SHOW FLOWS, SHOW CREATE FLOW';

-- The CREATE FLOW statement that recreates a flow (SHOW CREATE FLOW), NULL for a flow
-- the caller may not see.
CREATE FUNCTION flownode.flow_definition(flow_id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'flownode_flow_definition'
LANGUAGE C STABLE STRICT;

-- What GreptimeDB's information_schema.flows shows, for the flows of roles you are a
-- member of: the definition, the options, the times, the source, and the flow's
-- state: its dirty windows and ranges in shared memory and its durable record.
CREATE VIEW flownode.flow_info AS
SELECT f.flow_name,
       f.flow_id,
       COALESCE(s.dirty_ranges, 0)::bigint * 16 + COALESCE(r.record_bytes, 0) AS state_size,
       pg_catalog.current_database()::text AS table_catalog,
       flownode.flow_definition(f.flow_id) AS flow_definition,
       f.comment,
       f.expire_after,
       f.eval_interval,
       CASE WHEN f.source_table IS NULL THEN '{}'::oid[] ELSE ARRAY[f.source_table::pg_catalog.oid] END AS source_table_ids,
       (SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||)
               pg_catalog.quote_ident(c.relname)
          FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE c.oid = f.source_table) AS source_table_names,
       COALESCE((SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||)
                        pg_catalog.quote_ident(c.relname)
                   FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                  WHERE c.oid = f.sink_table), f.sink_name) AS sink_table_name,
       f.options,
       f.created_at AS created_time,
       f.updated_at AS updated_time,
       s.last_run_at AS last_execution_time,
       CASE WHEN f.source_table IS NULL THEN 'waiting_for_source'
            ELSE COALESCE(s.state, 'waiting_for_worker') END AS state,
       COALESCE(s.dirty_windows, 0) AS dirty_windows,
       COALESCE(s.dirty_ranges, 0) AS dirty_ranges,
       COALESCE(r.record_rows, 0) AS record_rows,
       COALESCE(r.record_bytes, 0) AS record_bytes,
       k.evaluated_at AS clock
  FROM flownode.flow f
  LEFT JOIN flownode.flow_status() s ON s.flow_id = f.flow_id
  LEFT JOIN (SELECT p.flow_id, pg_catalog.count(*) AS record_rows,
                    pg_catalog.sum(pg_catalog.pg_column_size(p.*))::bigint AS record_bytes
               FROM flownode.pending p GROUP BY p.flow_id) r ON r.flow_id = f.flow_id
  LEFT JOIN flownode.flow_clock k ON k.flow_id = f.flow_id
 WHERE pg_catalog.pg_has_role(f.owner, 'MEMBER');
GRANT SELECT ON flownode.flow_info TO PUBLIC;
