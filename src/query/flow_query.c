/*
 * flow_query.c: validates a flow's query on PostgreSQL's own parse tree and finds
 * its time window (TimeWindowExpr's inputs), output columns and group keys
 * (FlowQuery). The refresh rewrites a copy of the analysed tree (query_rewrite.c).
 */
#include "flownode.h"

#include "common/int.h"
#include "catalog/namespace.h"
#include "catalog/pg_index.h"
#include "nodes/nodes.h"
#include "mb/pg_wchar.h"
#include "parser/parse_expr.h"
#include "parser/parse_node.h"

#include "query/flow_query.h"

#include "query/bucket_window.h"
#include "query/determinism.h"
#include "query/flow_joins.h"
#include "query/hidden_keys.h"

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
#include "parser/parser.h"
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

/* An invalid flow query: its message and hint written whole at each use (each a
 * string literal, so that both are translated as they stand). */
#define QUERY_ERROR(msg) ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg(msg)))
#define QUERY_ERROR_HINT(msg, hint)                                                                          \
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg(msg), errhint(hint)))

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

static bool is_window_function(FuncExpr *fe) {
	switch (fe->funcid) {
	case F_DATE_BIN_INTERVAL_TIMESTAMP_TIMESTAMP:
	case F_DATE_BIN_INTERVAL_TIMESTAMPTZ_TIMESTAMPTZ:
	case F_DATE_TRUNC_TEXT_TIMESTAMP:
	case F_DATE_TRUNC_TEXT_TIMESTAMPTZ:
	case F_DATE_TRUNC_TEXT_TIMESTAMPTZ_TEXT:
		return true;
	default:
		return fn_is_bucket_window(fe);
	}
}

/* Whether a window function call is inside the expression (a key such as
 * `date_trunc('day', ts)::date`, which is no window itself). */
static bool contains_window_walker(Node *node, void *context) {
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && is_window_function((FuncExpr *)node))
		return true;
	return expression_tree_walker(node, contains_window_walker, context);
}

/*
 * date_bin or date_trunc over `col AT TIME ZONE z` without converting back: the local
 * time goes back an hour when the zone's offset falls, so its buckets are no
 * windows of the column. Says which form of the same grouping is one.
 */
static Node *strip_relabel(Node *n);

static void refuse_local_time(FuncExpr *fe) {
	Node *arg = strip_relabel((Node *)lsecond(fe->args));
	bool is_bin = fe->funcid == F_DATE_BIN_INTERVAL_TIMESTAMP_TIMESTAMP;

	if (!IsA(arg, FuncExpr) || ((FuncExpr *)arg)->funcid != F_TIMEZONE_TEXT_TIMESTAMPTZ)
		return;
	ereport(ERROR,
	        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
	         errmsg("invalid flow query: a time window over the local time of a timestamptz column must "
	                "convert its buckets back to timestamptz"),
	         errdetail("Local times repeat when the zone's offset falls, so buckets of local times are "
	                   "not ranges of the column."),
	         is_bin ? errhint("Write date_bin(stride, col AT TIME ZONE 'zone', origin) AT TIME ZONE 'zone', "
	                          "or flownode.time_bucket(stride, col, 'zone').")
	                : errhint("Write date_trunc(unit, col, 'zone'), which truncates in that zone and "
	                          "returns a timestamptz.")));
}

/*
 * Fills fq->window from a date_bin/date_trunc call; ERROR when its time argument
 * is not a plain timestamp column of the source.
 */
