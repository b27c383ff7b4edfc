/*
 * sink_fill.h: a new flow's sink filled from what its source holds, in create_flow's
 * transaction (backfill => 'now'), or the windows its worker is to fill planned
 * (backfill => 'background'); the chunks either fill is cut into.
 */
#ifndef FLOWNODE_SINK_FILL_H
#define FLOWNODE_SINK_FILL_H

#include "postgres.h"

#include "query/flow_query.h"
#include "bridge/core_bridge.h"
#include "registry/flow_registry.h"

/* A fill reports its progress this often (a NOTICE), and how long it took once it
 * took longer than this. */
#define FILL_NOTICE_USEC (5 * USECS_PER_SEC)

/* backfill => 'now': the sink filled in this transaction; returns the rows written. */
extern int64 fn_fill_now(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new, TimestampTz clock_at);
/* backfill => 'background': the windows the worker fills, recorded in the flow's row. */
extern void fn_plan_backfill(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new);
/*
 * A chunk of a fill: where the chunk of `range` that starts at range.start ends, so
 * that it reads about `rows` rows of the source: the end of the window of the
 * rows-th row from range.start (whole windows), or range.end if fewer rows are left.
 * Found through the source's index on the time column; without one (or for a
 * window-less flow, w NULL) the chunk is the whole range. As the flow's owner.
 */
extern int64 fn_fill_chunk_end(TaskConfig *cfg, FnWindow *w, FnTimeRange range, int64 rows);
/* A fill in chunks covers every window of the sink's rows but rows without a
 * window: an existing sink loses those first (the whole fill's DELETE would). */
extern void fn_fill_forget_unwindowed(TaskConfig *cfg, FlowQuery *fq);

/* microseconds as seconds, for the fill's NOTICEs */
extern double fn_usec_to_sec(int64 usec);

#endif
