/*
 * mark_rows.h: the rows a table already holds, read and marked for the flows over
 * it: rows that join or leave a flow's source (ATTACH, DETACH, DROP or TRUNCATE of a
 * partition), and the extent of the rows after a rewrite.
 */
#ifndef FLOWNODE_MARK_ROWS_H
#define FLOWNODE_MARK_ROWS_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include "query/time_input.h"

/*
 * Marks, for the flows whose source is flows_relid or a table above it, the windows
 * of the rows rows_relid (and its partitions) holds: rows that join those sources
 * (ATTACH PARTITION) or leave them (DETACH, DROP or TRUNCATE of a partition:
 * `removes`, groups may vanish). Windows frozen by expire_after are left alone.
 */
extern void fn_mark_rows_of(Oid rows_relid, Oid flows_relid, bool removes);

/* Marks, for the flows over relid, every window from the first to the last that
 * their sinks or relid's rows hold: after a partition of relid went unread. */
extern void fn_mark_all_windows(Oid relid);

/* Marks, for the flows over relid listed in flow_ids (int64 *), each in a set of its
 * own, every window from the first to the last of relid's rows, as removals: after
 * ALTER COLUMN TYPE of a column they read rewrote the rows in place. */
extern void fn_mark_rows_extent(Oid relid, const List *flow_ids);

/* The sink's window column of the flow (its name unquoted, or quoted), from the
 * flow's analysed query. */
extern const char *fn_sink_window_name(int64 flow_id);
extern const char *fn_sink_window_column(int64 flow_id);
/* The first and last time of a column that has a window (of the table with its
 * partitions; `in`: how the column becomes the window's timestamp, NULL for a sink's
 * window column); false when it has none. In the caller's SPI connection. */
extern bool fn_marks_time_extent(const char *rel, const char *col, Oid coltype, FnTimeInput *in, int64 *lo,
                                 int64 *hi);

#endif
