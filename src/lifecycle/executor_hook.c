/*
 * executor_hook.c: flownode's one ExecutorStart hook. Before the executor starts a
 * statement that writes, the flows pg_upgrade brought over that read its tables are
 * bound (upgrade_binding.c), so that the statement's rows fire their triggers; after
 * it started, the marking triggers' WHEN clauses come from the backend's cache
 * (marking/when_cache.c).
 */
#include "flownode.h"

#include "lifecycle/executor_hook.h"

#include "executor/executor.h"
#include "lifecycle/upgrade_binding.h"
#include "marking/when_cache.h"

static ExecutorStart_hook_type prev_executor_start = NULL;

static void executor_start(QueryDesc *queryDesc, int eflags) {
	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		fn_guard_upgraded_plan(queryDesc->plannedstmt);
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	fn_when_cache_prefill(queryDesc, eflags);
}

void fn_executor_hook_init(void) {
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = executor_start;
}
