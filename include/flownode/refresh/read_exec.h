/*
 * read_exec.h: runs read_flow's statements (docs/internals.md §6, "Real-time reads"):
 * in the caller's snapshot, the sink's rows outside the dirty windows, read as the
 * caller, and the flow's query over the dirty windows, run as a refresh runs it (the
 * flow's owner, the pinned settings), both into the caller's tuplestore in the
 * sink's row type.
 */
#ifndef FLOWNODE_READ_EXEC_H
#define FLOWNODE_READ_EXEC_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "utils/tuplestore.h"

#include "core/time_range.h"
#include "query/flow_query.h"
#include "registry/flow_registry.h"

/* What one read runs. */
typedef struct FnReadPlan {
	/* the sink's rows whose window lies in `bounds` and in no dirty range (a
	 * window-less flow: the whole sink) */
	bool read_sink;
	FnTimeRange bounds;
	/* the flow's query over the dirty ranges (sorted, disjoint, whole windows); a
	 * window-less flow runs its whole query when ndirty > 0 */
	const FnTimeRange *dirty;
	int ndirty;
	/* a query comparing its time column with now(): the time the query part takes
	 * for it (the reader's now()) */
	bool clock;
	TimestampTz clock_at;
} FnReadPlan;

/* The flow's stored query analysed as a refresh analyses it (as the owner, under the
 * pinned settings). */
extern FlowQuery *fn_read_analyse(TaskConfig *cfg);

/* ERROR unless the current user may read the flow: SELECT on the sink and on the
 * source's columns the query reads, and no row-level security applying to it on
 * either (its policies could not be applied to the windows computed at read time). */
extern void fn_read_check_caller(TaskConfig *cfg, FlowQuery *fq);

/* Runs the plan in the active snapshot into `store`, rows of `desc`: the sink's row
 * type, or (subset) a read view's, the query's columns only, the sink's other
 * columns (its hidden key columns) left out. */
extern void fn_read_run(TaskConfig *cfg, FlowQuery *fq, const FnReadPlan *plan, Tuplestorestate *store,
                        TupleDesc desc, bool subset);

#endif
