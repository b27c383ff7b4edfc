/*
 * ts_bucket_ng.c: timescaledb_experimental.time_bucket_ng, rewritten in the raw parse
 * tree of a continuous aggregate's query (ts_dialect.c) as the flownode.time_bucket
 * call that computes the same buckets (docs/reference.md, "Coming from TimescaleDB").
 *
 * TimescaleDB's time_bucket_ng (src/time_bucket.c there) buckets a local timestamp:
 *   - a width with a time part (hours, minutes, '1 day 12 hours'): multiples of the
 *     width from its origin, by default 2000-01-03 00:00 (time_bucket's own default);
 *   - a width of days and weeks: days from the origin's date, by default 2000-01-01
 *     (a Saturday: its weeks start on Saturdays);
 *   - a width of months and years: months from the origin's month, by default
 *     January 2000;
 * and with a time zone, time_bucket_ng(w, ts, timezone [, origin]) does that to
 * `ts AT TIME ZONE timezone` (and to the origin's local time), the bucket read back in
 * that zone. That is flownode.time_bucket(w, ts, timezone [, origin]), TimescaleDB's
 * time_bucket in a zone, whose default origin is 2000-01-03 local (and January 2000
 * for months): the same buckets, but for widths of days, which start two days
 * earlier without an origin ("offset" => '-2 days') and at the local midnight of
 * the origin's date with one.
 *
 * So the width must be known here: a literal (as every width of a flow is a
 * constant). Without a time zone the origin is written out as a date,
 * '2000-01-01' or '2000-01-03': over a timestamptz it would be cast in the session's
 * time zone, which a flow refuses, as TimescaleDB's continuous aggregates refuse
 * time_bucket_ng(w, timestamptz) without a zone.
 */
#include "flownode.h"

#include "timescale/ts_bucket_ng.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "parser/parser.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

/* The width when it is a literal: '1 day' or interval '1 day' (a cast to interval);
 * false otherwise. */
static bool literal_width(Node *arg, Interval *width) {
	Oid type = UNKNOWNOID, input, ioparam;
	int32 typmod = -1;
	A_Const *c;

	if (IsA(arg, TypeCast)) {
		typenameTypeIdAndMod(NULL, ((TypeCast *)arg)->typeName, &type, &typmod);
		arg = ((TypeCast *)arg)->arg;
	}
	if (!IsA(arg, A_Const) || ((A_Const *)arg)->isnull || (type != UNKNOWNOID && type != INTERVALOID))
		return false;
	c = (A_Const *)arg;
	if (!IsA(&c->val, String))
		return false;
	getTypeInputInfo(INTERVALOID, &input, &ioparam);
	*width = *DatumGetIntervalP(OidInputFunctionCall(input, strVal(&c->val), ioparam, typmod));
	return true;
}

static Node *cast_to(Node *arg, const char *type) {
	TypeCast *cast = makeNode(TypeCast);

	cast->arg = arg;
	cast->typeName = SystemTypeName(pstrdup(type));
	cast->location = -1;
	return (Node *)cast;
}

static Node *typed_literal(const char *value, const char *type) {
	A_Const *c = makeNode(A_Const);

	c->val.sval.type = T_String;
	c->val.sval.sval = pstrdup(value);
	c->location = -1;
	return cast_to((Node *)c, type);
}

static Node *named(const char *name, Node *arg) {
	NamedArgExpr *na = makeNode(NamedArgExpr);

	na->name = pstrdup(name);
	na->arg = (Expr *)arg;
	na->argnumber = -1;
	na->location = -1;
	return (Node *)na;
}

/* `ts AT TIME ZONE zone`, as the grammar writes it. */
static Node *at_zone(Node *zone, Node *ts) {
	return (Node *)makeFuncCall(SystemFuncName("timezone"), list_make2(copyObject(zone), ts),
	                            COERCE_SQL_SYNTAX, -1);
}

/* For widths of days time_bucket_ng counts from the origin's local date, whatever
 * its time of day: the local midnight of that date, a constant once folded
 * (timestamptz AT TIME ZONE, ::date and timestamp AT TIME ZONE are immutable). */
static Node *local_midnight(Node *origin, Node *zone) {
	Node *local = at_zone(zone, cast_to(origin, "timestamptz"));

	return at_zone(zone, cast_to(cast_to(local, "date"), "timestamp"));
}

/* A third argument written as a cast to text: a time zone, as PostgreSQL resolves
 * time_bucket_ng(w, timestamptz, text). */
static bool is_text_cast(Node *arg) {
	Oid type;
	int32 typmod;

	if (!IsA(arg, TypeCast))
		return false;
	typenameTypeIdAndMod(NULL, ((TypeCast *)arg)->typeName, &type, &typmod);
	return type == TEXTOID || type == VARCHAROID;
}

/* The call's origin and time zone, named or in their places (w, ts, origin) or
 * (w, ts, timezone) or (w, ts, origin, timezone). */
static void origin_and_zone(FuncCall *fc, Node **origin, Node **zone) {
	ListCell *lc;

	*origin = *zone = NULL;
	for_each_from(lc, fc->args, 2) {
		Node *arg = lfirst(lc);
		NamedArgExpr *na = IsA(arg, NamedArgExpr) ? (NamedArgExpr *)arg : NULL;

		if (na != NULL && strcmp(na->name, "origin") == 0)
			*origin = (Node *)na->arg;
		else if (na != NULL && strcmp(na->name, "timezone") == 0)
			*zone = (Node *)na->arg;
		else if (na != NULL)
			ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION),
			                errmsg("function timescaledb_experimental.time_bucket_ng has no parameter \"%s\"",
			                       na->name)));
		else if (foreach_current_index(lc) == 3 || (list_length(fc->args) == 3 && is_text_cast(arg)))
			*zone = arg; /* the fourth, or a third cast to text */
		else if (list_length(fc->args) == 3 && IsA(arg, A_Const))
			ereport(ERROR,
			        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			         errmsg("time_bucket_ng with a third argument that is a literal is not supported"),
			         errdetail("It is an origin or a time zone depending on the type of the time column."),
			         errhint("Name it: timezone => '...', or origin => '...'::date (or ::timestamp).")));
		else
			*origin = arg;
	}
}

void fn_ts_time_bucket_ng_call(FuncCall *fc) {
	Node *origin, *zone;
	Interval width;
	List *args = list_make2(linitial(fc->args), lsecond(fc->args));

	origin_and_zone(fc, &origin, &zone);
	if (!literal_width(linitial(fc->args), &width))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("time_bucket_ng with a width that is not a literal is not supported"),
		                errdetail("Its default origin depends on whether the width has a time part."),
		                errhint("Write the width as a literal, such as '1 day' or interval '5 hours'.")));
	if (zone != NULL) {
		args = lappend(args, zone);
		if (origin != NULL && width.month == 0 && width.time == 0)
			args = lappend(args, named("origin", local_midnight(origin, zone)));
		else if (origin != NULL)
			args = lappend(args, named("origin", origin));
		else if (width.month == 0 && width.time == 0) /* days from 2000-01-01, not 01-03 */
			args = lappend(args, named("offset", typed_literal("-2 days", "interval")));
	} else if (origin != NULL)
		args = fc->args; /* as written: named or not, a literal takes the column's type */
	else
		args = lappend(args, typed_literal(width.time != 0 ? "2000-01-03" : "2000-01-01", "date"));
	fc->args = args;
	fc->funcname = list_make2(makeString(FLOWNODE_SCHEMA), makeString("time_bucket"));
}
