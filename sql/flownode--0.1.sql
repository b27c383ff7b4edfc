-- flownode 0.1: continuous aggregation for PostgreSQL.
\echo Use "CREATE EXTENSION flownode" to load this file. \quit

-- The registry of flows (GreptimeDB's BatchingEngine map). Written only by
-- create_flow/drop_flow; users read it through the flows view.
CREATE TABLE flownode.flow (
    flow_id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    flow_name      text NOT NULL UNIQUE,
    owner          oid NOT NULL,
    source_table   oid NOT NULL,
    sink_table     oid NOT NULL,
    time_column    name,
    time_attnum    smallint,
    window_expr    text,
    window_kind    text CHECK (window_kind IN ('date_bin', 'date_trunc')),
    window_stride  interval,
    window_origin  bigint,
    window_unit    text,
    window_zone    text,
    with_time_zone boolean,
    query          text NOT NULL,   -- deparsed, every name schema-qualified
    user_query     text NOT NULL,   -- as the user wrote it
    timezone       text NOT NULL,   -- TimeZone the query is evaluated in
    eval_interval  interval,
    expire_after   interval,
    comment        text,
    created_at     timestamptz NOT NULL DEFAULT pg_catalog.now()
);
CREATE INDEX flow_source_idx ON flownode.flow (source_table);
REVOKE ALL ON flownode.flow FROM PUBLIC;
GRANT USAGE ON SCHEMA flownode TO PUBLIC;

-- The durable record of pending work (docs/internals.md §4, invariant 4): each committing writer adds one
-- row per flow it dirtied, in its own transaction, holding its merged windows;
-- a refresh removes the windows it covered in its own transaction. Shared memory is
-- rebuilt from it whenever a flow's worker starts.
CREATE TABLE flownode.pending (
    flow_id bigint NOT NULL,
    ranges  int8multirange NOT NULL
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

CREATE FUNCTION flownode.create_flow(
    flow_name text,
    sink_table text,
    query text,
    eval_interval interval DEFAULT NULL,
    expire_after interval DEFAULT NULL,
    comment text DEFAULT NULL,
    if_not_exists boolean DEFAULT false,
    or_replace boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_create_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.create_flow(text, text, text, interval, interval, text, boolean, boolean) IS
'creates a flow: validates the query, creates the sink if absent, installs the source triggers, fills the sink, starts the worker';

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
    OUT consecutive_failures integer)
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
       COALESCE(s.state, 'waiting_for_worker') AS state,
       COALESCE(s.dirty_windows, 0) AS dirty_windows,
       s.last_run_at,
       s.last_run_duration,
       s.last_error,
       COALESCE(s.runs, 0) AS runs,
       COALESCE(s.failures, 0) AS failures,
       COALESCE(s.rows_written, 0) AS rows_written,
       s.last_error_at,
       COALESCE(s.consecutive_failures, 0) AS consecutive_failures,
       s.worker_pid
  FROM flownode.flow f
  LEFT JOIN flownode.flow_status() s ON s.flow_id = f.flow_id
 WHERE pg_catalog.pg_has_role(f.owner, 'MEMBER');
GRANT SELECT ON flownode.flows TO PUBLIC;
