/*
 * source_cache.h: the per-backend cache of a source table's flows, as the marking
 * triggers need them (FlowMarker), and their groups of flows whose windows nest
 * (MarkGroup): filled from the catalog on a miss, invalidated by relcache callbacks
 * (a flow created or dropped, the table altered). No SPI or catalog lookup per row.
 */
#ifndef FLOWNODE_SOURCE_CACHE_H
#define FLOWNODE_SOURCE_CACHE_H

#include "postgres.h"

#include "access/attnum.h"

#include "datatype/timestamp.h"
#include "storage/lock.h"

#include "bridge/core_bridge.h"
#include "query/time_input.h"

struct LocalMarks;
struct TaskConfig;

/* One flow of a source table, as the trigger needs it. */
typedef struct FlowMarker {
	int64 flow_id;
	Oid owner;
	Oid source_relid; /* the flow's source: the entry's table, or a table above it */
	Oid sink_relid;
	AttrNumber time_attnum; /* as the entry's table numbers its columns */
	FnWindowSpec spec;
	FnTimeInput input;      /* how the time column becomes the window's timestamp */
	FnWindow *window;       /* NULL: window-less flow */
	Interval *expire_after; /* NULL: never */
	char *timezone;         /* the flow's (a timestamp column's local time) */
	int64 stride;           /* > 0: fixed stride from stride_anchor; -1: calendar */
	int64 stride_anchor;    /* both copied from the core once (fn_window_stride): no call per row */
	bool keyed;             /* its rows are marked by its key triggers (key_marks.c), not mark_row */
} FlowMarker;

/*
 * Flows on one time column whose windows are all unions of one flow's windows (the
 * leader's: the finest fixed stride, every other one a multiple of it on the same
 * grid; or the same calendar window) are marked once per row, in the leader's
 * windows, and each flow's own windows are derived at PRE_COMMIT (round_to_windows).
 * So a row costs one marking per group, not per flow: five flows of 1 minute, 5
 * minutes, an hour and a day on one column are one group.
 */
typedef struct MarkGroup {
	FlowMarker *leader; /* whose windows the group marks in (its time column, window, stride) */
	bool keyed;         /* the leader alone, keyed: mark_row leaves it to its key triggers */
	int nmembers;
	int64 *member_ids;
	struct LocalMarks *marks; /* this transaction's set, if current (mark_triggers.c) */
	LocalTransactionId marks_lxid;
	uint64 marks_epoch; /* see marks_epoch */
} MarkGroup;

/*
 * A table's flows: its own and, when it is a partition, those of every table above
 * it, whose rows its rows are too. The marking triggers of a partitioned source's
 * partitions name the source (source_triggers.c), so its partitions share its entry.
 */
typedef struct SourceEntry {
	Oid relid; /* hash key */
	bool valid;
	Oid writer_checked; /* a role found allowed to write the table (may_mark) */
	int nflows;
	FlowMarker *flows;
	int ngroups;
	MarkGroup *groups;
	MemoryContext cxt;
} SourceEntry;

extern void fn_source_cache_init(void);

/* The table's entry (a valid one: loaded from the catalog if it was not). */
extern SourceEntry *fn_source_entry_lookup(Oid relid);
/* The entry found last: rows of one statement hit one table, so the hash is skipped.
 * Entries are never removed from the hash, only invalidated. */
extern SourceEntry *fn_source_last;

static inline SourceEntry *fn_source_entry(Oid relid) {
	if (likely(fn_source_last != NULL && fn_source_last->relid == relid && fn_source_last->valid))
		return fn_source_last;
	return fn_source_entry_lookup(relid);
}

/* The flow's time column in the table's numbering (a partition of its source may
 * number its columns otherwise); 0 for a window-less flow. */
extern AttrNumber fn_time_attnum_in(Oid relid, const struct TaskConfig *cfg);

/* The flow among the table's, NULL if it is not (dropped). */
extern FlowMarker *fn_find_flow(SourceEntry *e, int64 flow_id);
/* The window of ts in the flow's own windows (a time past the largest timestamp: the last). */
extern FnTimeRange fn_flow_window_at(const FlowMarker *m, int64 ts);

/* The timestamp a flow's windows are cut from, of its time column's value d (not
 * NULL): the value itself, or a date's or an integer epoch's as the query computes
 * it (query/time_input.h). The one conversion of the row paths (mark_row, mark_keys). */
static inline int64 fn_flow_time_of(FlowMarker *m, Datum d) {
	return likely(m->input.kind == FN_INPUT_TIMESTAMP) ? DatumGetInt64(d)
	                                                   : fn_time_input_time_of(&m->input, d);
}

#endif
