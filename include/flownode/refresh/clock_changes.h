/*
 * clock_changes.h: the time ranges whose rows enter or leave a flow's query when the
 * now() it compares its time column with moves (the worker marks them; read_flow
 * reads them from the query).
 */
#ifndef FLOWNODE_CLOCK_CHANGES_H
#define FLOWNODE_CLOCK_CHANGES_H

#include "postgres.h"

#include "core/time_range.h"
#include "registry/flow_registry.h"

/* A flow that compares its time column with now(): the values of the time column
 * (half-open ranges, *n of them) where a row's answer to those comparisons differs
 * between now() = prev and now() = next, the thresholds evaluated as the owner in the
 * flow's settings. Rows elsewhere are in the query, or not, at both times. */
extern FnTimeRange *fn_refresh_clock_changes(TaskConfig *cfg, TimestampTz prev, TimestampTz next, int *n);

#endif
