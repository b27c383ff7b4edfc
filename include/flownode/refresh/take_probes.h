/*
 * take_probes.h: how much of a flow's backlog one refresh takes, by the source rows
 * its ranges hold (the pure core decides, core/refresh_plan.h; the probes count).
 */
#ifndef FLOWNODE_TAKE_PROBES_H
#define FLOWNODE_TAKE_PROBES_H

#include "postgres.h"

#include "bridge/core_bridge.h"
#include "core/time_range.h"
#include "registry/flow_registry.h"

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
