/*
 * flow_query.c: validates a flow's query on PostgreSQL's own parse tree and finds
 * its time window (TimeWindowExpr's inputs), output columns and group keys
 * (FlowQuery). The refresh rewrites a copy of the analysed tree (query_rewrite.c).
 */
#include "flownode.h"

#include "common/int.h"

#include "query/flow_query.h"

#include "query/determinism.h"
#include "query/flow_joins.h"

#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_clause.h"
#include "parser/parsetree.h"
#include "access/stratnum.h"
#include "parser/scansup.h"
#include "rewrite/rewriteManip.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#define QUERY_ERROR(msg, hint)                                                                               \
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("invalid flow query: %s", msg),           \
	                (hint) ? errhint("%s", (const char *)(hint)) : 0))

static Const *window_const_arg(Node *arg, const char *what) {
	Node *folded = eval_const_expressions(NULL, arg);

	if (!IsA(folded, Const))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: the %s of the time window must be a constant", what)));
	if (((Const *)folded)->constisnull)
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
		                errmsg("invalid flow query: the %s of the time window must not be NULL", what)));
	return (Const *)folded;
}

/* Maps any spelling PostgreSQL accepts for a date_trunc unit to one canonical name. */
static void canonical_unit(const char *given, char *out) {
	char *low = downcase_truncate_identifier(given, strlen(given), false);
	int val;
	const char *name = DecodeUnits(0, low, &val) == UNITS ? fn_trunc_unit_name(val) : NULL;

	if (name == NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		         errmsg("invalid flow query: date_trunc unit \"%s\" is not recognized", given),
		         errhint("Use one of microseconds, milliseconds, second, minute, hour, day, week, month, "
		                 "quarter, year, decade, century, millennium.")));
	strlcpy(out, name, FN_UNIT_LEN);
}

static bool is_window_function(Oid funcid) {
	switch (funcid) {
	case F_DATE_BIN_INTERVAL_TIMESTAMP_TIMESTAMP:
	case F_DATE_BIN_INTERVAL_TIMESTAMPTZ_TIMESTAMPTZ:
	case F_DATE_TRUNC_TEXT_TIMESTAMP:
	case F_DATE_TRUNC_TEXT_TIMESTAMPTZ:
	case F_DATE_TRUNC_TEXT_TIMESTAMPTZ_TEXT:
		return true;
	default:
		return false;
	}
}

/*
 * Fills fq->window from a date_bin/date_trunc call; ERROR when its time argument
 * is not a plain timestamp column of the source.
 */
