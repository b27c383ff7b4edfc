/*
 * slot_lifecycle.c: what happens to the slots as flows are created, changed and
 * dropped (at their transaction's end, where nothing may fail), and what the
 * launcher, the database starters and DROP DATABASE do to them. The locking rules
 * are at the top of flow_slots.h.
 */
#include "flownode.h"

#include "shmem/flow_slot_fields.h"

#include <signal.h>

#include "miscadmin.h"
#include "utils/timestamp.h"

void fn_slot_reserve(FlowSlot *slot) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->reserved_by = MyProcPid; /* until this transaction ends */
	LWLockRelease(fn_slot_lock(slot));
}

void fn_slot_note_fill(FlowSlot *slot, TimestampTz start, TimestampTz end, int64 rows) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->rows_written = rows;
	slot->last_run_at = slot->last_success_at = end;
	slot->last_run_usec = end - start;
	LWLockRelease(fn_slot_lock(slot));
}

/* A worker is asked for (asked), or the asking came to `registered`: the creating
 * transaction committed (reserved_by goes), and a hold of the flow's adoption goes
 * (it was bound, or its extension updated, just now), before a pool worker woken
 * by the asking looks; then a worker was registered or woken, or none could be
 * and, while none is attached, the flow waits for one. */
static void note_start(Oid dboid, Oid catalog_relid, int64 flow_id, bool asked, bool registered) {
	FlowSlot *slot;

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	slot = fn_find_slot(dboid, catalog_relid, flow_id);
	if (slot) {
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		slot->reserved_by = 0;
		slot->hold_until = 0;
		/* asked: the outcome follows */
		if (!asked && registered)
			slot->worker_registered_at = GetCurrentTimestamp();
		else if (!asked && slot->worker_pid == 0)
			slot->state = FLOW_WAITING_FOR_WORKER;
		LWLockRelease(fn_slot_lock(slot));
	}
	LWLockRelease(fn_registry_lock());
}

void fn_slot_start_asked(Oid dboid, Oid catalog_relid, int64 flow_id) {
	note_start(dboid, catalog_relid, flow_id, true, false);
}

void fn_slot_worker_requested(Oid dboid, Oid catalog_relid, int64 flow_id, bool registered) {
	note_start(dboid, catalog_relid, flow_id, false, registered);
}

bool fn_slot_has_worker(Oid dboid, Oid catalog_relid, int64 flow_id) {
	FlowSlot *slot;
	bool running = false;

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	slot = fn_find_slot(dboid, catalog_relid, flow_id);
	if (slot != NULL) {
		LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
		running = slot->worker_pid != 0;
		LWLockRelease(fn_slot_lock(slot));
	}
	LWLockRelease(fn_registry_lock());
	return running;
}

/* The flow is dropped: its worker exits and frees the slot, or the slot is freed now
 * when no worker is attached. */
static void drop_slot(FlowSlot *slot) {
	Latch *latch = NULL;
	bool free_now;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->dropped = true;
	latch = slot->worker_latch;
	free_now = (slot->worker_pid == 0);
	LWLockRelease(fn_slot_lock(slot));
	if (latch)
		SetLatch(latch);
	if (free_now)
		fn_free_slot(slot);
}

void fn_slots_drop_flows(Oid dboid, Oid catalog_relid, bool all, int64 flow_id) {
	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	for (int i = 0; i < fn_slot_count(); i++) {
		FlowSlot *slot = fn_slot_at(i);
		bool match = slot->in_use && slot->dboid == dboid && slot->catalog_relid == catalog_relid &&
		             (all || slot->flow_id == flow_id);

		if (match) { /* fn_free_slot takes the registry lock exclusively */
			LWLockRelease(fn_registry_lock());
			drop_slot(slot);
			LWLockAcquire(fn_registry_lock(), LW_SHARED);
		}
	}
	LWLockRelease(fn_registry_lock());
}

/* Asks every worker of the catalog to reload its record (flag and latch: cannot fail). */
void fn_slots_request_reload(Oid dboid, Oid catalog_relid) {
	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	for (int i = 0; i < fn_slot_count(); i++) {
		FlowSlot *slot = fn_slot_at(i);
		Latch *latch = NULL;

		if (!slot->in_use || slot->dboid != dboid || slot->catalog_relid != catalog_relid)
			continue;
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		slot->reload_requested = true;
		latch = slot->worker_latch;
		LWLockRelease(fn_slot_lock(slot));
		if (latch)
			SetLatch(latch);
	}
	LWLockRelease(fn_registry_lock());
}

/* The flow's settings changed: its worker reads them again (latch), and a flush
 * waiting on the slot sees a pause at once. Cannot fail. */
void fn_slot_config_changed(Oid dboid, Oid catalog_relid, int64 flow_id, bool paused) {
	FlowSlot *slot;
	Latch *latch = NULL;

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	slot = fn_find_slot(dboid, catalog_relid, flow_id);
	if (slot != NULL) {
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		slot->config_seq++;
		slot->paused = paused;
		latch = slot->worker_latch;
		LWLockRelease(fn_slot_lock(slot));
	}
	LWLockRelease(fn_registry_lock());
	if (latch)
		SetLatch(latch);
	if (slot != NULL)
		ConditionVariableBroadcast(&slot->flush_cv);
}

/* Whether the flow has neither a worker nor one starting, and may get one now. */
bool fn_slot_needs_worker(FlowSlot *slot, TimestampTz now) {
	bool needs;

	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	needs =
	    slot->in_use && !slot->dropped && slot->worker_pid == 0 && slot->reserved_by == 0 &&
	    now >= slot->hold_until &&
	    (slot->worker_registered_at == 0 || now - slot->worker_registered_at > FN_WORKER_START_GRACE_USEC);
	LWLockRelease(fn_slot_lock(slot));
	return needs;
}

