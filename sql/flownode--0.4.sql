-- flownode 0.4: continuous aggregation for PostgreSQL.
\echo Use "CREATE EXTENSION flownode" to load this file. \quit

-- Every role may look into the schema: what it may do there is granted object by object.
GRANT USAGE ON SCHEMA flownode TO PUBLIC;

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
    -- GreptimeDB compatibility (flownode.execute, docs/reference.md "Coming from
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
-- Who may create flows (docs/operations.md, "Privileges and caps"): each flow takes one of the
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

CREATE FUNCTION flownode.refresh_flow(flow_name text, "from" timestamptz DEFAULT NULL,
                                      "to" timestamptz DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_refresh_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.refresh_flow(text, timestamptz, timestamptz) IS
'recomputes every window of the flow that overlaps [from, to) (NULL: unbounded), windows past expire_after included; returns the windows between the first and last row there';

-- Exact real-time reads (docs/reference.md, flownode.read_flow): in one snapshot, the
-- sink's rows of the clean windows and the flow's query over the dirty ones.
CREATE FUNCTION flownode.read_flow(sink anyelement, "from" timestamptz DEFAULT NULL,
                                   "to" timestamptz DEFAULT NULL)
RETURNS SETOF anyelement
AS 'MODULE_PATHNAME', 'flownode_read_flow'
LANGUAGE C STABLE;
COMMENT ON FUNCTION flownode.read_flow(anyelement, timestamptz, timestamptz) IS
'the flow''s current answer: read_flow(NULL::sink_table) in the sink''s row type, or read_flow(NULL::read_view) in a create_read_view view''s (the query''s columns, no hidden key columns); optionally only the windows overlapping [from, to)';

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

-- Each flow's state in shared memory (its slot) and its catalog row, for the flows
-- of roles you are a member of: read through the flows and flow_info views.
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
COMMENT ON FUNCTION flownode.flow_status() IS
'each flow''s state from shared memory and its catalog row (internal: read the flows and flow_info views)';

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

-- flownode.execute: GreptimeDB's flow statements, as text (docs/reference.md "Coming
-- from GreptimeDB"): CREATE [OR REPLACE] FLOW ..., DROP FLOW, ADMIN FLUSH_FLOW('name'),
-- SHOW FLOWS [LIKE 'pattern'], SHOW CREATE FLOW name. One column of text per row:
-- a flow's name per row for SHOW FLOWS, the CREATE FLOW text for SHOW CREATE FLOW,
-- the windows refreshed for ADMIN FLUSH_FLOW, no row for CREATE and DROP.
CREATE FUNCTION flownode.execute(statement text)
RETURNS TABLE (result text)
AS 'MODULE_PATHNAME', 'flownode_execute'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION flownode.execute(text) IS
'runs one of GreptimeDB''s flow statements (CREATE [OR REPLACE] FLOW, DROP FLOW, ADMIN FLUSH_FLOW, SHOW FLOWS, SHOW CREATE FLOW) or of TimescaleDB''s continuous-aggregate statements (CREATE, DROP and ALTER MATERIALIZED VIEW, CALL refresh_continuous_aggregate, SELECT add_continuous_aggregate_policy and remove_continuous_aggregate_policy)';

-- The CREATE FLOW statement that recreates a flow (SHOW CREATE FLOW), NULL for a flow
-- the caller may not see.
CREATE FUNCTION flownode.flow_definition(flow_id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'flownode_flow_definition'
LANGUAGE C STABLE STRICT;

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