static void read_window(FlowQuery *fq, FuncExpr *fe, const char *timezone) {
	bool is_bin = (fe->funcid == F_DATE_BIN_INTERVAL_TIMESTAMP_TIMESTAMP ||
	               fe->funcid == F_DATE_BIN_INTERVAL_TIMESTAMPTZ_TIMESTAMPTZ);
	Node *time_arg = (Node *)lsecond(fe->args);
	Var *var;
	FnWindowSpec *spec = &fq->window;

	while (IsA(time_arg, RelabelType))
		time_arg = (Node *)((RelabelType *)time_arg)->arg;
	if (!IsA(time_arg, Var) || ((Var *)time_arg)->varno != fq->source_rtindex ||
	    ((Var *)time_arg)->varlevelsup != 0 || ((Var *)time_arg)->varattno <= 0 ||
	    (((Var *)time_arg)->vartype != TIMESTAMPOID && ((Var *)time_arg)->vartype != TIMESTAMPTZOID))
		ereport(
		    ERROR,
		    (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		     errmsg("invalid flow query: the time window must be computed over a timestamp or timestamptz "
		            "column of the source table, not over an expression"),
		     errhint("Write date_bin(stride, column, origin) or date_trunc(unit, column) with a plain "
		             "timestamp column; rows are marked dirty by that column.")));
	var = (Var *)time_arg;
	memset(spec, 0, sizeof(*spec));
	spec->with_time_zone = (var->vartype == TIMESTAMPTZOID);
	fq->time_attnum = var->varattno;
	fq->time_column = get_attname(fq->source_relid, var->varattno, false);

	if (is_bin) {
		Interval *stride = DatumGetIntervalP(window_const_arg(linitial(fe->args), "stride")->constvalue);
		Const *origin = window_const_arg(lthird(fe->args), "origin");

		if (stride->month != 0)
			ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			                errmsg("invalid flow query: date_bin stride must not contain months or years"),
			                errhint("Use date_trunc('month', ...) for calendar months.")));
		if (stride->time < 0 || stride->day < 0 || (stride->time == 0 && stride->day == 0))
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			                errmsg("invalid flow query: date_bin stride must be positive")));
		{
			int64 usec;

			/* as date_bin itself: a stride must fit in microseconds */
			if (pg_mul_s64_overflow((int64)stride->day, USECS_PER_DAY, &usec) ||
			    pg_add_s64_overflow(usec, stride->time, &usec))
				ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				                errmsg("invalid flow query: date_bin stride is out of range"),
				                errhint("A stride must be shorter than about 292,000 years.")));
		}
		spec->kind = FN_WINDOW_DATE_BIN;
		spec->stride_time = stride->time;
		spec->stride_day = stride->day;
		spec->origin = DatumGetTimestamp(origin->constvalue);
		if (TIMESTAMP_NOT_FINITE(spec->origin))
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			                errmsg("invalid flow query: date_bin origin must be finite")));
	} else {
		Const *unit = window_const_arg(linitial(fe->args), "unit");

		spec->kind = FN_WINDOW_DATE_TRUNC;
		canonical_unit(TextDatumGetCString(unit->constvalue), spec->unit);
		if (list_length(fe->args) == 3)
			strlcpy(spec->zone,
			        TextDatumGetCString(window_const_arg(lthird(fe->args), "time zone")->constvalue),
			        FN_ZONE_LEN);
		else if (spec->with_time_zone)
			strlcpy(spec->zone, timezone, FN_ZONE_LEN);
	}
	fn_window_check(spec);
}

static Node *strip_relabel(Node *n) {
	while (n && IsA(n, RelabelType))
		n = (Node *)((RelabelType *)n)->arg;
	return n;
}

/* The range-table index the first window function's time argument reads (a Var of
 * this query level), 0 if none: in a join, that table is the fact table. */
static int window_varno(Query *q) {
	ListCell *lc;

	foreach (lc, q->groupClause) {
		TargetEntry *tle = get_sortgroupclause_tle(lfirst_node(SortGroupClause, lc), q->targetList);
		Node *expr = strip_relabel((Node *)tle->expr);
		Node *time_arg;

		if (!IsA(expr, FuncExpr) || !is_window_function(((FuncExpr *)expr)->funcid))
			continue;
		time_arg = strip_relabel((Node *)lsecond(((FuncExpr *)expr)->args));
		return IsA(time_arg, Var) && ((Var *)time_arg)->varlevelsup == 0 ? (int)((Var *)time_arg)->varno : 0;
	}
	return 0;
}

/* The window expression as the flows view shows it: over the source alone, whose
 * Vars the one-table deparse context numbers 1 (in a join it may be another). */
static char *deparse_window(FlowQuery *fq, TargetEntry *window_tle) {
	Node *expr = copyObject((Node *)window_tle->expr);

	ChangeVarNodes(expr, fq->source_rtindex, 1, 0);
	return deparse_expression(expr, deparse_context_for(get_rel_name(fq->source_relid), fq->source_relid),
	                          false, false);
}

/* Errors inside the flow query point into the flow query, not the caller's SQL. */
static void flow_query_error_context(void *arg) {
	const char *sql = (const char *)arg;
	int pos = geterrposition();

	if (pos > 0) {
		errposition(0);
		internalerrposition(pos);
		internalerrquery(sql);
	}
	errcontext("flow query");
}

