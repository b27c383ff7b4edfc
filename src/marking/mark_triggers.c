/*
 * mark_triggers.c: the marking half of GreptimeDB's BatchingEngine: the triggers.
 *
 * - The source's row triggers (their WHEN clause: flownode.mark_row) map each written
 *   row to the window of its time value for every group of the table's flows whose
 *   windows nest (MarkGroup), and add that window to a set kept in backend memory for
 *   the current (sub)transaction. Per row: one function call, the window
 *   (remembered: consecutive rows usually share one, and a row inside the set needs
 *   none), no SPI, no catalog. At PRE_COMMIT each flow's own windows are derived
 *   from its group's set.
 * - The flows of a table come from the per-backend cache (source_cache.c).
 * - Marks become visible to workers only when the writer commits (docs/internals.md §2, invariant 2; see
 *   commit_marks.c). A rolled-back subtransaction's marks are dropped with it.
 * - TRUNCATE of a source empties its flows' sinks (mark_truncate.c); the rows of a
 *   table that joins or leaves a source are read and marked (mark_rows.c), into the
 *   sets kept here.
 */
#include "flownode.h"

#include "marking/mark_triggers.h"

#include "catalog/pg_type.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xlog.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "marking/source_cache.h"
#include "miscadmin.h"
#include "pgutil/pg_util.h"
#include "query/flow_query.h"
#include "registry/flow_registry.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(flownode_mark_dirty);
PG_FUNCTION_INFO_V1(flownode_mark_insert);
PG_FUNCTION_INFO_V1(flownode_mark_row);
PG_FUNCTION_INFO_V1(flownode_mark_row_removed);

static List *xact_marks = NIL; /* LocalMarks *, in TopTransactionContext */
/* The flows whose source this transaction truncated (int64 ids as pointers to them,
 * TopTransactionContext): their sinks were emptied, their folds must start afresh */
static List *truncated_flows = NIL;

static const FnTimeRange WINDOWLESS_MARK = {0, 1};

/* ---- the transaction's local marks ---- */

/*
 * Bumped whenever a subtransaction's set is freed (its abort, or its merge into the
 * parent's): a MarkGroup's cached pointer may then point at freed memory, which a
 * later set can reuse, so the cache is trusted only within one epoch.
 */
static uint64 marks_epoch = 0;

/* The (sub)transaction a row is marked in: read once per row, not once per group. */
typedef struct MarkScope {
	LocalTransactionId lxid;
	SubTransactionId subid;
	uint64 epoch;
} MarkScope;

static inline MarkScope mark_scope(void) {
	MarkScope s = {fn_my_lxid(), GetCurrentSubTransactionId(), marks_epoch};

	return s;
}

/* Adds the flows of ids that the set is not for yet (the group grew: a flow was
 * created on the table in this transaction). */
static void add_members(LocalMarks *lm, const int64 *ids, int n) {
	for (int i = 0; i < n; i++) {
		bool known = false;

		for (int k = 0; k < lm->nmembers && !known; k++)
			known = lm->member_ids[k] == ids[i];
		if (known)
			continue;
		lm->member_ids = lm->member_ids ? repalloc(lm->member_ids, sizeof(int64) * (lm->nmembers + 1))
		                                : MemoryContextAlloc(TopTransactionContext, sizeof(int64));
		lm->member_ids[lm->nmembers++] = ids[i];
	}
}

