/*
 * db_starter.c: a database's flows brought back after a server start. The launcher
 * (worker/launcher.c) starts one short-lived "db starter" per database; it binds the
 * flows that pg_upgrade brought over (upgrade_binding.c), starts a worker for every
 * bound flow that has none, and frees the slots of flows that no longer exist.
 */
#include "flownode.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "lifecycle/upgrade_binding.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "worker/launcher.h"

/* a database waiting for ALTER EXTENSION flownode UPDATE is looked at once a minute */
#define OLD_VERSION_HOLD_USEC (60 * USECS_PER_SEC)

PGDLLEXPORT void flownode_db_starter_main(Datum arg);

/* The catalog of this database's flows (in a transaction), or InvalidOid: none. Or
 * objects of an older version (*old): they wait for ALTER EXTENSION flownode UPDATE
 * (writers still mark, nothing runs until the update, whose command starts the
 * workers: lifecycle/flow_binding.c), and the launcher looks again in a minute. */
static Oid current_catalog(Oid dboid, bool *old) {
	Oid catalog = OidIsValid(get_extension_oid("flownode", true)) ? fn_catalog_relid(true) : InvalidOid;

	*old = OidIsValid(catalog) && !fn_catalog_is_current();
	if (!*old)
		return catalog;
	ereport(WARNING,
	        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
	         errmsg("flownode: the flows of database \"%s\" wait for ALTER EXTENSION flownode UPDATE",
	                get_database_name(dboid)),
	         errdetail("Its flownode objects are version %s, the library loaded is version %s.",
	                   FLOWNODE_OLD_VERSION, FLOWNODE_VERSION)));
	fn_hold_database(dboid, OLD_VERSION_HOLD_USEC);
	return InvalidOid;
}

/* A worker for every bound flow that has none (in a transaction). */
static void start_bound_flows(Oid dboid, Oid catalog) {
	ListCell *lc;

	foreach (lc, fn_load_bound_flows()) {
		TaskConfig *cfg = lfirst(lc);
		FlowSlot *slot = fn_acquire_slot(dboid, catalog, cfg->flow_id, false);

		if (slot == NULL) {
			ereport(WARNING, (errmsg("flownode: no shared memory slot for flow \"%s\"", cfg->flow_name),
			                  errhint("Raise flownode.max_flows.")));
			continue;
		}
		if (fn_slot_needs_worker(slot, GetCurrentTimestamp()))
			(void)fn_start_flow_worker(dboid, catalog, cfg->flow_id);
	}
}

/*
 * Slots of this database whose flow does not exist (a writer claimed one for a
 * flow dropped meanwhile, or the extension was reinstalled) are freed: only if
 * a fresh look at the catalog still finds no flow and nobody claimed the slot
 * since we first looked, so a flow created meanwhile keeps its marks.
 */
static void free_orphan_slots(Oid dboid, Oid catalog) {
	for (int i = 0; i < fn_slot_count(); i++) {
		FlowSlot *slot = fn_slot_at(i);
		Oid slot_catalog;
		int64 flow_id;
		uint64 seq;
		bool orphan = true; /* another installation's flow (the extension was reinstalled) */

		if (!fn_slot_orphan_candidate(slot, dboid, &slot_catalog, &flow_id, &seq))
			continue;
		if (slot_catalog == catalog) {
			SetCurrentStatementStartTimestamp();
			StartTransactionCommand();
			PushActiveSnapshot(GetTransactionSnapshot());
			orphan = fn_load_task_config(flow_id, true) == NULL;
			PopActiveSnapshot();
			CommitTransactionCommand();
		}
		if (orphan)
			(void)fn_free_slot_if_unclaimed(slot, seq);
	}
}

void flownode_db_starter_main(Datum arg) {
	Oid dboid = DatumGetObjectId(arg);
	Oid catalog;
	bool old;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	catalog = current_catalog(dboid, &old);
	PopActiveSnapshot();
	CommitTransactionCommand();
	if (old)
		proc_exit(0);
	/* before any worker: a flow pg_upgrade brought over is bound here, each in a
	 * transaction of its own, and its worker starts at that commit */
	if (OidIsValid(catalog))
		fn_bind_upgraded_flows();

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (OidIsValid(catalog))
		start_bound_flows(dboid, catalog);
	PopActiveSnapshot();
	CommitTransactionCommand();
	free_orphan_slots(dboid, catalog);
	proc_exit(0);
}