static void read_window(FlowQuery *fq, FuncExpr *fe, const char *timezone) {
	bool is_bin = (fe->funcid == F_DATE_BIN_INTERVAL_TIMESTAMP_TIMESTAMP ||
	               fe->funcid == F_DATE_BIN_INTERVAL_TIMESTAMPTZ_TIMESTAMPTZ);
	bool bucket = fn_is_bucket_window(fe);
	Var *var;
	FnWindowSpec *spec = &fq->window;

	/* the column itself, or a monotonic function of it whose rows of a window are a
	 * range of the column's values (query/time_input.c) */
	if (!fn_time_input_recognize(bucket ? fn_bucket_window_time_arg(fe) : (Node *)lsecond(fe->args),
	                             fq->source_rtindex, &fq->input, &var)) {
		if (!bucket)
			refuse_local_time(fe);
		ereport(ERROR,
		        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		         errmsg("invalid flow query: the time window must be computed over a column of the source "
		                "table: a timestamp, timestamptz or date column, or an integer epoch column read by "
		                "to_timestamp"),
		         errhint("Write date_bin(stride, col, origin), date_trunc(unit, col) or "
		                 "flownode.time_bucket(width, col) over such a column, or over to_timestamp(col), "
		                 "to_timestamp(col / 1000.0) or to_timestamp(col / 1000000.0) for seconds, "
		                 "milliseconds or microseconds since 1970; rows are marked dirty by that column.")));
	}
	memset(spec, 0, sizeof(*spec));
	spec->with_time_zone = fq->input.with_time_zone;
	fq->time_attnum = var->varattno;
	fq->time_column = get_attname(fq->source_relid, var->varattno, false);

	if (bucket)
		fn_bucket_window_read(fe, spec);
	else if (is_bin) {
		Interval *stride = DatumGetIntervalP(window_const_arg(linitial(fe->args), "stride")->constvalue);
		Const *origin = window_const_arg(lthird(fe->args), "origin");

		if (stride->month != 0)
			ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			                errmsg("invalid flow query: date_bin stride must not contain months or years"),
			                errhint("Use date_trunc('month', col) for calendar months, or "
			                        "flownode.time_bucket('3 months', col) for buckets of several months.")));
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

		if (!IsA(expr, FuncExpr) || !is_window_function((FuncExpr *)expr))
			continue;
		time_arg =
		    strip_relabel(fn_is_bucket_window((FuncExpr *)expr) ? fn_bucket_window_time_arg((FuncExpr *)expr)
		                                                        : (Node *)lsecond(((FuncExpr *)expr)->args));
		if (IsA(time_arg, FuncExpr) && ((FuncExpr *)time_arg)->funcid == F_TIMESTAMP_DATE)
			time_arg = strip_relabel((Node *)linitial(((FuncExpr *)time_arg)->args)); /* a date column */
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

/* The text errors point into: the flow query, or the statement it is part of. */
typedef struct QueryErrorArg {
	const char *sql;
	const FlowQueryOrigin *origin;
} QueryErrorArg;

/* Errors inside the flow query point into the flow query (or the statement around
 * it), not the caller's SQL. */
static void flow_query_error_context(void *arg) {
	QueryErrorArg *q = (QueryErrorArg *)arg;
	int pos = geterrposition();

	if (pos > 0) {
		errposition(0);
		if (q->origin != NULL && q->origin->statement != NULL) {
			internalerrposition(pg_mbstrlen_with_len(q->origin->statement, q->origin->offset) + pos);
			internalerrquery(q->origin->statement);
		} else {
			internalerrposition(pos);
			internalerrquery(q->sql);
		}
	}
	errcontext("flow query");
}

/*
 * SELECT DISTINCT is the GROUP BY of its outputs. Over a GROUP BY, DISTINCT changes
 * nothing when every output is a group key (GreptimeDB's user guide writes both);
 * over aggregated rows it would, and is refused.
 */
static void distinct_as_group_by(Query *q) {
	ListCell *lc;

	if (q->distinctClause == NIL)
		return;
	if (q->hasDistinctOn)
		QUERY_ERROR_HINT("invalid flow query: DISTINCT ON is not supported",
		                 "Keep one row per key with GROUP BY and an aggregate such as max(...).");
	if (q->groupClause == NIL && !q->hasAggs && q->havingQual == NULL) {
		q->groupClause = q->distinctClause;
		q->distinctClause = NIL;
		return;
	}
	foreach (lc, q->targetList) {
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		bool grouped = false;
		ListCell *gc;

		if (tle->resjunk)
			continue;
		foreach (gc, q->groupClause)
			grouped |= tle->ressortgroupref != 0 &&
			           lfirst_node(SortGroupClause, gc)->tleSortGroupRef == tle->ressortgroupref;
		if (!grouped)
			QUERY_ERROR_HINT("invalid flow query: DISTINCT over aggregated rows is not supported",
			                 "Group by the columns you want distinct instead.");
	}
	q->distinctClause = NIL; /* every output is a group key: the groups are distinct */
}