/* The databases holding a flow that needs a worker (fn_slot_needs_worker). */
List *fn_slots_databases_needing_workers(TimestampTz now) {
	List *wanted = NIL;

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	for (int i = 0; i < fn_slot_count(); i++) {
		FlowSlot *slot = fn_slot_at(i);

		if (fn_slot_needs_worker(slot, now))
			wanted = list_append_unique_oid(wanted, slot->dboid);
	}
	LWLockRelease(fn_registry_lock());
	return wanted;
}

/* Adds the slot to its database's counts (fn_slots_census); false when `out` is
 * full. Registry lock held. */
static bool count_slot(FlowSlot *slot, FnDbFlows *out, int *n, int max, TimestampTz now) {
	bool live, unserved;
	int k;

	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	live = slot->in_use && !slot->dropped;
	unserved = live && slot->worker_pid == 0 && slot->reserved_by == 0 && now >= slot->hold_until &&
	           now >= slot->drop_db_until;
	LWLockRelease(fn_slot_lock(slot));
	if (!live)
		return true;
	for (k = 0; k < *n && out[k].dboid != slot->dboid; k++)
		;
	if (k == *n) {
		if (*n == max)
			return false;
		out[(*n)++] = (FnDbFlows){slot->dboid, 0, 0};
	}
	out[k].flows++;
	out[k].unserved += unserved;
	return true;
}

/* Per database holding flows (at most `max` of them): its flows, and those without
 * a worker that one may adopt now. */
int fn_slots_census(FnDbFlows *out, int max, TimestampTz now) {
	int n = 0;

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	for (int i = 0; i < fn_slot_count(); i++)
		if (!count_slot(fn_slot_at(i), out, &n, max, now))
			break;
	LWLockRelease(fn_registry_lock());
	return n;
}

bool fn_slots_other_db_unserved(Oid dboid, TimestampTz now) {
	bool found = false;

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	for (int i = 0; i < fn_slot_count() && !found; i++) {
		FlowSlot *slot = fn_slot_at(i);

		LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
		found = slot->in_use && slot->dboid != dboid && !slot->dropped && slot->worker_pid == 0 &&
		        slot->reserved_by == 0 && now >= slot->hold_until;
		LWLockRelease(fn_slot_lock(slot));
	}
	LWLockRelease(fn_registry_lock());
	return found;
}

/* Whether the slot belongs to the database and no worker is attached to it. */
static bool unserved_in(FlowSlot *slot, Oid dboid) {
	bool unserved;

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	unserved = slot->in_use && slot->dboid == dboid && slot->worker_pid == 0;
	LWLockRelease(fn_slot_lock(slot));
	LWLockRelease(fn_registry_lock());
	return unserved;
}

/* The database is gone: its slots without a worker are freed. */
void fn_slots_free_unserved(Oid dboid) {
	for (int i = 0; i < fn_slot_count(); i++) {
		FlowSlot *slot = fn_slot_at(i);

		if (unserved_in(slot, dboid))
			fn_free_slot(slot);
	}
}

/*
 * After DROP DATABASE: its flows are gone with it, so their slots are freed now
 * (those whose worker is still exiting, by the worker: `dropped`). Never fails.
 */
void fn_slots_database_dropped(Oid dboid) {
	for (int i = 0; i < fn_slot_count(); i++) {
		FlowSlot *slot = fn_slot_at(i);
		bool free_now;

		LWLockAcquire(fn_registry_lock(), LW_SHARED);
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		free_now = slot->in_use && slot->dboid == dboid && slot->worker_pid == 0;
		if (slot->in_use && slot->dboid == dboid)
			slot->dropped = true;
		LWLockRelease(fn_slot_lock(slot));
		LWLockRelease(fn_registry_lock());
		if (free_now)
			fn_free_slot(slot);
	}
}

/* Holds the restart of the database's flows until `until` (never earlier than a
 * hold already there); with `stop`, DROP DATABASE's: their workers are told to exit
 * and a start requested before does not attach either. */
static void hold_database(Oid dboid, TimestampTz until, bool stop) {
	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	for (int i = 0; i < fn_slot_count(); i++) {
		FlowSlot *slot = fn_slot_at(i);

		if (!slot->in_use || slot->dboid != dboid)
			continue;
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		slot->hold_until = stop ? until : Max(slot->hold_until, until);
		if (stop)
			slot->drop_db_until = until;
		if (stop && slot->worker_pid != 0)
			(void)kill(slot->worker_pid, SIGTERM);
		LWLockRelease(fn_slot_lock(slot));
	}
	LWLockRelease(fn_registry_lock());
}

void fn_slots_stop_database(Oid dboid, TimestampTz until) {
	hold_database(dboid, until, true);
}

void fn_slots_hold_database(Oid dboid, TimestampTz until) {
	hold_database(dboid, until, false);
}

/* Whether the slot may be an orphan of the database (in use, no worker, not reserved
 * by a create_flow in progress); its key and claim sequence, for the caller to check
 * the catalog and then fn_free_slot_if_unclaimed. */
bool fn_slot_orphan_candidate(FlowSlot *slot, Oid dboid, Oid *catalog_relid, int64 *flow_id,
                              uint64 *seen_seq) {
	bool orphan;

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	orphan = slot->in_use && slot->dboid == dboid && slot->worker_pid == 0 && slot->reserved_by == 0;
	*catalog_relid = slot->catalog_relid;
	*flow_id = slot->flow_id;
	*seen_seq = slot->acquired_seq;
	LWLockRelease(fn_slot_lock(slot));
	LWLockRelease(fn_registry_lock());
	return orphan;
}
