/*
 * utility_hook.c: flownode's part in DDL on other objects.
 *
 * - DROP DATABASE must not be blocked by the flow workers connected to it: they are
 *   stopped first.
 * - ALTER TABLE ... ENABLE TRIGGER [ALL] makes triggers fire on origin only; a flow's
 *   marking triggers are put back to ALWAYS, so that replica-mode writes keep
 *   marking (pg_restore --disable-triggers ends with ENABLE TRIGGER ALL).
 * - DISABLE TRIGGER [ALL] stops marking: PostgreSQL then bypasses the triggers, and
 *   nothing can mark what is written meanwhile. The writer is told (a WARNING naming
 *   the flows and the repair, refresh_flow), and flows.marking_enabled shows it.
 */
#include "flownode.h"

#include "lifecycle/utility_hook.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "marking/source_triggers.h"
#include "nodes/parsenodes.h"
#include "registry/flow_registry.h"
#include "tcop/utility.h"
#include "utils/lsyscache.h"
#include "worker/launcher.h"

static ProcessUtility_hook_type prev_process_utility_hook = NULL;
static bool preloaded_hooks = false;

/* Whether the ALTER TABLE enables or disables triggers that may be ours (USER ones
 * never are: ours are internal). */
static void trigger_commands(AlterTableStmt *stmt, bool *enables, bool *disables) {
	ListCell *lc;

	*enables = *disables = false;
	foreach (lc, stmt->cmds) {
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		switch (cmd->subtype) {
		case AT_EnableTrig:
		case AT_EnableTrigAll:
		case AT_EnableReplicaTrig:
			*enables = true;
			break;
		case AT_DisableTrig:
		case AT_DisableTrigAll:
			*disables = true;
			break;
		default:
			break;
		}
	}
}

/* The flows of the table the ALTER TABLE names, NIL when none (or no such table). */
static List *flows_of_altered_table(AlterTableStmt *stmt, Oid *relid) {
	if (!OidIsValid(fn_catalog_relid(true)))
		return NIL;
	*relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(*relid))
		return NIL;
	return fn_load_flows_of_source(*relid);
}

static void after_trigger_commands(AlterTableStmt *stmt) {
	bool enables, disables;
	Oid relid = InvalidOid;
	List *flows;
	StringInfoData names;
	ListCell *lc;

	trigger_commands(stmt, &enables, &disables);
	if (!enables && !disables)
		return;
	flows = flows_of_altered_table(stmt, &relid);
	if (flows == NIL)
		return;
	if (enables)
		fn_keep_marking_always(relid);
	if (fn_marking_enabled(relid))
		return;
	initStringInfo(&names);
	foreach (lc, flows)
		appendStringInfo(&names, "%s\"%s\"", names.len ? ", " : "", ((TaskConfig *)lfirst(lc))->flow_name);
	ereport(
	    WARNING,
	    (errmsg("writes to \"%s\" are not marked for its flows while their triggers are disabled",
	            get_rel_name(relid)),
	     errdetail("Flows of the table: %s.", names.data),
	     errhint("Enable them again with ALTER TABLE ... ENABLE TRIGGER ALL, then recompute what was written "
	             "meanwhile with flownode.refresh_flow(flow_name, from, to).")));
}

static void process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
                            ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *queryEnv,
                            DestReceiver *dest, QueryCompletion *qc) {
	Node *stmt = pstmt->utilityStmt;

	if (preloaded_hooks && IsA(stmt, DropdbStmt))
		fn_before_drop_database(((DropdbStmt *)stmt)->dbname);
	if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	if (IsA(stmt, AlterTableStmt) && IsTransactionState())
		after_trigger_commands((AlterTableStmt *)stmt);
}

/* Stopping workers before DROP DATABASE needs shared memory (preloaded). */
void fn_utility_hook_init(bool preloaded) {
	preloaded_hooks = preloaded;
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = process_utility;
}