/* 0-based output position of a target entry (junk entries are not outputs). */
static int output_position(Query *q, TargetEntry *tle) {
	int out = 0;
	ListCell *lc;

	foreach (lc, q->targetList) {
		TargetEntry *t = lfirst(lc);

		if (t == tle)
			break;
		if (!t->resjunk)
			out++;
	}
	return out;
}

static bool attr_notnull(Oid relid, AttrNumber attnum) {
	HeapTuple atttup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(attnum));
	bool notnull = false;

	if (HeapTupleIsValid(atttup)) {
		notnull = ((Form_pg_attribute)GETSTRUCT(atttup))->attnotnull;
		ReleaseSysCache(atttup);
	}
	return notnull;
}

/* The first output that is the source's column `attnum` as it is, or NULL. */
static TargetEntry *output_of_column(FlowQuery *fq, AttrNumber attnum) {
	ListCell *lc;

	foreach (lc, fq->query->targetList) {
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Node *expr = (Node *)tle->expr;

		if (!tle->resjunk && IsA(expr, Var) && ((Var *)expr)->varno == fq->source_rtindex &&
		    ((Var *)expr)->varlevelsup == 0 && ((Var *)expr)->varattno == attnum)
			return tle;
	}
	return NULL;
}

/* The GROUP BY keys (outputs, or hidden keys made outputs), the window first; their
 * equalities. */
static void grouped_keys(FlowQuery *fq, const char *timezone) {
	Query *q = fq->query;
	List *key_tles = NIL;
	List *key_eqops = NIL;
	TargetEntry *window_tle = NULL;
	Oid window_eqop = InvalidOid;
	ListCell *lc, *ec;

	foreach (lc, q->groupClause) {
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		TargetEntry *tle = get_sortgroupclause_tle(sgc, q->targetList);
		Node *expr = strip_relabel((Node *)tle->expr);

		/* a key the query does not output: a hidden key column of the sink */
		if (tle->resjunk)
			fn_hide_group_key(fq, tle, foreach_current_index(lc) + 1);
		if (window_tle == NULL && IsA(expr, FuncExpr) && is_window_function((FuncExpr *)expr)) {
			window_tle = tle;
			window_eqop = sgc->eqop;
			read_window(fq, (FuncExpr *)expr, timezone);
		} else {
			key_tles = lappend(key_tles, tle);
			key_eqops = lappend_oid(key_eqops, sgc->eqop);
		}
	}
	if (window_tle != NULL) {
		key_tles = lcons(window_tle, key_tles);
		key_eqops = lcons_oid(window_eqop, key_eqops);
	} else
		fq->window_in_key = contains_window_walker((Node *)key_tles, NULL);

	forboth(lc, key_tles, ec, key_eqops) {
		TargetEntry *tle = lfirst(lc);
		Node *expr = strip_relabel((Node *)tle->expr);
		int out = output_position(q, tle);
		bool notnull = (tle == window_tle);

		if (tle == window_tle)
			fq->window_position = out;
		if (!notnull && IsA(expr, Var) && ((Var *)expr)->varno == fq->source_rtindex &&
		    ((Var *)expr)->varattno > 0)
			notnull = attr_notnull(fq->source_relid, ((Var *)expr)->varattno);
		fq->key_positions = lappend_int(fq->key_positions, out);
		fq->key_notnull = lappend_int(fq->key_notnull, notnull ? 1 : 0);
		fq->key_eqops = lappend_oid(fq->key_eqops, lfirst_oid(ec));
	}
	if (window_tle != NULL)
		fq->window_text = deparse_window(fq, window_tle);
}

