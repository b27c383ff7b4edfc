/*
 * refresh_exec.h: runs a flow's refresh (the seed's execute_logical_plan): the
 * statement of refresh_sql.h, as the flow's owner, under pinned settings, in a
 * snapshot taken after the source is locked; with the same snapshot, the refreshed
 * windows leave the durable record.
 */
#ifndef FLOWNODE_REFRESH_EXEC_H
#define FLOWNODE_REFRESH_EXEC_H

#include "postgres.h"

#include "core/time_range.h"
#include "query/flow_query.h"
#include "registry/flow_registry.h"

/* create_flow's fill: the whole query (fq: the stored query analysed); into a sink it
 * just created, a plain INSERT. Returns the rows written. */
extern int64 fn_refresh_fill(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new);

/* One refresh of `ranges` (nranges 0: nothing to refresh) in the current transaction:
 * returns the sink rows written. `removals`: some window may have lost rows (an
 * UPDATE/DELETE marked it), so vanished groups must be deleted; `windows`: how many
 * windows the ranges span (it picks the plan). The refreshed ranges, and the recorded
 * windows that ended before expired_before (if not 0), leave the durable record. */
extern int64 fn_refresh_run(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, int64 expired_before,
                            bool removals, uint64 windows);

/* Where the data of [within) lies, in the current transaction: the hull of the
 * source's times and the sink's windows there (start >= end: none), read as the
 * flow's owner. */
extern FnTimeRange fn_refresh_extent(TaskConfig *cfg, FnTimeRange within);

/* The flow's windows in r (a window-less flow: 1 when r is not empty), counted from
 * the unit's usual width past a million calendar windows: what refresh_flow returns
 * for the extent above. */
extern int64 fn_refresh_window_count(TaskConfig *cfg, FnTimeRange r);

#endif
