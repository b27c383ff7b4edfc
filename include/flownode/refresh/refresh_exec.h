/*
 * refresh_exec.h: runs a flow's refresh (GreptimeDB's execute_logical_plan): the
 * statement of refresh_sql.h, as the flow's owner, under pinned settings, in a
 * snapshot taken after the source is locked; with the same snapshot, the refreshed
 * windows leave the durable record.
 */
#ifndef FLOWNODE_REFRESH_EXEC_H
#define FLOWNODE_REFRESH_EXEC_H

#include "postgres.h"

#include "core/time_range.h"
#include "query/flow_query.h"
#include "refresh/fold_refresh.h"
#include "registry/flow_registry.h"

/* create_flow's fill: the whole query (fq: the stored query analysed); into a sink it
 * just created, a plain INSERT. Returns the rows written. clock_at: the scheduled
 * time now() means, for a query that compares its time column with it. */
/* For a date or an integer epoch time column (query/time_input.h): the source side's
 * arguments $3 and $4 of a statement whose ranges are $1 and $2, into values[2] and
 * values[3] (arrays of the column's type; joined: [lo, hi] per range, else [lo, hi)). */
extern void fn_refresh_input_arrays(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, bool joined,
                                    Datum *values);
extern int64 fn_refresh_fill(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new, TimestampTz clock_at);
/* One chunk of that fill: the windows of `range` (a union of whole windows). */
extern int64 fn_refresh_fill_range(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new, FnTimeRange range,
                                   TimestampTz clock_at);

/*
 * What one refresh does (fn_refresh_run): named fields, so that a caller says which
 * ranges, how big and at what time, and a field it leaves out reads as "none" (0,
 * false, NULL). rows is the exception: left out, it claims the ranges hold no rows
 * (the plan for a few rows), so a caller that does not know says PG_UINT64_MAX.
 */
typedef struct FnRefreshRequest {
	const FnTimeRange *ranges; /* the ranges to refresh (whole windows) */
	int nranges;               /* 0: nothing to refresh (only expired windows to forget) */
	/* recorded windows that ended before this leave the durable record (0: none) */
	int64 expired_before;
	/* some window may have lost rows (an UPDATE/DELETE marked it): vanished groups
	 * are deleted from the sink */
	bool removals;
	uint64 windows;          /* how many windows the ranges span: picks the plan */
	uint64 rows;             /* at most this many source rows in them (PG_UINT64_MAX: not known) */
	TimestampTz clock_at;    /* as for the fill: the scheduled time now() means (0: none) */
	const FnFoldInput *fold; /* NULL: no fold; else the reports the folded refresh of
	                          * the open window checks (refresh/fold_refresh.h) */
	/* the flow's key marks instead of ranges (refresh/key_refresh.h): no ranges, the
	 * record untouched, the fold dropped (its prefix may lack the marked rows) */
	bool keys;
} FnRefreshRequest;

/* One refresh of req->ranges in the current transaction: returns the sink rows
 * written. The refreshed ranges, and the recorded windows that ended before
 * req->expired_before, leave the durable record. With a fold, fn_fold_settle when the
 * transaction has ended. */
extern int64 fn_refresh_run(TaskConfig *cfg, const FnRefreshRequest *req);
/* The flow left the worker: its kept statements, analysis and fold are freed. */
extern void fn_refresh_forget_flow(int64 flow_id);
/* The flow's refresh transaction ended: fn_fold_settle of its fold ({} if nothing is
 * kept for it). */
/* Whether the flow's refresh in this transaction folded (its run history row). */
extern bool fn_refresh_folding(int64 flow_id);
extern FnFoldSettled fn_refresh_settle_fold(int64 flow_id, bool committed);

/* A flow that compares its time column with now(): the values of the time column
 * (half-open ranges, *n of them) where a row's answer to those comparisons differs
 * between now() = prev and now() = next, the thresholds evaluated as the owner in the
 * flow's settings. Rows elsewhere are in the query, or not, at both times. */
extern FnTimeRange *fn_refresh_clock_changes(TaskConfig *cfg, TimestampTz prev, TimestampTz next, int *n);

/* Where the data of [within) lies, in the current transaction: the hull of the
 * source's times and the sink's windows there (start >= end: none), read as the
 * flow's owner. */
extern FnTimeRange fn_refresh_extent(TaskConfig *cfg, FnTimeRange within);
/* The same over all time for create_flow's fill, with its own analysed query; the
 * sink's windows only if with_sink. */
extern FnTimeRange fn_fill_extent(TaskConfig *cfg, FlowQuery *fq, bool with_sink);

/* The flow's windows in r (a window-less flow: 1 when r is not empty), counted from
 * the unit's usual width past a million calendar windows: what refresh_flow returns
 * for the extent above. */
extern int64 fn_refresh_window_count(TaskConfig *cfg, FnTimeRange r);

/* Which dirty ranges (sorted, oldest first) the next refresh takes: those whose
 * source rows fit max_rows, probed through the time column's index (the cost of a
 * range follows its rows, not its windows); everything when the source has no such
 * index (one statement then reads it once) or the flow no window (w NULL). In the
 * current transaction, as the owner. *rows: at most that many source rows in the
 * ranges taken (PG_UINT64_MAX: not known). */
extern uint32 fn_refresh_take(TaskConfig *cfg, FnWindow *w, const FnTimeRange *ranges, uint32 n,
                              uint64 max_rows, FnTimeRange *out, uint64 *windows, uint64 *rows,
                              bool *backlog_remains);

#endif
