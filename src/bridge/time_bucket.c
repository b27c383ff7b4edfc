/*
 * time_bucket.c: flownode.time_bucket with TimescaleDB's semantics (its
 * documentation and its Apache-licensed src/time_bucket.c), computed with
 * PostgreSQL's own date functions: date_bin for widths without months, the
 * calendar's year and month for month widths, the interval arithmetic and the time
 * zone conversions of the operators a user would write. It lives at the bottom of
 * the tree because a flow grouped by time_bucket has its windows computed by this
 * very function (core_bridge.cpp), so the sink and the windows cannot disagree.
 */
#include "postgres.h"

#include "fmgr.h"
#include "common/int.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"

#include "bridge/time_bucket.h"
#include "compat/pg_compat.h"

PG_FUNCTION_INFO_V1(flownode_time_bucket_ts);
PG_FUNCTION_INFO_V1(flownode_time_bucket_ts_offset);
PG_FUNCTION_INFO_V1(flownode_time_bucket_tstz_offset);
PG_FUNCTION_INFO_V1(flownode_time_bucket_date);
PG_FUNCTION_INFO_V1(flownode_time_bucket_date_offset);
PG_FUNCTION_INFO_V1(flownode_time_bucket_tz);
PG_FUNCTION_INFO_V1(flownode_time_bucket_int2);
PG_FUNCTION_INFO_V1(flownode_time_bucket_int4);
PG_FUNCTION_INFO_V1(flownode_time_bucket_int8);

pg_noreturn static void out_of_range(void) {
	ereport(ERROR,
	        (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE), errmsg("time_bucket result is out of range")));
}

pg_noreturn static void width_not_positive(void) {
	ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
	                errmsg("time_bucket width must be greater than zero")));
}

/* floor(a / b) for b > 0 */
static int64 floor_div(int64 a, int64 b) {
	return a / b - (a % b < 0 ? 1 : 0);
}

/* Months since year 0 of a timestamp's date. */
static int64 month_number(Timestamp ts) {
	DateADT date = DatumGetDateADT(DirectFunctionCall1(timestamp_date, TimestampGetDatum(ts)));
	int year, month, day;

	j2date(date + POSTGRES_EPOCH_JDATE, &year, &month, &day);
	return (int64)year * 12 + month - 1;
}

/* N-month buckets counted from the origin's month, as TimescaleDB's bucket_month:
 * only the year and month of ts and of the origin count. */
static DateADT month_bucket(int32 months, Timestamp ts, Timestamp origin) {
	int64 shift = month_number(origin) % months;
	int64 bucket = floor_div(month_number(ts) - shift, months) * months + shift;
	int64 year = floor_div(bucket, 12);
	int month = (int)(bucket - year * 12) + 1;

	if (year < -4713 || year > 5874897)
		out_of_range();
	return date2j((int)year, month, 1) - POSTGRES_EPOCH_JDATE;
}

static void check_width(const Interval *width) {
	if (width->month != 0 && (width->day != 0 || width->time != 0))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("time_bucket width cannot combine months with days or time"),
		                errhint("Write a width of whole months or years, or one of days and time only.")));
	if (width->month < 0 || width->day < 0 || width->time < 0 ||
	    (width->month == 0 && width->day == 0 && width->time == 0))
		width_not_positive();
}

Timestamp fn_time_bucket_timestamp(const Interval *width, Timestamp ts, Timestamp origin) {
	check_width(width);
	if (TIMESTAMP_NOT_FINITE(ts))
		return ts;
	if (TIMESTAMP_NOT_FINITE(origin))
		ereport(ERROR,
		        (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE), errmsg("time_bucket origin must be finite")));
	if (width->month != 0)
		return DatumGetTimestamp(
		    DirectFunctionCall1(date_timestamp, DateADTGetDatum(month_bucket(width->month, ts, origin))));
	/* date_bin is time_bucket for widths without months: origin + k * width */
	return DatumGetTimestamp(DirectFunctionCall3(timestamp_bin, IntervalPGetDatum(width),
	                                             TimestampGetDatum(ts), TimestampGetDatum(origin)));
}

