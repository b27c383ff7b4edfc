/*
 * time_input.c: a flow's time column as the timestamp its windows are cut from
 * (time_input.h). Three facts make a date or an integer epoch column as good a time
 * column as a timestamp:
 *   - the query's conversion is monotonic, so the rows of a window are a range of
 *     column values, and a refresh filters the column itself (through its index);
 *   - the marking converts each value exactly as the query does (the same
 *     PostgreSQL functions, or the same IEEE arithmetic where that is proven equal),
 *     so a row is marked in the window the query puts it in, also where rounding
 *     moves a value across a window boundary;
 *   - the range of values of a window is found by searching that very conversion
 *     (fn_time_input_bounds), so the filter's rounding can never disagree with it.
 */
#include "flownode.h"

#include "query/time_input.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "lib/stringinfo.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/numeric.h"

/* Below this magnitude a value converts to double precision exactly, so the
 * quotient of two of them is correctly rounded, as numeric's exact quotient is when
 * float8in reads it (fn_time_input_time). */
#define EXACT_DOUBLE_INT (INT64CONST(1) << 53)

/* The first and last valid dates (+-infinity aside). */
#define FIRST_DATE ((int64)(DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE))
#define LAST_DATE ((int64)(DATE_END_JULIAN - POSTGRES_EPOCH_JDATE - 1))

static Node *strip(Node *n) {
	while (n != NULL && IsA(n, RelabelType))
		n = (Node *)((RelabelType *)n)->arg;
	return n;
}

static Var *column_of(Node *n, int rtindex, Oid type1, Oid type2, Oid type3) {
	Var *v = (Var *)strip(n);

	if (v == NULL || !IsA(v, Var) || v->varno != rtindex || v->varlevelsup != 0 || v->varattno <= 0)
		return NULL;
	if (v->vartype != type1 && v->vartype != type2 && v->vartype != type3)
		return NULL;
	return v;
}

static bool is_int_to(Oid funcid, Oid target) {
	if (target == FLOAT8OID)
		return funcid == F_FLOAT8_INT8 || funcid == F_FLOAT8_INT4 || funcid == F_FLOAT8_INT2;
	return funcid == F_NUMERIC_INT8 || funcid == F_NUMERIC_INT4 || funcid == F_NUMERIC_INT2;
}

/* The integer column under a cast of it to double precision or numeric. */
static Var *integer_column(Node *n, int rtindex, Oid target) {
	FuncExpr *fe = (FuncExpr *)strip(n);

	if (fe == NULL || !IsA(fe, FuncExpr) || !is_int_to(fe->funcid, target) || list_length(fe->args) != 1)
		return NULL;
	return column_of(linitial(fe->args), rtindex, INT8OID, INT4OID, INT2OID);
}

static Node *binary_op(Node *n, Oid funcid) {
	OpExpr *op = (OpExpr *)strip(n);

	if (op == NULL || !IsA(op, OpExpr) || list_length(op->args) != 2)
		return NULL;
	set_opfuncid(op);
	return op->opfuncid == funcid ? (Node *)op : NULL;
}

static void unit_error(void) {
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
	                errmsg("invalid flow query: an integer time column must count seconds, milliseconds or "
	                       "microseconds since 1970"),
	                errhint("Write to_timestamp(col), to_timestamp(col / 1000.0) or to_timestamp(col / "
	                        "1000000.0).")));
}

/* The divisor of an epoch: a constant 1, 1000 or 1000000. */
static int64 divisor_of(Node *n, Oid type, int32 *scale) {
	Const *c = (Const *)eval_const_expressions(NULL, n);
	int64 v = 0;

	if (!IsA(c, Const) || c->constisnull || c->consttype != type)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: the divisor of an epoch column must be a constant")));
	*scale = 0;
	if (type == FLOAT8OID) {
		double d = DatumGetFloat8(c->constvalue);

		v = d == 1.0 ? 1 : d == 1000.0 ? 1000 : d == 1000000.0 ? 1000000 : 0;
	} else {
		char *text = DatumGetCString(DirectFunctionCall1(numeric_out, c->constvalue));
		char *dot = strchr(text, '.');
		bool whole = true;

		for (char *p = dot ? dot + 1 : NULL; p && *p; p++)
			whole &= *p == '0';
		*scale = dot ? (int32)strlen(dot + 1) : 0;
		if (dot)
			*dot = '\0';
		if (whole)
			v = strcmp(text, "1") == 0         ? 1
			    : strcmp(text, "1000") == 0    ? 1000
			    : strcmp(text, "1000000") == 0 ? 1000000
			                                   : 0;
	}
	if (v == 0)
		unit_error();
	return v;
}