/*
 * A flow without aggregation keeps one sink row per source row, keyed by the
 * source's primary key: an output that is such a column as it is, or else a hidden
 * key column of the sink (query/hidden_keys.h). Its windows are
 * seconds of the first NOT NULL timestamp column among its outputs, a key column
 * first: a write marks the second of its row, and a refresh recomputes the copy of
 * those seconds (the sink column holds the time itself, so sink rows of a refreshed
 * second are found by it). Without such a column it has no windows.
 */
/*
 * The sink's key of a flow without aggregation: every column of the source's primary
 * key, output as it is or hidden, compared with its type's default operator class. Returns the
 * first timestamp column among them (NULL: none), the flow's time column then.
 */
static TargetEntry *primary_key_outputs(FlowQuery *fq, Oid pk, const char *relname) {
	HeapTuple itup;
	Form_pg_index idx;
	oidvector *classes;
	bool isnull;
	TargetEntry *time_tle = NULL;

	itup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(pk));
	if (!HeapTupleIsValid(itup))
		elog(ERROR, "flownode: cache lookup failed for index %u", pk);
	idx = (Form_pg_index)GETSTRUCT(itup);
	classes =
	    (oidvector *)DatumGetPointer(SysCacheGetAttr(INDEXRELID, itup, Anum_pg_index_indclass, &isnull));
	for (int k = 0; k < idx->indnkeyatts; k++) {
		AttrNumber att = idx->indkey.values[k];
		TargetEntry *tle = output_of_column(fq, att);
		Oid type = get_atttype(fq->source_relid, att);
		Oid family = get_opclass_family(classes->values[k]);
		Oid eqop = get_opfamily_member(family, type, type, BTEqualStrategyNumber);

		if (tle == NULL) /* a column of the key the query does not output: a hidden key */
			tle = fn_hide_source_column(fq, att, k + 1);
		if (!OidIsValid(eqop) || GetDefaultOpClass(type, BTREE_AM_OID) != classes->values[k])
			ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			                errmsg("invalid flow query: the primary key of \"%s\" compares \"%s\" with an "
			                       "operator class that is not its type's default",
			                       relname, get_attname(fq->source_relid, att, false)),
			                errdetail("The sink's key compares it with the default one.")));
		fq->key_positions = lappend_int(fq->key_positions, output_position(fq->query, tle));
		fq->key_notnull = lappend_int(fq->key_notnull, 1);
		fq->key_eqops = lappend_oid(fq->key_eqops, eqop);
		if (time_tle == NULL && (type == TIMESTAMPOID || type == TIMESTAMPTZOID))
			time_tle = tle;
	}
	ReleaseSysCache(itup);
	return time_tle;
}

/* A NOT NULL timestamp column of the source among the outputs, or NULL. */
static TargetEntry *notnull_time_output(FlowQuery *fq) {
	ListCell *lc;

	foreach (lc, fq->query->targetList) {
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var *var = (Var *)tle->expr;

		if (!tle->resjunk && IsA(var, Var) && var->varno == fq->source_rtindex && var->varlevelsup == 0 &&
		    var->varattno > 0 && (var->vartype == TIMESTAMPOID || var->vartype == TIMESTAMPTZOID) &&
		    attr_notnull(fq->source_relid, var->varattno))
			return tle;
	}
	return NULL;
}

/* The windows of a flow without aggregation: seconds of its time column. */
static void copy_window(FlowQuery *fq, TargetEntry *time_tle) {
	Var *var = (Var *)time_tle->expr;
	FnWindowSpec *spec = &fq->window;

	memset(spec, 0, sizeof(*spec));
	spec->kind = FN_WINDOW_DATE_BIN;
	spec->with_time_zone = var->vartype == TIMESTAMPTZOID;
	spec->stride_time = FN_COPY_WINDOW_USEC;
	spec->origin = 0; /* 2000-01-01 */
	fn_window_check(spec);
	fq->time_attnum = var->varattno;
	fq->time_column = get_attname(fq->source_relid, var->varattno, false);
	fq->window_position = output_position(fq->query, time_tle);
	fq->window_text = psprintf("date_bin('1 second', %s, '2000-01-01')", quote_identifier(fq->time_column));
}

