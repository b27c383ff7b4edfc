/*
 * column_retype.c: ALTER COLUMN TYPE (also SET DATA TYPE, USING, COLLATE) of a table
 * a flow reads (docs/operations.md, "DDL on the tables of a flow"). The command
 * rewrites the column of every row without firing a trigger: the windows of every
 * flow that reads the column (in its source or its partitions, in a dimension it
 * joins, as its sink's output, or as a copy's hidden source key) are marked, from the
 * first to the last row of its source, and the sink's hidden key columns follow the
 * query's new types. A flow's time column is refused, naming the flows.
 */
#include "flownode.h"

#include "lifecycle/column_retype.h"

#include "access/sysattr.h"
#include "catalog/namespace.h"
#include "catalog/pg_inherits.h"
#include "marking/mark_rows.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "pgutil/pg_util.h"
#include "query/hidden_keys.h"
#include "query/query_rewrite.h"
#include "registry/flow_registry.h"
#include "registry/sink_table.h"
#include "registry/stored_query.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

/* A flow's time column is refused: its windows, its sink's window column and its
 * marking triggers all follow its type. */
struct FnRetyped {
	List *relids; /* the table altered and every table under it */
	List *names;  /* String: the names of the columns whose type changes */
	List *flows;  /* TaskConfig *: the flows that read one of them */
};

/* The columns whose type the ALTER TABLE changes. */
static List *retyped_columns(AlterTableStmt *stmt) {
	List *names = NIL;
	ListCell *lc;

	if (stmt->objtype != OBJECT_TABLE && stmt->objtype != OBJECT_FOREIGN_TABLE)
		return NIL;
	foreach (lc, stmt->cmds) {
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype == AT_AlterColumnType)
			names = lappend(names, cmd->name);
	}
	return names;
}

/* Whether a range table entry of the query reads one of the columns: its selected
 * columns, which parse analysis fills for the privilege checks, hold every column
 * read anywhere in the query (0: the whole row). Columns are matched by name, as a
 * partition may number them otherwise than its parent. */
static bool rte_reads(const Query *query, const RangeTblEntry *rte, const FnRetyped *r) {
	Bitmapset *cols;
	ListCell *lc;

	if (rte->rtekind != RTE_RELATION || !list_member_oid(r->relids, rte->relid))
		return false;
	cols = fn_rte_selected_cols(query, rte);
	if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, cols))
		return true;
	foreach (lc, r->names) {
		AttrNumber att = get_attnum(rte->relid, strVal(lfirst(lc)));

		if (att != InvalidAttrNumber && bms_is_member(att - FirstLowInvalidHeapAttributeNumber, cols))
			return true;
	}
	return false;
}

/* Whether the query (at any level: its subqueries, CTEs and sublinks) reads one of
 * the columns. */
static bool reads_walker(Node *node, FnRetyped *r) {
	if (node == NULL)
		return false;
	if (IsA(node, Query)) {
		Query *query = (Query *)node;
		ListCell *lc;

		foreach (lc, query->rtable)
			if (rte_reads(query, lfirst_node(RangeTblEntry, lc), r))
				return true;
		return query_tree_walker(query, reads_walker, r, 0);
	}
	return expression_tree_walker(node, reads_walker, r);
}

/* Whether a hidden key column of the flow holds one of the columns: a copy flow's
 * source key column the query does not output (query/hidden_keys.h) is an output of
 * the analysed query only, not a column its range table entry selects. */
static bool hides_column(FlowQuery *fq, FnRetyped *r) {
	List *vars = NIL;
	ListCell *lc;
	int pos = 0;

	foreach (lc, fq->query->targetList) {
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (!tle->resjunk && fn_output_is_hidden(fq, pos))
			vars = list_concat(vars, pull_var_clause((Node *)tle->expr, PVC_RECURSE_AGGREGATES |
			                                                                PVC_RECURSE_WINDOWFUNCS |
			                                                                PVC_RECURSE_PLACEHOLDERS));
		pos += tle->resjunk ? 0 : 1;
	}
	foreach (lc, vars) {
		Var *var = lfirst_node(Var, lc);
		RangeTblEntry *rte = var->varlevelsup == 0 ? rt_fetch(var->varno, fq->query->rtable) : NULL;
		char *name;

		if (rte == NULL || rte->rtekind != RTE_RELATION || !list_member_oid(r->relids, rte->relid) ||
		    var->varattno <= 0)
			continue;
		name = get_attname(rte->relid, var->varattno, true);
		if (name != NULL && list_member(r->names, makeString(name)))
			return true;
	}
	return false;
}

/* Whether the flow reads one of the columns, or writes it as an output of its sink;
 * a query that does not analyse any more is taken to (its flow fails anyway). */
static bool uses_columns(TaskConfig *cfg, FnRetyped *r) {
	FlowQuery *fq = fn_analysed_or_null(cfg, false);
	Query *q = fq != NULL ? fq->query : NULL; /* hidden keys as outputs: sink columns too */
	ListCell *lc;

	if (q == NULL)
		return true;
	if (list_member_oid(r->relids, cfg->sink_relid))
		foreach (lc, q->targetList) {
			TargetEntry *tle = lfirst_node(TargetEntry, lc);

			if (!tle->resjunk && tle->resname != NULL && list_member(r->names, makeString(tle->resname)))
				return true;
		}
	return reads_walker((Node *)q, r) || hides_column(fq, r);
}

