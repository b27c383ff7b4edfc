/*
 * fold_shape.c: which flows fold their new rows in, and how each output combines
 * (fold_shape.h). Read off the analysed query's tree.
 */
#include "flownode.h"

#include "query/fold_shape.h"

#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_func.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

/* aggregate_fold's answer for avg over integers or numeric (not a column's kind) */
#define FOLD_AVG (-2)

/* The aggregate's fold, or -1 when its value over a union is not that of its parts
 * (or not exactly). */
static int aggregate_fold(const Aggref *agg) {
	const char *name;
	Oid arg;

	if (agg->aggdistinct != NIL || agg->aggorder != NIL || agg->aggkind != AGGKIND_NORMAL ||
	    agg->agglevelsup != 0 || get_func_namespace(agg->aggfnoid) != PG_CATALOG_NAMESPACE)
		return -1;
	name = get_func_name(agg->aggfnoid);
	if (strcmp(name, "count") == 0)
		return FN_FOLD_SUM_BIGINT;
	if (list_length(agg->aggargtypes) != 1)
		return -1;
	arg = linitial_oid(agg->aggargtypes);
	if (strcmp(name, "min") == 0)
		return FN_FOLD_MIN;
	if (strcmp(name, "max") == 0)
		return FN_FOLD_MAX;
	if (strcmp(name, "bool_and") == 0 || strcmp(name, "every") == 0)
		return FN_FOLD_AND;
	if (strcmp(name, "bool_or") == 0)
		return FN_FOLD_OR;
	if (strcmp(name, "avg") == 0)
		return arg == INT2OID || arg == INT4OID || arg == INT8OID || arg == NUMERICOID ? FOLD_AVG : -1;
	if (strcmp(name, "sum") != 0)
		return -1;
	if (arg == INT2OID || arg == INT4OID)
		return FN_FOLD_SUM_BIGINT;
	if (arg == INT8OID || arg == NUMERICOID || arg == INTERVALOID || arg == MONEYOID)
		return FN_FOLD_SUM;
	return -1; /* float sums depend on the order of their additions */
}

/* Why the query as a whole has no fold, or NULL. */
static const char *query_refuses(const FlowQuery *fq) {
	ListCell *lc;

	if (fq->shape != FLOW_SHAPE_GROUPED || fq->window.kind == FN_WINDOW_NONE)
		return "the flow has no grouped time window";
	if (fq->input.kind != FN_INPUT_TIMESTAMP)
		return "the time column is not a timestamp";
	if (fq->now_preds != NIL)
		return "the query compares its time column with now()";
	if (fq->dimensions != NIL)
		return "the query joins dimension tables";
	if (fq->query->havingQual != NULL || fq->query->groupingSets != NIL)
		return "the query has HAVING or grouping sets";
	foreach (lc, fq->key_notnull)
		if (lfirst_int(lc) == 0)
			return "a group key may be NULL";
	return NULL;
}

/* avg(x) as sum(x) (the same arguments and FILTER); its type in *type. */
static Aggref *avg_as_sum(const Aggref *avg, Oid *type) {
	Aggref *sum = (Aggref *)copyObjectImpl(avg);
	Oid arg = linitial_oid(avg->aggargtypes);

	sum->aggfnoid = LookupFuncName(list_make2(makeString("pg_catalog"), makeString("sum")), 1, &arg, false);
	sum->aggtype = *type = get_func_rettype(sum->aggfnoid);
	sum->aggcollid = InvalidOid;
	return sum;
}

/* avg(x) as count(x). */
static Aggref *avg_as_count(const Aggref *avg) {
	Aggref *count = (Aggref *)copyObjectImpl(avg);

	count->aggfnoid = F_COUNT_ANY;
	count->aggtype = INT8OID;
	count->aggcollid = InvalidOid;
	return count;
}

