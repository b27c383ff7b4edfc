/*
 * flow_slots.c: TaskState in shared memory.
 *
 * One fixed-size slot per flow (flownode.max_flows of them), keyed by (database,
 * catalog table, flow id): a flow id is only unique within one installation of the
 * extension. A slot holds its dirty and durable sets while they are small; larger
 * ones live in the pool of slot_ranges.c. The registry lock guards slot allocation;
 * each slot has its own lock for its state and sets (the locking rules are at the
 * top of flow_slots.h).
 */
#include "flownode.h"

#include "shmem/flow_slots.h"
#include "shmem/flow_slot_fields.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#define FN_TRANCHE "flownode"

typedef struct FnSlotsHeader {
	int nslots;
	Size slot_size;
	/* followed by the slots */
} FnSlotsHeader;

static FnSlotsHeader *fn_header = NULL;
static char *fn_slots = NULL;
static LWLockPadded *fn_locks = NULL;

static Size slot_size(void) {
	return MAXALIGN(sizeof(FlowSlot));
}

static Size shmem_size(void) {
	return add_size(MAXALIGN(sizeof(FnSlotsHeader)), mul_size(slot_size(), fn_max_flows));
}

void fn_slots_shmem_request(void) {
	RequestAddinShmemSpace(shmem_size());
	RequestAddinShmemSpace(fn_ranges_pool_size());
	/* lock 0: registry; lock i+1: slot i */
	RequestNamedLWLockTranche(FN_TRANCHE, fn_max_flows + 1);
}

void fn_slots_shmem_startup(void) {
	bool found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	fn_header = ShmemInitStruct("flownode slots", shmem_size(), &found);
	fn_slots = (char *)fn_header + MAXALIGN(sizeof(FnSlotsHeader));
	fn_locks = GetNamedLWLockTranche(FN_TRANCHE);
	if (!found) {
		fn_header->nslots = fn_max_flows;
		fn_header->slot_size = slot_size();
		for (int i = 0; i < fn_max_flows; i++) {
			FlowSlot *slot = fn_slot_at(i);

			memset(slot, 0, sizeof(FlowSlot));
			slot->lock_index = i + 1;
			fn_slot_ranges_clear_locked(slot); /* nobody else runs yet */
			ConditionVariableInit(&slot->flush_cv);
		}
	}
	fn_ranges_pool_shmem_startup(fn_locks[0].lock.tranche);
	LWLockRelease(AddinShmemInitLock);
}

void fn_check_preloaded(void) {
	if (fn_header == NULL)
		ereport(
		    ERROR,
		    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		     errmsg("flownode is not loaded through shared_preload_libraries"),
		     errhint("Add flownode to shared_preload_libraries in postgresql.conf and restart the server.")));
}

LWLock *fn_registry_lock(void) {
	fn_check_preloaded();
	return &fn_locks[0].lock;
}

LWLock *fn_slot_lock(FlowSlot *slot) {
	return &fn_locks[slot->lock_index].lock;
}

int fn_slot_count(void) {
	return fn_header ? fn_header->nslots : 0;
}

FlowSlot *fn_slot_at(int i) {
	return (FlowSlot *)(fn_slots + (Size)i * slot_size());
}

/* The slot's sets (slot_ranges.c): views, with room for `adding` more ranges only
 * under the exclusive lock, as the set may move; emptied; settled. */
FnDirtySet fn_slot_dirty_set(FlowSlot *slot, uint32 adding) {
	Assert(adding == 0 || LWLockHeldByMeInMode(fn_slot_lock(slot), LW_EXCLUSIVE));
	return fn_ranges_view(&slot->dirty, adding);
}

FnDirtySet fn_slot_durable_set(FlowSlot *slot, uint32 adding) {
	Assert(adding == 0 || LWLockHeldByMeInMode(fn_slot_lock(slot), LW_EXCLUSIVE));
	return fn_ranges_view(&slot->durable, adding);
}

void fn_slot_ranges_clear_locked(FlowSlot *slot) {
	fn_ranges_clear(&slot->dirty);
	fn_ranges_clear(&slot->durable);
}

