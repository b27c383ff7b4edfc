/*
 * time_input.h: how a flow's time column becomes the timestamp its windows are cut
 * from (FnTimeInput). The column is the timestamp itself, a date PostgreSQL casts to
 * timestamp or timestamptz, or an integer count of seconds, milliseconds or
 * microseconds since 1970 read through to_timestamp. Each of these is a monotonic
 * (non-decreasing) function of the column, so
 *   - a row is marked in the window of that function's value, computed exactly as
 *     the query computes it (fn_time_input_time), and
 *   - the rows of a range of windows are a range of column values
 *     (fn_time_input_bounds), so a refresh filters on the column itself and reads
 *     its rows through the column's own index.
 */
#ifndef FLOWNODE_TIME_INPUT_H
#define FLOWNODE_TIME_INPUT_H

#include "postgres.h"

#include "nodes/primnodes.h"

#include "core/time_range.h"

typedef enum FnTimeInputKind {
	FN_INPUT_TIMESTAMP = 0, /* the column is the window's timestamp or timestamptz */
	FN_INPUT_DATE,          /* a date, cast to the window's type */
	FN_INPUT_EPOCH,         /* an integer epoch: to_timestamp(column [/ divisor]) */
} FnTimeInputKind;

/* How an epoch's division is spelled: each rounds differently, and the marking
 * rounds as the query does. */
typedef enum FnEpochDivision {
	FN_DIVIDE_NONE = 0, /* to_timestamp(col): seconds */
	FN_DIVIDE_NUMERIC,  /* to_timestamp(col / 1000.0): numeric, then double precision */
	FN_DIVIDE_FLOAT,    /* to_timestamp(col::float8 / 1000): double precision */
} FnEpochDivision;

typedef struct FnTimeInput {
	FnTimeInputKind kind;
	FnEpochDivision division;
	bool with_time_zone; /* the window's type: a date cast to timestamptz is midnight in `zone` */
	int64 divisor;       /* epoch: 1 (seconds), 1000 (milliseconds), 1000000 (microseconds) */
	int32 divisor_scale; /* FN_DIVIDE_NUMERIC: the decimals the divisor was written with */
	struct pg_tz *zone;  /* FN_INPUT_DATE as timestamptz: the flow's TimeZone */
	int64 memo_value;    /* FN_INPUT_DATE: the last date converted, and its time */
	int64 memo_time;
} FnTimeInput;

/*
 * Whether `arg` (date_bin's or date_trunc's time argument) is a recognised function
 * of one column of the source (range table index rtindex): the column itself (a
 * timestamp or timestamptz), a date cast to timestamp or timestamptz, or
 * to_timestamp of an integer column, alone or divided by 1000 or 1000000 (numeric or
 * double precision). Fills *in and *var. ERROR for a spelling that would round
 * otherwise (integer division, another divisor), with the one to write instead.
 */
extern bool fn_time_input_recognize(Node *arg, int rtindex, FnTimeInput *in, Var **var);

/* The catalog's form (flownode.flow.time_input): NULL for FN_INPUT_TIMESTAMP. */
extern char *fn_time_input_text(const FnTimeInput *in);
/* Back from the catalog's form; timezone: the flow's. */
extern void fn_time_input_parse(const char *text, bool with_time_zone, const char *timezone, FnTimeInput *in);
extern bool fn_time_input_equal(const FnTimeInput *a, const FnTimeInput *b);

/* The type of the column's values in the statements' arguments and results: the
 * timestamp type itself, date, or bigint for every integer column. */
extern Oid fn_time_input_bound_type(const FnTimeInput *in, Oid timestamp_type);

/* A value of that type (a date as its day number) as int64, and back. */
extern int64 fn_time_input_value(const FnTimeInput *in, Datum d);
extern Datum fn_time_input_datum(const FnTimeInput *in, int64 value);

/*
 * The timestamp of a column value, exactly as the query computes it. Total and
 * non-decreasing: +-infinity (a date's) are DT_NOBEGIN/DT_NOEND (no window); a value
 * whose timestamp PostgreSQL cannot represent is clamped into the first or last
 * window (the query fails on it: its window's refresh then fails visibly, as for a
 * timestamp whose window PostgreSQL cannot compute).
 */
extern int64 fn_time_input_time(FnTimeInput *in, int64 value);

/* The column values whose timestamp lies in r, as the inclusive range [*lo, *hi];
 * false when there is none. */
extern bool fn_time_input_bounds(FnTimeInput *in, FnTimeRange r, int64 *lo, int64 *hi);

/* The times of the rows whose values lie in [values.start, values.end). */
extern FnTimeRange fn_time_input_times(FnTimeInput *in, FnTimeRange values);

/* The values searched: the valid dates (+-infinity aside), or every bigint. */
extern int64 fn_time_input_min(const FnTimeInput *in);
extern int64 fn_time_input_max(const FnTimeInput *in);

/*
 * SQL over the column `col` (quoted) and a range of times, for the statements that
 * read it by hand: `col >= $1 AND col < $2` for a timestamp column, `col >= $1 AND
 * col <= $2` otherwise (fn_time_input_args gives $1 and $2); and the column read as
 * the argument type (a cast to bigint for an integer column).
 */
extern char *fn_time_input_where(const FnTimeInput *in, const char *col, int first_param);
extern char *fn_time_input_select(const FnTimeInput *in, const char *col);
/* $1, $2 for r: false when no value of the column lies in r. */
extern bool fn_time_input_args(FnTimeInput *in, FnTimeRange r, Datum *lo, Datum *hi);
/* The timestamp of a value read as fn_time_input_select reads it. */
extern int64 fn_time_input_time_of(FnTimeInput *in, Datum d);

#endif
