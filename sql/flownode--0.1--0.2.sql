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
-- marking_enabled says whether every marking trigger fires (appended, so the other
-- columns keep their positions). flow_status gets new OUT
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
    OUT last_failure_at timestamptz)
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
       -- every marking trigger of the source (and of its partitions) fires, in
       -- every replication role
       (SELECT pg_catalog.count(*) > 0 AND pg_catalog.bool_and(t.tgenabled = 'A')
          FROM pg_catalog.pg_trigger t
         WHERE (t.tgrelid = f.source_table
                OR t.tgrelid IN (SELECT p.relid FROM pg_catalog.pg_partition_tree(f.source_table) p))
           AND t.tgfoid IN ('flownode.mark_insert()'::pg_catalog.regprocedure,
                            'flownode.mark_dirty()'::pg_catalog.regprocedure,
                            'flownode.mark_truncate()'::pg_catalog.regprocedure)) AS marking_enabled
  FROM flownode.flow f
  LEFT JOIN flownode.flow_status() s ON s.flow_id = f.flow_id
 WHERE pg_catalog.pg_has_role(f.owner, 'MEMBER');
GRANT SELECT ON flownode.flows TO PUBLIC;