void fn_slot_ranges_settle_locked(FlowSlot *slot) {
	fn_ranges_settle(&slot->dirty);
	fn_ranges_settle(&slot->durable);
}

FlowSlot *fn_find_slot(Oid dboid, Oid catalog_relid, int64 flow_id) {
	for (int i = 0; i < fn_header->nslots; i++) {
		FlowSlot *slot = fn_slot_at(i);

		if (slot->in_use && slot->flow_id == flow_id && slot->dboid == dboid &&
		    slot->catalog_relid == catalog_relid)
			return slot;
	}
	return NULL;
}

/*
 * Finds the flow's slot, or claims a free one. ERROR when every slot is taken
 * (flownode.max_flows), so call it where failing is allowed (never at COMMIT).
 */
FlowSlot *fn_acquire_slot(Oid dboid, Oid catalog_relid, int64 flow_id, bool missing_error) {
	FlowSlot *slot;

	LWLockAcquire(fn_registry_lock(), LW_EXCLUSIVE);
	slot = fn_find_slot(dboid, catalog_relid, flow_id);
	if (slot == NULL) {
		for (int i = 0; i < fn_header->nslots && slot == NULL; i++) {
			FlowSlot *candidate = fn_slot_at(i);

			if (!candidate->in_use)
				slot = candidate;
		}
		if (slot != NULL) {
			LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
			uint64 seq = slot->acquired_seq;

			memset(slot, 0, offsetof(FlowSlot, flush_cv));
			slot->acquired_seq = seq;
			slot->lock_index = (int)(((char *)slot - fn_slots) / slot_size()) + 1;
			slot->in_use = true;
			slot->dboid = dboid;
			slot->catalog_relid = catalog_relid;
			slot->flow_id = flow_id;
			slot->state = FLOW_STARTING;
			slot->flush_requested = slot->flush_completed = 0;
			slot->repair_requested = slot->repair_completed = 0;
			slot->last_run_at = slot->last_failure_at = slot->last_success_at = 0;
			slot->last_run_usec = slot->runs = slot->failures = slot->rows_written = 0;
			slot->folds = 0;
			slot->fold_lo = FN_TS_MIN;
			slot->fold_window.start = slot->fold_window.end = 0;
			slot->consecutive_failures = 0;
			memset(&slot->last_failure, 0, sizeof(slot->last_failure));
			slot->last_due_at = slot->last_started_at = 0;
			fn_slot_ranges_clear_locked(slot);
			LWLockRelease(fn_slot_lock(slot));
		}
	}
	if (slot != NULL)
		slot->acquired_seq++;
	LWLockRelease(fn_registry_lock());
	if (slot == NULL && missing_error)
		ereport(ERROR, (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
		                errmsg("too many flows: all %d flownode slots are in use", fn_max_flows),
		                errhint("Drop unused flows or raise flownode.max_flows (needs a restart).")));
	return slot;
}

/* Never fails: may run at COMMIT. */
void fn_free_slot(FlowSlot *slot) {
	LWLockAcquire(&fn_locks[0].lock, LW_EXCLUSIVE);
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->in_use = false;
	fn_slot_ranges_clear_locked(slot);
	slot->dirty_since = slot->held_since = 0;
	slot->worker_pid = 0;
	slot->worker_latch = NULL;
	LWLockRelease(fn_slot_lock(slot));
	LWLockRelease(&fn_locks[0].lock);
	/* wake flush_flow callers so they notice the flow is gone */
	ConditionVariableBroadcast(&slot->flush_cv);
}

/* Frees an orphan slot, unless it was claimed since its sequence was read. */
bool fn_free_slot_if_unclaimed(FlowSlot *slot, uint64 seen_seq) {
	bool unclaimed;

	LWLockAcquire(&fn_locks[0].lock, LW_EXCLUSIVE);
	unclaimed = slot->in_use && slot->acquired_seq == seen_seq && slot->worker_pid == 0;
	if (unclaimed) {
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		slot->in_use = false;
		fn_slot_ranges_clear_locked(slot);
		LWLockRelease(fn_slot_lock(slot));
	}
	LWLockRelease(&fn_locks[0].lock);
	return unclaimed;
}
