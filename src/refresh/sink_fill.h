/*
 * sink_fill.h: a new flow's sink filled from what its source holds, in create_flow's
 * transaction (backfill => 'now'), or the windows its worker is to fill planned
 * (backfill => 'background').
 */
#ifndef FLOWNODE_SINK_FILL_H
#define FLOWNODE_SINK_FILL_H

#include "postgres.h"

#include "query/flow_query.h"
#include "registry/flow_registry.h"

/* A fill reports its progress this often (a NOTICE), and how long it took once it
 * took longer than this. */
#define FILL_NOTICE_USEC (5 * USECS_PER_SEC)

/* backfill => 'now': the sink filled in this transaction; returns the rows written. */
extern int64 fn_fill_now(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new, TimestampTz clock_at);
/* backfill => 'background': the windows the worker fills, recorded in the flow's row. */
extern void fn_plan_backfill(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new);
/* microseconds as seconds, for the fill's NOTICEs */
extern double fn_usec_to_sec(int64 usec);

#endif
