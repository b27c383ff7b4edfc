/*
 * gt_dialect.c: a flow query as GreptimeDB writes it, read by PostgreSQL's analysis
 * (query/flow_query.c) through the two callbacks of a FlowQueryReading:
 * date_bin(stride, ts) gets GreptimeDB's origin, and an output name in HAVING
 * (HAVING max_temp > 100) reads as that output.
 */
#include "flownode.h"

#include "greptime/gt_dialect.h"

#include "catalog/namespace.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_expr.h"
#include "parser/parse_node.h"

/* GreptimeDB's date_bin(stride, ts): DataFusion's origin, the Unix epoch. */
#define GREPTIME_DATE_BIN_ORIGIN "1970-01-01 00:00:00+00"

static bool is_date_bin_name(List *funcname) {
	const char *name = strVal(llast(funcname));

	if (strcmp(name, "date_bin") != 0)
		return false;
	return list_length(funcname) == 1 ||
	       (list_length(funcname) == 2 && strcmp(strVal(linitial(funcname)), "pg_catalog") == 0);
}

/*
 * GreptimeDB writes date_bin(stride, ts); PostgreSQL's date_bin needs an origin. A
 * call with two arguments gets GreptimeDB's origin as its third, on the raw parse
 * tree (the text stays as written), unless a date_bin of two arguments exists here.
 */
static bool date_bin_walker(Node *node, void *context) {
	if (node == NULL)
		return false;
	if (IsA(node, FuncCall)) {
		FuncCall *fc = (FuncCall *)node;

		if (is_date_bin_name(fc->funcname) && list_length(fc->args) == 2 && fc->agg_order == NIL &&
		    fc->agg_filter == NULL && fc->over == NULL && !fc->agg_star && !fc->agg_distinct &&
		    !fc->func_variadic &&
		    FuncnameGetCandidates(fc->funcname, 2, NIL, false, false, false, true) == NULL) {
			A_Const *origin = makeNode(A_Const);

			origin->val.sval.type = T_String;
			origin->val.sval.sval = pstrdup(GREPTIME_DATE_BIN_ORIGIN);
			origin->location = -1;
			fc->args = lappend(fc->args, origin);
		}
	}
	return raw_expression_tree_walker(node, date_bin_walker, context);
}

/*
 * GreptimeDB (DataFusion) reads an output name in HAVING as that output's
 * expression: HAVING max_temp > 100. PostgreSQL looks only at the source's columns;
 * where it finds none, the output of that name is taken, as DataFusion does (a
 * column of the source keeps precedence).
 */
static Node *having_output_name(ParseState *pstate, ColumnRef *cref, Node *found) {
	List *targets = (List *)pstate->p_ref_hook_state;
	ResTarget *match = NULL;
	const char *name;
	ListCell *lc;

	if (found != NULL || pstate->p_expr_kind != EXPR_KIND_HAVING || list_length(cref->fields) != 1 ||
	    !IsA(linitial(cref->fields), String))
		return NULL;
	name = strVal(linitial(cref->fields));
	foreach (lc, targets) {
		ResTarget *rt = lfirst_node(ResTarget, lc);

		if (rt->name != NULL && strcmp(rt->name, name) == 0) {
			if (match != NULL)
				return NULL; /* ambiguous: PostgreSQL's error stands */
			match = rt;
		}
	}
	if (match == NULL)
		return NULL;
	return transformExpr(pstate, copyObject(match->val), EXPR_KIND_HAVING);
}

static void parser_setup(ParseState *pstate, void *arg) {
	pstate->p_post_columnref_hook = having_output_name;
	pstate->p_ref_hook_state = arg;
}

/* The raw SELECT's date_bin calls of two arguments given GreptimeDB's origin. */
static void rewrite_date_bin(SelectStmt *sel) {
	(void)raw_expression_tree_walker((Node *)sel, date_bin_walker, NULL);
}

static const FlowQueryReading greptime_reading = {rewrite_date_bin, parser_setup};

const FlowQueryReading *fn_gt_reading(FlowDialect dialect) {
	return dialect == FLOW_DIALECT_GREPTIME ? &greptime_reading : NULL;
}
