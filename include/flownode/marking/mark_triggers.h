/*
 * mark_triggers.h: the marking triggers' sets. Each group of nesting flows
 * (source_cache.h) collects, per (sub)transaction, the windows its rows fell in
 * (LocalMarks); commit_marks.c derives each flow's windows from them at PRE_COMMIT.
 */
#ifndef FLOWNODE_MARK_TRIGGERS_H
#define FLOWNODE_MARK_TRIGGERS_H

#include "postgres.h"

#include "access/attnum.h"

#include "access/xact.h"
#include "nodes/pg_list.h"

#include "core/time_range.h"
#include "pgutil/subxact_sets.h"

/* Windows staged before a merge into the sorted set: a merge and, once the set is
 * full, a coalesce pass over it cost O(set + stage), so a deeper stage makes rows
 * scattered over time cheaper (256: a quarter fewer instructions per row than 64
 * with five flows, by callgrind), at 4 KiB per group of flows per transaction. */
#define LOCAL_STAGE 256
/* A transaction's set starts with room for this many ranges and doubles as it fills,
 * up to flownode.local_ranges_per_flow. */
#define LOCAL_FIRST_RANGES 256

/*
 * The marks one group of flows (MarkGroup) collected in one (sub)transaction: the
 * windows of the group's marking window that the transaction wrote rows into.
 */
typedef struct LocalMarks {
	SubxactSet set; /* the subtransaction it belongs to (first: pgutil/subxact_sets.h) */
	Oid relid;      /* key: source table, time column, the group's leading flow, subtransaction */
	AttrNumber time_attnum;
	int64 leader_id;
	int nmembers;      /* the flows these marks are for (every flow of the group when a */
	int64 *member_ids; /* row was marked; TopTransactionContext) */
	bool removes;      /* an UPDATE or DELETE marked a window: sink rows may vanish */
	/* the earliest time of a row marked (PG_INT64_MAX: none yet; FN_TS_MIN: windows
	 * were marked without their rows' times): the folded refresh of the open window
	 * needs to know that no row came in below its line (refresh/fold_state.h) */
	int64 lo;
	FnTimeRange last; /* the range added last: a repeat costs nothing */
	uint32 count;
	uint32 capacity; /* of `ranges` now: grows by doubling up to `limit` */
	uint32 limit;    /* flownode.local_ranges_per_flow when the set was made */
	/* A window whose gap to a neighbouring range is below this joins that range at
	 * once (fn_ranges_absorb): 1 (touching only) until the set first coalesces, then
	 * about the gap a merge of a full stage would close (fn_dirty_merge_stage). */
	uint64 absorb_below;
	/* Windows not yet in `ranges`, in arrival order: inserting each one into the
	 * sorted set would shift the array every time; a full stage is sorted and merged
	 * in one pass (fn_dirty_merge_stage). Everything that reads the set flushes it. */
	uint32 staged;
	FnTimeRange stage[LOCAL_STAGE];
	FnTimeRange *ranges; /* capacity + LOCAL_STAGE entries, TopTransactionContext */
} LocalMarks;

/* The transaction's sets (LocalMarks *, in TopTransactionContext). */
extern List *fn_xact_marks(void);
/* Moves a set's staged windows into its sorted ranges, coalescing them to its
 * current capacity. Cannot fail. */
extern void fn_marks_flush_stage(LocalMarks *lm);
/* The same, after growing the set (up to its limit) so that nothing need coalesce.
 * Allocates: not for callbacks that must not fail. */
extern void fn_marks_grow_and_flush(LocalMarks *lm);
/* Forgets the transaction's sets (its memory goes with it). */
extern void fn_marks_forget(void);
/* A subtransaction's sets: dropped with it, or handed to its parent. */
extern void fn_marks_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid);
/* The flows whose source the transaction truncated (int64 *): their sinks were
 * emptied, and the fold of their open window must start afresh. */
extern List *fn_marks_truncated_flows(void);
/* Whether the transaction marked anything (it cannot be PREPAREd then). */
extern bool fn_marks_pending(void);

/* Whether the role may write the table (INSERT, UPDATE or DELETE on it or on a
 * column): the marking functions mark only for such a role. */
extern bool fn_may_write_table(Oid relid, Oid user);
struct SourceEntry;
/* Whether the current user's writes to the entry's table are marked (it may write
 * the table or a partition of it). */
extern bool fn_marks_may_mark(struct SourceEntry *e);

struct FlowMarker;
/* A new set for the flow alone, in its own windows, in the transaction's list: for
 * windows found at PRE_COMMIT (dimension_marks.c). */
extern LocalMarks *fn_marks_for_flow(const struct FlowMarker *m);
/* Adds the flow's window of ts (none for a NULL or infinite time; the one window of a
 * window-less flow). */
extern void fn_marks_add_time(LocalMarks *lm, const struct FlowMarker *m, int64 ts);
/* Adds a union of whole windows of the set's flow. */
extern void fn_marks_add_range(LocalMarks *lm, FnTimeRange r);

/* The group's set in the current (sub)transaction, for the reads of a table's rows
 * (mark_rows.c) and TRUNCATE (mark_truncate.c): the set itself, a time marked in
 * the leader's windows, the one window of a window-less group, a union of whole
 * windows of the leader. */
struct SourceEntry;
struct MarkGroup;
extern LocalMarks *fn_marks_of_group(struct SourceEntry *e, struct MarkGroup *g);
extern void fn_marks_group_time(struct SourceEntry *e, struct MarkGroup *g, int64 ts);
extern void fn_marks_group_windowless(struct SourceEntry *e, struct MarkGroup *g);
extern void fn_marks_group_range(struct SourceEntry *e, struct MarkGroup *g, FnTimeRange r);
/* The transaction truncated the flow's source (fn_marks_truncated_flows). */
extern void fn_marks_note_truncated(int64 flow_id);

#endif
