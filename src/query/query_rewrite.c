/*
 * query_rewrite.c: what turns an analysed flow query into SQL that runs: the time
 * filter added on the parse tree, the deparse with every name schema-qualified, and
 * the settings both are pinned under. No SQL text is ever spliced.
 */
#include "flownode.h"

#include "query/query_rewrite.h"

#include "query/determinism.h"
#include "query/range_filter.h"

#include "access/relation.h"
#include "access/stratnum.h"
#include "catalog/pg_am.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
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

static Expr *compare_with(Oid coltype, Oid boundtype, int strategy, Var *var, Expr *bound) {
	Oid opfamily = get_opclass_family(GetDefaultOpClass(coltype, BTREE_AM_OID));
	Oid opno = get_opfamily_member(opfamily, coltype, boundtype, strategy);
	OpExpr *op;

	if (!OidIsValid(opno))
		elog(ERROR, "flownode: no btree operator %d for type %u", strategy, coltype);
	op =
	    (OpExpr *)make_opclause(opno, BOOLOID, false, (Expr *)copyObject(var), bound, InvalidOid, InvalidOid);
	set_opfuncid(op);
	return (Expr *)op;
}

static Expr *compare(Oid coltype, int strategy, Var *var, Expr *bound) {
	return compare_with(coltype, coltype, strategy, var, bound);
}

/*
 * The function RTE of `ROWS FROM (unnest($1), unnest($2)) AS fn_r(lo, hi)` over two
 * arrays of the column's type, made by PostgreSQL's own analysis of that text (ours,
 * not the user's): the refresh's windows, one row per range. (`unnest` unqualified:
 * only that spelling takes two arrays; the settings pin search_path to pg_catalog.)
 */
static RangeTblEntry *ranges_rte(Oid coltype, int first_param) {
	char *sql = psprintf("SELECT FROM unnest($%d, $%d) AS fn_r(lo, hi)", first_param, first_param + 1);
	Oid arraytype = get_array_type(coltype);
	Oid types[4] = {arraytype, arraytype, arraytype, arraytype};
	RawStmt *raw = linitial_node(RawStmt, raw_parser(sql, RAW_PARSE_DEFAULT));
	Query *q = parse_analyze_fixedparams(raw, sql, types, first_param + 1, NULL);

	Assert(first_param + 1 <= (int)lengthof(types));
	return linitial_node(RangeTblEntry, q->rtable);
}

/*
 * `flownode.in_ranges(col, $1, $2)`, analysed by PostgreSQL from that text with a
 * third parameter where the column goes, which is then replaced by the column. The
 * function reads the ranges once per statement and each row costs one binary search
 * over int64 bounds (query/range_filter.c; `col <@` the ranges' multirange costs
 * more a row: bench/README.md, "Figures behind the code").
 */
static Node *contained_in_ranges(Var *var, Oid coltype) {
	const char *sql = "SELECT " FN_IN_RANGES_FUNCTION "($3, $1, $2)";
	Oid arraytype = get_array_type(coltype);
	Oid types[3] = {arraytype, arraytype, coltype};
	RawStmt *raw = linitial_node(RawStmt, raw_parser(sql, RAW_PARSE_DEFAULT));
	Query *q = parse_analyze_fixedparams(raw, sql, types, 3, NULL);
	FuncExpr *call = castNode(FuncExpr, linitial_node(TargetEntry, q->targetList)->expr);

	Assert(IsA(linitial(call->args), Param));
	linitial(call->args) = copyObject(var);
	return (Node *)call;
}

typedef struct RangeBounds {
	int ranges_rtindex; /* fn_r in the outer query */
} RangeBounds;

/* The subquery's $1 and $2 become fn_r.lo and fn_r.hi of the query one level up. */
static Node *bounds_to_outer_vars(Node *node, RangeBounds *b) {
	if (node == NULL)
		return NULL;
	if (IsA(node, Param) && ((Param *)node)->paramkind == PARAM_EXTERN && ((Param *)node)->paramid <= 2) {
		Param *p = (Param *)node;

		return (Node *)makeVar(b->ranges_rtindex, p->paramid, p->paramtype, -1, InvalidOid, 1);
	}
	return expression_tree_mutator(node, bounds_to_outer_vars, b);
}

/*
 * The source's rows of one range, as a LATERAL subquery in place of the source:
 *   (SELECT c1, c2, ... FROM [ONLY] source WHERE col >= fn_r.lo AND col < fn_r.hi
 *    OFFSET 0) AS source
 * its columns in the table's order (a dropped one as a NULL), so every Var of the
 * query means what it meant. OFFSET 0 keeps the planner from flattening it into
 * the outer join, where it would weigh `col >= fn_r.lo AND col < fn_r.hi` as a join
 * on two inequalities (a ninth of the table per range) and could read the whole
 * table once for every range. Kept apart, each range is a scan of the time index.
 */
