/*
 * refresh_args.c: the arguments every statement over windows takes (refresh_args.h):
 * the ranges as two arrays, their starts and their ends, and for a date or an epoch
 * time column the column's values of each range. One statement of each kind then
 * serves every refresh, of one window or a thousand.
 */
#include "flownode.h"

#include "refresh/refresh_args.h"

#include "catalog/pg_type.h"
#include "query/time_input.h"
#include "utils/array.h"
#include "utils/date.h"
#include "utils/lsyscache.h"

/* The ranges as the statements' two arguments: their starts and their ends. */
void fn_refresh_range_arrays(const FnTimeRange *ranges, int nranges, Oid coltype, Datum *values) {
	Datum *lo = palloc(sizeof(Datum) * Max(nranges, 1));
	Datum *hi = palloc(sizeof(Datum) * Max(nranges, 1));

	for (int i = 0; i < nranges; i++) {
		lo[i] = Int64GetDatum(ranges[i].start);
		hi[i] = Int64GetDatum(ranges[i].end);
	}
	values[0] = PointerGetDatum(
	    construct_array(lo, nranges, coltype, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[1] = PointerGetDatum(
	    construct_array(hi, nranges, coltype, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * For a date or an integer epoch column (query/time_input.h), the source side's
 * arguments $3 and $4: the column values of each range, [lo, hi] where the source is
 * read range by range (JOIN), [lo, hi) where it is read once through their
 * multirange (CONTAINS: hi NULL for an integer column, infinity for a date, when
 * unbounded, since hi + 1 may not exist). A range that holds no value is left out.
 */
void fn_refresh_input_arrays(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, bool joined,
                             Datum *values) {
	Oid type = fn_time_input_bound_type(&cfg->input, InvalidOid);
	int16 len;
	bool byval;
	char align;
	Datum *lo = palloc(sizeof(Datum) * Max(nranges, 1));
	Datum *hi = palloc(sizeof(Datum) * Max(nranges, 1));
	bool *hinull = palloc0(sizeof(bool) * Max(nranges, 1));
	int dims[1], lbs[1] = {1};
	int n = 0;

	get_typlenbyvalalign(type, &len, &byval, &align);
	for (int i = 0; i < nranges; i++) {
		int64 a, b;

		if (!fn_time_input_bounds(&cfg->input, ranges[i], &a, &b))
			continue;
		lo[n] = fn_time_input_datum(&cfg->input, a);
		if (joined)
			hi[n] = fn_time_input_datum(&cfg->input, b);
		else if (b < fn_time_input_max(&cfg->input))
			hi[n] = fn_time_input_datum(&cfg->input, b + 1);
		else if (type == DATEOID)
			hi[n] = DateADTGetDatum(DATEVAL_NOEND);
		else
			hinull[n] = true;
		n++;
	}
	dims[0] = n;
	values[2] = PointerGetDatum(construct_md_array(lo, NULL, 1, dims, lbs, type, len, byval, align));
	values[3] = PointerGetDatum(construct_md_array(hi, hinull, 1, dims, lbs, type, len, byval, align));
}
