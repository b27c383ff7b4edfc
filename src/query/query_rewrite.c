/*
 * query_rewrite.c: what turns an analysed flow query into SQL that runs: the time
 * filter added on the parse tree, the deparse with every name schema-qualified, and
 * the settings both are pinned under. No SQL text is ever spliced.
 */
#include "flownode.h"

#include "query/query_rewrite.h"

#include "query/determinism.h"

#include "access/stratnum.h"
#include "catalog/pg_am.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/fmgroids.h"
#include "utils/ruleutils.h"
#include "utils/timestamp.h"

static const char *const pinned_names[] = {"search_path", "datestyle", "intervalstyle", "extra_float_digits"};
static const char *const pinned_values[] = {"pg_catalog, pg_temp", "ISO, YMD", "postgres", "3"};

/* True when every pinned setting already has its value (a flow's worker pins them
 * for its whole session once): re-pinning would then change nothing. */
static bool settings_already_pinned(const char *timezone) {
	const char *tz;

	for (size_t i = 0; i < lengthof(pinned_names); i++) {
		const char *v = GetConfigOption(pinned_names[i], true, false);

		if (v == NULL || strcmp(v, pinned_values[i]) != 0)
			return false;
	}
	tz = GetConfigOption("timezone", true, false);
	return timezone == NULL || (tz != NULL && strcmp(tz, timezone) == 0);
}

int fn_pin_deparse_settings(const char *timezone) {
	int nest;

	if (settings_already_pinned(timezone))
		return -1;
	nest = NewGUCNestLevel();
	for (size_t i = 0; i < lengthof(pinned_names); i++)
		(void)set_config_option(pinned_names[i], pinned_values[i], PGC_USERSET, PGC_S_SESSION,
		                        GUC_ACTION_SAVE, true, 0, false);
	if (timezone != NULL)
		(void)set_config_option("timezone", timezone, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
		                        false);
	return nest;
}

void fn_pin_session_settings(const char *timezone) {
	for (size_t i = 0; i < lengthof(pinned_names); i++)
		SetConfigOption(pinned_names[i], pinned_values[i], PGC_USERSET, PGC_S_SESSION);
	if (timezone != NULL)
		SetConfigOption("timezone", timezone, PGC_USERSET, PGC_S_SESSION);
}

void fn_unpin_settings(int nestlevel) {
	if (nestlevel >= 0)
		AtEOXact_GUC(true, nestlevel);
}

char *fn_deparse_query(Query *query) {
	return pg_get_querydef(copyObject(query), false);
}

static Expr *timestamp_const(Oid coltype, int64 value) {
	return (Expr *)makeConst(coltype, -1, InvalidOid, sizeof(int64), Int64GetDatum(value), false,
	                         FLOAT8PASSBYVAL);
}

static Expr *bound_param(Oid coltype, int paramid) {
	Param *p = makeNode(Param);

	p->paramkind = PARAM_EXTERN;
	p->paramid = paramid;
	p->paramtype = coltype;
	p->paramtypmod = -1;
	p->paramcollid = InvalidOid;
	p->location = -1;
	return (Expr *)p;
}

static Expr *compare(Oid coltype, int strategy, Var *var, Expr *bound) {
	Oid opfamily = get_opclass_family(GetDefaultOpClass(coltype, BTREE_AM_OID));
	Oid opno = get_opfamily_member(opfamily, coltype, coltype, strategy);
	OpExpr *op;

	if (!OidIsValid(opno))
		elog(ERROR, "flownode: no btree operator %d for type %u", strategy, coltype);
	op =
	    (OpExpr *)make_opclause(opno, BOOLOID, false, (Expr *)copyObject(var), bound, InvalidOid, InvalidOid);
	set_opfuncid(op);
	return (Expr *)op;
}

/*
 * Adds `col >= $1 AND col < $2 OR ... OR col >= $2n-1 AND col < $2n` to the query's
 * WHERE: the form the planner turns into (bitmap) index range scans on the time
 * column, with the bounds as parameters so that a worker keeps one prepared
 * statement per number of ranges. With nranges = 0 the filter admits every finite
 * timestamp: rows with a NULL or infinite time belong to no window and never reach
 * a sink.
 */
void fn_inject_time_filter(Query *query, int rtindex, AttrNumber attnum, Oid coltype, int nranges) {
	Var *var = makeVar(rtindex, attnum, coltype, -1, InvalidOid, 0);
	List *ors = NIL;
	Node *filter;

	if (nranges == 0) /* < infinity: every finite time */
		ors = list_make1(make_andclause(list_make2(
		    compare(coltype, BTGreaterEqualStrategyNumber, var, timestamp_const(coltype, MIN_TIMESTAMP)),
		    compare(coltype, BTLessStrategyNumber, var, timestamp_const(coltype, DT_NOEND)))));
	for (int i = 0; i < nranges; i++)
		ors = lappend(
		    ors, make_andclause(list_make2(
		             compare(coltype, BTGreaterEqualStrategyNumber, var, bound_param(coltype, 2 * i + 1)),
		             compare(coltype, BTLessStrategyNumber, var, bound_param(coltype, 2 * i + 2)))));
	filter = (list_length(ors) == 1) ? linitial(ors) : (Node *)make_orclause(ors);
	query->jointree->quals = make_and_qual(query->jointree->quals, filter);
}

/* What the evaluation's clock is replaced by: a parameter or a constant. */
typedef struct ClockBinding {
	int paramid; /* > 0: $paramid */
	TimestampTz at;
} ClockBinding;

static Node *bound_clock(Node *clock, const ClockBinding *b) {
	Expr *value;

	if (b->paramid > 0)
		value = bound_param(TIMESTAMPTZOID, b->paramid);
	else
		value = (Expr *)makeConst(TIMESTAMPTZOID, -1, InvalidOid, sizeof(int64), TimestampTzGetDatum(b->at),
		                          false, FLOAT8PASSBYVAL);
	if (IsA(clock, SQLValueFunction) && ((SQLValueFunction *)clock)->op == SVFOP_LOCALTIMESTAMP)
		return (Node *)makeFuncExpr(F_TIMESTAMPTZ_TIMESTAMP, TIMESTAMPOID, list_make1(value), InvalidOid,
		                            InvalidOid, COERCE_EXPLICIT_CALL);
	return (Node *)value;
}

static Node *bind_clock_mutator(Node *node, ClockBinding *b) {
	if (node == NULL)
		return NULL;
	if (fn_is_clock_now(node))
		return bound_clock(node, b);
	if (IsA(node, Query))
		return (Node *)query_tree_mutator((Query *)node, bind_clock_mutator, (void *)b, 0);
	return expression_tree_mutator(node, bind_clock_mutator, (void *)b);
}

Query *fn_bind_clock_param(Query *query, int paramid) {
	ClockBinding b = {paramid, 0};

	return query_tree_mutator(query, bind_clock_mutator, (void *)&b, 0);
}

Node *fn_bind_clock_const(Node *expr, TimestampTz at) {
	ClockBinding b = {0, at};

	return bind_clock_mutator(expr, &b);
}
