/*
 * commit_marks.c: a writer's marks at the end of its transaction (docs/internals.md §2,
 * invariant 2; §3, §4). At PRE_COMMIT, the fallible work: each flow's own
 * windows derived from the sets of the groups it was marked in, its slot claimed,
 * its windows recorded in flownode.pending unless already recorded. At COMMIT a
 * copy into shared memory that cannot fail. At ABORT nothing is published.
 */
#include "flownode.h"

#include "marking/commit_marks.h"

#include "marking/key_marks.h"

#include "marking/dimension_marks.h"
#include "marking/mark_triggers.h"
#include "marking/source_cache.h"
#include "miscadmin.h"
#include "record/durable_record.h"
#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"
#include "shmem/inflight.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

/* What one flow publishes when the transaction commits, built at PRE_COMMIT from the
 * LocalMarks it is a member of (TopTransactionContext). */
typedef struct FlowCommit {
	int64 flow_id;
	FlowSlot *slot; /* claimed at PRE_COMMIT */
	bool recorded;  /* written to flownode.pending at PRE_COMMIT */
	/* the slot's refresh state when the durable set was looked at (publish_marks) */
	FlowSlotRefreshMark at_look;
	bool removes;
	int64 lo;         /* the earliest time of a row it marked (LocalMarks.lo) */
	FnTimeRange hull; /* its windows' hull before widen_to_dirty_ranges (note_for_fold) */
	uint32 count;
	uint32 capacity;
	FnTimeRange *ranges; /* the flow's own windows */
} FlowCommit;

static List *xact_commits = NIL; /* FlowCommit *, built at PRE_COMMIT */
static TimestampTz commit_time;  /* PRE_COMMIT's clock: the changes' time for the flows view's lag */
static bool inflight = false;    /* registered as a writer in flight (fn_inflight_begin) */

/*
 * A window that the flow's dirty set already holds inside a wider range (the set
 * coalesced it with its neighbours) will be refreshed as part of that range anyway,
 * so the writer records and publishes the whole range instead of its window alone.
 * Recording more than was written is safe (a refresh of a clean window rewrites
 * what is there), and the next writer into that range finds it durably recorded and
 * skips its record: rows scattered over time stop paying one record per commit once
 * the set has coalesced. Called under the slot's lock. In place, in one pass: the
 * ranges are sorted and so are the dirty ranges that hold them, so widened ranges
 * can only merge with the one before.
 */
static void widen_to_dirty_ranges(FlowCommit *fc) {
	FnDirtySet dirty = fn_slot_dirty_set(fc->slot, 0);
	uint32 ndirty = *dirty.count;
	uint32 k = 0;

	for (uint32 i = 0; i < fc->count; i++) {
		FnTimeRange w = fc->ranges[i];
		uint32 d = fn_ranges_search(dirty.ranges, ndirty, w.start);

		if (d < ndirty && dirty.ranges[d].start <= w.start && w.end <= dirty.ranges[d].end)
			w = dirty.ranges[d];
		if (k > 0 && w.start <= fc->ranges[k - 1].end)
			fc->ranges[k - 1].end = Max(fc->ranges[k - 1].end, w.end);
		else
			fc->ranges[k++] = w;
	}
	fc->count = k;
}

/*
 * The flow's own windows over a set marked in its group leader's windows: each
 * range widened to the flow's windows at both ends, in one pass (sorted ranges stay
 * sorted; widened neighbours can only touch or overlap the one before). Every
 * timestamp of a range lies in a window of the result, whatever the windows are;
 * when they nest (MarkGroup), the result is exactly the flow's windows that the
 * transaction wrote rows into, as marking in them would have found.
 */
static uint32 round_to_windows(FlowMarker *m, const LocalMarks *lm, FnTimeRange *out) {
	uint32 k = 0;

	if (m->window == NULL || m->flow_id == lm->leader_id) {
		memcpy(out, lm->ranges, sizeof(FnTimeRange) * lm->count);
		return lm->count;
	}
	for (uint32 i = 0; i < lm->count; i++) {
		FnTimeRange r = {fn_flow_window_at(m, lm->ranges[i].start).start,
		                 fn_flow_window_at(m, lm->ranges[i].end - 1).end};

		if (k > 0 && r.start <= out[k - 1].end)
			out[k - 1].end = Max(out[k - 1].end, r.end);
		else
			out[k++] = r;
	}
	return k;
}