Timestamp fn_time_bucket_offset(const Interval *width, Timestamp ts, Timestamp origin,
                                const Interval *offset) {
	Datum shifted, bucket;

	check_width(width);
	if (TIMESTAMP_NOT_FINITE(ts))
		return ts;
	shifted = DirectFunctionCall2(timestamp_mi_interval, TimestampGetDatum(ts), IntervalPGetDatum(offset));
	bucket = TimestampGetDatum(fn_time_bucket_timestamp(width, DatumGetTimestamp(shifted), origin));
	return DatumGetTimestamp(DirectFunctionCall2(timestamp_pl_interval, bucket, IntervalPGetDatum(offset)));
}

/* time_bucket(width, timestamp [, origin]) and the same over timestamptz, which
 * TimescaleDB buckets in UTC: both are microseconds since 2000-01-01. */
Datum flownode_time_bucket_ts(PG_FUNCTION_ARGS) {
	Timestamp origin = PG_NARGS() > 2 ? PG_GETARG_TIMESTAMP(2) : FN_TIME_BUCKET_ORIGIN;

	PG_RETURN_TIMESTAMP(fn_time_bucket_timestamp(PG_GETARG_INTERVAL_P(0), PG_GETARG_TIMESTAMP(1), origin));
}

Datum flownode_time_bucket_ts_offset(PG_FUNCTION_ARGS) {
	PG_RETURN_TIMESTAMP(fn_time_bucket_offset(PG_GETARG_INTERVAL_P(0), PG_GETARG_TIMESTAMP(1),
	                                          FN_TIME_BUCKET_ORIGIN, PG_GETARG_INTERVAL_P(2)));
}

/* time_bucket(width, timestamptz, offset): the offset is subtracted and added back
 * as the timestamptz operators do, in the session's time zone (TimescaleDB's). */
Datum flownode_time_bucket_tstz_offset(PG_FUNCTION_ARGS) {
	Interval *width = PG_GETARG_INTERVAL_P(0);
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(1);
	Datum offset = PG_GETARG_DATUM(2);
	Datum shifted;
	Timestamp bucket;

	check_width(width);
	if (TIMESTAMP_NOT_FINITE(ts))
		PG_RETURN_TIMESTAMPTZ(ts);
	shifted = DirectFunctionCall2(timestamptz_mi_interval, TimestampTzGetDatum(ts), offset);
	bucket = fn_time_bucket_timestamp(width, DatumGetTimestampTz(shifted), FN_TIME_BUCKET_ORIGIN);
	PG_RETURN_DATUM(DirectFunctionCall2(timestamptz_pl_interval, TimestampTzGetDatum(bucket), offset));
}

/* time_bucket(width, date [, origin date]): a width without months must be whole
 * days, as TimescaleDB requires. */
Datum flownode_time_bucket_date(PG_FUNCTION_ARGS) {
	Interval *width = PG_GETARG_INTERVAL_P(0);
	DateADT date = PG_GETARG_DATEADT(1);
	Timestamp origin = FN_TIME_BUCKET_ORIGIN;
	Timestamp bucket;

	check_width(width);
	if (DATE_NOT_FINITE(date))
		PG_RETURN_DATEADT(date);
	if (width->month == 0 && width->time % USECS_PER_DAY != 0)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("time_bucket width over a date must be a whole number of days"),
		                errhint("Cast the date to timestamp to bucket it by hours or less.")));
	if (PG_NARGS() > 2)
		origin = DatumGetTimestamp(DirectFunctionCall1(date_timestamp, PG_GETARG_DATUM(2)));
	bucket = fn_time_bucket_timestamp(
	    width, DatumGetTimestamp(DirectFunctionCall1(date_timestamp, DateADTGetDatum(date))), origin);
	PG_RETURN_DATUM(DirectFunctionCall1(timestamp_date, TimestampGetDatum(bucket)));
}