static void fence_source(Query *query, int rtindex, AttrNumber attnum, Oid coltype, const char *upper_op,
                         int ranges_rtindex) {
	RangeTblEntry *rte = rt_fetch(rtindex, query->rtable);
	Relation rel = relation_open(rte->relid, NoLock); /* locked by the analysis */
	TupleDesc desc = RelationGetDescr(rel);
	StringInfoData sql;
	Oid types[2] = {coltype, coltype};
	RawStmt *raw;
	Query *sub;
	List *names = NIL;
	RangeBounds b = {ranges_rtindex};

	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	for (int i = 0; i < desc->natts; i++) {
		Form_pg_attribute att = TupleDescAttr(desc, i);
		char *name = att->attisdropped ? psprintf("fn dropped %d", i + 1) : NameStr(att->attname);

		if (att->attisdropped)
			appendStringInfo(&sql, "%sNULL::pg_catalog.int4 AS %s", i ? ", " : "", quote_identifier(name));
		else
			appendStringInfo(&sql, "%s%s", i ? ", " : "", quote_identifier(name));
		names = lappend(names, makeString(pstrdup(name)));
	}
	appendStringInfo(&sql, " FROM %s%s WHERE %s >= $1 AND %s %s $2 OFFSET 0", rte->inh ? "" : "ONLY ",
	                 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
	                                            RelationGetRelationName(rel)),
	                 quote_identifier(NameStr(TupleDescAttr(desc, attnum - 1)->attname)),
	                 quote_identifier(NameStr(TupleDescAttr(desc, attnum - 1)->attname)), upper_op);
	relation_close(rel, NoLock);
	raw = linitial_node(RawStmt, raw_parser(sql.data, RAW_PARSE_DEFAULT));
	sub = parse_analyze_fixedparams(raw, sql.data, types, 2, NULL);
	sub->jointree->quals = bounds_to_outer_vars(sub->jointree->quals, &b);

	if (rte->alias == NULL)
		rte->alias = makeAlias(rte->eref->aliasname, NIL);
	rte->eref->colnames = names;
	rte->rtekind = RTE_SUBQUERY;
	rte->subquery = sub;
	rte->lateral = true;
	rte->relid = InvalidOid;
	rte->relkind = 0;
	rte->rellockmode = NoLock;
	rte->tablesample = NULL;
	rte->inh = false;
	fn_rte_clear_permissions(query, rte);
	query->hasSubLinks |= sub->hasSubLinks;
}

/*
 * Restricts the query to the refresh's windows.
 * - FN_FILTER_JOIN reads the source range by range:
 *     FROM ROWS FROM (unnest($1), unnest($2)) fn_r(lo, hi),
 *          LATERAL (SELECT ... FROM source WHERE col >= fn_r.lo AND col < fn_r.hi
 *                   OFFSET 0) source
 *   a scan of the time column's index per range (fence_source). The ranges are
 *   disjoint, so no row is read twice and the aggregates see each row once.
 * - FN_FILTER_CONTAINS, for a source without such an index, where that join would
 *   compare every row with every range: the table is read once, each row looked up
 *   in the ranges (flownode.in_ranges).
 * Either way the statement has one shape however many ranges a refresh covers (one
 * prepared plan serves them all; neither planning nor JIT grows with a backlog).
 * - FN_FILTER_ALL_FINITE admits every finite timestamp: rows with a NULL or infinite
 *   time belong to no window and never reach a sink.
 */
void fn_inject_time_filter(Query *query, int rtindex, AttrNumber attnum, Oid coltype, FnRangeFilter how) {
	Var *var = makeVar(rtindex, attnum, coltype, -1, InvalidOid, 0);
	Node *filter;

	if (how == FN_FILTER_ALL_FINITE)
		filter = (Node *)make_andclause(list_make2(
		    compare(coltype, BTGreaterEqualStrategyNumber, var, timestamp_const(coltype, MIN_TIMESTAMP)),
		    compare(coltype, BTLessStrategyNumber, var, timestamp_const(coltype, DT_NOEND))));
	else if (how == FN_FILTER_CONTAINS) {
		filter = contained_in_ranges(var, coltype);
	} else {
		RangeTblRef *ref = makeNode(RangeTblRef);

		/* first in FROM: the LATERAL source refers to it */
		query->rtable = lappend(query->rtable, ranges_rte(coltype, 1));
		ref->rtindex = list_length(query->rtable);
		query->jointree->fromlist = lcons(ref, query->jointree->fromlist);
		fence_source(query, rtindex, attnum, coltype, "<", ref->rtindex);
		return;
	}
	query->jointree->quals = make_and_qual(query->jointree->quals, filter);
}

