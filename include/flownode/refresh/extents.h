/*
 * extents.h: where a flow's data lies, and how many windows that is: what
 * refresh_flow covers and reports, and what create_flow's fill chunks.
 */
#ifndef FLOWNODE_EXTENTS_H
#define FLOWNODE_EXTENTS_H

#include "postgres.h"

#include "core/time_range.h"
#include "query/flow_query.h"
#include "registry/flow_registry.h"

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

#endif
