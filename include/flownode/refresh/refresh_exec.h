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
#include "refresh/key_refresh.h"
#include "registry/flow_registry.h"

/* create_flow's fill: the whole query (fq: the stored query analysed); into a sink it
 * just created, a plain INSERT. Returns the rows written. clock_at: the scheduled
 * time now() means, for a query that compares its time column with it. */
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
	 * record untouched, the fold dropped (its prefix may lack the marked rows); what
	 * it refreshed counted in *key_count (NULL: not asked) */
	bool keys;
	FnKeyCount *key_count;
} FnRefreshRequest;

/* One refresh of req->ranges in the current transaction: returns the sink rows
 * written. The refreshed ranges, and the recorded windows that ended before
 * req->expired_before, leave the durable record. With a fold, fn_fold_settle when the
 * transaction has ended. */
extern int64 fn_refresh_run(TaskConfig *cfg, const FnRefreshRequest *req);
/* The flow left the worker: its kept statements, analysis and fold are freed. */
extern void fn_refresh_forget_flow(int64 flow_id);
/* Whether the flow's refresh in this transaction folded (its run history row). */
extern bool fn_refresh_folding(int64 flow_id);
/* The flow's refresh transaction ended: fn_fold_settle of its fold ({} if nothing is
 * kept for it). */
extern FnFoldSettled fn_refresh_settle_fold(int64 flow_id, bool committed);

#endif