static void copy_keys(FlowQuery *fq) {
	Relation rel = table_open(fq->source_relid, AccessShareLock);
	const char *relname = RelationGetRelationName(rel);
	Oid pk = fn_rel_primary_key_index(rel);
	TargetEntry *time_tle;

	if (!OidIsValid(pk)) /* as logical replication's missing replica identity: the table lacks
	                      * what the command needs (a restore binding the flow tells it by that) */
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("invalid flow query: a flow without aggregation needs a primary key on its source "
		                "table \"%s\"",
		                relname),
		         errdetail("Its sink keeps one row per source row, keyed by the source's primary key."),
		         errhint("Add one with ALTER TABLE %s ADD PRIMARY KEY (...), or aggregate with GROUP BY.",
		                 quote_identifier(relname))));
	time_tle = primary_key_outputs(fq, pk, relname);
	table_close(rel, NoLock);
	if (time_tle == NULL) /* another NOT NULL timestamp column among the outputs */
		time_tle = notnull_time_output(fq);
	if (time_tle != NULL)
		copy_window(fq, time_tle);
}

/* The first use of the evaluation's clock in a tree, or NULL. */
static bool find_clock_walker(Node *node, Node **found) {
	if (node == NULL)
		return false;
	if (fn_is_clock_now(node)) {
		*found = node;
		return true;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *)node, find_clock_walker, (void *)found, 0);
	return expression_tree_walker(node, find_clock_walker, (void *)found);
}

static Node *find_clock(Node *node) {
	Node *found = NULL;

	(void)find_clock_walker(node, &found);
	return found;
}

static int clock_error_position(const char *sql, Node *clock) {
	int location = fn_clock_now_location(clock);

	return location < 0 ? 0 : errposition(pg_mbstrlen_with_len(sql, location) + 1);
}

/* Refuses a use of now() the flow gives no meaning to, pointing at it. */
pg_noreturn static void refuse_clock(const char *sql, Node *clock, const FlowQuery *fq);
static void refuse_clock(const char *sql, Node *clock, const FlowQuery *fq) {
	const char *detail = "A flow gives the clock one meaning: in WHERE, its time column compared with an "
	                     "expression of now() (the scheduled time of each evaluation, with eval_interval).";

	if (fq->time_column == NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		         errmsg("invalid flow query: now() can change without a write to the source"),
		         errdetail("%s", detail),
		         errhint("A flow without windows cannot follow the clock: filter when you read the sink."),
		         clock_error_position(sql, clock)));
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
	                errmsg("invalid flow query: now() can change without a write to the source"),
	                errdetail("%s", detail),
	                errhint("Write %s > now() - interval '5 minutes' (or <, <=, >=, BETWEEN).",
	                        quote_identifier(fq->time_column)),
	                clock_error_position(sql, clock)));
}

/* Whether `node` compares the time column of type timestamp with a timestamptz. */
static bool compares_local_time_with_clock(FlowQuery *fq, Node *node) {
	ListCell *lc;

	if (!IsA(node, OpExpr) || fq->time_attnum <= 0 || fq->window.with_time_zone)
		return false;
	foreach (lc, ((OpExpr *)node)->args) {
		Var *var = (Var *)strip_relabel(lfirst(lc));

		if (IsA(var, Var) && var->varno == fq->source_rtindex && var->varlevelsup == 0 &&
		    var->varattno == fq->time_attnum)
			return true;
	}
	return false;
}

/*
 * A comparison `time column OP threshold`, the threshold an expression of now() and
 * constants, OP one of <, <=, >, >= of the column type's own btree family (so the
 * column and the threshold have one type and one order). NULL when `node` is not one.
 */