/* to_timestamp's argument: col, col / 1000.0 (numeric) or col::float8 / 1000. */
static Var *read_epoch(Node *arg, int rtindex, FnTimeInput *in) {
	FuncExpr *fe = (FuncExpr *)strip(arg);
	Node *op;
	Var *var;

	in->kind = FN_INPUT_EPOCH;
	in->divisor = 1;
	if ((var = integer_column(arg, rtindex, FLOAT8OID)) != NULL) {
		in->division = FN_DIVIDE_NONE;
		return var;
	}
	if ((op = binary_op(arg, F_FLOAT8DIV)) != NULL &&
	    (var = integer_column(linitial(((OpExpr *)op)->args), rtindex, FLOAT8OID)) != NULL) {
		in->division = FN_DIVIDE_FLOAT;
		in->divisor = divisor_of(lsecond(((OpExpr *)op)->args), FLOAT8OID, &in->divisor_scale);
		return var;
	}
	if (fe != NULL && IsA(fe, FuncExpr) && fe->funcid == F_FLOAT8_NUMERIC && list_length(fe->args) == 1 &&
	    (op = binary_op(linitial(fe->args), F_NUMERIC_DIV)) != NULL &&
	    (var = integer_column(linitial(((OpExpr *)op)->args), rtindex, NUMERICOID)) != NULL) {
		in->division = FN_DIVIDE_NUMERIC;
		in->divisor = divisor_of(lsecond(((OpExpr *)op)->args), NUMERICOID, &in->divisor_scale);
		return var;
	}
	/* ts_ms / 1000 between integers truncates toward zero: -1500 ms is -1 s, not the
	 * -2 s that its window's other rows round down to */
	if (fe != NULL && IsA(fe, FuncExpr) && is_int_to(fe->funcid, FLOAT8OID) && list_length(fe->args) == 1 &&
	    IsA(strip(linitial(fe->args)), OpExpr))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: an integer division of the time column truncates its "
		                       "fractions"),
		                errhint("Divide by a numeric: to_timestamp(col / 1000.0).")));
	return NULL;
}

bool fn_time_input_recognize(Node *arg, int rtindex, FnTimeInput *in, Var **var) {
	FuncExpr *fe = (FuncExpr *)strip(arg);

	memset(in, 0, sizeof(*in));
	in->memo_value = PG_INT64_MIN; /* no date is that */
	in->with_time_zone = exprType(arg) == TIMESTAMPTZOID;
	*var = column_of(arg, rtindex, TIMESTAMPOID, TIMESTAMPTZOID, TIMESTAMPOID);
	if (*var != NULL)
		return true;
	if (fe == NULL || !IsA(fe, FuncExpr) || list_length(fe->args) != 1)
		return false;
	if (fe->funcid == F_TIMESTAMP_DATE || fe->funcid == F_TIMESTAMPTZ_DATE) {
		in->kind = FN_INPUT_DATE;
		*var = column_of(linitial(fe->args), rtindex, DATEOID, DATEOID, DATEOID);
	} else if (fe->funcid == F_TO_TIMESTAMP_FLOAT8)
		*var = read_epoch(linitial(fe->args), rtindex, in);
	return *var != NULL;
}

