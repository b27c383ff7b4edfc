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
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"

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

FnFoldShape *fn_fold_shape(const FlowQuery *fq, const char **why) {
	FnFoldShape *shape;
	ListCell *lc;
	int pos = 0;

	*why = query_refuses(fq);
	if (*why != NULL)
		return NULL;
	shape = palloc(sizeof(FnFoldShape));
	shape->ncolumns = list_length(fq->out_names);
	shape->kinds = palloc(sizeof(FnFoldKind) * shape->ncolumns);
	foreach (lc, fq->query->targetList) {
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
		if (kind < 0) {
			*why =
			    psprintf("output column \"%s\" is not a group key, count, sum over exact numbers, min, max, "
			             "bool_and or bool_or",
			             (char *)list_nth(fq->out_names, pos));
			return NULL;
		}
		shape->kinds[pos++] = (FnFoldKind)kind;
	}
	return shape;
}
