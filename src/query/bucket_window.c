/*
 * bucket_window.c: time_bucket and the zoned date_bin as a flow's window.
 *
 * A time_bucket of a width without months over a column without a time zone is
 * date_bin with TimescaleDB's origin (2000-01-03, shifted by the offset): it becomes
 * a date_bin window on that grid. Month widths and the timezone form become windows
 * of their own (FN_WINDOW_TIME_BUCKET), whose bounds the window calendar computes by
 * calling time_bucket itself (core_bridge.cpp, core/zoned_buckets.hpp); date_bin in a
 * zone is the same window with date_bin's origin.
 */
#include "postgres.h"

#include "query/bucket_window.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "bridge/time_bucket.h"

typedef enum BucketForm {
	BUCKET_NONE = 0,
	BUCKET_PLAIN,       /* (width, ts [, origin]) over timestamp or timestamptz */
	BUCKET_OFFSET,      /* (width, timestamp, offset) */
	BUCKET_TSTZ_OFFSET, /* (width, timestamptz, offset) */
	BUCKET_DATE,        /* (width, date [, origin]) */
	BUCKET_DATE_OFFSET, /* (width, date, offset) */
	BUCKET_ZONE,        /* (width, timestamptz, timezone, origin, offset) */
	BUCKET_ZONED_BIN,   /* date_bin(w, ts AT TIME ZONE z, o) AT TIME ZONE z */
} BucketForm;

static const struct {
	const char *symbol;
	BucketForm form;
} bucket_symbols[] = {
    {"flownode_time_bucket_ts", BUCKET_PLAIN},
    {"flownode_time_bucket_ts_offset", BUCKET_OFFSET},
    {"flownode_time_bucket_tstz_offset", BUCKET_TSTZ_OFFSET},
    {"flownode_time_bucket_date", BUCKET_DATE},
    {"flownode_time_bucket_date_offset", BUCKET_DATE_OFFSET},
    {"flownode_time_bucket_tz", BUCKET_ZONE},
};

/* flownode.time_bucket's form by the C function it calls (its integer forms are no
 * window: they group numbers). */
static BucketForm time_bucket_form(Oid funcid) {
	HeapTuple tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	BucketForm form = BUCKET_NONE;

	if (!HeapTupleIsValid(tup))
		return BUCKET_NONE;
	if (((Form_pg_proc)GETSTRUCT(tup))->pronamespace == get_namespace_oid("flownode", true) &&
	    ((Form_pg_proc)GETSTRUCT(tup))->prolang == ClanguageId) {
		bool isnull;
		Datum src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
		char *symbol = isnull ? "" : TextDatumGetCString(src);

		for (int i = 0; i < (int)lengthof(bucket_symbols); i++)
			if (strcmp(symbol, bucket_symbols[i].symbol) == 0)
				form = bucket_symbols[i].form;
	}
	ReleaseSysCache(tup);
	return form;
}

/* date_bin(w, <timezone(z, col)>, o) under timezone(z, ...): the inner date_bin. */
static FuncExpr *zoned_date_bin(FuncExpr *fe) {
	FuncExpr *bin, *local;

	if (fe->funcid != F_TIMEZONE_TEXT_TIMESTAMP || list_length(fe->args) != 2)
		return NULL;
	bin = (FuncExpr *)lsecond(fe->args);
	if (!IsA(bin, FuncExpr) || bin->funcid != F_DATE_BIN_INTERVAL_TIMESTAMP_TIMESTAMP)
		return NULL;
	local = (FuncExpr *)lsecond(bin->args);
	if (!IsA(local, FuncExpr) || local->funcid != F_TIMEZONE_TEXT_TIMESTAMPTZ)
		return NULL;
	return bin;
}

static BucketForm form_of(FuncExpr *fe) {
	if (zoned_date_bin(fe) != NULL)
		return BUCKET_ZONED_BIN;
	return time_bucket_form(fe->funcid);
}

/* The call as the planner sees it: arguments given by name put in their places and
 * defaults filled in (time_bucket's timezone form is mostly called so), each folded.
 * The time argument is a column, so the call itself is never folded away. */
static FuncExpr *positional(FuncExpr *fe) {
	Node *n = eval_const_expressions(NULL, (Node *)copyObject(fe));

	if (!IsA(n, FuncExpr))
		ereport(ERROR,
		        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		         errmsg("invalid flow query: the time window must be computed over a column of the source "
		                "table")));
	return (FuncExpr *)n;
}

bool fn_is_bucket_window(FuncExpr *fe) {
	return form_of(fe) != BUCKET_NONE;
}

Node *fn_bucket_window_time_arg(FuncExpr *fe) {
	BucketForm form = form_of(fe);

	if (form != BUCKET_ZONED_BIN)
		fe = positional(fe);

	if (form == BUCKET_ZONED_BIN)
		return lsecond(((FuncExpr *)lsecond(zoned_date_bin(fe)->args))->args);
	if (form == BUCKET_DATE || form == BUCKET_DATE_OFFSET)
		return (Node *)makeFuncExpr(F_TIMESTAMP_DATE, TIMESTAMPOID, list_make1(lsecond(fe->args)), InvalidOid,
		                            InvalidOid, COERCE_IMPLICIT_CAST);
	return lsecond(fe->args);
}

/* A constant argument, NULL for a NULL one (the timezone form's defaults). */
static Const *constant(Node *arg, const char *what) {
	Node *folded = eval_const_expressions(NULL, arg);

	if (!IsA(folded, Const))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: the %s of the time window must be a constant", what)));
	return ((Const *)folded)->constisnull ? NULL : (Const *)folded;
}