char *fn_time_input_text(const FnTimeInput *in) {
	if (in->kind == FN_INPUT_DATE)
		return pstrdup("date");
	if (in->kind != FN_INPUT_EPOCH)
		return NULL;
	switch (in->division) {
	case FN_DIVIDE_NONE:
		return pstrdup("epoch");
	case FN_DIVIDE_FLOAT:
		return psprintf("epoch::float8/" INT64_FORMAT, in->divisor);
	case FN_DIVIDE_NUMERIC: {
		/* the divisor as written: its decimals can widen the quotient's scale */
		StringInfoData s;

		initStringInfo(&s);
		appendStringInfo(&s, "epoch/" INT64_FORMAT "%s", in->divisor, in->divisor_scale > 0 ? "." : "");
		for (int i = 0; i < in->divisor_scale; i++)
			appendStringInfoChar(&s, '0');
		return s.data;
	}
	}
	pg_unreachable();
}

void fn_time_input_parse(const char *text, bool with_time_zone, const char *timezone, FnTimeInput *in) {
	memset(in, 0, sizeof(*in));
	in->memo_value = PG_INT64_MIN; /* no date is that */
	in->with_time_zone = with_time_zone;
	if (text == NULL)
		return;
	if (strcmp(text, "date") == 0) {
		in->kind = FN_INPUT_DATE;
		if (with_time_zone && (in->zone = pg_tzset(timezone)) == NULL)
			elog(ERROR, "flownode: time zone \"%s\" of a flow is not known", timezone);
		return;
	}
	in->kind = FN_INPUT_EPOCH;
	in->divisor = 1;
	if (strcmp(text, "epoch") == 0)
		in->division = FN_DIVIDE_NONE;
	else if (strncmp(text, "epoch::float8/", 14) == 0) {
		in->division = FN_DIVIDE_FLOAT;
		in->divisor = strtoll(text + 14, NULL, 10);
	} else if (strncmp(text, "epoch/", 6) == 0) {
		const char *dot = strchr(text + 6, '.');

		in->division = FN_DIVIDE_NUMERIC;
		in->divisor = strtoll(text + 6, NULL, 10);
		in->divisor_scale = dot ? (int32)strlen(dot + 1) : 0;
	} else
		elog(ERROR, "flownode: unknown time input \"%s\" in the flow catalog", text);
	if (in->divisor != 1 && in->divisor != 1000 && in->divisor != 1000000)
		elog(ERROR, "flownode: unknown time input \"%s\" in the flow catalog", text);
}

bool fn_time_input_equal(const FnTimeInput *a, const FnTimeInput *b) {
	return a->kind == b->kind && a->division == b->division && a->with_time_zone == b->with_time_zone &&
	       a->divisor == b->divisor && a->divisor_scale == b->divisor_scale && a->zone == b->zone;
}

Oid fn_time_input_bound_type(const FnTimeInput *in, Oid timestamp_type) {
	return in->kind == FN_INPUT_DATE ? DATEOID : in->kind == FN_INPUT_EPOCH ? INT8OID : timestamp_type;
}

int64 fn_time_input_value(const FnTimeInput *in, Datum d) {
	return in->kind == FN_INPUT_DATE ? (int64)DatumGetDateADT(d) : DatumGetInt64(d);
}

Datum fn_time_input_datum(const FnTimeInput *in, int64 value) {
	return in->kind == FN_INPUT_DATE ? DateADTGetDatum((DateADT)value) : Int64GetDatum(value);
}

int64 fn_time_input_max(const FnTimeInput *in) {
	return in->kind == FN_INPUT_DATE ? LAST_DATE : PG_INT64_MAX;
}

int64 fn_time_input_min(const FnTimeInput *in) {
	return in->kind == FN_INPUT_DATE ? FIRST_DATE : PG_INT64_MIN;
}

/* A timestamp PostgreSQL could not represent, clamped into the first or last window. */
static int64 clamp_overflow(int overflow) {
	return overflow > 0 ? FN_TS_END - 1 : FN_TS_MIN;
}

/* date_timestamp or date_timestamptz in the flow's zone (as the refresh, which runs
 * with the flow's TimeZone, casts). */