static NowPredicate *clock_predicate(FlowQuery *fq, Node *node) {
	OpExpr *op;
	Node *left, *right, *threshold;
	Var *var;
	bool column_left;
	Oid family;
	int strategy;
	NowPredicate *pred;

	if (!IsA(node, OpExpr) || list_length(((OpExpr *)node)->args) != 2)
		return NULL;
	op = (OpExpr *)node;
	left = strip_relabel(linitial(op->args));
	right = strip_relabel(lsecond(op->args));
	column_left = IsA(left, Var);
	var = (Var *)(column_left ? left : right);
	threshold = column_left ? right : left;
	if (!IsA(var, Var) || var->varno != fq->source_rtindex || var->varlevelsup != 0 ||
	    var->varattno != fq->time_attnum || fq->time_attnum <= 0)
		return NULL;
	if (find_clock(threshold) == NULL || contain_var_clause(threshold) || contain_agg_clause(threshold) ||
	    exprType(threshold) != var->vartype)
		return NULL;
	family = get_opclass_family(GetDefaultOpClass(var->vartype, BTREE_AM_OID));
	strategy = get_op_opfamily_strategy(op->opno, family);
	if (strategy == 0 || strategy == BTEqualStrategyNumber)
		return NULL;
	if (!column_left) /* threshold OP column: column (commuted OP) threshold */
		strategy = BTMaxStrategyNumber + 1 - strategy;
	pred = palloc(sizeof(NowPredicate));
	pred->strategy = strategy;
	pred->threshold = (Expr *)copyObject(threshold);
	return pred;
}

/* The clock's comparisons in WHERE, under AND, OR and NOT; any other use refused. */
static void collect_clock_predicates(FlowQuery *fq, Node *qual, const char *sql) {
	Node *clock;
	NowPredicate *pred;

	if (qual == NULL || (clock = find_clock(qual)) == NULL)
		return;
	if (IsA(qual, BoolExpr)) {
		ListCell *lc;

		foreach (lc, ((BoolExpr *)qual)->args)
			collect_clock_predicates(fq, lfirst(lc), sql);
		return;
	}
	if (IsA(qual, List)) {
		ListCell *lc;

		foreach (lc, (List *)qual)
			collect_clock_predicates(fq, lfirst(lc), sql);
		return;
	}
	pred = clock_predicate(fq, qual);
	if (pred == NULL && compares_local_time_with_clock(fq, qual))
		ereport(
		    ERROR,
		    (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		     errmsg("invalid flow query: time column \"%s\" has type timestamp, and now() is a timestamptz",
		            fq->time_column),
		     errdetail("A flow compares its time column with the clock in the column's own type."),
		     errhint("Compare it with LOCALTIMESTAMP (now() in the flow's time zone): %s > LOCALTIMESTAMP "
		             "- interval '5 minutes'.",
		             quote_identifier(fq->time_column)),
		     clock_error_position(sql, clock)));
	if (pred == NULL)
		refuse_clock(sql, clock, fq);
	fq->now_preds = lappend(fq->now_preds, pred);
}

/* Where the query uses the evaluation's clock: only in comparisons with the time
 * column in WHERE (fq->now_preds); anywhere else it is refused. */
static void check_clock(FlowQuery *fq, const char *sql) {
	Query *q = fq->query;
	Node *quals = q->jointree->quals;
	Node *elsewhere;

	q->jointree->quals = NULL;
	elsewhere = find_clock((Node *)q);
	q->jointree->quals = quals;
	if (elsewhere != NULL)
		refuse_clock(sql, elsewhere, fq);
	collect_clock_predicates(fq, quals, sql);
}

