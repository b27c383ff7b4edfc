/*
 * module.c: the module's entry. _PG_init defines the settings and installs every
 * module's hooks; with shared_preload_libraries it also sets up shared memory and
 * registers the launcher. docs/internals.md §1 maps the modules.
 */
#include "flownode.h"

#include "fmgr.h"
#include "greptime/gt_waiting.h"
#include "lifecycle/executor_hook.h"
#include "lifecycle/flow_removal.h"
#include "lifecycle/utility_hook.h"
#include "lifecycle/xact_hooks.h"
#include "marking/source_cache.h"
#include "marking/when_cache.h"
#include "miscadmin.h"
#include "record/durable_record.h"
#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"
#include "shmem/inflight.h"
#include "shmem/pool.h"
#include "storage/ipc.h"
#include "tcop/utility.h"
#include "worker/launcher.h"

PG_MODULE_MAGIC;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ProcessUtility_hook_type prev_process_utility_hook = NULL;

void _PG_init(void);

static void flownode_shmem_request(void) {
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	fn_slots_shmem_request();
	fn_inflight_shmem_request();
	fn_pool_shmem_request();
}

static void flownode_shmem_startup(void) {
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	fn_slots_shmem_startup();
	fn_inflight_shmem_startup();
	fn_pool_shmem_startup();
}

/*
 * flownode's one ProcessUtility hook: the lifecycle's part around the command (the
 * command itself run through the hook installed before ours), then the flows that
 * wait for a source table the command may have made appear.
 */
static void flownode_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
                                     ProcessUtilityContext context, ParamListInfo params,
                                     QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc) {
	fn_utility_command(prev_process_utility_hook, pstmt, queryString, readOnlyTree, context, params, queryEnv,
	                   dest, qc);
	fn_gt_after_utility(pstmt->utilityStmt);
}

/*
 * Loaded by CREATE EXTENSION or a call without preloading, SQL still works, and
 * every entry point that needs shared memory says how to fix it.
 */
void _PG_init(void) {
	bool preloaded = process_shared_preload_libraries_in_progress;

	fn_define_settings(preloaded);
	fn_registry_init();
	fn_record_init();
	fn_source_cache_init();
	fn_when_cache_init();
	fn_executor_hook_init();
	fn_xact_hooks_init();
	fn_flow_removal_init();
	fn_utility_hook_init(preloaded);
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = flownode_process_utility;
	if (!preloaded)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = flownode_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = flownode_shmem_startup;
	/* not while pg_upgrade runs the server (-b): at its last start the tables are the
	 * old cluster's already, and flows bound then would be bound in a server that
	 * stops at once; the first real start binds them (lifecycle/upgrade_binding.c) */
	if (fn_launcher_enabled && !IsBinaryUpgrade)
		fn_register_launcher();
	fn_check_worker_settings();
}
