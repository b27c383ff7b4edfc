/*
 * extents.c: where a flow's data lies (extents.h): the hull of the source's times
 * and the sink's windows, read as the flow's owner through the time column's module,
 * and how many windows a range spans. refresh_flow and the fill cover that hull.
 */
#include "flownode.h"

#include "refresh/extents.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "query/query_rewrite.h"
#include "pgutil/pg_util.h"
#include "query/time_column.h"
#include "refresh/refresh_plans.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

/* The times of the first and last row of one column over [within), or false when
 * no row is there. `in`: how the column becomes the window's time (a source's date
 * or epoch column); NULL for a column of timestamps. */
static bool column_extent(const char *table, const char *column, Oid coltype, FnTimeInput *in,
                          FnTimeRange within, FnTimeRange *out) {
	FnTimeColumn c = {table, column, coltype, in};

	return fn_time_column_extent(&c, within, &out->start, &out->end);
}

/* The extent of the source's times, and of the sink's windows if `sink` is given
 * (fq NULL: the worker's analysed query). */
static FnTimeRange extent(TaskConfig *cfg, FlowQuery *fq, bool with_sink, FnTimeRange within) {
	Oid coltype = cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	FnTimeRange hull = {0, 0};
	FnTimeRange src, sink;
	bool have_src, have_sink = false;
	SpiAs scope;
	int nest;

	if (cfg->window.kind == FN_WINDOW_NONE)
		return hull;
	nest = fn_pin_deparse_settings(cfg->timezone);
	PushActiveSnapshot(GetTransactionSnapshot());
	fn_spi_begin_as(&scope, cfg->owner, SECURITY_RESTRICTED_OPERATION);
	if (fq == NULL)
		fq = fn_plans_analysed(cfg);
	have_src = column_extent(fn_qualified_relname(cfg->source_relid), quote_identifier(fq->time_column),
	                         coltype, &cfg->input, within, &src);
	if (with_sink)
		have_sink = column_extent(fn_qualified_relname(cfg->sink_relid),
		                          quote_identifier(list_nth(fq->out_names, fq->window_position)), coltype,
		                          NULL, within, &sink);
	fn_spi_end(&scope);
	PopActiveSnapshot();
	fn_unpin_settings(nest);
	if (have_src)
		hull = src;
	if (have_sink) {
		hull.start = have_src ? Min(hull.start, sink.start) : sink.start;
		hull.end = have_src ? Max(hull.end, sink.end) : sink.end;
	}
	if (have_src || have_sink)
		hull.end = hull.end == PG_INT64_MAX ? hull.end : hull.end + 1; /* [min, max] as [min, max + 1) */
	return hull;
}

FnTimeRange fn_refresh_extent(TaskConfig *cfg, FnTimeRange within) {
	return extent(cfg, NULL, true, within);
}

FnTimeRange fn_fill_extent(TaskConfig *cfg, FlowQuery *fq, bool with_sink) {
	FnTimeRange all = {MIN_TIMESTAMP, DT_NOEND};

	return extent(cfg, fq, with_sink, all);
}

int64 fn_refresh_window_count(TaskConfig *cfg, FnTimeRange r) {
	const uint64 cap = 1000000;
	bool fixed = cfg->window.kind == FN_WINDOW_DATE_BIN;
	FnWindow *w;
	uint64 n;

	if (r.start >= r.end || cfg->window.kind == FN_WINDOW_NONE)
		return r.start < r.end ? 1 : 0;
	w = fn_window_create(&cfg->window);
	n = fn_window_count(w, r, fixed ? PG_UINT64_MAX : cap);
	if (n >= cap && !fixed)
		n = Max(n, (uint64)((r.end - r.start) / fn_window_nominal_usec(w)));
	return (int64)n;
}