static int64 date_time(FnTimeInput *in, int64 value) {
	int overflow = 0;
	int64 t;

	if (value <= DATEVAL_NOBEGIN)
		return DT_NOBEGIN;
	if (value >= DATEVAL_NOEND)
		return DT_NOEND;
	if (value == in->memo_value)
		return in->memo_time;
	if (in->with_time_zone) {
		/* date2timestamptz_opt_overflow reports overflow instead of raising it, and
		 * raises nothing else: the session's zone is swapped back in every case */
		pg_tz *saved = session_timezone;

		session_timezone = in->zone;
		t = date2timestamptz_opt_overflow((DateADT)value, &overflow);
		session_timezone = saved;
	} else
		t = date2timestamp_opt_overflow((DateADT)value, &overflow);
	t = overflow != 0 ? clamp_overflow(overflow) : t;
	in->memo_value = value;
	in->memo_time = t;
	return t;
}

/* numeric_float8(numeric_div(value, divisor as written)), by PostgreSQL itself:
 * the quotient is rounded to the division's scale, then read as a double. */
static double numeric_seconds(const FnTimeInput *in, int64 value) {
	char *text = fn_time_input_text(in) + 6; /* "epoch/" */
	Datum divisor = DirectFunctionCall3(numeric_in, CStringGetDatum(text), ObjectIdGetDatum(InvalidOid),
	                                    Int32GetDatum(-1));
	Datum q = DirectFunctionCall2(numeric_div, NumericGetDatum(int64_to_numeric(value)), divisor);

	return DatumGetFloat8(DirectFunctionCall1(numeric_float8, q));
}

/*
 * The seconds to_timestamp receives. Integers of at most 2^53 convert to double
 * precision exactly and IEEE division is correctly rounded; numeric's quotient of
 * such a value by 1000 or 1000000 is exact (its scale, at least 16 significant
 * digits, holds every decimal), and float8in reads it correctly rounded too: the
 * same double. Past 2^53 the numeric quotient is rounded to its scale first: that
 * rare case is computed by PostgreSQL's own functions.
 */
static double epoch_seconds(const FnTimeInput *in, int64 value) {
	switch (in->division) {
	case FN_DIVIDE_NONE:
		return (double)value; /* int8tofloat8 */
	case FN_DIVIDE_FLOAT:
		return (double)value / (double)in->divisor; /* float8div of int8tofloat8 */
	case FN_DIVIDE_NUMERIC:
		if (value >= -EXACT_DOUBLE_INT && value <= EXACT_DOUBLE_INT)
			return (double)value / (double)in->divisor;
		return numeric_seconds(in, value);
	}
	pg_unreachable();
}

/* float8_timestamptz (to_timestamp), its arithmetic as PostgreSQL 15 writes it, with
 * its two range errors clamped instead. */
