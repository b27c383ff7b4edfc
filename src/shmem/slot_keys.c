/*
 * slot_keys.c: the slot's note that key marks wait in flownode.pending_keys
 * (docs/internals.md §3, *Key marks*). The marks themselves are rows of that table,
 * written in the writers' transactions and read by the refresh in its snapshot, so
 * shared memory holds only the note that tells the worker to look: a note lost to a
 * crash is set again by the worker's start. The worker takes the note as any other
 * wake-up (fn_slot_take_wakeup with FN_WAKE_KEYS, slot_worker.c).
 */
#include "flownode.h"

#include "shmem/flow_slot_fields.h"

#include "storage/lwlock.h"

/* At COMMIT: nothing here may fail. Key marks in the fold's window (hull: their
 * windows' hull) report as a removal would (refresh/fold_refresh.h): the rows they
 * mark may lie below the fold's line, which the fold's prefix lacks, so the next
 * refresh of that window recomputes it instead of folding. */
void fn_slot_note_keys(FlowSlot *slot, FnTimeRange hull) {
	FnTimeRange w;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->keys_pending = true;
	w = slot->fold_window;
	if (w.start >= w.end || (hull.start < w.end && w.start < hull.end))
		slot->fold_lo = FN_TS_MIN;
	LWLockRelease(fn_slot_lock(slot));
}
