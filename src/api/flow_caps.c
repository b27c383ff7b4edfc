/*
 * flow_caps.c: who may take the server's resources by creating flows. Each flow
 * takes one of the server's flownode.max_flows slots and a worker process, shared
 * by every database: a DBA decides which roles may create flows (EXECUTE on
 * flownode.create_flow, revoked from PUBLIC since 0.3) and how many a database, or
 * a role in a database, may hold (flownode.max_flows_per_database and
 * flownode.max_flows_per_role).
 */
#include "flownode.h"

#include "api/flow_caps.h"

#include "registry/flow_registry.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(flownode_flow_caps);

/*
 * The caps' locks are locks on objects of the catalog's class that no flow uses:
 * a flow's lock (fn_lock_flow) is (catalog, low 32 bits of its id, high 16 bits),
 * its id is never 0, and it never reaches 2^48.
 */
#define CAP_LOCK_DATABASE_OBJID 0
#define CAP_LOCK_ROLE_SUBID 0xFFFF

void fn_check_create_privilege(void) {
	Oid argtypes[9] = {TEXTOID, TEXTOID, TEXTOID, INTERVALOID, INTERVALOID,
	                   TEXTOID, BOOLOID, BOOLOID, TEXTOID};
	List *name = list_make2(makeString(FLOWNODE_SCHEMA), makeString("create_flow"));
	Oid create_flow = LookupFuncName(name, 9, argtypes, false);

	if (fn_proc_aclcheck(create_flow, GetUserId(), ACL_EXECUTE) != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied for function create_flow"),
		                errdetail("Creating a flow needs EXECUTE on function flownode.create_flow, "
		                          "whichever statement creates it."),
		                errhint("A superuser can grant it: GRANT EXECUTE ON FUNCTION flownode.create_flow "
		                        "TO role_name.")));
}

pg_noreturn static void database_cap_error(int cap, int64 flows);
static void database_cap_error(int cap, int64 flows) {
	ereport(ERROR,
	        (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
	         errmsg_plural(
	             "flownode.max_flows_per_database (%d) reached: database \"%s\" has " INT64_FORMAT " flow",
	             "flownode.max_flows_per_database (%d) reached: database \"%s\" has " INT64_FORMAT " flows",
	             (unsigned long)flows, cap, get_database_name(MyDatabaseId), flows),
	         errhint("Drop a flow that is no longer needed, or ask a superuser to raise the cap: "
	                 "ALTER DATABASE ... SET flownode.max_flows_per_database.")));
}

pg_noreturn static void role_cap_error(int cap, Oid owner, int64 flows);
static void role_cap_error(int cap, Oid owner, int64 flows) {
	ereport(ERROR, (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
	                errmsg_plural("flownode.max_flows_per_role (%d) reached: role \"%s\" owns " INT64_FORMAT
	                              " flow in database \"%s\"",
	                              "flownode.max_flows_per_role (%d) reached: role \"%s\" owns " INT64_FORMAT
	                              " flows in database \"%s\"",
	                              (unsigned long)flows, cap, GetUserNameFromId(owner, false), flows,
	                              get_database_name(MyDatabaseId)),
	                errhint("Drop one of the role's flows, or ask a superuser to raise the cap: ALTER ROLE "
	                        "... IN DATABASE ... SET flownode.max_flows_per_role.")));
}

void fn_check_flow_caps(Oid owner) {
	int database_cap = fn_max_flows_per_database;
	int role_cap = fn_max_flows_per_role;
	Oid catalog;
	int64 in_database, of_owner;

	if (database_cap < 0 && role_cap < 0)
		return; /* no cap: flows are created side by side, as before the caps */
	catalog = fn_catalog_relid(false);
	/* always the database's lock first, so that two creates never wait on each other */
	if (database_cap >= 0)
		LockDatabaseObject(catalog, CAP_LOCK_DATABASE_OBJID, 0, ExclusiveLock);
	if (role_cap >= 0)
		LockDatabaseObject(catalog, owner, CAP_LOCK_ROLE_SUBID, ExclusiveLock);
	fn_registry_count_flows(owner, &in_database, &of_owner);
	if (database_cap >= 0 && in_database >= database_cap)
		database_cap_error(database_cap, in_database);
	if (role_cap >= 0 && of_owner >= role_cap)
		role_cap_error(role_cap, owner, of_owner);
}

/* flownode.flow_caps(): the caps that apply to this session (NULL: none) and the
 * counts they are checked against, for the current user. */
Datum flownode_flow_caps(PG_FUNCTION_ARGS) {
	TupleDesc desc;
	Datum values[4];
	bool nulls[4] = {false, false, false, false};
	int64 in_database, of_owner;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "flownode: flow_caps must return a row");
	fn_check_catalog_version();
	fn_registry_count_flows(GetUserId(), &in_database, &of_owner);
	values[0] = Int64GetDatum(in_database);
	values[1] = Int32GetDatum(fn_max_flows_per_database);
	nulls[1] = fn_max_flows_per_database < 0;
	values[2] = Int64GetDatum(of_owner);
	values[3] = Int32GetDatum(fn_max_flows_per_role);
	nulls[3] = fn_max_flows_per_role < 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