static int64 epoch_time(const FnTimeInput *in, int64 value) {
	double seconds = epoch_seconds(in, value);
	int64 result;

	if (seconds < (float8)SECS_PER_DAY * (DATETIME_MIN_JULIAN - UNIX_EPOCH_JDATE))
		return FN_TS_MIN;
	if (seconds >= (float8)SECS_PER_DAY * (TIMESTAMP_END_JULIAN - UNIX_EPOCH_JDATE))
		return FN_TS_END - 1;
	seconds -= ((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY);
	seconds = rint(seconds * USECS_PER_SEC);
	result = (int64)seconds;
	if (!IS_VALID_TIMESTAMP(result))
		return clamp_overflow(result < MIN_TIMESTAMP ? -1 : 1);
	return result;
}

int64 fn_time_input_time(FnTimeInput *in, int64 value) {
	if (in->kind == FN_INPUT_DATE)
		return date_time(in, value);
	if (in->kind == FN_INPUT_EPOCH)
		return epoch_time(in, value);
	return value;
}

/* A value near the first one whose time is t or later (the search starts there). */
static int64 guess(const FnTimeInput *in, int64 t) {
	__int128 v;

	if (in->kind == FN_INPUT_DATE)
		v = t / USECS_PER_DAY;
	else
		v = ((__int128)t + (__int128)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY) *
		    in->divisor / USECS_PER_SEC;
	return (int64)Max(Min(v, (__int128)fn_time_input_max(in)), (__int128)fn_time_input_min(in));
}

/*
 * The least value whose time is t or later; false when none is. The conversion is
 * non-decreasing: from a guess, steps doubling in size bracket the answer, then a
 * binary search finds it. A good guess costs a few conversions.
 */
static bool least_at_or_after(FnTimeInput *in, int64 t, int64 *out) {
	__int128 min = fn_time_input_min(in), max = fn_time_input_max(in);
	__int128 g = guess(in, t);
	__int128 lo, hi; /* f(lo) < t (or lo = min - 1), f(hi) >= t (or hi = max + 1) */
	__int128 step = 1;

	if (fn_time_input_time(in, (int64)g) >= t) {
		hi = g;
		for (lo = g - step; lo >= min && fn_time_input_time(in, (int64)lo) >= t; lo = hi - step) {
			hi = lo;
			step *= 2;
		}
		lo = Max(lo, min - 1);
	} else {
		lo = g;
		for (hi = g + step; hi <= max && fn_time_input_time(in, (int64)hi) < t; hi = lo + step) {
			lo = hi;
			step *= 2;
		}
		hi = Min(hi, max + 1);
	}
	while (hi - lo > 1) {
		__int128 mid = lo + (hi - lo) / 2;

		if (fn_time_input_time(in, (int64)mid) >= t)
			hi = mid;
		else
			lo = mid;
	}
	if (hi > max)
		return false;
	*out = (int64)hi;
	return true;
}

bool fn_time_input_bounds(FnTimeInput *in, FnTimeRange r, int64 *lo, int64 *hi) {
	int64 end;

	if (in->kind == FN_INPUT_TIMESTAMP) {
		*lo = r.start;
		*hi = r.end - 1;
		return r.start < r.end;
	}
	if (r.start >= r.end || !least_at_or_after(in, r.start, lo))
		return false;
	*hi = least_at_or_after(in, r.end, &end) ? end - 1 : fn_time_input_max(in);
	return *lo <= *hi;
}

char *fn_time_input_where(const FnTimeInput *in, const char *col, int first_param) {
	return psprintf("%s OPERATOR(pg_catalog.>=) $%d AND %s OPERATOR(pg_catalog.%s) $%d", col, first_param,
	                col, in->kind == FN_INPUT_TIMESTAMP ? "<" : "<=", first_param + 1);
}

char *fn_time_input_select(const FnTimeInput *in, const char *col) {
	return in->kind == FN_INPUT_EPOCH ? psprintf("%s::pg_catalog.int8", col) : pstrdup(col);
}

bool fn_time_input_args(FnTimeInput *in, FnTimeRange r, Datum *lo, Datum *hi) {
	int64 a, b;

	if (in->kind == FN_INPUT_TIMESTAMP) {
		*lo = Int64GetDatum(r.start);
		*hi = Int64GetDatum(r.end);
		return r.start < r.end;
	}
	if (!fn_time_input_bounds(in, r, &a, &b))
		return false;
	*lo = fn_time_input_datum(in, a);
	*hi = fn_time_input_datum(in, b);
	return true;
}

int64 fn_time_input_time_of(FnTimeInput *in, Datum d) {
	return fn_time_input_time(in, fn_time_input_value(in, d));
}

FnTimeRange fn_time_input_times(FnTimeInput *in, FnTimeRange values) {
	int64 lo, hi;

	if (in->kind == FN_INPUT_TIMESTAMP || values.start >= values.end)
		return values;
	lo = Max(values.start, fn_time_input_min(in));
	hi = Min(values.end - 1, fn_time_input_max(in));
	if (lo > hi)
		return (FnTimeRange){0, 0};
	lo = fn_time_input_time(in, lo);
	hi = fn_time_input_time(in, hi);
	return (FnTimeRange){lo, hi == PG_INT64_MAX ? hi : hi + 1};
}