/* The query's one SELECT, raw: refused here when it is not one plain SELECT. */
static RawStmt *parse_one_select(const char *sql) {
	List *raw;
	RawStmt *rs;
	SelectStmt *sel;

	raw = pg_parse_query(sql);
	if (list_length(raw) != 1) {
		if (list_length(raw) == 0)
			QUERY_ERROR_HINT("invalid flow query: the query is empty", "Pass a single SELECT statement.");
		QUERY_ERROR_HINT("invalid flow query: the query must be exactly one statement",
		                 "Pass a single SELECT statement.");
	}
	rs = linitial_node(RawStmt, raw);
	if (!IsA(rs->stmt, SelectStmt))
		QUERY_ERROR("invalid flow query: the query must be a SELECT statement");
	sel = (SelectStmt *)rs->stmt;
	if (sel->intoClause != NULL)
		QUERY_ERROR("invalid flow query: SELECT INTO is not allowed");
	if (sel->op != SETOP_NONE)
		QUERY_ERROR("invalid flow query: UNION, INTERSECT and EXCEPT are not supported");
	if (sel->valuesLists != NIL)
		QUERY_ERROR("invalid flow query: VALUES is not an aggregation");
	if (sel->lockingClause != NIL)
		QUERY_ERROR("invalid flow query: FOR UPDATE/SHARE is not allowed");
	if (sel->withClause != NULL)
		QUERY_ERROR_HINT("invalid flow query: WITH is not supported",
		                 "Join the tables in FROM instead of through a CTE.");

	return rs;
}

/* What a flow's query may not use, on the analysed tree; its shape. */
static void check_features(FlowQuery *fq, Query *q) {
	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL)
		QUERY_ERROR("invalid flow query: the query must be a SELECT statement");
	if (q->hasSubLinks)
		QUERY_ERROR_HINT("invalid flow query: subqueries are not supported",
		                 "A flow reads one source table, joined to dimension tables by equalities.");
	if (q->hasWindowFuncs)
		QUERY_ERROR("invalid flow query: window functions are not supported");
	if (q->hasTargetSRFs)
		QUERY_ERROR("invalid flow query: set-returning functions are not supported");
	if (q->limitCount != NULL || q->limitOffset != NULL)
		QUERY_ERROR("invalid flow query: LIMIT and OFFSET are not supported");
	if (q->groupingSets != NIL)
		QUERY_ERROR("invalid flow query: GROUPING SETS, ROLLUP and CUBE are not supported");
	distinct_as_group_by(q);
	if (q->groupClause != NIL)
		fq->shape = FLOW_SHAPE_GROUPED;
	else if (q->hasAggs || q->havingQual != NULL)
		fq->shape = FLOW_SHAPE_SINGLE;
	else
		fq->shape = FLOW_SHAPE_COPY;
}

/* The source: the table whose column the window reads (query/flow_joins.c), one plain
 * or partitioned table a worker's session can read. */
static void find_source(FlowQuery *fq, Query *q) {
	RangeTblEntry *rte;

	/* one plain table, or a fact table joined with dimension tables (flow_joins.c):
	 * the source is the table whose column the window reads */
	fq->source_rtindex = fn_join_fact_rtindex(q, window_varno(q));
	rte = rt_fetch(fq->source_rtindex, q->rtable);
	if (rte->rtekind != RTE_RELATION)
		QUERY_ERROR("invalid flow query: the query must read a table, not a subquery or function");
	if (rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
		        (errcode(ERRCODE_WRONG_OBJECT_TYPE),
		         errmsg("invalid flow query: source \"%s\" is not a table", get_rel_name(rte->relid)),
		         errhint("Views, materialized views and foreign tables are not supported as flow sources.")));
	if (get_rel_persistence(rte->relid) == RELPERSISTENCE_TEMP)
		QUERY_ERROR_HINT("invalid flow query: the source must not be a temporary table",
		                 "The flow's worker runs in its own session and cannot see it.");
	/* a partitioned table's rows are in its partitions, which the flow reads with it
	 * (source_triggers.c marks them); an inheritance parent's children are not */
	if (rte->relkind == RELKIND_PARTITIONED_TABLE && !rte->inh)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: FROM ONLY of partitioned table \"%s\" reads no rows",
		                       get_rel_name(rte->relid)),
		                errhint("Leave out ONLY: a flow over a partitioned table reads every partition.")));
	if (rte->relkind == RELKIND_RELATION && rte->inh && has_subclass(rte->relid))
		QUERY_ERROR("invalid flow query: sources with inheritance children are not supported; use FROM ONLY");
	fq->source_relid = rte->relid;
}