/* The flows whose time column the command retypes, refused: the windows, the sink's
 * window column and the marking triggers (whose WHEN clause pins the column, so
 * PostgreSQL would refuse too, naming a trigger) all depend on its type. */
static void refuse_time_column(List *flows, FnRetyped *r) {
	StringInfoData names;
	char *column = NULL, *table = NULL;
	int n = 0;
	ListCell *lc;

	initStringInfo(&names);
	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		char *col = cfg->time_attnum > 0 && list_member_oid(r->relids, cfg->source_relid)
		                ? get_attname(cfg->source_relid, cfg->time_attnum, true)
		                : NULL;

		if (col == NULL || !list_member(r->names, makeString(col)))
			continue;
		column = col;
		table = get_rel_name(cfg->source_relid);
		appendStringInfo(&names, "%s\"%s\"", n++ ? ", " : "", cfg->flow_name);
	}
	if (n == 0)
		return;
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
	                errmsg("cannot alter type of column \"%s\" of table \"%s\"", column, table),
	                errdetail_plural("It is the time column of flow %s.",
	                                 "It is the time column of flows %s.", n, names.data),
	                n == 1 ? errhint("Drop the flow with flownode.drop_flow(), alter the column, and create "
	                                 "the flow again.")
	                       : errhint("Drop the flows with flownode.drop_flow(), alter the column, and create "
	                                 "the flows again.")));
}

static bool flow_in(List *flows, int64 flow_id) {
	ListCell *lc;

	foreach (lc, flows) {
		if (((TaskConfig *)lfirst(lc))->flow_id == flow_id)
			return true;
	}
	return false;
}

/*
 * Before ALTER COLUMN TYPE: the flows that read a retyped column, found while the
 * query still analyses as it did. Only for the table's owner (anyone else's ALTER
 * fails), under the lock the command takes (ACCESS EXCLUSIVE, the table then the
 * tables under it, as its recursion locks them), so that analysing the flows'
 * queries takes no weaker lock first that the command would then upgrade.
 */
FnRetyped *fn_before_retype(AlterTableStmt *stmt) {
	List *names = retyped_columns(stmt);
	FnRetyped *r;
	List *seen = NIL;
	ListCell *lc, *lc2;
	Oid relid;

	if (names == NIL || !OidIsValid(fn_catalog_relid(true)))
		return NULL;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid) || !fn_rel_ownercheck(relid, GetUserId()))
		return NULL;
	r = palloc0(sizeof(FnRetyped));
	foreach (lc, names)
		r->names = lappend(r->names, makeString(lfirst(lc)));
	LockRelationOid(relid, AccessExclusiveLock);
	r->relids = find_all_inheritors(relid, AccessExclusiveLock, NULL);
	foreach (lc, r->relids) {
		List *flows = fn_load_flows_of_relation(lfirst_oid(lc)); /* source, sink, dimension */

		refuse_time_column(flows, r);
		foreach (lc2, flows) {
			TaskConfig *cfg = lfirst(lc2);

			/* (a flow may read two of the tables: its source and its sink) */
			if (!cfg->bound || flow_in(seen, cfg->flow_id))
				continue;
			seen = lappend(seen, cfg);
			if (uses_columns(cfg, r))
				r->flows = lappend(r->flows, cfg);
		}
	}
	return r;
}

/* After it: the sinks' hidden key columns follow the query's types (a visible
 * column's type is the user's: a flow whose output type changed fails naming it),
 * then every window of those flows, source by source. */
void fn_after_retype(FnRetyped *r) {
	List *sources = NIL;
	ListCell *lc, *lc2;

	if (r == NULL)
		return;
	CommandCounterIncrement();
	foreach (lc, r->flows) {
		TaskConfig *cfg = lfirst(lc);
		FlowQuery *fq;

		/* the command altered the sink itself (the user's ALTER of a hidden column,
		 * or this very retyping, nested): left as it is, the refresh names what differs */
		if (list_member_oid(r->relids, cfg->sink_relid))
			continue;
		fq = fn_analysed_or_null(cfg, false);
		if (fq != NULL && fq->nvisible < list_length(fq->out_names))
			(void)fn_sink_follow_hidden_types(cfg->sink_relid, fq, cfg->flow_name);
	}
	foreach (lc, r->flows)
		sources = list_append_unique_oid(sources, ((TaskConfig *)lfirst(lc))->source_relid);
	foreach (lc, sources) {
		List *ids = NIL;

		foreach (lc2, r->flows) {
			TaskConfig *cfg = lfirst(lc2);

			if (cfg->source_relid == lfirst_oid(lc))
				ids = lappend(ids, &cfg->flow_id);
		}
		fn_mark_rows_extent(lfirst_oid(lc), ids);
	}
}
