/*
 * slot_clients.c: what backends other than the flow's worker do with its slot:
 * post flush_flow's and refresh_flow's requests and wait for the answers, copy it
 * for the flows view, publish a writer's marks at COMMIT, load the durable record.
 * The locking rules are at the top of flow_slots.h.
 */
#include "flownode.h"

#include "shmem/flow_slot_fields.h"

#include "pgstat.h"
#include "utils/timestamp.h"

/* Posts the request (a repair widens the pending hull) and wakes the worker;
 * returns the request's number. */
uint64 fn_slot_post_request(FlowSlot *slot, FlowSlotRequest kind, FnTimeRange range) {
	uint64 mine;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	if (kind == FN_REQUEST_FLUSH)
		mine = ++slot->flush_requested;
	else {
		if (slot->repair_requested > slot->repair_completed) {
			slot->repair_range.start = Min(slot->repair_range.start, range.start);
			slot->repair_range.end = Max(slot->repair_range.end, range.end);
		} else
			slot->repair_range = range;
		mine = ++slot->repair_requested;
	}
	if (slot->worker_latch)
		SetLatch(slot->worker_latch);
	LWLockRelease(fn_slot_lock(slot));
	return mine;
}

/* Where request `mine` of the flow stands. The identity is read under the slot's
 * lock alone: it is written under both locks. */
void fn_slot_poll_request(FlowSlot *slot, int64 flow_id, FlowSlotRequest kind, uint64 mine,
                          FlowSlotAnswer *out) {
	bool flush = kind == FN_REQUEST_FLUSH;

	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	out->gone = !slot->in_use || slot->flow_id != flow_id || slot->dropped;
	out->paused = slot->paused;
	out->done = (flush ? slot->flush_completed : slot->repair_completed) >= mine;
	out->attached = slot->worker_pid != 0;
	out->waiting = slot->state == FLOW_WAITING_FOR_WORKER;
	out->registered = slot->worker_registered_at != 0;
	if (out->done) {
		out->windows = flush ? slot->flush_windows : slot->repair_windows;
		out->failed = flush ? slot->flush_failed : slot->repair_failed;
		out->error = flush ? slot->flush_error : slot->repair_error;
	}
	LWLockRelease(fn_slot_lock(slot));
}

/* The condition variable that both handshakes' answers (and a worker's attach and
 * exit, a drop, a pause) are broadcast on. */
void fn_slot_wait_prepare(FlowSlot *slot) {
	ConditionVariablePrepareToSleep(&slot->flush_cv);
}

void fn_slot_wait(FlowSlot *slot, long timeout_ms) {
	(void)ConditionVariableTimedSleep(&slot->flush_cv, timeout_ms, PG_WAIT_EXTENSION);
}

void fn_slot_wake_waiters(FlowSlot *slot) {
	ConditionVariableBroadcast(&slot->flush_cv);
}

static void copy_view(FlowSlot *slot, FlowSlotView *out) {
	FnDirtySet dirty = fn_slot_dirty_set(slot, 0);

	out->nranges = *dirty.count;
	out->ranges = palloc(sizeof(FnTimeRange) * Max(1, out->nranges));
	memcpy(out->ranges, dirty.ranges, sizeof(FnTimeRange) * out->nranges);
	out->since = fn_since_min(slot->dirty_since, slot->held_since);
	out->worker_pid = slot->worker_pid;
	out->consecutive_failures = slot->consecutive_failures;
	out->last_run_at = slot->last_run_at;
	out->last_run_usec = slot->last_run_usec;
	out->last_success_at = slot->last_success_at;
	out->last_failure_at = slot->last_failure_at;
	strlcpy(out->last_failure, fn_slot_error_message(&slot->last_failure), sizeof(out->last_failure));
	out->last_failure_sqlstate = slot->last_failure.sqlerrcode;
	out->last_due_at = slot->last_due_at;
	out->last_started_at = slot->last_started_at;
	out->runs = slot->runs;
	out->failures = slot->failures;
	out->rows_written = slot->rows_written;
	out->folds = slot->folds;
}

/* The flow's slot as the flows view shows it, copied under both locks (palloc only
 * reaches its OOM ERROR, which releases the LWLocks); false when it has none. */
bool fn_slot_view(Oid dboid, Oid catalog_relid, int64 flow_id, FlowSlotView *out) {
	FlowSlot *slot;

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	slot = fn_find_slot(dboid, catalog_relid, flow_id);
	if (slot != NULL) {
		LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
		copy_view(slot, out);
		LWLockRelease(fn_slot_lock(slot));
	}
	LWLockRelease(fn_registry_lock());
	return slot != NULL;
}