/* The group's set for this (sub)transaction, found in the list or created. */
static pg_noinline LocalMarks *find_or_create_marks(SourceEntry *e, MarkGroup *g, MarkScope scope) {
	SubTransactionId subid = scope.subid;
	LocalMarks *lm;
	ListCell *lc;
	MemoryContext old;

	foreach (lc, xact_marks) {
		lm = lfirst(lc);
		if (lm->relid == e->relid && lm->time_attnum == g->leader->time_attnum &&
		    lm->leader_id == g->leader->flow_id && lm->set.subid == subid) {
			add_members(lm, g->member_ids, g->nmembers);
			goto done;
		}
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	/* only the header is zeroed: the stage past `staged` and the ranges past `count`
	 * are never read */
	lm = palloc(sizeof(LocalMarks));
	memset(lm, 0, offsetof(LocalMarks, stage));
	lm->limit = (uint32)fn_local_ranges_per_flow; /* the GUC may change mid-transaction */
	lm->capacity = Min(lm->limit, LOCAL_FIRST_RANGES);
	lm->ranges = palloc(sizeof(FnTimeRange) * (lm->capacity + LOCAL_STAGE));
	lm->relid = e->relid;
	lm->time_attnum = g->leader->time_attnum;
	lm->leader_id = g->leader->flow_id;
	lm->set.subid = subid;
	lm->last.start = lm->last.end = 0;
	lm->absorb_below = 1;
	lm->lo = PG_INT64_MAX;
	lm->member_ids = palloc(sizeof(int64) * g->nmembers);
	memcpy(lm->member_ids, g->member_ids, sizeof(int64) * g->nmembers);
	lm->nmembers = g->nmembers;
	xact_marks = lappend(xact_marks, lm);
	MemoryContextSwitchTo(old);
done:
	g->marks = lm;
	g->marks_lxid = scope.lxid;
	g->marks_epoch = scope.epoch;
	return lm;
}

/* Every row after a transaction's first finds its set here, without a lookup. */
static inline LocalMarks *current_marks(SourceEntry *e, MarkGroup *g, MarkScope scope) {
	if (likely(g->marks && g->marks_lxid == scope.lxid && g->marks_epoch == scope.epoch &&
	           g->marks->set.subid == scope.subid))
		return g->marks;
	return find_or_create_marks(e, g, scope);
}

static inline FnDirtySet local_set(LocalMarks *lm) {
	FnDirtySet s = {lm->ranges, &lm->count, lm->capacity};

	return s;
}

/* Moves the staged windows into the sorted set and sets the gap below which the
 * windows that follow join its ranges in place. Cannot fail. */
void fn_marks_flush_stage(LocalMarks *lm) {
	if (lm->staged == 0)
		return;
	lm->absorb_below =
	    fn_dirty_merge_stage(local_set(lm), lm->stage, lm->staged, LOCAL_STAGE, lm->absorb_below);
	lm->staged = 0;
}

/*
 * Most transactions touch a few windows, so a set starts small; one that writes rows
 * scattered over many windows (late data, a backfill) doubles it as it fills, up to
 * its limit, before anything coalesces: a coalesced set makes the refresh recompute
 * every window between the ones written (1,000 late rows over 2M rows: 250,000
 * windows with 256 ranges, 1,000 with 4,096).
 */
static void grow_marks(LocalMarks *lm, uint32 need, bool may_fail) {
	uint32 capacity;
	FnTimeRange *ranges;

	/* a set that fills up coalesces (fn_dirty_merge_stage makes room at once): grow
	 * before it would be full */
	if (need < lm->capacity || lm->capacity >= lm->limit)
		return;
	capacity = Min(Max(lm->capacity * 2, need + 1), lm->limit);
	/* out of memory: where nothing may fail the set stays as it is and coalesces */
	ranges = MemoryContextAllocExtended(TopTransactionContext, sizeof(FnTimeRange) * (capacity + LOCAL_STAGE),
	                                    may_fail ? 0 : MCXT_ALLOC_NO_OOM);
	if (ranges == NULL)
		return;
	memcpy(ranges, lm->ranges, sizeof(FnTimeRange) * lm->count);
	pfree(lm->ranges);
	lm->ranges = ranges;
	lm->capacity = capacity;
}

void fn_marks_grow_and_flush(LocalMarks *lm) {
	grow_marks(lm, lm->count + lm->staged, true);
	fn_marks_flush_stage(lm);
}

static pg_attribute_always_inline void stage_range(LocalMarks *lm, FnTimeRange r) {
	lm->stage[lm->staged++] = r;
	lm->last = r;
	if (lm->staged == LOCAL_STAGE)
		fn_marks_grow_and_flush(lm);
}

/* r: a window in no range of the set, in the gap before ranges[pos]. A window next
 * to a range (or, once the set has coalesced, near one) joins it in place; others
 * are staged. */
static pg_attribute_always_inline void mark_window(LocalMarks *lm, uint32 pos, FnTimeRange r) {
	if (fn_ranges_absorb(lm->ranges, &lm->count, pos, r, lm->absorb_below)) {
		lm->last = r;
		return;
	}
	stage_range(lm, r);
}

static pg_attribute_always_inline void mark_time(LocalMarks *lm, const FlowMarker *leader, int64 ts);

/* Inlined into the per-group loop: a call per group and row was a tenth of its cost. */
static pg_attribute_always_inline void mark_value(SourceEntry *e, MarkGroup *g, MarkScope scope, Datum d,
                                                  bool isnull) {
	LocalMarks *lm = current_marks(e, g, scope);
	FlowMarker *leader = g->leader;
	int64 ts;

	if (leader->window == NULL) {
		lm->lo = FN_TS_MIN;
		if (lm->count == 0 && lm->staged == 0)
			stage_range(lm, WINDOWLESS_MARK);
		return;
	}
	if (isnull)
		return; /* a NULL time belongs to no window */
	/* a date or an integer epoch: its timestamp as the query computes it */
	ts = fn_flow_time_of(leader, d);
	mark_time(lm, leader, ts);
}

/* The marking of one time in the group's set (its leader's windows). */
static pg_attribute_always_inline void mark_time(LocalMarks *lm, const FlowMarker *leader, int64 ts) {
	uint32 pos;
	FnTimeRange r;

	if (TIMESTAMP_NOT_FINITE(ts))
		return; /* nor does an infinite one */
	lm->lo = Min(lm->lo, ts);
	if (ts >= lm->last.start && ts < lm->last.end)
		return;
	/* The set is a union of whole windows: a timestamp inside it needs no window.
	 * Rows scattered over time fill the set within a few hundred rows, after which
	 * nearly every row stops here (computing a calendar window is the costly part). */
	pos = fn_ranges_search(lm->ranges, lm->count, ts);
	if (pos < lm->count && lm->ranges[pos].start <= ts)
		return;
	if (leader->stride > 0) /* no call into the core: rows scattered over time get here */
		r = fn_stride_window(leader->stride_anchor, leader->stride, ts);
	else
		r = fn_window_of(leader->window, ts);
	mark_window(lm, pos, r);
}

/*
 * The source's row triggers mark from their WHEN clause, not from a trigger body:
 *   AFTER INSERT ... FOR EACH ROW WHEN (flownode.mark_row(source, attnum, NEW.ts))
 * PostgreSQL evaluates an AFTER ROW trigger's WHEN as it would queue the event, with
 * the row at hand, and queues nothing when it is false, which it always is. So a
 * row costs one function call: no after-trigger event, no copy of the row into a
 * transition table, no re-fetch (COPY keeps its multi-row inserts: only BEFORE ROW
 * triggers turn those off). One trigger per (source, time column); attnum 0 stands
 * for window-less flows, which any row dirties.
 *
 * The function is callable by anyone (a WHEN clause runs with the writer's
 * EXECUTE privilege), so it marks only for a role that may write the table: a
 * direct call by someone else changes nothing. Nor does any call on a hot standby,
 * where no one writes (and a mark could not be recorded): checked before a role is
 * cached as allowed, which never happens during recovery, so the row path pays
 * nothing for it.
 */
static bool may_write(Oid relid, Oid user) {
	bool missing = false;

	if (pg_class_aclcheck_ext(relid, user, ACL_INSERT | ACL_UPDATE | ACL_DELETE, &missing) == ACLCHECK_OK)
		return true;
	return !missing &&
	       pg_attribute_aclcheck_all(relid, user, ACL_INSERT | ACL_UPDATE, ACLMASK_ANY) == ACLCHECK_OK;
}

bool fn_may_write_table(Oid relid, Oid user) {
	return may_write(relid, user);
}

/* The rows of a partitioned source's partitions are marked through the source's
 * entry (source_triggers.c), and PostgreSQL lets a role write a partition directly
 * with rights on that partition alone: such a writer may mark too. */
static bool may_write_a_partition(Oid relid, Oid user) {
	ListCell *lc;

	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return false;
	foreach (lc, find_all_inheritors(relid, NoLock, NULL))
		if (lfirst_oid(lc) != relid && may_write(lfirst_oid(lc), user))
			return true;
	return false;
}

static bool may_mark(SourceEntry *e) {
	Oid user = GetUserId();

	if (user == e->writer_checked)
		return true;
	if (RecoveryInProgress())
		return false;
	if (!may_write(e->relid, user) && !may_write_a_partition(e->relid, user))
		return false;
	e->writer_checked = user;
	return true;
}

bool fn_marks_may_mark(SourceEntry *e) {
	return may_mark(e);
}

static void mark_row(FunctionCallInfo fcinfo, bool removes) {
	SourceEntry *e;
	int16 attnum;
	MarkScope scope;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return;
	e = fn_source_entry(PG_GETARG_OID(0));
	if (e->nflows == 0 || !may_mark(e))
		return;
	attnum = PG_GETARG_INT16(1);
	scope = mark_scope();
	for (int i = 0; i < e->ngroups; i++) {
		MarkGroup *g = &e->groups[i];

		if (g->leader->time_attnum != attnum || g->keyed) /* keyed: by its key triggers */
			continue;
		mark_value(e, g, scope, PG_GETARG_DATUM(2), PG_ARGISNULL(2));
		if (removes) {
			if (PG_NARGS() > 3)
				mark_value(e, g, scope, PG_GETARG_DATUM(3), PG_ARGISNULL(3));
			current_marks(e, g, scope)->removes = true;
		}
	}
}

/* flownode.mark_row(source oid, attnum int2, ts): an inserted row. Always false. */
Datum flownode_mark_row(PG_FUNCTION_ARGS) {
	mark_row(fcinfo, false);
	PG_RETURN_BOOL(false);
}

/* flownode.mark_row_removed(source oid, attnum int2, old_ts, new_ts): an updated or
 * deleted row (its old window loses it; groups may vanish). Always false. */
Datum flownode_mark_row_removed(PG_FUNCTION_ARGS) {
	mark_row(fcinfo, true);
	PG_RETURN_BOOL(false);
}

/* The row triggers' own functions never run: their WHEN clause is always false. */
Datum flownode_mark_dirty(PG_FUNCTION_ARGS) {
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.mark_dirty() must be called as an AFTER ROW trigger")));
	return PointerGetDatum(NULL);
}

Datum flownode_mark_insert(PG_FUNCTION_ARGS) {
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.mark_insert() must be called as an AFTER INSERT ROW trigger")));
	return PointerGetDatum(NULL);
}

/* ---- the group's set, for the reads of a table's rows (mark_rows.c) ---- */

LocalMarks *fn_marks_of_group(SourceEntry *e, MarkGroup *g) {
	return current_marks(e, g, mark_scope());
}

void fn_marks_group_time(SourceEntry *e, MarkGroup *g, int64 ts) {
	mark_time(current_marks(e, g, mark_scope()), g->leader, ts);
}

void fn_marks_group_windowless(SourceEntry *e, MarkGroup *g) {
	mark_value(e, g, mark_scope(), (Datum)0, true);
}

void fn_marks_group_range(SourceEntry *e, MarkGroup *g, FnTimeRange r) {
	LocalMarks *lm = current_marks(e, g, mark_scope());

	fn_marks_flush_stage(lm);
	fn_dirty_add(local_set(lm), r);
	lm->last.start = lm->last.end = 0;
	lm->lo = FN_TS_MIN; /* windows, not rows */
}

void fn_marks_note_truncated(int64 flow_id) {
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	int64 *id = palloc(sizeof(int64));

	*id = flow_id;
	truncated_flows = lappend(truncated_flows, id);
	MemoryContextSwitchTo(old);
}

/* ---- a flow's own set: the windows of the fact rows a dimension write joins ---- */

/*
 * A set of its own for one flow, marked in the flow's windows, added to the
 * transaction's list: made at PRE_COMMIT by the dimension lookups
 * (dimension_marks.c), after every row of the transaction was marked, so no row
 * ever finds it (a group's set of the same key would lend its windows to the other
 * flows of the group). build_flow_commits unites it with the flow's other sets.
 */
LocalMarks *fn_marks_for_flow(const FlowMarker *m) {
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	LocalMarks *lm = palloc(sizeof(LocalMarks));

	memset(lm, 0, offsetof(LocalMarks, stage));
	lm->limit = (uint32)fn_local_ranges_per_flow;
	lm->capacity = Min(lm->limit, LOCAL_FIRST_RANGES);
	lm->ranges = palloc(sizeof(FnTimeRange) * (lm->capacity + LOCAL_STAGE));
	lm->relid = m->source_relid;
	lm->time_attnum = m->time_attnum;
	lm->leader_id = m->flow_id;
	lm->set.subid = GetCurrentSubTransactionId();
	lm->absorb_below = 1;
	lm->lo = FN_TS_MIN; /* a dimension's rows moved groups: no fold */
	lm->member_ids = palloc(sizeof(int64));
	lm->member_ids[0] = m->flow_id;
	lm->nmembers = 1;
	xact_marks = lappend(xact_marks, lm);
	MemoryContextSwitchTo(old);
	return lm;
}

void fn_marks_add_time(LocalMarks *lm, const FlowMarker *m, int64 ts) {
	uint32 pos;

	if (m->window == NULL) {
		if (lm->count == 0 && lm->staged == 0)
			stage_range(lm, WINDOWLESS_MARK);
		return;
	}
	if (TIMESTAMP_NOT_FINITE(ts) || (ts >= lm->last.start && ts < lm->last.end))
		return;
	pos = fn_ranges_search(lm->ranges, lm->count, ts);
	if (pos < lm->count && lm->ranges[pos].start <= ts)
		return;
	mark_window(lm, pos, fn_flow_window_at(m, ts));
}

void fn_marks_add_range(LocalMarks *lm, FnTimeRange r) {
	fn_marks_grow_and_flush(lm);
	fn_dirty_add(local_set(lm), r);
	lm->last.start = lm->last.end = 0;
	lm->lo = FN_TS_MIN;
}

/* Whether every flow a's marks are for, b's are for too. */
static bool members_within(const LocalMarks *a, const LocalMarks *b) {
	for (int i = 0; i < a->nmembers; i++) {
		bool found = false;

		for (int k = 0; k < b->nmembers && !found; k++)
			found = b->member_ids[k] == a->member_ids[i];
		if (!found)
			return false;
	}
	return true;
}

static bool marks_same_key(const SubxactSet *a, const SubxactSet *b) {
	const LocalMarks *x = (const LocalMarks *)a, *y = (const LocalMarks *)b;

	return x->relid == y->relid && x->time_attnum == y->time_attnum && x->leader_id == y->leader_id;
}

/* A child for flows the parent's set is not for (created in the child) moves up as a
 * set of its own: merging would allocate member ids, here. */
static bool marks_merge(SubxactSet *c, SubxactSet *p) {
	LocalMarks *child = (LocalMarks *)c, *parent = (LocalMarks *)p;

	if (!members_within(child, parent))
		return false;
	fn_marks_flush_stage(child);
	fn_marks_flush_stage(parent);
	/* a transaction of many subtransactions (a PL/pgSQL block with an EXCEPTION
	 * clause per row) grows its set here, as one would */
	grow_marks(parent, parent->count + child->count, false);
	fn_dirty_add_all(local_set(parent), child->ranges, child->count);
	parent->last.start = parent->last.end = 0;
	parent->removes |= child->removes;
	parent->lo = Min(parent->lo, child->lo);
	return true;
}

static void marks_free(SubxactSet *s) {
	LocalMarks *lm = (LocalMarks *)s;

	if (lm->member_ids)
		pfree(lm->member_ids);
	pfree(lm->ranges);
	pfree(lm);
}

static const SubxactSetKind marks_kind = {marks_same_key, marks_merge, marks_free};

/* A subtransaction's marks: dropped with it, or handed to its parent. */
void fn_marks_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid) {
	if (fn_subxact_sets_end(&xact_marks, &marks_kind, event, mySubid, parentSubid))
		marks_epoch++;
}

List *fn_xact_marks(void) {
	return xact_marks;
}

void fn_marks_forget(void) {
	xact_marks = NIL;
	truncated_flows = NIL;
}

bool fn_marks_pending(void) {
	return xact_marks != NIL || truncated_flows != NIL;
}

List *fn_marks_truncated_flows(void) {
	return truncated_flows;
}
