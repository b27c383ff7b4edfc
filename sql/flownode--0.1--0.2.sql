-- flownode 0.1 -> 0.2 (ALTER EXTENSION flownode UPDATE): brings a 0.1 installation
-- to what flownode--0.2.sql creates, keeping its flows, their ids and pending work.
\echo Use "ALTER EXTENSION flownode UPDATE" to load this file. \quit

-- refresh_flow: the repair call
CREATE FUNCTION flownode.refresh_flow(flow_name text, "from" timestamptz DEFAULT NULL,
                                      "to" timestamptz DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'flownode_refresh_flow'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION flownode.refresh_flow(text, timestamptz, timestamptz) IS
'recomputes every window of the flow that overlaps [from, to) (NULL: unbounded), windows past expire_after included; returns the windows between the first and last row there';

-- steering flows in place (alter_flow, pause_flow, resume_flow) and background
-- backfills: the catalog's new columns, appended as flownode--0.2.sql has them
ALTER TABLE flownode.flow ADD COLUMN paused boolean NOT NULL DEFAULT false,
    ADD COLUMN backfill_from bigint, ADD COLUMN backfill_next bigint, ADD COLUMN backfill_to bigint;
-- the writer's commit time in the durable record (the lag after a restart); records
-- written by 0.1 count from the update
ALTER TABLE flownode.pending ADD COLUMN committed_at timestamptz NOT NULL DEFAULT pg_catalog.now();

-- create_flow gains backfill (at the end: every other argument keeps its name and position)
DROP FUNCTION flownode.create_flow(text, text, text, interval, interval, text, boolean, boolean);
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

-- marking fires in every replication role (0.1 made the triggers fire on origin only)
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT tgrelid::pg_catalog.regclass AS rel, tgname FROM pg_catalog.pg_trigger
              WHERE tgfoid IN ('flownode.mark_insert()'::pg_catalog.regprocedure,
                               'flownode.mark_dirty()'::pg_catalog.regprocedure,
                               'flownode.mark_truncate()'::pg_catalog.regprocedure)
                AND tgenabled IN ('O', 'R')
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', t.rel, t.tgname);
    END LOOP;
END $$;

-- flows: last_error and last_error_at only while the flow is failing; the most
-- recent failure is kept in the new columns last_failure and last_failure_at, and
-- marking_enabled says whether every marking trigger fires, and lag,
-- oldest_dirty_window, last_success_at and the backfill's progress follow (appended,
-- so the other columns keep their positions). flow_status gets new OUT
-- columns, so it and the view over it are dropped and created again.
DROP VIEW flownode.flows;
DROP FUNCTION flownode.flow_status();
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
    OUT lag interval,
    OUT oldest_dirty_window timestamptz,
    OUT last_success_at timestamptz,
    OUT backfill_windows_done bigint,
    OUT backfill_windows_total bigint)
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
       s.worker_pid,
       s.last_failure,
       s.last_failure_at,
       -- every marking trigger of the source fires, in every replication role
       (SELECT pg_catalog.count(*) > 0 AND pg_catalog.bool_and(t.tgenabled = 'A')
          FROM pg_catalog.pg_trigger t
         WHERE t.tgrelid = f.source_table
           AND t.tgfoid IN ('flownode.mark_insert()'::pg_catalog.regprocedure,
                            'flownode.mark_dirty()'::pg_catalog.regprocedure,
                            'flownode.mark_truncate()'::pg_catalog.regprocedure)) AS marking_enabled,
       s.lag,
       s.oldest_dirty_window,
       s.last_success_at,
       s.backfill_windows_done,
       s.backfill_windows_total
  FROM flownode.flow f
  LEFT JOIN flownode.flow_status() s ON s.flow_id = f.flow_id
 WHERE pg_catalog.pg_has_role(f.owner, 'MEMBER');
GRANT SELECT ON flownode.flows TO PUBLIC;