/* Whether a refresh is between its take and its end, and how many have ended; at
 * PRE_COMMIT, the caller holding the slot's lock. */
FlowSlotRefreshMark fn_slot_refresh_mark_locked(FlowSlot *slot) {
	FlowSlotRefreshMark m = {slot->refreshing, slot->refresh_seq};

	return m;
}

/*
 * Whether a commit's record may be claimed in the durable set (the next writers of
 * those windows then skip theirs): only if no refresh was between its take and its
 * end at any moment from PRE_COMMIT's look at the durable set to now. Otherwise
 * that refresh may have taken these windows and, its snapshot seeing this commit,
 * trim its record, while a writer that skipped its own record on the strength of
 * the claim commits after that snapshot: its windows would be unrecorded, lost to a
 * crash and missed by read_flow (test/tap/018_durable_claim.pl). A refresh that takes
 * the windows after the claim removes it, and waits for the writers that relied on
 * it (§4, §5). Refusing the claim only costs the next writer a record.
 */
static bool may_claim_durable(const FlowSlotCommit *c, const FlowSlot *slot) {
	return c->recorded && !c->at_look.refreshing && !slot->refreshing &&
	       slot->refresh_seq == c->at_look.refresh_seq;
}

/*
 * What the flow's folded refresh of its open window must check (refresh/fold_refresh.h):
 * the earliest time of the rows this commit added there, or FN_TS_MIN when it may
 * have removed rows there or marked windows without their rows' times. A commit that
 * touched none of the folded window's range leaves it alone (late rows of older
 * windows, their UPDATEs and DELETEs); a truncated source (no window) touches all.
 */
static void note_for_fold(const FlowSlotCommit *c, FlowSlot *slot) {
	FnTimeRange w = slot->fold_window;
	/* no folded window: every commit counts. Its own windows, not those it was
	 * widened to: a late row next to the dirty open window would touch it then */
	bool touches = w.start >= w.end || c->count == 0 || (c->hull.start < w.end && w.start < c->hull.end);

	if (touches)
		slot->fold_lo = Min(slot->fold_lo, c->removes ? FN_TS_MIN : c->lo);
}

/*
 * A chain of flows: a flow's worker commits the sink rows its refresh wrote, and
 * the flows that read that sink got their windows marked. Their workers are woken
 * so that an adaptive level follows the level below soon, instead of one of its
 * windows' usual size later. Writers other than a flow's worker wake no one:
 * marking never sets a latch. SetLatch cannot fail.
 */
static void wake_downstream(FlowSlot *slot) {
	slot->upstream_wrote = true;
	if (slot->worker_latch)
		SetLatch(slot->worker_latch);
}

/* At COMMIT of a flow worker's refresh that left key marks for a flow reading its
 * sink (marking/key_marks.c): the wake-up a range mark gives. Cannot fail. */
void fn_slot_wake_downstream(FlowSlot *slot) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	if (slot->in_use && !slot->dropped)
		wake_downstream(slot);
	LWLockRelease(fn_slot_lock(slot));
}

/* A writer's marks into the slot at COMMIT, if it still holds the flow and the flow
 * was not dropped: one exclusive lock, nothing that can fail. */
void fn_slot_publish_commit(FlowSlot *slot, const FlowSlotCommit *c) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	if (slot->in_use && slot->flow_id == c->flow_id && slot->dboid == c->dboid && !slot->dropped) {
		bool claim = may_claim_durable(c, slot);

		note_for_fold(c, slot);
		if (c->count > 0) {
			fn_dirty_add_all(fn_slot_dirty_set(slot, c->count), c->ranges, c->count);
			fn_slot_note_marks_locked(slot, c->commit_time, c->removes);
			if (c->wake)
				wake_downstream(slot);
			if (claim)
				fn_durable_add_all(fn_slot_durable_set(slot, c->count), c->ranges, c->count);
		}
	}
	LWLockRelease(fn_slot_lock(slot));
}

/* The changes waiting since the record's oldest commit (a record written before it
 * kept its time counts from now); what wrote them, and so whether they removed rows
 * or where their rows' times were, is unknown now. Adding is idempotent. */
void fn_slot_load_record(FlowSlot *slot, const FnTimeRange *ranges, uint32 n, TimestampTz oldest) {
	TimestampTz since = n > 0 ? (oldest != 0 ? oldest : GetCurrentTimestamp()) : 0;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	if (n > 0) {
		fn_slot_note_marks_locked(slot, since, true);
		fn_dirty_add_all(fn_slot_dirty_set(slot, n), ranges, n);
		fn_durable_add_all(fn_slot_durable_set(slot, n), ranges, n);
		slot->fold_lo = FN_TS_MIN;
	}
	LWLockRelease(fn_slot_lock(slot));
}
