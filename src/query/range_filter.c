/*
 * range_filter.c: flownode.in_ranges(t, lo[], hi[]) for timestamp and timestamptz.
 *
 * A refresh of a source without an index on its time column reads the table once
 * and keeps the rows of its dirty ranges (query_rewrite.c, FN_FILTER_CONTAINS). The
 * ranges come as two arrays, so the statement has one shape however many there are.
 * PostgreSQL's own `t <@ multirange` compares bounds through the range type's
 * generic comparison, which costs more than the scan itself against many ranges
 * (bench section `scattered`; the figures: bench/README.md, "Figures behind the
 * code"). Here the ranges are read once per statement
 * into a sorted array of int64 bounds (both types are microseconds since 2000) and
 * each row is one branch-free binary search (core/time_range.h).
 *
 * The arrays are kept across rows only when the planner says they cannot change
 * within the statement (a Const or an external parameter, as in a refresh);
 * otherwise they are read again for each call. The ranges may come in any order and
 * overlap; they are sorted and merged first. A NULL element is an error, an empty
 * range (lo >= hi) holds nothing.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/timestamp.h"

#include "core/time_range.h"
#include "query/range_filter.h"

PG_FUNCTION_INFO_V1(flownode_in_ranges);

typedef struct RangeArray {
	uint32 count;
	FnTimeRange ranges[FLEXIBLE_ARRAY_MEMBER];
} RangeArray;

static int64 *bounds_of(ArrayType *a, const char *which, int *n) {
	Datum *values;
	bool *nulls;
	int64 *out;

	if (ARR_NDIM(a) > 1)
		ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
		                errmsg("flownode.in_ranges: %s must be a one-dimensional array", which)));
	deconstruct_array(a, ARR_ELEMTYPE(a), sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &values, &nulls,
	                  n);
	out = palloc(sizeof(int64) * Max(*n, 1));
	for (int i = 0; i < *n; i++) {
		if (nulls[i])
			ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			                errmsg("flownode.in_ranges: %s holds a NULL", which)));
		out[i] = DatumGetInt64(values[i]);
	}
	return out;
}

static int by_start(const void *a, const void *b) {
	int64 x = ((const FnTimeRange *)a)->start, y = ((const FnTimeRange *)b)->start;

	return x < y ? -1 : x > y;
}

/* The ranges of the two arrays, sorted and merged, in cxt. */
static RangeArray *read_ranges(ArrayType *lo, ArrayType *hi, MemoryContext cxt) {
	int nlo, nhi;
	int64 *l = bounds_of(lo, "lo", &nlo);
	int64 *h = bounds_of(hi, "hi", &nhi);
	RangeArray *r;
	uint32 k = 0;

	if (nlo != nhi)
		ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
		                errmsg("flownode.in_ranges: lo has %d elements and hi %d", nlo, nhi)));
	r = MemoryContextAlloc(cxt, offsetof(RangeArray, ranges) + sizeof(FnTimeRange) * Max(nlo, 1));
	for (int i = 0; i < nlo; i++)
		if (l[i] < h[i])
			r->ranges[k++] = (FnTimeRange){l[i], h[i]};
	if (k > 1)
		qsort(r->ranges, k, sizeof(FnTimeRange), by_start);
	r->count = 0;
	for (uint32 i = 0; i < k; i++) {
		FnTimeRange *last = r->count ? &r->ranges[r->count - 1] : NULL;

		if (last != NULL && r->ranges[i].start <= last->end)
			last->end = Max(last->end, r->ranges[i].end);
		else
			r->ranges[r->count++] = r->ranges[i];
	}
	pfree(l);
	pfree(h);
	return r;
}

/* flownode.in_ranges(t, lo[], hi[]): t in some [lo[i], hi[i]). Immutable, strict. */
Datum flownode_in_ranges(PG_FUNCTION_ARGS) {
	int64 t = PG_GETARG_INT64(0);
	RangeArray *r = fcinfo->flinfo->fn_extra;

	if (r == NULL) {
		bool stable = get_fn_expr_arg_stable(fcinfo->flinfo, 1) && get_fn_expr_arg_stable(fcinfo->flinfo, 2);

		r = read_ranges(PG_GETARG_ARRAYTYPE_P(1), PG_GETARG_ARRAYTYPE_P(2),
		                stable ? fcinfo->flinfo->fn_mcxt : CurrentMemoryContext);
		if (stable)
			fcinfo->flinfo->fn_extra = r;
	}
	PG_RETURN_BOOL(fn_ranges_containing(r->ranges, r->count, t) != NULL);
}
