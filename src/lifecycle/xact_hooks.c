/*
 * xact_hooks.c: GreptimeDB's BatchingEngine, its transaction side.
 *
 * - The transaction callbacks: the marks of mark_triggers.c are recorded at
 *   PRE_COMMIT and published at COMMIT, dropped at ABORT (and with an aborted
 *   subtransaction); see commit_marks.c.
 * - Commit-time actions of create_flow/drop_flow/DROP EXTENSION: start or stop workers
 *   only once the catalog change is committed; a sink dropped with its flows takes
 *   the source's triggers with the last flow.
 */
#include "flownode.h"

#include "lifecycle/xact_hooks.h"

#include "access/xact.h"
#include "marking/commit_marks.h"
#include "marking/dimension_marks.h"
#include "marking/key_marks.h"
#include "marking/mark_rows.h"
#include "marking/mark_triggers.h"
#include "marking/source_triggers.h"
#include "miscadmin.h"
#include "pgutil/subxact_sets.h"
#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "worker/launcher.h"

typedef enum PendingKind {
	PENDING_START,
	PENDING_RESTART,
	PENDING_DROP,
	PENDING_DROP_ALL,
	PENDING_TRIGGER_CLEANUP,
	PENDING_RELOAD_ALL,
	PENDING_MARK_ALL,
	PENDING_CONFIG
} PendingKind;

typedef struct PendingAction {
	SubxactSet set; /* undone if this subtransaction aborts (first: pgutil/subxact_sets.h) */
	PendingKind kind;
	int64 flow_id;
	Oid owner;
	bool paused;       /* PENDING_CONFIG: the flow's pause state at commit */
	Oid catalog_relid; /* the table, for PENDING_TRIGGER_CLEANUP and PENDING_MARK_ALL */
} PendingAction;

static List *pending_actions = NIL; /* PendingAction *, in TopTransactionContext */

static void undo_action(PendingAction *a);

static void action_undo(SubxactSet *s) {
	undo_action((PendingAction *)s);
	pfree(s);
}

/* A committed subtransaction's actions move up: they run at the top commit. */
static const SubxactSetKind action_kind = {NULL, NULL, action_undo};

static void subxact_callback(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid,
                             void *arg pg_attribute_unused()) {
	fn_subxact_sets_end(&pending_actions, &action_kind, event, mySubid, parentSubid);
	fn_marks_subxact(event, mySubid, parentSubid);
	fn_key_marks_subxact(event, mySubid, parentSubid);
	fn_dimension_marks_subxact(event, mySubid, parentSubid);
}

static void pre_commit(void) {
	ListCell *lc;

	/* a sink dropped with its flows: the source's triggers go with the last flow; a
	 * partition dropped unread: the windows of the flows over its table are marked */
	foreach (lc, pending_actions) {
		PendingAction *a = lfirst(lc);

		if (a->kind != PENDING_TRIGGER_CLEANUP && a->kind != PENDING_MARK_ALL)
			continue;
		PushActiveSnapshot(GetTransactionSnapshot());
		if (a->kind == PENDING_TRIGGER_CLEANUP) {
			fn_sync_marking_triggers(a->catalog_relid);
			fn_sync_dimension_triggers(a->catalog_relid);
		} else if (OidIsValid(get_rel_namespace(a->catalog_relid)))
			fn_mark_all_windows(a->catalog_relid);
		PopActiveSnapshot();
	}
	fn_marks_pre_commit();
}

/* The flow's settings changed: its worker reads them again, and a flush waiting on
 * the slot sees a pause at once. Cannot fail. */
static void config_changed(PendingAction *a) {
	if (fn_slot_count() == 0)
		return; /* not preloaded: no worker to tell */
	fn_slot_config_changed(MyDatabaseId, a->catalog_relid, a->flow_id, a->paused);
}

static void run_commit_actions(void) {
	ListCell *lc;

	foreach (lc, pending_actions) {
		PendingAction *a = lfirst(lc);

		if (a->kind == PENDING_TRIGGER_CLEANUP || a->kind == PENDING_MARK_ALL)
			continue; /* done at PRE_COMMIT */
		if (a->kind == PENDING_CONFIG) {
			config_changed(a);
			continue;
		}
		if (a->kind == PENDING_START || a->kind == PENDING_RESTART)
			(void)fn_start_flow_worker(MyDatabaseId, a->catalog_relid, a->flow_id);
		else if (a->kind == PENDING_RELOAD_ALL)
			fn_slots_request_reload(MyDatabaseId, a->catalog_relid);
		else
			fn_slots_drop_flows(MyDatabaseId, a->catalog_relid, a->kind == PENDING_DROP_ALL, a->flow_id);
	}
}