Datum flownode_time_bucket_date_offset(PG_FUNCTION_ARGS) {
	DateADT date = PG_GETARG_DATEADT(1);
	Timestamp ts, bucket;

	if (DATE_NOT_FINITE(date))
		PG_RETURN_DATEADT(date);
	ts = DatumGetTimestamp(DirectFunctionCall1(date_timestamp, DateADTGetDatum(date)));
	bucket =
	    fn_time_bucket_offset(PG_GETARG_INTERVAL_P(0), ts, FN_TIME_BUCKET_ORIGIN, PG_GETARG_INTERVAL_P(2));
	PG_RETURN_DATUM(DirectFunctionCall1(timestamp_date, TimestampGetDatum(bucket)));
}

/*
 * time_bucket(width, ts timestamptz, timezone text [, origin timestamptz]
 * [, "offset" interval]): the bucket of ts's local time in `timezone` (its origin
 * taken there too), as that zone's timestamptz. Not STRICT, as TimescaleDB's: a NULL
 * origin or offset is the default.
 */
Datum flownode_time_bucket_tz(PG_FUNCTION_ARGS) {
	Datum zone;
	Timestamp local, origin = FN_TIME_BUCKET_ORIGIN, bucket;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	if (TIMESTAMP_NOT_FINITE(PG_GETARG_TIMESTAMPTZ(1)))
		PG_RETURN_DATUM(PG_GETARG_DATUM(1));
	zone = PG_GETARG_DATUM(2);
	local = DatumGetTimestamp(DirectFunctionCall2(timestamptz_zone, zone, PG_GETARG_DATUM(1)));
	if (PG_NARGS() > 3 && !PG_ARGISNULL(3))
		origin = DatumGetTimestamp(DirectFunctionCall2(timestamptz_zone, zone, PG_GETARG_DATUM(3)));
	if (PG_NARGS() > 4 && !PG_ARGISNULL(4))
		bucket = fn_time_bucket_offset(PG_GETARG_INTERVAL_P(0), local, origin, PG_GETARG_INTERVAL_P(4));
	else
		bucket = fn_time_bucket_timestamp(PG_GETARG_INTERVAL_P(0), local, origin);
	PG_RETURN_DATUM(DirectFunctionCall2(timestamp_zone, zone, TimestampGetDatum(bucket)));
}

/* TimescaleDB's integer buckets: multiples of width (shifted by offset modulo
 * width), rounded down, within [min, max]. */
static int64 int_bucket(int64 width, int64 value, int64 offset, int64 min, int64 max) {
	int64 bucket;

	if (width <= 0)
		width_not_positive();
	offset %= width;
	if ((offset > 0 && value < min + offset) || (offset < 0 && value > max + offset))
		out_of_range();
	value -= offset;
	bucket = (value / width) * width;
	if (value < 0 && value % width != 0) {
		if (bucket < min + width)
			out_of_range();
		bucket -= width;
	}
	return bucket + offset;
}

Datum flownode_time_bucket_int2(PG_FUNCTION_ARGS) {
	int64 offset = PG_NARGS() > 2 ? PG_GETARG_INT16(2) : 0;

	PG_RETURN_INT16(
	    (int16)int_bucket(PG_GETARG_INT16(0), PG_GETARG_INT16(1), offset, PG_INT16_MIN, PG_INT16_MAX));
}

Datum flownode_time_bucket_int4(PG_FUNCTION_ARGS) {
	int64 offset = PG_NARGS() > 2 ? PG_GETARG_INT32(2) : 0;

	PG_RETURN_INT32(
	    (int32)int_bucket(PG_GETARG_INT32(0), PG_GETARG_INT32(1), offset, PG_INT32_MIN, PG_INT32_MAX));
}

Datum flownode_time_bucket_int8(PG_FUNCTION_ARGS) {
	int64 offset = PG_NARGS() > 2 ? PG_GETARG_INT64(2) : 0;

	PG_RETURN_INT64(int_bucket(PG_GETARG_INT64(0), PG_GETARG_INT64(1), offset, PG_INT64_MIN, PG_INT64_MAX));
}
