/*
 * commit_marks.c: a writer's marks at the end of its transaction (docs/internals.md §2,
 * invariant 2; §3, §4). At PRE_COMMIT, the fallible work: each flow's own
 * windows derived from the sets of the groups it was marked in, its slot claimed,
 * its windows recorded in flownode.pending unless already recorded. At COMMIT a
 * copy into shared memory that cannot fail. At ABORT nothing is published.
 */
#include "flownode.h"

#include "marking/commit_marks.h"

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
	bool removes;
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
	FnDirtySet dirty = fn_slot_dirty_set(fc->slot);
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

/* Each flow's windows, from the sets of the groups it was marked in. */
static void build_flow_commits(void) {
	TimestampTz now = GetCurrentTimestamp();
	ListCell *lc;

	commit_time = now;
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

	if (!fn_marks_pending())
		return;
	catalog = fn_catalog_relid(true);
	if (!OidIsValid(catalog))
		return; /* the extension was dropped in this transaction: no flow is left */
	/* the flows of a table may have to be read again (one was created or dropped in
	 * this transaction, or the table itself), which takes a snapshot */
	PushActiveSnapshot(GetTransactionSnapshot());
	build_flow_commits();
	PopActiveSnapshot();
	fn_inflight_begin();
	inflight = true;
	foreach (lc, xact_commits) {
		FlowCommit *fc = lfirst(lc);
		bool covered = true;

		fc->slot = fn_acquire_slot(MyDatabaseId, catalog, fc->flow_id, true);
		fc->recorded = false;
		if (fc->slot == NULL || fc->count == 0)
			continue;
		LWLockAcquire(fn_slot_lock(fc->slot), LW_SHARED);
		for (uint32 i = 0; i < fc->count && covered; i++)
			covered = fn_dirty_covers(fn_slot_durable_set(fc->slot), fc->ranges[i]);
		if (!covered)
			widen_to_dirty_ranges(fc);
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
}

/* Runs at COMMIT: nothing here may fail. */
static void publish_marks(void) {
	ListCell *lc;

	foreach (lc, xact_commits) {
		FlowCommit *fc = lfirst(lc);
		FlowSlot *slot = fc->slot;

		if (slot == NULL || fc->count == 0)
			continue;
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		if (slot->in_use && slot->flow_id == fc->flow_id && slot->dboid == MyDatabaseId && !slot->dropped) {
			fn_dirty_add_all(fn_slot_dirty_set(slot), fc->ranges, fc->count);
			slot->dirty_since = fn_since_min(slot->dirty_since, commit_time);
			slot->removals |= fc->removes;
			for (uint32 i = 0; fc->recorded && i < fc->count; i++)
				fn_durable_add(fn_slot_durable_set(slot), fc->ranges[i]);
		}
		LWLockRelease(fn_slot_lock(slot));
	}
}

/* The end of a transaction either way: its lists go with its memory. */
static void end_of_transaction(void) {
	if (inflight)
		fn_inflight_end();
	inflight = false;
	fn_marks_forget();
	xact_commits = NIL;
}

/* At COMMIT, after PRE_COMMIT's fn_marks_pre_commit: publishes. Cannot fail. */
void fn_marks_commit(void) {
	publish_marks();
	end_of_transaction();
}

/* At ABORT: nothing is published. */
void fn_marks_abort(void) {
	end_of_transaction();
}
