-- flownode 0.2 -> 0.3 (ALTER EXTENSION flownode UPDATE): creating a flow needs a
-- grant (docs/user-guide.md, Privileges). The flows, their ids and pending work stay
-- as they are, and every role that owns a flow keeps the right to create flows.
\echo Use "ALTER EXTENSION flownode UPDATE" to load this file. \quit

-- The update needs the 0.3 library: a server that still runs 0.2's (the package was
-- installed but the server, which preloads it, was not restarted) would not read
-- objects of version 0.3 at all. It stops here, before anything changes.
DO $$
BEGIN
    CREATE FUNCTION flownode.flow_caps(
        OUT database_flows bigint,
        OUT max_flows_per_database integer,
        OUT role_flows bigint,
        OUT max_flows_per_role integer)
    RETURNS record
    AS 'MODULE_PATHNAME', 'flownode_flow_caps'
    LANGUAGE C STABLE;
EXCEPTION WHEN undefined_function THEN
    RAISE EXCEPTION 'the flownode library loaded by this server is older than version 0.3'
        USING HINT = 'Restart the server so that it loads the flownode library just installed, then run ALTER EXTENSION flownode UPDATE again.';
END $$;
COMMENT ON FUNCTION flownode.flow_caps() IS
'the caps on flows that apply to this session (NULL: none), with the flows of this database and those the current user owns';

-- Creating a flow needs EXECUTE on create_flow (flownode.execute's CREATE FLOW asks
-- for the same right). The roles that own a flow today keep it: each is granted
-- EXECUTE (a superuser needs no grant). Those grants are the DBA's, not the
-- extension's: the privileges the extension records as its own (pg_init_privs) are
-- set back to what a fresh 0.3 install records, so that pg_dump carries the grants
-- to a restored database as it carries any GRANT.
REVOKE EXECUTE ON FUNCTION flownode.create_flow(text, text, text, interval, interval, text, boolean, boolean, text)
    FROM PUBLIC;
DO $$
DECLARE
    create_flow CONSTANT pg_catalog.regprocedure :=
        'flownode.create_flow(text, text, text, interval, interval, text, boolean, boolean, text)';
    initial pg_catalog.aclitem[];
    r record;
BEGIN
    SELECT p.proacl INTO initial FROM pg_catalog.pg_proc p WHERE p.oid = create_flow;
    FOR r IN SELECT DISTINCT a.rolname FROM flownode.flow f
               JOIN pg_catalog.pg_authid a ON a.oid = f.owner::pg_catalog.oid
              WHERE NOT a.rolsuper ORDER BY a.rolname
    LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %I', create_flow, r.rolname);
    END LOOP;
    UPDATE pg_catalog.pg_init_privs SET initprivs = initial
     WHERE objoid = create_flow AND classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND objsubid = 0;
END $$;
