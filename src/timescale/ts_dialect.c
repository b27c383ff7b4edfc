/*
 * ts_dialect.c: the query of TimescaleDB's CREATE MATERIALIZED VIEW, read by
 * PostgreSQL's analysis (query/flow_query.c) through a FlowQueryReading that rewrites
 * its raw parse tree, so the text stays as written:
 *   - time_bucket(...), first(value, time) and last(value, time), written without a
 *     schema or as public.name, are flownode's (TimescaleDB's functions) unless a
 *     function of that name is in reach;
 *   - timescaledb_experimental.time_bucket_ng(...) is the flownode.time_bucket call
 *     that computes its buckets, time zone forms included (ts_bucket_ng.c);
 *   - CREATE MATERIALIZED VIEW v (a, b, ...) names the outputs a, b, ...: the sink's
 *     columns. A GROUP BY or ORDER BY that named an output by its former alias names
 *     its expression instead, which is what the alias meant there;
 *   - an output left without a name gets the one PostgreSQL's CREATE MATERIALIZED
 *     VIEW gives it (FigureColname: "avg", "?column?"), written as its alias so the
 *     stored query keeps it (a plain create_flow still asks for a name).
 */
#include "flownode.h"

#include "timescale/ts_dialect.h"
#include "timescale/ts_bucket_ng.h"

#include "catalog/namespace.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_node.h"
#include "parser/parse_target.h"
#include "parser/parser.h"
#include "utils/lsyscache.h"

/* The column names of the statement being run: the reading is used while its
 * create_flow runs, and set again by each statement. */
static List *view_columns = NIL;

/* `name`, written without a schema or as public.name: TimescaleDB's function. */
static bool is_timescale_name(List *funcname, const char *name) {
	if (strcmp(strVal(llast(funcname)), name) != 0)
		return false;
	return list_length(funcname) == 1 ||
	       (list_length(funcname) == 2 && strcmp(strVal(linitial(funcname)), "public") == 0);
}

static bool is_time_bucket_ng_name(List *funcname) {
	return list_length(funcname) == 2 &&
	       strcmp(strVal(linitial(funcname)), "timescaledb_experimental") == 0 &&
	       strcmp(strVal(lsecond(funcname)), "time_bucket_ng") == 0;
}

static bool time_bucket_walker(Node *node, void *context) {
	if (node == NULL)
		return false;
	if (IsA(node, FuncCall)) {
		FuncCall *fc = (FuncCall *)node;

		/* TimescaleDB's own, when it is installed, stays: it is the one the user means */
		const char *ours = NULL;

		if (is_timescale_name(fc->funcname, "time_bucket") || is_time_bucket_ng_name(fc->funcname))
			ours = "time_bucket";
		else if (list_length(fc->args) == 2 &&
		         (is_timescale_name(fc->funcname, "first") || is_timescale_name(fc->funcname, "last")))
			ours = strVal(llast(fc->funcname));
		if (ours != NULL && FuncnameGetCandidates(fc->funcname, -1, NIL, true, true, false, true) == NULL) {
			if (is_time_bucket_ng_name(fc->funcname))
				fn_ts_time_bucket_ng_call(fc);
			else
				fc->funcname = list_make2(makeString(FLOWNODE_SCHEMA), makeString(pstrdup(ours)));
		}
	}
	return raw_expression_tree_walker(node, time_bucket_walker, context);
}

/* Whether `name` may be a column of a table the FROM clause reads (a subquery or a
 * function there: it may). PostgreSQL takes such a column before an output alias. */
static bool may_be_source_column(List *from, const char *name) {
	ListCell *lc;

	foreach (lc, from) {
		Node *item = lfirst(lc);

		if (IsA(item, RangeVar)) {
			Oid relid = RangeVarGetRelid((RangeVar *)item, NoLock, true);

			if (OidIsValid(relid) && get_attnum(relid, name) != InvalidAttrNumber)
				return true;
		} else if (IsA(item, JoinExpr)) {
			JoinExpr *j = (JoinExpr *)item;

			if (may_be_source_column(list_make2(j->larg, j->rarg), name))
				return true;
		} else
			return true;
	}
	return false;
}

/* A GROUP BY or ORDER BY item naming a renamed output by its alias: that output's
 * expression (NULL: leave the item as it is). */
static Node *aliased_output(SelectStmt *sel, List *aliases, Node *item) {
	ColumnRef *cref;
	const char *name;
	ListCell *lc, *lc2;

	if (!IsA(item, ColumnRef))
		return NULL;
	cref = (ColumnRef *)item;
	if (list_length(cref->fields) != 1 || !IsA(linitial(cref->fields), String))
		return NULL;
	name = strVal(linitial(cref->fields));
	forboth(lc, aliases, lc2, sel->targetList) {
		const char *alias = lfirst(lc);

		if (alias != NULL && strcmp(alias, name) == 0)
			return may_be_source_column(sel->fromClause, name) ? NULL
			                                                   : copyObject(lfirst_node(ResTarget, lc2)->val);
	}
	return NULL;
}

static void name_outputs(SelectStmt *sel) {
	List *aliases = NIL;
	ListCell *lc, *lc2;

	if (list_length(view_columns) > list_length(sel->targetList))
		ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR),
		                errmsg("CREATE MATERIALIZED VIEW specifies more column names than the query has "
		                       "outputs"),
		                errhint("Name at most %d columns, or leave the column list out.",
		                        list_length(sel->targetList))));
	foreach (lc, sel->targetList)
		aliases = lappend(aliases, lfirst_node(ResTarget, lc)->name);
	foreach (lc, sel->groupClause) {
		Node *expr = aliased_output(sel, aliases, lfirst(lc));

		if (expr != NULL)
			lfirst(lc) = expr;
	}
	foreach (lc, sel->sortClause) {
		SortBy *sb = lfirst_node(SortBy, lc);
		Node *expr = aliased_output(sel, aliases, sb->node);

		if (expr != NULL)
			sb->node = expr;
	}
	forboth(lc, view_columns, lc2, sel->targetList) lfirst_node(ResTarget, lc2)->name =
	    pstrdup(strVal(lfirst(lc)));
}

/* Outputs without a name: PostgreSQL's name for them, as CREATE MATERIALIZED VIEW
 * gives it (a `*` is its columns, named already). */
static void name_unnamed(SelectStmt *sel) {
	ListCell *lc;

	foreach (lc, sel->targetList) {
		ResTarget *rt = lfirst_node(ResTarget, lc);

		if (rt->name == NULL &&
		    !(IsA(rt->val, ColumnRef) && IsA(llast(((ColumnRef *)rt->val)->fields), A_Star)))
			rt->name = FigureColname(rt->val);
	}
}

static void rewrite(SelectStmt *sel) {
	(void)raw_expression_tree_walker((Node *)sel, time_bucket_walker, NULL);
	if (view_columns != NIL)
		name_outputs(sel);
	name_unnamed(sel);
}

/* The analysis calls a setup with the raw target list; this reading needs none. */
static void no_setup(ParseState *pstate pg_attribute_unused(), void *arg pg_attribute_unused()) {}

static const FlowQueryReading timescale_reading = {rewrite, no_setup};

const FlowQueryReading *fn_ts_reading(List *column_names) {
	view_columns = column_names;
	return &timescale_reading;
}