/* Replaces the placeholder parameter `paramid` by the column. */
static Node *param_to_column(Node *node, Var *var) {
	if (node == NULL)
		return NULL;
	if (IsA(node, Param) && ((Param *)node)->paramkind == PARAM_EXTERN && ((Param *)node)->paramid == 5)
		return (Node *)copyObject(var);
	return expression_tree_mutator(node, param_to_column, var);
}

/*
 * `col <@ (SELECT range_agg(daterange(fn_r.lo, fn_r.hi)) FROM unnest($3, $4) AS
 * fn_r(lo, hi))` for a date column, int8range over `col::int8` for an integer one:
 * the CONTAINS shape over the column's own values. Its ranges are [lo, hi), hi NULL
 * (an integer column) or infinity (a date) when unbounded (fn_time_input_bounds
 * gives inclusive ranges, and hi + 1 may not exist).
 */
static Node *contained_in_bounds(Var *var, Oid coltype, Oid boundtype) {
	const char *rangefn = boundtype == DATEOID ? "daterange" : "int8range";
	char *sql = psprintf("SELECT $5%s OPERATOR(pg_catalog.<@) (SELECT pg_catalog.range_agg(pg_catalog.%s("
	                     "fn_r.lo, fn_r.hi)) FROM unnest($3, $4) AS fn_r(lo, hi))",
	                     boundtype == DATEOID ? "" : "::pg_catalog.int8", rangefn);
	Oid arraytype = get_array_type(boundtype);
	Oid types[5] = {arraytype, arraytype, arraytype, arraytype, coltype};
	RawStmt *raw = linitial_node(RawStmt, raw_parser(sql, RAW_PARSE_DEFAULT));
	Query *q = parse_analyze_fixedparams(raw, sql, types, 5, NULL);

	return param_to_column((Node *)linitial_node(TargetEntry, q->targetList)->expr, var);
}

/*
 * fn_inject_time_filter for a time column that is a date or an integer epoch
 * (query/time_input.h): the filter is on the column itself, so its own index reads
 * the rows. The windows' times are the arguments $1 and $2 (the sink's side reads
 * them); the column's values are $3 and $4, inclusive ranges [lo, hi] of a date
 * column's dates or of an integer column's values (as bigint) for FN_FILTER_JOIN,
 * [lo, hi) ranges for FN_FILTER_CONTAINS (contained_in_bounds).
 */
void fn_inject_input_filter(Query *query, int rtindex, AttrNumber attnum, Oid timetype,
                            const FnTimeInput *input, FnRangeFilter how) {
	Oid boundtype = fn_time_input_bound_type(input, timetype);
	Oid coltype;
	Var *var;
	Node *filter;

	if (input->kind == FN_INPUT_TIMESTAMP) {
		fn_inject_time_filter(query, rtindex, attnum, timetype, how);
		return;
	}
	coltype = get_atttype(rt_fetch(rtindex, query->rtable)->relid, attnum);
	var = makeVar(rtindex, attnum, coltype, -1, InvalidOid, 0);
	if (how == FN_FILTER_ALL_FINITE) {
		/* every value with a window: all but a date's +-infinity */
		int16 len;
		bool byval;
		Expr *lo, *hi;

		get_typlenbyval(boundtype, &len, &byval);
		lo = (Expr *)makeConst(boundtype, -1, InvalidOid, len,
		                       fn_time_input_datum(input, fn_time_input_min(input)), false, byval);
		hi = (Expr *)makeConst(boundtype, -1, InvalidOid, len,
		                       fn_time_input_datum(input, fn_time_input_max(input)), false, byval);
		filter = (Node *)make_andclause(
		    list_make2(compare_with(coltype, boundtype, BTGreaterEqualStrategyNumber, var, lo),
		               compare_with(coltype, boundtype, BTLessEqualStrategyNumber, var, hi)));
	} else if (how == FN_FILTER_CONTAINS) {
		filter = contained_in_bounds(var, coltype, boundtype);
		query->hasSubLinks = true;
	} else {
		RangeTblRef *ref = makeNode(RangeTblRef);

		/* first in FROM: the LATERAL source refers to it */
		query->rtable = lappend(query->rtable, ranges_rte(boundtype, 3));
		ref->rtindex = list_length(query->rtable);
		query->jointree->fromlist = lcons(ref, query->jointree->fromlist);
		fence_source(query, rtindex, attnum, boundtype, "<=", ref->rtindex);
		return;
	}
	query->jointree->quals = make_and_qual(query->jointree->quals, filter);
}

static Expr *bound_param(Oid type, int paramid) {
	Param *p = makeNode(Param);

	p->paramkind = PARAM_EXTERN;
	p->paramid = paramid;
	p->paramtype = type;
	p->paramtypmod = -1;
	p->paramcollid = InvalidOid;
	p->location = -1;
	return (Expr *)p;
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
