/*
 * flownode.c: module entry: GUCs, shared memory hooks, the launcher registration.
 */
#include "flownode/flownode.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "catalog/namespace.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "tcop/utility.h"

PG_MODULE_MAGIC;

int fn_max_flows = 64;
int fn_dirty_ranges_per_flow = 1024;
int fn_local_ranges_per_flow = 256;
int fn_max_windows_per_refresh = 1000;
int fn_min_refresh_interval_ms = 5000;
int fn_max_backoff_ms = 300000;
int fn_statement_timeout_ms = 600000;
bool fn_launcher_enabled = true;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static ProcessUtility_hook_type prev_process_utility_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void _PG_init(void);

/* DROP DATABASE must not be blocked by the flow workers connected to it. */
static void flownode_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
                                     ProcessUtilityContext context, ParamListInfo params,
                                     QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc) {
	if (IsA(pstmt->utilityStmt, DropdbStmt))
		fn_before_drop_database(((DropdbStmt *)pstmt->utilityStmt)->dbname);
	if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
}

static void flownode_shmem_request(void) {
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	fn_shmem_request();
}

static void flownode_shmem_startup(void) {
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	fn_shmem_startup();
}

static void define_gucs(void) {
	DefineCustomIntVariable("flownode.max_flows",
	                        "Maximum number of flows in the whole server (shared memory slots).", NULL,
	                        &fn_max_flows, 64, 1, 10000, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("flownode.dirty_ranges_per_flow",
	                        "Dirty time ranges each flow keeps in shared memory; beyond it, nearest ranges "
	                        "are coalesced (never dropped).",
	                        NULL, &fn_dirty_ranges_per_flow, 1024, 4, 1000000, PGC_POSTMASTER, 0, NULL, NULL,
	                        NULL);
	DefineCustomIntVariable("flownode.local_ranges_per_flow",
	                        "Dirty time ranges a transaction collects per flow (per group of flows whose "
	                        "windows nest) before coalescing them.",
	                        NULL, &fn_local_ranges_per_flow, 256, 4, 100000, PGC_USERSET, 0, NULL, NULL,
	                        NULL);
	DefineCustomIntVariable("flownode.max_windows_per_refresh",
	                        "Most time windows one refresh query covers; a larger backlog is split across "
	                        "cycles, oldest first.",
	                        "A backlog starts at 20 windows per refresh, doubling while refreshes take under "
	                        "250 ms, halving when they take over 1 s, never above this.",
	                        &fn_max_windows_per_refresh, 1000, 1, 1000000, PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("flownode.min_refresh_interval",
	                        "Shortest sleep between evaluations of a flow without eval_interval (adaptive).",
	                        NULL, &fn_min_refresh_interval_ms, 5000, 10, INT_MAX, PGC_SIGHUP, GUC_UNIT_MS,
	                        NULL, NULL, NULL);
	DefineCustomIntVariable(
	    "flownode.max_backoff", "Longest wait before retrying a failing flow (backoff doubles from 1 s).",
	    NULL, &fn_max_backoff_ms, 300000, 1000, INT_MAX, PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("flownode.statement_timeout",
	                        "Longest a refresh may run when the flow's owner has no statement_timeout of its "
	                        "own (ALTER ROLE ... SET statement_timeout); 0 disables it.",
	                        NULL, &fn_statement_timeout_ms, 600000, 0, INT_MAX, PGC_SIGHUP, GUC_UNIT_MS, NULL,
	                        NULL, NULL);
	DefineCustomBoolVariable("flownode.launcher", "Starts the workers of every flow when the server starts.",
	                         NULL, &fn_launcher_enabled, true, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("flownode");
}

void _PG_init(void) {
	if (!process_shared_preload_libraries_in_progress) {
		/* loaded by CREATE EXTENSION or a call without preloading: SQL still works,
		 * and every entry point that needs shared memory says how to fix it */
		define_gucs();
		fn_engine_init();
		return;
	}
	define_gucs();
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = flownode_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = flownode_shmem_startup;
	fn_engine_init();
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = flownode_process_utility;
	if (fn_launcher_enabled)
		fn_register_launcher();
}

/* ---- small helpers shared by the shims ---- */

char *fn_qualified_relname(Oid relid) {
	char *nsp = get_namespace_name(get_rel_namespace(relid));
	char *rel = get_rel_name(relid);

	if (nsp == NULL || rel == NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("relation with OID %u does not exist", relid)));
	return quote_qualified_identifier(nsp, rel);
}

/* A required text argument: NULL or empty is an error naming the argument. */
char *fn_text_arg(FunctionCallInfo fcinfo, int argno, const char *argname) {
	char *s;

	if (PG_ARGISNULL(argno))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not be NULL", argname)));
	s = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (s[0] == '\0')
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must not be empty", argname)));
	return s;
}