/* The flow's commit; a new one has room for `count` ranges (its first set's). */
static FlowCommit *flow_commit(int64 flow_id, uint32 count) {
	ListCell *lc;
	FlowCommit *fc;
	MemoryContext old;

	foreach (lc, xact_commits) {
		fc = lfirst(lc);
		if (fc->flow_id == flow_id)
			return fc;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	fc = palloc0(sizeof(FlowCommit));
	fc->flow_id = flow_id;
	fc->lo = PG_INT64_MAX;
	fc->capacity = Max(count, 1);
	fc->ranges = palloc(sizeof(FnTimeRange) * fc->capacity);
	xact_commits = lappend(xact_commits, fc);
	MemoryContextSwitchTo(old);
	return fc;
}

/* Windows that ended before now - expire_after are frozen: a write into them marks
 * nothing (a retention DELETE of old rows leaves their rollups alone). */
static void cut_expired(const FlowMarker *m, FlowCommit *fc, TimestampTz now) {
	int64 line = fn_expiry_start(m->expire_after, m->spec.with_time_zone, m->timezone, m->window, now);
	FnDirtySet set = {fc->ranges, &fc->count, fc->capacity};

	if (line != 0)
		(void)fn_dirty_cut_below(set, line);
}

/*
 * This transaction's own marks for one flow, in the flow's windows: what it wrote and
 * has not committed (not in the record yet), which its own snapshot sees. Sorted and
 * merged; palloc'd in the caller's context. read_flow adds them to the record's.
 */
FnTimeRange *fn_marks_local_windows(int64 flow_id, uint32 *n) {
	ListCell *lc;
	uint32 total = 0;
	FnTimeRange *out;
	FnDirtySet set;

	foreach (lc, fn_xact_marks()) {
		LocalMarks *lm = lfirst(lc);

		fn_marks_grow_and_flush(lm);
		total += lm->count;
	}
	total += fn_key_marks_count(flow_id);
	out = palloc(sizeof(FnTimeRange) * (total + 1));
	*n = 0;
	set = (FnDirtySet){out, n, total + 1};  /* room for all: nothing coalesces */
	fn_key_marks_add_windows(flow_id, set); /* a window of its groups is dirty for a read */
	foreach (lc, fn_xact_marks()) {
		LocalMarks *lm = lfirst(lc);
		FlowMarker *m = NULL;

		for (int i = 0; i < lm->nmembers && m == NULL; i++)
			if (lm->member_ids[i] == flow_id)
				m = fn_find_flow(fn_source_entry(lm->relid), flow_id);
		if (m != NULL && lm->count > 0) {
			FnTimeRange *tmp = palloc(sizeof(FnTimeRange) * lm->count);

			/* as many ranges as the set at most, sorted: merged without coalescing */
			fn_dirty_add_all(set, tmp, round_to_windows(m, lm, tmp));
			pfree(tmp);
		}
	}
	return out;
}

/* Each flow's windows, from the sets of the groups it was marked in. */
static void build_flow_commits(void) {
	TimestampTz now = GetCurrentTimestamp();
	ListCell *lc;

	commit_time = now;
	/* a truncated source publishes no window, only that its rows went */
	foreach (lc, fn_marks_truncated_flows()) {
		FlowCommit *fc = flow_commit(*(int64 *)lfirst(lc), 1);

		fc->removes = true;
		fc->lo = FN_TS_MIN;
	}
	foreach (lc, fn_xact_marks()) {
		LocalMarks *lm = lfirst(lc);
		SourceEntry *e;

		fn_marks_grow_and_flush(lm); /* PRE_COMMIT: may allocate */
		if (lm->count == 0)
			continue;
		e = fn_source_entry(lm->relid);
		for (int i = 0; i < lm->nmembers; i++) {
			FlowMarker *m = fn_find_flow(e, lm->member_ids[i]);
			FlowCommit *fc;

			if (m == NULL)
				continue; /* dropped in this transaction */
			fc = flow_commit(m->flow_id, lm->count);
			fc->removes |= lm->removes;
			fc->lo = Min(fc->lo, lm->lo);
			if (fc->count == 0 && lm->count <= fc->capacity)
				fc->count = round_to_windows(m, lm, fc->ranges);
			else {
				/* the flow was in two groups (they changed in this transaction):
				 * both sets, coalesced to one set's capacity if need be */
				FnTimeRange *tmp = palloc(sizeof(FnTimeRange) * lm->count);
				FnDirtySet set;

				if (fc->capacity < lm->capacity) {
					fc->ranges = repalloc(fc->ranges, sizeof(FnTimeRange) * lm->capacity);
					fc->capacity = lm->capacity;
				}
				set = (FnDirtySet){fc->ranges, &fc->count, fc->capacity};
				fn_dirty_add_all(set, tmp, round_to_windows(m, lm, tmp));
				pfree(tmp);
			}
			cut_expired(m, fc, now);
		}
	}
}

/*
 * Claims (fallibly) the slots the commit will publish to, and records the marks
 * durably in this transaction, unless the slot's durable set already holds them.
 * The writer registers as in flight first: a refresh that removes windows from the
 * durable set waits for every writer in flight before taking its snapshot, so a
 * writer that skipped its record because of a window the refresh is about to clear
 * is always visible to that refresh.
 */
void fn_marks_pre_commit(void) {
	ListCell *lc;
	Oid catalog = InvalidOid;
	PendingWriter *writer = NULL;

	if (!fn_marks_pending() && !fn_dimension_marks_pending() && !fn_key_marks_pending())
		return;
	catalog = fn_catalog_relid(true);
	if (!OidIsValid(catalog))
		return; /* the extension was dropped in this transaction: no flow is left */
	/* a dimension's writes: the fact rows they join are looked up once the writer is
	 * in flight, so a refresh that does not wait for it saw no fact row the lookup
	 * misses (dimension_marks.c) */
	if (fn_dimension_marks_pending()) {
		fn_inflight_begin();
		inflight = true;
		fn_dimension_marks_resolve();
	}
	/* the flows of a table may have to be read again (one was created or dropped in
	 * this transaction, or the table itself), which takes a snapshot */
	PushActiveSnapshot(GetTransactionSnapshot());
	build_flow_commits();
	PopActiveSnapshot();
	if (!inflight)
		fn_inflight_begin();
	inflight = true;
	foreach (lc, xact_commits) {
		FlowCommit *fc = lfirst(lc);
		bool covered = true;

		fc->slot = fn_acquire_slot(MyDatabaseId, catalog, fc->flow_id, true);
		fc->recorded = false;
		if (fc->slot == NULL || fc->count == 0)
			continue;
		fc->hull = (FnTimeRange){fc->ranges[0].start, fc->ranges[fc->count - 1].end};
		LWLockAcquire(fn_slot_lock(fc->slot), LW_SHARED);
		for (uint32 i = 0; i < fc->count && covered; i++)
			covered = fn_dirty_covers(fn_slot_durable_set(fc->slot, 0), fc->ranges[i]);
		if (!covered)
			widen_to_dirty_ranges(fc);
		fc->at_look = fn_slot_refresh_mark_locked(fc->slot);
		LWLockRelease(fn_slot_lock(fc->slot));
		if (!covered) {
			if (writer == NULL)
				writer = fn_pending_open();
			fn_pending_write(writer, fc->flow_id, fc->ranges, fc->count, commit_time);
			fc->recorded = true;
		}
	}
	if (writer != NULL)
		fn_pending_close(writer);
	fn_key_marks_pre_commit(catalog);
}

/* Runs at COMMIT: nothing here may fail. Per flow, one exclusive lock of its slot
 * (fn_slot_publish_commit): the ranges into the dirty set, the durable claim unless
 * a refresh was taking windows meanwhile, the fold's report, the downstream wake-up
 * of a flow worker's commit (a chain of flows). */
static void publish_marks(void) {
	ListCell *lc;

	foreach (lc, xact_commits) {
		FlowCommit *fc = lfirst(lc);

		if (fc->slot == NULL || (fc->count == 0 && !fc->removes))
			continue;
		fn_slot_publish_commit(fc->slot, &(FlowSlotCommit){.dboid = MyDatabaseId,
		                                                   .flow_id = fc->flow_id,
		                                                   .ranges = fc->ranges,
		                                                   .count = fc->count,
		                                                   .removes = fc->removes,
		                                                   .lo = fc->lo,
		                                                   .hull = fc->hull,
		                                                   .recorded = fc->recorded,
		                                                   .at_look = fc->at_look,
		                                                   .commit_time = commit_time,
		                                                   .wake = fn_is_flow_worker});
	}
}

/* The end of a transaction either way: its lists go with its memory. */
static void end_of_transaction(void) {
	if (inflight)
		fn_inflight_end();
	inflight = false;
	fn_marks_forget();
	fn_dimension_marks_forget();
	fn_key_marks_forget();
	xact_commits = NIL;
}

/* At COMMIT, after PRE_COMMIT's fn_marks_pre_commit: publishes. Cannot fail. */
void fn_marks_commit(void) {
	publish_marks();
	fn_key_marks_commit();
	end_of_transaction();
}

/* At ABORT: nothing is published. */
void fn_marks_abort(void) {
	end_of_transaction();
}
