/*
 * gt_waiting.c: flows created before their source table (defer_on_missing_source).
 * Such a flow is a row of flownode.flow without source, sink or stored query
 * (state waiting_for_source). It starts, keeping its id, when a table of its source's
 * name can be found with the search_path it was created with: after each CREATE
 * TABLE, CREATE TABLE AS, rename or move of a table, or GRANT on a table (a flow whose
 * owner could not read the new table starts once it may), in the transaction of that
 * command, as the flow's owner. A flow that cannot start (its query does not fit the
 * new table) keeps waiting, and the command gets a WARNING saying why.
 */
#include "flownode.h"

#include "greptime/gt_waiting.h"

#include "api/flow_api.h"
#include "greptime/gt_dialect.h"
#include "pgutil/subxact_try.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "tcop/utility.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

bool fn_gt_start_waiting_flow(TaskConfig *cfg) {
	Oid save_userid;
	int save_sec;
	int nest;
	RangeVar *source;
	bool found;
	bool waiting = false;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(cfg->owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	nest = NewGUCNestLevel();
	(void)set_config_option("search_path", cfg->search_path, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
	                        true, 0, false);
	source = fn_flow_query_source(cfg->user_query, NULL);
	found = source != NULL && OidIsValid(RangeVarGetRelid(source, NoLock, true));
	if (found) {
		CreateFlowArgs a;

		memset(&a, 0, sizeof(a));
		a.flow_name = cfg->flow_name;
		a.sink_name = cfg->sink_name;
		a.query = cfg->user_query;
		a.eval_interval = cfg->eval_interval;
		a.expire_after = cfg->expire_after;
		a.comment = cfg->comment;
		a.dialect = cfg->dialect;
		a.reading = fn_gt_reading(cfg->dialect);
		a.options = cfg->options;
		a.timezone = cfg->timezone;
		a.start_waiting_flow_id = cfg->flow_id;
		a.clauses = cfg->dialect == FLOW_DIALECT_GREPTIME;
		(void)fn_create_flow(&a, &waiting);
	}
	/* an ERROR restores both with the (sub)transaction */
	AtEOXact_GUC(true, nest);
	SetUserIdAndSecContext(save_userid, save_sec);
	return found && !waiting;
}

typedef struct StartTry {
	TaskConfig *cfg;
	bool started;
} StartTry;

static bool start_work(void *arg) {
	StartTry *t = arg;

	t->started = fn_gt_start_waiting_flow(t->cfg);
	return true;
}

/* Starts every waiting flow that can start; the others keep waiting, and those that
 * found their table but could not start say why. */
static void start_waiting_flows(void) {
	List *flows = fn_load_waiting_flows();
	ListCell *lc;

	foreach (lc, flows) {
		StartTry t = {lfirst(lc), false};
		TaskConfig *cfg = t.cfg;
		ErrorData *edata = fn_try_in_subxact(start_work, &t);

		if (edata != NULL) {
			ereport(WARNING, (errmsg("flow \"%s\" found its source table but did not start: %s",
			                         cfg->flow_name, edata->message),
			                  errdetail("It keeps waiting for a source table it can read."),
			                  edata->hint ? errhint("%s", edata->hint) : 0));
			FreeErrorData(edata);
		}
		if (t.started)
			ereport(NOTICE, (errmsg("flow \"%s\" started: its source table exists now", cfg->flow_name)));
	}
}

/* Whether the command can make a waiting flow's source table appear, or readable. */
static bool may_start_flows(Node *stmt) {
	switch (nodeTag(stmt)) {
	case T_CreateStmt:
		return true;
	case T_CreateTableAsStmt:
		return ((CreateTableAsStmt *)stmt)->objtype == OBJECT_TABLE;
	case T_RenameStmt:
		return ((RenameStmt *)stmt)->renameType == OBJECT_TABLE ||
		       ((RenameStmt *)stmt)->renameType == OBJECT_SCHEMA;
	case T_AlterObjectSchemaStmt:
		return ((AlterObjectSchemaStmt *)stmt)->objectType == OBJECT_TABLE;
	case T_GrantStmt:
		return ((GrantStmt *)stmt)->is_grant && ((GrantStmt *)stmt)->objtype == OBJECT_TABLE;
	default:
		return false;
	}
}

void fn_gt_after_utility(Node *stmt) {
	/* not within a flow's own DDL (its sink), an extension's script or pg_upgrade */
	if (may_start_flows(stmt) && IsTransactionState() && !creating_extension && !IsBinaryUpgrade &&
	    !fn_creating_flow() && OidIsValid(fn_catalog_relid(true)))
		start_waiting_flows();
}