/* The output columns: named, each name once, of a type a table can store. */
static void read_outputs(FlowQuery *fq, Query *q) {
	ListCell *lc;
	int pos;

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
	fq->nvisible = pos;
}

static FlowQuery *analyze(const char *sql, const char *timezone, const FlowQueryReading *reading,
                          const FlowQueryOrigin *origin) {
	FlowQuery *fq = palloc0(sizeof(FlowQuery));
	QueryErrorArg errarg = {sql, origin};
	ErrorContextCallback errcb = {error_context_stack, flow_query_error_context, (void *)&errarg};
	RawStmt *rs;
	SelectStmt *sel;
	Query *q;

	error_context_stack = &errcb;
	rs = parse_one_select(sql);
	sel = (SelectStmt *)rs->stmt;
	if (reading != NULL) {
		if (reading->rewrite != NULL)
			reading->rewrite(sel);
		q = parse_analyze_withcb(rs, sql, reading->setup, copyObject(sel->targetList), NULL);
	} else
		q = parse_analyze_fixedparams(rs, sql, NULL, 0, NULL);
	error_context_stack = errcb.previous;
	fn_flatten_group_exprs(q);
	fq->query = fq->as_written = q;
	check_features(fq, q);
	find_source(fq, q);
	/* nothing whose answer can change without a write to the source: the error names
	 * the function or construct and points into the flow query */
	error_context_stack = &errcb;
	fn_check_deterministic(q, sql);
	error_context_stack = errcb.previous;
	if (contain_volatile_functions((Node *)q)) /* a backstop: refused above already */
		QUERY_ERROR_HINT("invalid flow query: volatile functions are not allowed",
		                 "A flow re-runs its query per window; its result must depend only on the rows.");
	read_outputs(fq, q);
	/* the sink's key and the time window */
	fq->window_position = -1;
	fq->window.kind = FN_WINDOW_NONE;
	if (fq->shape == FLOW_SHAPE_GROUPED)
		grouped_keys(fq, timezone);
	else if (fq->shape == FLOW_SHAPE_COPY)
		copy_keys(fq);
	fq->dimensions =
	    fn_join_dimensions(q, fq->source_rtindex, fq->window.kind != FN_WINDOW_NONE ? fq->time_attnum : 0);
	if (fq->dimensions != NIL && fq->shape == FLOW_SHAPE_COPY)
		QUERY_ERROR_HINT("invalid flow query: a flow without aggregation cannot join tables",
		                 "Aggregate with GROUP BY, or join when you read the sink.");
	error_context_stack = &errcb;
	check_clock(fq, sql);
	error_context_stack = errcb.previous;
	return fq;
}

FlowQuery *fn_analyze_flow_query(const char *sql, const char *timezone) {
	return analyze(sql, timezone, NULL, NULL);
}

FlowQuery *fn_analyze_flow_query_read(const char *sql, const char *timezone, const FlowQueryReading *reading,
                                      const FlowQueryOrigin *origin) {
	return analyze(sql, timezone, reading, origin);
}

RangeVar *fn_flow_query_source(const char *sql, const FlowQueryOrigin *origin) {
	QueryErrorArg errarg = {sql, origin};
	ErrorContextCallback errcb = {error_context_stack, flow_query_error_context, (void *)&errarg};
	List *raw;
	SelectStmt *sel;

	error_context_stack = &errcb;
	raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	error_context_stack = errcb.previous;

	if (list_length(raw) != 1 || !IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
		return NULL;
	sel = (SelectStmt *)linitial_node(RawStmt, raw)->stmt;
	if (sel->op != SETOP_NONE || list_length(sel->fromClause) != 1 ||
	    !IsA(linitial(sel->fromClause), RangeVar))
		return NULL;
	return linitial_node(RangeVar, sel->fromClause);
}