static Const *required(Node *arg, const char *what) {
	Const *c = constant(arg, what);

	if (c == NULL)
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
		                errmsg("invalid flow query: the %s of the time window must not be NULL", what)));
	return c;
}

static void set_offset(FnWindowSpec *spec, const Interval *offset) {
	spec->offset_time = offset->time;
	spec->offset_day = offset->day;
	spec->offset_month = offset->month;
}

static const char *zone_text(Node *arg) {
	char *zone = TextDatumGetCString(required(arg, "time zone")->constvalue);

	if (strlen(zone) >= FN_ZONE_LEN)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("invalid flow query: the time zone of the time window is too long"),
		                errdetail("A time zone name has at most %d bytes.", FN_ZONE_LEN - 1)));
	return zone;
}

/* The zoned date_bin: both zones the same constant, as the local time's bucket is
 * converted back from the zone it was taken in. */
static void read_zoned_bin(FuncExpr *fe, FnWindowSpec *spec) {
	FuncExpr *bin = zoned_date_bin(fe);
	const char *outer = zone_text(linitial(fe->args));
	const char *inner = zone_text(linitial(((FuncExpr *)lsecond(bin->args))->args));
	Interval *width = DatumGetIntervalP(required(linitial(bin->args), "stride")->constvalue);

	if (strcmp(outer, inner) != 0)
		ereport(ERROR,
		        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		         errmsg("invalid flow query: date_bin in a time zone must convert back to the same zone"),
		         errdetail("The window reads \"%s\" and converts back from \"%s\".", inner, outer),
		         errhint("Write date_bin(stride, col AT TIME ZONE 'zone', origin) AT TIME ZONE 'zone' "
		                 "with one zone, or flownode.time_bucket(stride, col, 'zone').")));
	spec->kind = FN_WINDOW_TIME_BUCKET;
	spec->stride_time = width->time;
	spec->stride_day = width->day;
	spec->stride_month = width->month;
	spec->origin = DatumGetTimestamp(required(lthird(bin->args), "origin")->constvalue);
	strlcpy(spec->zone, outer, FN_ZONE_LEN);
}

/* The timezone form: (width, ts, zone, origin or NULL, offset or NULL); the origin
 * is taken in the zone, as time_bucket takes it. */
static void read_zone_form(FuncExpr *fe, FnWindowSpec *spec) {
	const char *zone = zone_text(lthird(fe->args));
	Const *origin = list_length(fe->args) > 3 ? constant(lfourth(fe->args), "origin") : NULL;
	Const *offset = list_length(fe->args) > 4 ? constant(list_nth(fe->args, 4), "offset") : NULL;

	spec->kind = FN_WINDOW_TIME_BUCKET;
	strlcpy(spec->zone, zone, FN_ZONE_LEN);
	if (origin != NULL)
		spec->origin = DatumGetTimestamp(
		    DirectFunctionCall2(timestamptz_zone, CStringGetTextDatum(zone), origin->constvalue));
	if (offset != NULL)
		set_offset(spec, DatumGetIntervalP(offset->constvalue));
}

/* A fixed width without a zone is date_bin on the grid of origin + offset. */
static void to_date_bin(FnWindowSpec *spec) {
	int64 shift = spec->offset_time + (int64)spec->offset_day * USECS_PER_DAY;

	spec->kind = FN_WINDOW_DATE_BIN;
	spec->origin += shift;
	spec->offset_time = 0;
	spec->offset_day = 0;
}

void fn_bucket_window_read(FuncExpr *fe, FnWindowSpec *spec) {
	BucketForm form = form_of(fe);
	Interval *width;

	if (form == BUCKET_ZONED_BIN) {
		read_zoned_bin(fe, spec);
		return;
	}
	fe = positional(fe);
	width = DatumGetIntervalP(required(linitial(fe->args), "width")->constvalue);
	spec->stride_time = width->time;
	spec->stride_day = width->day;
	spec->stride_month = width->month;
	spec->origin = FN_TIME_BUCKET_ORIGIN;
	spec->kind = FN_WINDOW_TIME_BUCKET;
	(void)fn_time_bucket_timestamp(width, 0, spec->origin); /* its own error for a width it refuses */
	if (form == BUCKET_ZONE) {
		read_zone_form(fe, spec);
		return;
	}
	if ((form == BUCKET_PLAIN || form == BUCKET_DATE) && list_length(fe->args) == 3) {
		Datum origin = required(lthird(fe->args), "origin")->constvalue;

		spec->origin = form == BUCKET_DATE ? DatumGetTimestamp(DirectFunctionCall1(date_timestamp, origin))
		                                   : DatumGetTimestamp(origin);
	}
	if (form == BUCKET_OFFSET || form == BUCKET_TSTZ_OFFSET || form == BUCKET_DATE_OFFSET)
		set_offset(spec, DatumGetIntervalP(required(lthird(fe->args), "offset")->constvalue));
	if (form == BUCKET_TSTZ_OFFSET && (spec->offset_day != 0 || spec->offset_month != 0))
		ereport(
		    ERROR,
		    (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		     errmsg("invalid flow query: a time_bucket offset of days or months over a timestamptz column "
		            "depends on the session's time zone"),
		     errdetail("time_bucket subtracts such an offset in the TimeZone of whoever runs the query."),
		     errhint(
		         "Write the offset in hours, or name the zone: time_bucket(width, col, 'zone', \"offset\" "
		         "=> offset).")));
	if (width->month == 0 && spec->offset_month == 0)
		to_date_bin(spec);
}