/* A flow created in an aborted (sub)transaction gives back the slot it reserved. */
static void undo_action(PendingAction *a) {
	if (a->kind == PENDING_START) {
		FlowSlot *slot;

		LWLockAcquire(fn_registry_lock(), LW_SHARED);
		slot = fn_find_slot(MyDatabaseId, a->catalog_relid, a->flow_id);
		LWLockRelease(fn_registry_lock());
		if (slot)
			fn_free_slot(slot);
	}
}

static void run_abort_actions(void) {
	ListCell *lc;

	foreach (lc, pending_actions)
		undo_action(lfirst(lc));
}

static void xact_callback(XactEvent event, void *arg pg_attribute_unused()) {
	switch (event) {
	case XACT_EVENT_PRE_COMMIT:
		pre_commit();
		break;
	case XACT_EVENT_PRE_PREPARE:
		if (fn_marks_pending() || fn_dimension_marks_pending() || fn_key_marks_pending() ||
		    pending_actions != NIL)
			ereport(ERROR,
			        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			         errmsg("cannot PREPARE a transaction that changed a flow's source table or a flow"),
			         errhint("Commit it directly; flownode publishes dirty windows at commit.")));
		break;
	case XACT_EVENT_COMMIT:
		fn_marks_commit();
		run_commit_actions();
		pending_actions = NIL;
		break;
	case XACT_EVENT_ABORT:
		fn_marks_abort();
		run_abort_actions();
		pending_actions = NIL;
		break;
	default:
		break;
	}
}

static void add_pending(PendingKind kind, int64 flow_id, Oid owner, Oid catalog_relid) {
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	PendingAction *a = palloc0(sizeof(PendingAction));

	a->kind = kind;
	a->flow_id = flow_id;
	a->owner = owner;
	a->catalog_relid = catalog_relid;
	a->set.subid = GetCurrentSubTransactionId();
	pending_actions = lappend(pending_actions, a);
	MemoryContextSwitchTo(old);
}

void fn_on_commit_start_worker(int64 flow_id, Oid owner) {
	add_pending(PENDING_START, flow_id, owner, fn_catalog_relid(false));
}

void fn_on_commit_restart_worker(int64 flow_id, Oid owner) {
	add_pending(PENDING_RESTART, flow_id, owner, fn_catalog_relid(false));
}

void fn_on_commit_drop_flow(int64 flow_id) {
	add_pending(PENDING_DROP, flow_id, InvalidOid, fn_catalog_relid(false));
}

void fn_on_commit_config_changed(int64 flow_id, bool paused) {
	add_pending(PENDING_CONFIG, flow_id, InvalidOid, fn_catalog_relid(false));
	((PendingAction *)llast(pending_actions))->paused = paused;
}

static bool has_action(PendingKind kind, int64 flow_id) {
	ListCell *lc;

	foreach (lc, pending_actions) {
		PendingAction *a = lfirst(lc);

		if (a->kind == kind && a->flow_id == flow_id && a->catalog_relid == fn_catalog_relid(false))
			return true;
	}
	return false;
}

bool fn_flow_created_here(int64 flow_id) {
	return has_action(PENDING_START, flow_id);
}

bool fn_flow_changed_here(int64 flow_id) {
	return has_action(PENDING_CONFIG, flow_id);
}

void fn_on_pre_commit_cleanup_triggers(Oid source_relid) {
	add_pending(PENDING_TRIGGER_CLEANUP, 0, InvalidOid, source_relid);
}

void fn_on_commit_reload_records(Oid catalog_relid) {
	ListCell *lc;

	foreach (lc, pending_actions) /* once per transaction is enough */
		if (((PendingAction *)lfirst(lc))->kind == PENDING_RELOAD_ALL)
			return;
	add_pending(PENDING_RELOAD_ALL, 0, InvalidOid, catalog_relid);
}

void fn_on_pre_commit_mark_all(Oid relid) {
	ListCell *lc;

	foreach (lc, pending_actions) {
		PendingAction *a = lfirst(lc);

		if (a->kind == PENDING_MARK_ALL && a->catalog_relid == relid)
			return;
	}
	add_pending(PENDING_MARK_ALL, 0, InvalidOid, relid);
}

void fn_on_commit_stop_all(Oid catalog_relid) {
	add_pending(PENDING_DROP_ALL, 0, InvalidOid, catalog_relid);
}

void fn_xact_hooks_init(void) {
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}
