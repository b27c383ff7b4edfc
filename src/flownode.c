/*
 * flownode.c: flownode's GUCs (the settings table of docs/reference.md). Defined from
 * _PG_init, read everywhere through flownode.h.
 */
#include "flownode.h"

#include <limits.h>

#include "utils/guc.h"

int fn_max_flows = 64;
int fn_max_workers = 2;
int fn_dirty_ranges_per_flow = 4096;
int fn_dirty_ranges_memory_kb = -1;
int fn_local_ranges_per_flow = 4096;
int fn_key_marks_per_window = 128;
int fn_max_rows_per_refresh = 1000000;
int fn_min_refresh_interval_ms = 5000;
int fn_max_backoff_ms = 300000;
int fn_statement_timeout_ms = 600000;
int fn_backfill_chunk_rows = 100000;
int fn_run_history_per_flow = 1000;
bool fn_launcher_enabled = true;
bool fn_fold_open_window = true;
bool fn_verify_folds = false;
int fn_max_flows_per_database = -1;
int fn_max_flows_per_role = -1;
bool fn_is_flow_worker = false;

/*
 * The settings read at server start exist only when flownode is preloaded:
 * PostgreSQL ends the session (FATAL) of a library that defines one later, and
 * without shared memory they would mean nothing anyway.
 */
static void define_server_start_settings(void) {
	DefineCustomIntVariable("flownode.max_flows",
	                        "Maximum number of flows in the whole server (shared memory slots).", NULL,
	                        &fn_max_flows, 64, 1, 10000, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("flownode.dirty_ranges_per_flow",
	                        "Dirty time ranges each flow keeps in shared memory; beyond it, nearest ranges "
	                        "are coalesced (never dropped).",
	                        "A flow's set holds 16 ranges in its slot and grows into the pool of "
	                        "flownode.dirty_ranges_memory, doubling, up to this many.",
	                        &fn_dirty_ranges_per_flow, 4096, 4, 1000000, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable(
	    "flownode.dirty_ranges_memory",
	    "Shared memory the flows' dirty sets grow into past the 16 ranges each slot "
	    "holds; when it is used up, sets coalesce their nearest ranges (never dropped).",
	    "-1: enough for every flow's sets at flownode.dirty_ranges_per_flow, at most 64MB.",
	    &fn_dirty_ranges_memory_kb, -1, -1, MAX_KILOBYTES, PGC_POSTMASTER, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomBoolVariable("flownode.launcher", "Starts the workers of every flow when the server starts.",
	                         NULL, &fn_launcher_enabled, true, PGC_POSTMASTER, 0, NULL, NULL, NULL);
}

/*
 * The caps on how many flows may be created (api/flow_caps.c). Superuser-only, so
 * that a DBA sets them per database or per role (ALTER DATABASE / ALTER ROLE ... SET)
 * and the roles they cap cannot lift them.
 */
static void define_cap_settings(void) {
	DefineCustomIntVariable("flownode.max_flows_per_database",
	                        "Most flows a database may hold; creating one more is refused (-1: no cap).",
	                        "Checked when a flow is created, against the flows of the current database; "
	                        "restores and flows that start after waiting for their source are not refused.",
	                        &fn_max_flows_per_database, -1, -1, INT_MAX, PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("flownode.max_flows_per_role",
	                        "Most flows a role may own in a database; creating one more is refused (-1: no "
	                        "cap).",
	                        "Counts the flows of the current database owned by the role creating the flow "
	                        "(current_user).",
	                        &fn_max_flows_per_role, -1, -1, INT_MAX, PGC_SUSET, 0, NULL, NULL, NULL);
}

void fn_define_settings(bool preloaded) {
	if (preloaded)
		define_server_start_settings();
	DefineCustomIntVariable("flownode.max_workers",
	                        "Most flow workers in the whole server; each serves one or many flows of one "
	                        "database.",
	                        "With the launcher and one database starter, flownode takes at most two more "
	                        "background worker processes than this (docs/getting-started.md).",
	                        &fn_max_workers, 2, 1, 1024, PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("flownode.fold_open_window",
	                         "Refreshes a window that only gained rows by folding its new rows into what "
	                         "its older rows aggregated to, where the query allows (docs/reference.md).",
	                         NULL, &fn_fold_open_window, true, PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("flownode.verify_folds",
	                         "Checks every folded refresh against the query over the whole window, in the "
	                         "same snapshot, and fails the refresh if they differ (for tests: it costs "
	                         "what folding saves).",
	                         NULL, &fn_verify_folds, false, PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("flownode.local_ranges_per_flow",
	                        "Dirty time ranges a transaction collects per flow (per group of flows whose "
	                        "windows nest) before coalescing them.",
	                        NULL, &fn_local_ranges_per_flow, 4096, 4, 100000, PGC_USERSET, 0, NULL, NULL,
	                        NULL);
	DefineCustomIntVariable("flownode.key_marks_per_window",
	                        "Groups a transaction marks per window of a flow whose groups are keyed by "
	                        "source columns, before it marks the whole window instead (0: whole windows).",
	                        "A late row into a closed window then refreshes only the groups it touched. A "
	                        "flow gets the triggers that mark keys when it is created while this is above 0.",
	                        &fn_key_marks_per_window, 128, 0, 100000, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable(
	    "flownode.max_rows_per_refresh",
	    "Most source rows one refresh statement reads; a larger backlog is split across "
	    "cycles, oldest first, at window boundaries.",
	    "A backlog starts at 50,000 rows per refresh, doubling while refreshes take under "
	    "250 ms, halving when they take over 1 s, never above this. A window holding more "
	    "rows is refreshed whole. Without an index on the time column a refresh takes every "
	    "dirty window at once (one scan).",
	    &fn_max_rows_per_refresh, 1000000, 1000, INT_MAX, PGC_SIGHUP, 0, NULL, NULL, NULL);
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
	DefineCustomIntVariable(
	    "flownode.backfill_chunk_rows",
	    "Source rows one chunk of a sink's fill reads (create_flow's backfill), rounded up "
	    "to whole windows.",
	    "A background backfill commits each chunk in its own transaction; create_flow's "
	    "fill reports its progress between chunks.",
	    &fn_backfill_chunk_rows, 100000, 1, INT_MAX, PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("flownode.run_history_per_flow",
	                        "Rows of flownode.run_history kept per flow (0: no history is written).",
	                        "The worker deletes a flow's oldest rows past this many, once every tenth "
	                        "of them, so a flow holds at most a tenth more.",
	                        &fn_run_history_per_flow, 1000, 0, 1000000, PGC_SIGHUP, 0, NULL, NULL, NULL);
	define_cap_settings();
	MarkGUCPrefixReserved("flownode");
}
