/*
 * first_last.c: flownode.first(value, time) and flownode.last(value, time),
 * TimescaleDB's aggregates: the value of the row with the smallest (largest) time,
 * rows whose time is NULL left out, NULL when no row has a time.
 *
 * The one difference from TimescaleDB: rows that tie on the time are told apart by
 * their value (first takes the smallest, last the largest, NULL after every value),
 * where TimescaleDB keeps the row it saw first. A flow's sink must equal its query run
 * again, and a scan may meet tied rows in another order each time; ordered by the
 * value too, the answer is a function of the rows.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(flownode_first_sfunc);
PG_FUNCTION_INFO_V1(flownode_last_sfunc);
PG_FUNCTION_INFO_V1(flownode_first_last_final);

typedef struct FirstLastState {
	TypeCacheEntry *value_type; /* its comparison breaks ties */
	TypeCacheEntry *time_type;
	Oid collation;
	bool have; /* a row with a time was seen */
	Datum value;
	bool value_null;
	Datum time;
} FirstLastState;

/* The default btree ordering of the type of argument `argno`. */
static TypeCacheEntry *ordered_type(FunctionCallInfo fcinfo, int argno) {
	Oid type = get_fn_expr_argtype(fcinfo->flinfo, argno);
	TypeCacheEntry *tc;

	if (!OidIsValid(type))
		elog(ERROR, "flownode: could not determine the argument types of first/last");
	tc = lookup_type_cache(type, TYPECACHE_CMP_PROC_FINFO);
	if (!OidIsValid(tc->cmp_proc))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION),
		                errmsg("could not identify an ordering for type %s", format_type_be(type)),
		                errdetail("flownode.first and flownode.last compare the times, and the values of "
		                          "rows with the same time, by the types' default btree ordering.")));
	return tc;
}

static int compare(TypeCacheEntry *tc, Oid collation, Datum a, Datum b) {
	return DatumGetInt32(FunctionCall2Coll(&tc->cmp_proc_finfo, collation, a, b));
}

/* Whether the row (time, value) comes before the state's row in ORDER BY time,
 * value (NULL values last). */
static bool comes_before(FirstLastState *st, Datum time, Datum value, bool value_null) {
	int c = compare(st->time_type, st->collation, time, st->time);

	if (c != 0)
		return c < 0;
	if (value_null || st->value_null)
		return !value_null && st->value_null;
	return compare(st->value_type, st->collation, value, st->value) < 0;
}

static void replace_datum(Datum *slot, bool was_null, Datum d, TypeCacheEntry *tc) {
	if (!was_null && !tc->typbyval)
		pfree(DatumGetPointer(*slot));
	*slot = datumCopy(d, tc->typbyval, tc->typlen);
}

/* first (first_wanted) or last: keeps the row that comes first, or last. */
static Datum first_last_step(FunctionCallInfo fcinfo, bool first_wanted) {
	MemoryContext aggcontext, old;
	FirstLastState *st = PG_ARGISNULL(0) ? NULL : (FirstLastState *)PG_GETARG_POINTER(0);
	Datum value = PG_GETARG_DATUM(1);
	bool value_null = PG_ARGISNULL(1);

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "flownode: first/last transition called outside an aggregate");
	if (st == NULL) {
		st = MemoryContextAllocZero(aggcontext, sizeof(FirstLastState));
		st->value_type = ordered_type(fcinfo, 1);
		st->time_type = ordered_type(fcinfo, 2);
		st->collation = PG_GET_COLLATION();
		st->value_null = true;
	}
	if (PG_ARGISNULL(2)) /* a row without a time has no place in the order */
		PG_RETURN_POINTER(st);
	if (st->have && comes_before(st, PG_GETARG_DATUM(2), value, value_null) != first_wanted)
		PG_RETURN_POINTER(st);
	/* equal rows: either is the answer, the state stays */
	old = MemoryContextSwitchTo(aggcontext);
	replace_datum(&st->time, !st->have, PG_GETARG_DATUM(2), st->time_type);
	if (value_null) {
		if (!st->value_null && !st->value_type->typbyval)
			pfree(DatumGetPointer(st->value));
		st->value = (Datum)0;
	} else
		replace_datum(&st->value, st->value_null, value, st->value_type);
	st->value_null = value_null;
	st->have = true;
	MemoryContextSwitchTo(old);
	PG_RETURN_POINTER(st);
}

Datum flownode_first_sfunc(PG_FUNCTION_ARGS) {
	return first_last_step(fcinfo, true);
}

Datum flownode_last_sfunc(PG_FUNCTION_ARGS) {
	return first_last_step(fcinfo, false);
}

Datum flownode_first_last_final(PG_FUNCTION_ARGS) {
	FirstLastState *st = PG_ARGISNULL(0) ? NULL : (FirstLastState *)PG_GETARG_POINTER(0);

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "flownode: first/last final function called outside an aggregate");
	if (st == NULL || !st->have || st->value_null)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(st->value);
}