FlowQuery *fn_analyze_flow_query(const char *sql, const char *timezone) {
	FlowQuery *fq = palloc0(sizeof(FlowQuery));
	ErrorContextCallback errcb;
	List *raw;
	RawStmt *rs;
	SelectStmt *sel;
	Query *q;
	RangeTblEntry *rte = NULL;
	ListCell *lc;
	int pos;
	List *key_tles = NIL;
	TargetEntry *window_tle = NULL;

	errcb.callback = flow_query_error_context;
	errcb.arg = (void *)sql;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	raw = pg_parse_query(sql);
	if (list_length(raw) != 1)
		QUERY_ERROR(list_length(raw) == 0 ? "the query is empty" : "the query must be exactly one statement",
		            "Pass a single SELECT ... GROUP BY statement.");
	rs = linitial_node(RawStmt, raw);
	if (!IsA(rs->stmt, SelectStmt))
		QUERY_ERROR("the query must be a SELECT statement", NULL);
	sel = (SelectStmt *)rs->stmt;
	if (sel->intoClause != NULL)
		QUERY_ERROR("SELECT INTO is not allowed", NULL);
	if (sel->op != SETOP_NONE)
		QUERY_ERROR("UNION, INTERSECT and EXCEPT are not supported", NULL);
	if (sel->valuesLists != NIL)
		QUERY_ERROR("VALUES is not an aggregation", NULL);
	if (sel->lockingClause != NIL)
		QUERY_ERROR("FOR UPDATE/SHARE is not allowed", NULL);
	if (sel->withClause != NULL)
		QUERY_ERROR("WITH is not supported", "Join the tables in FROM instead of through a CTE.");

	q = parse_analyze_fixedparams(rs, sql, NULL, 0, NULL);
	error_context_stack = errcb.previous;
	fq->query = q;

	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL)
		QUERY_ERROR("the query must be a SELECT statement", NULL);
	if (q->hasSubLinks)
		QUERY_ERROR("subqueries are not supported",
		            "A flow reads one source table, joined to dimension tables by equalities.");
	if (q->hasWindowFuncs)
		QUERY_ERROR("window functions are not supported", NULL);
	if (q->hasTargetSRFs)
		QUERY_ERROR("set-returning functions are not supported", NULL);
	if (q->limitCount != NULL || q->limitOffset != NULL)
		QUERY_ERROR("LIMIT and OFFSET are not supported", NULL);
	if (q->groupingSets != NIL)
		QUERY_ERROR("GROUPING SETS, ROLLUP and CUBE are not supported", NULL);
	if (q->distinctClause != NIL)
		QUERY_ERROR("DISTINCT is not supported", NULL);
	if (q->groupClause == NIL)
		QUERY_ERROR(
		    "the query must aggregate with GROUP BY",
		    "A flow keeps one sink row per group: write SELECT date_bin(...) AS w, ..., agg(...) FROM "
		    "source GROUP BY w, ...");

	/* one plain table, or a fact table joined with dimension tables (flow_joins.c):
	 * the source is the table whose column the window reads */
	fq->source_rtindex = fn_join_fact_rtindex(q, window_varno(q));
	rte = rt_fetch(fq->source_rtindex, q->rtable);
	if (rte->rtekind != RTE_RELATION)
		QUERY_ERROR("the query must read a table, not a subquery or function", NULL);
	if (rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
		        (errcode(ERRCODE_WRONG_OBJECT_TYPE),
		         errmsg("invalid flow query: source \"%s\" is not a table", get_rel_name(rte->relid)),
		         errhint("Views, materialized views and foreign tables are not supported as flow sources.")));
	if (get_rel_persistence(rte->relid) == RELPERSISTENCE_TEMP)
		QUERY_ERROR("the source must not be a temporary table",
		            "The flow's worker runs in its own session and cannot see it.");
	/* a partitioned table's rows are in its partitions, which the flow reads with it
	 * (source_triggers.c marks them); an inheritance parent's children are not */
	if (rte->relkind == RELKIND_PARTITIONED_TABLE && !rte->inh)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: FROM ONLY of partitioned table \"%s\" reads no rows",
		                       get_rel_name(rte->relid)),
		                errhint("Leave out ONLY: a flow over a partitioned table reads every partition.")));
	if (rte->relkind == RELKIND_RELATION && rte->inh && has_subclass(rte->relid))
		QUERY_ERROR("sources with inheritance children are not supported; use FROM ONLY", NULL);
	fq->source_relid = rte->relid;
	/* nothing whose answer can change without a write to the source: the error names
	 * the function or construct and points into the flow query */
	error_context_stack = &errcb;
	fn_check_deterministic(q, sql);
	error_context_stack = errcb.previous;
	if (contain_volatile_functions((Node *)q)) /* a backstop: refused above already */
		QUERY_ERROR("volatile functions are not allowed",
		            "A flow re-runs its query per window; its result must depend only on the rows.");

	/* output columns */
	pos = 0;
	foreach (lc, q->targetList) {
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		ListCell *lc2;

		if (tle->resjunk)
			continue;
		if (tle->resname == NULL || strcmp(tle->resname, "?column?") == 0)
			ereport(ERROR,
			        (errcode(ERRCODE_INVALID_COLUMN_DEFINITION),
			         errmsg("invalid flow query: output column %d has no name", pos + 1),
			         errhint("Name every output column with AS; the names become the sink's columns.")));
		foreach (lc2, fq->out_names)
			if (strcmp((char *)lfirst(lc2), tle->resname) == 0)
				ereport(ERROR, (errcode(ERRCODE_DUPLICATE_COLUMN),
				                errmsg("invalid flow query: output column name \"%s\" is used twice",
				                       tle->resname)));
		/* any type a table can store works (the refresh compares binary images); a
		 * pseudo-type such as record (an anonymous ROW(...)) cannot be a sink column */
		if (get_typtype(exprType((Node *)tle->expr)) == TYPTYPE_PSEUDO)
			ereport(ERROR,
			        (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
			         errmsg("invalid flow query: output column \"%s\" has pseudo-type %s", tle->resname,
			                format_type_be(exprType((Node *)tle->expr))),
			         errhint("A sink column cannot hold it: cast it to a type a table can store, such as a "
			                 "composite type made with CREATE TYPE ... AS (...).")));
		fq->out_names = lappend(fq->out_names, pstrdup(tle->resname));
		fq->out_types = lappend_oid(fq->out_types, exprType((Node *)tle->expr));
		fq->out_typmods = lappend_int(fq->out_typmods, exprTypmod((Node *)tle->expr));
		fq->out_collations = lappend_oid(fq->out_collations, exprCollation((Node *)tle->expr));
		pos++;
	}

	/* group keys, all of which must be output columns; the window key goes first */
	fq->window_position = -1;
	foreach (lc, q->groupClause) {
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		TargetEntry *tle = get_sortgroupclause_tle(sgc, q->targetList);
		Node *expr = strip_relabel((Node *)tle->expr);

		if (tle->resjunk)
			ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			                errmsg("invalid flow query: every GROUP BY expression must be an output column"),
			                errhint("The group keys become the sink's primary key.")));
		if (window_tle == NULL && IsA(expr, FuncExpr) && is_window_function(((FuncExpr *)expr)->funcid)) {
			window_tle = tle;
			read_window(fq, (FuncExpr *)expr, timezone);
		} else
			key_tles = lappend(key_tles, tle);
	}
	if (window_tle != NULL)
		key_tles = lcons(window_tle, key_tles);

	foreach (lc, key_tles) {
		TargetEntry *tle = lfirst(lc);
		Node *expr = strip_relabel((Node *)tle->expr);
		int out = 0;
		bool notnull = (tle == window_tle);
		ListCell *lc2;

		foreach (lc2, q->targetList) {
			TargetEntry *t = lfirst(lc2);

			if (t == tle)
				break;
			if (!t->resjunk)
				out++;
		}
		if (tle == window_tle)
			fq->window_position = out;
		if (!notnull && IsA(expr, Var) && ((Var *)expr)->varno == fq->source_rtindex &&
		    ((Var *)expr)->varattno > 0) {
			HeapTuple atttup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(fq->source_relid),
			                                   Int16GetDatum(((Var *)expr)->varattno));

			if (HeapTupleIsValid(atttup)) {
				notnull = ((Form_pg_attribute)GETSTRUCT(atttup))->attnotnull;
				ReleaseSysCache(atttup);
			}
		}
		fq->key_positions = lappend_int(fq->key_positions, out);
		fq->key_notnull = lappend_int(fq->key_notnull, notnull ? 1 : 0);
	}

	fq->dimensions =
	    fn_join_dimensions(q, fq->source_rtindex, fq->window.kind != FN_WINDOW_NONE ? fq->time_attnum : 0);
	if (window_tle != NULL)
		fq->window_text = deparse_window(fq, window_tle);
	else
		fq->window.kind = FN_WINDOW_NONE;
	return fq;
}
