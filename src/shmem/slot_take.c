/*
 * slot_take.c: the steps of a refresh's take of ranges out of the flow's dirty set
 * and of their give-back, and the answers to flush_flow and refresh_flow. Each
 * runs under the slot's exclusive lock, which the worker holds across a whole step
 * (with its own buffers' part of it) so that commits see the step as one; see the
 * locking rules at the top of flow_slots.h.
 */
#include "flownode.h"

#include "shmem/flow_slot_fields.h"

#define ASSERT_LOCKED(slot) Assert(LWLockHeldByMeInMode(fn_slot_lock(slot), LW_EXCLUSIVE))

/* Whether a drop or a pause committed: then a run refreshes nothing. */
void fn_slot_stopped_locked(FlowSlot *slot, bool *dropped, bool *paused) {
	Assert(LWLockHeldByMe(fn_slot_lock(slot)));
	*dropped = slot->dropped;
	*paused = slot->paused;
}

/* A refresh takes ranges: until its end, commits claim nothing in the durable set
 * (may_claim_durable). */
void fn_slot_begin_take_locked(FlowSlot *slot) {
	ASSERT_LOCKED(slot);
	slot->refreshing = true;
}

/* A refresh's take ends (committed, failed or given back at exit): commits may claim
 * their records in the durable set again. */
void fn_slot_end_take_locked(FlowSlot *slot) {
	ASSERT_LOCKED(slot);
	if (slot->refreshing) {
		slot->refreshing = false;
		slot->refresh_seq++;
	}
	/* a set the take emptied (or nearly) gives the pool its memory back */
	fn_slot_ranges_settle_locked(slot);
}

/* Ranges were taken out of the shared dirty set: they are held from now on, with the
 * set's time, and the set's time goes when it empties. */
void fn_slot_take_since_locked(FlowSlot *slot) {
	ASSERT_LOCKED(slot);
	slot->held_since = fn_since_min(slot->held_since, slot->dirty_since);
	if (slot->dirty.count == 0)
		slot->dirty_since = 0;
}

/* Ranges the worker held went back into the dirty set: so does their time; `all`:
 * it holds nothing any more. */
void fn_slot_put_back_since_locked(FlowSlot *slot, bool all) {
	ASSERT_LOCKED(slot);
	slot->dirty_since = fn_since_min(slot->dirty_since, slot->held_since);
	if (all)
		slot->held_since = 0;
}

/* Ranges left the dirty set without being held (expired): its time goes when it empties. */
void fn_slot_clean_since_locked(FlowSlot *slot) {
	ASSERT_LOCKED(slot);
	if (slot->dirty.count == 0)
		slot->dirty_since = 0;
}

/* Ranges were added to the dirty set by changes of time `at` (0: their time is
 * already counted), which may have removed rows (`removals`). */
void fn_slot_note_marks_locked(FlowSlot *slot, TimestampTz at, bool removals) {
	ASSERT_LOCKED(slot);
	slot->dirty_since = fn_since_min(slot->dirty_since, at);
	if (removals)
		slot->removals = true;
}

/* Whether some dirty window may have lost rows; `clear`: the taker took the set's
 * last ranges, and the flag goes with them. */
bool fn_slot_take_removals_locked(FlowSlot *slot, bool clear) {
	bool removals = slot->removals;

	ASSERT_LOCKED(slot);
	if (clear)
		slot->removals = false;
	return removals;
}

/* A flush takes the whole dirty set into its backlog `into`; returns whether those
 * ranges may have lost rows. */
bool fn_slot_take_all_locked(FlowSlot *slot, FnDirtySet into) {
	FnDirtySet dirty = fn_slot_dirty_set(slot, 0);

	ASSERT_LOCKED(slot);
	fn_dirty_add_all(into, dirty.ranges, *dirty.count);
	*dirty.count = 0;
	fn_slot_take_since_locked(slot);
	return fn_slot_take_removals_locked(slot, true);
}

/* A request's answer: the failure just recorded, or none. */
static void answer_error(FnSlotError *answer, FlowSlot *slot, bool ok) {
	if (ok)
		memset(answer, 0, sizeof(*answer));
	else
		*answer = slot->last_failure;
}

/* Answers the requests of the kind up to `serving`; a failed one with the failure
 * the worker has just recorded (kept apart from last_failure, which a later refresh
 * may overwrite before the caller reads it). The caller wakes the waiters after
 * releasing the lock (fn_slot_wake_waiters). */
void fn_slot_answer_locked(FlowSlot *slot, FlowSlotRequest kind, uint64 serving, int64 windows, bool ok) {
	ASSERT_LOCKED(slot);
	if (kind == FN_REQUEST_FLUSH) {
		slot->flush_completed = serving;
		slot->flush_windows = windows;
		slot->flush_failed = !ok;
		answer_error(&slot->flush_error, slot, ok);
	} else {
		slot->repair_completed = serving;
		slot->repair_windows = windows;
		slot->repair_failed = !ok;
		answer_error(&slot->repair_error, slot, ok);
	}
}
