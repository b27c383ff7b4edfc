/*
 * refresh_args.h: the arguments of the statements over windows (refresh_sql.h says
 * which statement takes which): $1 and $2 the ranges' starts and ends, and for a date
 * or an integer epoch time column (query/time_input.h) $3 and $4 the column's values
 * of each range.
 */
#ifndef FLOWNODE_REFRESH_ARGS_H
#define FLOWNODE_REFRESH_ARGS_H

#include "postgres.h"

#include "core/time_range.h"
#include "registry/flow_registry.h"

/* The ranges as values[0] and values[1]: arrays of coltype (timestamp or timestamptz). */
extern void fn_refresh_range_arrays(const FnTimeRange *ranges, int nranges, Oid coltype, Datum *values);
/* The source side's $3 and $4 into values[2] and values[3] (arrays of the column's
 * type; joined: [lo, hi] per range, else [lo, hi)). */
extern void fn_refresh_input_arrays(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, bool joined,
                                    Datum *values);

#endif