static FnFoldShape *new_shape(const FlowQuery *fq) {
	int n = list_length(fq->out_names);
	FnFoldShape *shape = palloc0(sizeof(FnFoldShape));

	shape->ncolumns = shape->nparts = n;
	/* room for an avg's count per output */
	shape->kinds = palloc(sizeof(FnFoldKind) * n * 2);
	shape->types = palloc(sizeof(Oid) * n * 2);
	shape->typmods = palloc(sizeof(int32) * n * 2);
	shape->collations = palloc(sizeof(Oid) * n * 2);
	shape->names = palloc(sizeof(char *) * n * 2);
	shape->count_of = palloc(sizeof(int) * n);
	for (int i = 0; i < n; i++) {
		shape->types[i] = list_nth_oid(fq->out_types, i);
		shape->typmods[i] = list_nth_int(fq->out_typmods, i);
		shape->collations[i] = list_nth_oid(fq->out_collations, i);
		shape->names[i] = list_nth(fq->out_names, i);
		shape->count_of[i] = -1;
	}
	return shape;
}

/* An avg output at pos: its sum in its place, its count as a column of its own at
 * the end of the parts' columns (and of the tail's outputs, in *counts). */
static FnFoldKind fold_avg(FnFoldShape *shape, TargetEntry *tle, int pos, List **counts) {
	Aggref *avg = (Aggref *)tle->expr;
	int c = shape->nparts++;
	Oid sum_type;

	tle->expr = (Expr *)avg_as_sum(avg, &sum_type);
	shape->types[pos] = sum_type;
	shape->typmods[pos] = -1;
	shape->collations[pos] = InvalidOid;
	shape->count_of[pos] = c;
	shape->kinds[c] = FN_FOLD_SUM_BIGINT;
	shape->types[c] = INT8OID;
	shape->typmods[c] = -1;
	shape->collations[c] = InvalidOid;
	shape->names[c] = psprintf("fn count %d", pos + 1);
	*counts = lappend(*counts, makeTargetEntry((Expr *)avg_as_count(avg), 0, shape->names[c], false));
	/* sum over int2/int4 is a bigint, over int8 and numeric a numeric */
	return sum_type == INT8OID ? FN_FOLD_SUM_BIGINT : FN_FOLD_SUM;
}

/* The tail's target list: the outputs, the avg counts after them, then the junk. */
static List *with_counts(List *targets, List *counts) {
	List *out = NIL;
	ListCell *lc;
	AttrNumber resno = 1;

	foreach (lc, targets)
		if (!((TargetEntry *)lfirst(lc))->resjunk)
			out = lappend(out, lfirst(lc));
	out = list_concat(out, counts);
	foreach (lc, targets)
		if (((TargetEntry *)lfirst(lc))->resjunk)
			out = lappend(out, lfirst(lc));
	foreach (lc, out)
		((TargetEntry *)lfirst(lc))->resno = resno++;
	return out;
}

FnFoldShape *fn_fold_shape(const FlowQuery *fq, const char **why) {
	FnFoldShape *shape;
	List *counts = NIL;
	ListCell *lc;
	int pos = 0;

	*why = query_refuses(fq);
	if (*why != NULL)
		return NULL;
	shape = new_shape(fq);
	shape->tail = copyObject(fq->query);
	foreach (lc, shape->tail->targetList) {
		TargetEntry *tle = lfirst(lc);
		Node *expr = (Node *)tle->expr;
		int kind;

		if (tle->resjunk)
			continue;
		if (list_member_int(fq->key_positions, pos))
			kind = FN_FOLD_KEY;
		else if (IsA(expr, Aggref))
			kind = aggregate_fold((Aggref *)expr);
		else
			kind = -1;
		if (kind == FOLD_AVG)
			kind = fold_avg(shape, tle, pos, &counts);
		if (kind < 0) {
			*why =
			    psprintf("output column \"%s\" is not a group key, count, sum over exact numbers, avg over "
			             "integers or numeric, min, max, bool_and or bool_or",
			             (char *)list_nth(fq->out_names, pos));
			return NULL;
		}
		shape->kinds[pos++] = (FnFoldKind)kind;
	}
	shape->tail->targetList = with_counts(shape->tail->targetList, counts);
	return shape;
}
