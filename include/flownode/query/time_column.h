/*
 * time_column.h: the one place that reads a flow's time column from a table (SPI
 * connected): the time of its first or last row in a range of times, both at once
 * (the extent), and every row's time through a cursor, optionally narrowed by a
 * condition of the caller's. Whatever the time input (a timestamp, a date, an
 * integer epoch: time_input.h), each statement filters on the column itself, on the
 * column values whose times lie in the range (fn_time_input_args), so it reads
 * through the column's own index, and each value read becomes the timestamp the
 * flow's query makes of it (fn_time_input_time_of). A caller never sees a column
 * value: only times, which it cuts into the flow's windows.
 *
 * Rows whose column is NULL or +-infinity have no time and are never returned: the
 * ranges asked for are finite (FN_TS_MIN to DT_NOEND at most).
 */
#ifndef FLOWNODE_TIME_COLUMN_H
#define FLOWNODE_TIME_COLUMN_H

#include "postgres.h"

#include "core/time_range.h"
#include "query/time_input.h"

typedef struct FnTimeColumn {
	const char *from;   /* the FROM item (quoted): "ONLY s.t", "s.t", "ONLY s.t f" */
	const char *column; /* the column as the statement names it (quoted): "ts", "f.ts" */
	Oid window_type;    /* the window's type: TIMESTAMPOID or TIMESTAMPTZOID */
	FnTimeInput *input; /* how the column becomes that timestamp; NULL: it is one (a sink's window column) */
} FnTimeColumn;

/* The FROM item of a table as a flow reads it: a partitioned table through its
 * partitions, any other without the tables that inherit from it. */
extern char *fn_time_column_from(Oid relid, const char *alias);

/* A prepared read of the first (last) row's time in a range: for a caller that
 * probes many ranges of one table. */
typedef struct FnTimeProbe FnTimeProbe;
extern FnTimeProbe *fn_time_probe_prepare(const FnTimeColumn *c, bool last);
/* The time of the first (last) row whose time lies in `within`; false when none. */
extern bool fn_time_probe(FnTimeProbe *p, FnTimeRange within, int64 *out);
extern void fn_time_probe_free(FnTimeProbe *p);

/* The times of the first and last row whose times lie in `within`; false when none. */
extern bool fn_time_column_extent(const FnTimeColumn *c, FnTimeRange within, int64 *first, int64 *last);

/*
 * Calls visit(time, arg) for every row whose time lies in `within` and, when `cond`
 * is not NULL, for which the SQL condition `cond` holds: it may name the statement's
 * arguments $3 .. $(2 + nargs), of types `types` and values `args`. Read by a
 * cursor, a thousand rows at a time.
 */
typedef void (*FnTimeVisit)(int64 time, void *arg);
extern void fn_time_column_scan(const FnTimeColumn *c, FnTimeRange within, const char *cond, int nargs,
                                const Oid *types, const Datum *args, FnTimeVisit visit, void *arg);

#endif
