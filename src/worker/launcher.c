/*
 * launcher.c: starting flow workers. A flow asks the pool (shmem/pool.h) for a
 * worker when the transaction that created it commits (or flush_flow finds none):
 * a worker of its database adopts it, or a new one is registered while the pool
 * has room. A static launcher worker brings every flow's worker back after a
 * server start, and retries flows left without one (terminated, crashed, no free
 * worker slot, a full pool), through a short-lived "db starter" per database that
 * reads that database's flows.
 */
#include "flownode.h"

#include "worker/launcher.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "utils/syscache.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
#include "utils/timeout.h"
#include "executor/spi.h"
#include "catalog/pg_type.h"

#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"
#include "shmem/pool.h"
#include "worker/pool_policy.h"

static void fill_worker(BackgroundWorker *w, const char *function, const char *name, const char *type) {
	memset(w, 0, sizeof(*w));
	w->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w->bgw_start_time = BgWorkerStart_RecoveryFinished;
	w->bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(w->bgw_library_name, "flownode", BGW_MAXLEN);
	strlcpy(w->bgw_function_name, function, BGW_MAXLEN);
	strlcpy(w->bgw_name, name, BGW_MAXLEN);
	strlcpy(w->bgw_type, type, BGW_MAXLEN);
}

/* Registers the pool worker of entry `index`, for the database. */
static bool register_pool_worker(Oid dboid, int index) {
	BackgroundWorker w;
	char name[BGW_MAXLEN];

	snprintf(name, sizeof(name), "flownode worker %d", index);
	fill_worker(&w, "flownode_flow_main", name, "flownode flow");
	w.bgw_main_arg = Int32GetDatum(index);
	memcpy(w.bgw_extra, &dboid, sizeof(Oid));
	return RegisterDynamicBackgroundWorker(&w, NULL);
}

/* A worker of the pool for the database (pool.h): an existing one adopts the flow,
 * or a new one is registered while the pool has room. Never fails. */
static FnPoolAnswer pool_request(Oid dboid) {
	int index;
	FnPoolAnswer answer =
	    fn_pool_claim(dboid, !fn_slots_other_db_unserved(dboid, GetCurrentTimestamp()), &index);

	if (answer == FN_POOL_CLAIMED && !register_pool_worker(dboid, index)) {
		fn_pool_unclaim(index);
		return FN_POOL_NO_SLOT;
	}
	return answer;
}

bool fn_pool_grow(Oid dboid, int wanted) {
	int index = fn_pool_claim_another(dboid, wanted);

	if (index < 0)
		return false;
	if (register_pool_worker(dboid, index))
		return true;
	fn_pool_unclaim(index);
	return false;
}

/*
 * The flow needs a worker: one of the pool's adopts it. Cannot fail (it runs at
 * COMMIT): when the pool is full and none serves the database, or no background
 * worker slot is free, the flow is marked waiting_for_worker and the launcher
 * retries (a worker of a database holding more than its share hands one back).
 */
bool fn_start_flow_worker(Oid dboid, Oid catalog_relid, int64 flow_id) {
	FnPoolAnswer answer;
	bool ok;

	fn_slot_start_asked(dboid, catalog_relid, flow_id);
	answer = pool_request(dboid);
	ok = answer == FN_POOL_SERVED || answer == FN_POOL_CLAIMED;

	fn_slot_worker_requested(dboid, catalog_relid, flow_id, ok);
	if (answer == FN_POOL_NO_SLOT)
		ereport(WARNING,
		        (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
		         errmsg("flownode: no free background worker slot for flow " INT64_FORMAT, flow_id),
		         errdetail("The flow keeps its dirty windows and starts as soon as a slot frees."),
		         errhint("Raise max_worker_processes (now %d) or lower flownode.max_workers (now %d).",
		                 max_worker_processes, fn_max_workers)));
	return ok;
}

/*
 * flownode takes at most its pool (fn_pool_size) + FN_POOL_HELPERS background worker
 * processes; the rest of max_worker_processes is kept for a parallel query of two
 * workers and for logical replication's launcher and one apply worker
 * (fn_pool_reserved_for_others). When flownode.max_workers does not fit beside them
 * the pool is smaller than asked (at least one worker), and a WARNING at start says
 * so and what would fit.
 */
void fn_check_worker_settings(void) {
	int theirs = fn_pool_reserved_for_others();
	int size = fn_pool_size();

	if (size < fn_max_workers)
		ereport(
		    WARNING,
		    (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
		     errmsg("flownode runs %d of the %d workers flownode.max_workers asks for", size, fn_max_workers),
		     errdetail("max_worker_processes = %d must also hold flownode's launcher and database starter "
		               "(%d) and %d processes for a parallel query of two workers and logical replication.",
		               max_worker_processes, FN_POOL_HELPERS, theirs),
		     errhint("Raise max_worker_processes to %d to run %d workers.",
		             fn_max_workers + FN_POOL_HELPERS + theirs, fn_max_workers)));
	else if (size + FN_POOL_HELPERS + theirs > max_worker_processes)
		ereport(
		    WARNING,
		    (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
		     errmsg("max_worker_processes = %d leaves PostgreSQL too few background worker processes beside "
		            "flownode's",
		            max_worker_processes),
		     errdetail("flownode runs one worker, its launcher and a database starter; a parallel query of "
		               "two workers and logical replication need %d more.",
		               theirs),
		     errhint("Raise max_worker_processes to %d.", size + FN_POOL_HELPERS + theirs)));
}

/*
 * After DROP DATABASE: its flows are gone with it, so their slots are freed now
 * (those whose worker is still exiting, by the worker: `dropped`) rather than when
 * the launcher next looks, after the drop's hold of 30 s: a server that drops and
 * creates databases with flows in quick succession ran out of slots meanwhile
 * ("all 64 flownode slots are in use", the oracle's shrinking). Never fails.
 */
void fn_after_drop_database(Oid dboid) {
	if (!OidIsValid(dboid) || fn_slot_count() == 0)
		return;
	fn_slots_database_dropped(dboid);
}

/*
 * DROP DATABASE waits for the other sessions of that database to go: stop the
 * flow workers there and hold their restart. If the drop fails, the launcher
 * starts them again once the hold has passed.
 */
void fn_before_drop_database(const char *dbname) {
	Oid dboid = get_database_oid(dbname, true);
	TimestampTz hold = GetCurrentTimestamp() + 30 * USECS_PER_SEC;

	if (!OidIsValid(dboid) || fn_slot_count() == 0)
		return;
	fn_slots_stop_database(dboid, hold);
	fn_pool_stop_database(dboid, hold);
}

/* ---- the launcher and the per-database starter ---- */

void fn_register_launcher(void) {
	BackgroundWorker w;

	fill_worker(&w, "flownode_launcher_main", "flownode launcher", "flownode launcher");
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_restart_time = 5;
	RegisterBackgroundWorker(&w);
}

static bool start_db_starter(Oid dboid) {
	BackgroundWorker w;

	fill_worker(&w, "flownode_db_starter_main", "flownode db starter", "flownode db starter");
	w.bgw_main_arg = ObjectIdGetDatum(dboid);
	return RegisterDynamicBackgroundWorker(&w, NULL);
}

static List *database_list(void) {
	List *dbs = NIL;
	Relation rel;
	TableScanDesc scan;
	HeapTuple tup;
	MemoryContext caller = CurrentMemoryContext;

	StartTransactionCommand();
	(void)GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection))) {
		Form_pg_database db = (Form_pg_database)GETSTRUCT(tup);

		if (db->datallowconn && !db->datistemplate) {
			MemoryContext old = MemoryContextSwitchTo(caller);

			dbs = lappend_oid(dbs, db->oid);
			MemoryContextSwitchTo(old);
		}
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return dbs;
}

/*
 * A database whose every worker is stuck in one flow's turn (worker/pool_policy.c):
 * their due flows are let go of and a new worker is asked for, while the pool has
 * room (with another worker of the database free, that worker adopts them).
 */
static void rescue_stranded(TimestampTz now) {
	Oid dbs[16];
	int ndb = fn_pool_stranded(now - FN_TURN_STUCK_USEC, dbs, lengthof(dbs));

	for (int i = 0; i < ndb; i++) {
		pid_t stuck[64];
		int nstuck = fn_pool_stuck(dbs[i], now - FN_TURN_STUCK_USEC, stuck, lengthof(stuck));

		if (fn_slots_hand_over(dbs[i], stuck, nstuck, now) > 0)
			(void)pool_request(dbs[i]);
	}
}

/*
 * Every second: flows whose database's workers are all stuck get a new worker
 * (rescue_stranded); flows without a worker (the server just started, a worker was
 * terminated or crashed, no worker slot was free) get their database's starter,
 * at most once per 5 s per database; slots of databases that no longer exist are
 * freed.
 */
void flownode_launcher_main(Datum arg pg_attribute_unused()) {
	Oid last_db[64];
	TimestampTz last_start[64];
	int nlast = 0;
	bool first = true;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	fn_check_worker_settings();

	for (;;) {
		List *wanted;
		List *dbs;
		ListCell *lc;
		TimestampTz now = GetCurrentTimestamp();

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending) {
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			fn_check_worker_settings(); /* flownode.max_workers may have changed */
		}
		rescue_stranded(now);
		wanted = fn_slots_databases_needing_workers(now);

		if (first || wanted != NIL) {
			dbs = database_list();
			if (first)
				wanted = list_concat_unique_oid(wanted, dbs);
			first = false;

			/* free the slots of databases that are gone */
			foreach (lc, wanted) {
				Oid db = lfirst_oid(lc);

				if (!list_member_oid(dbs, db))
					fn_slots_free_unserved(db);
			}
			foreach (lc, wanted) {
				Oid db = lfirst_oid(lc);
				int k;

				if (!list_member_oid(dbs, db))
					continue;
				for (k = 0; k < nlast && last_db[k] != db; k++)
					;
				if (k < nlast && now - last_start[k] < 5 * USECS_PER_SEC)
					continue;
				if (!start_db_starter(db))
					continue; /* no worker slot: try again next round */
				if (k == nlast && nlast < (int)lengthof(last_db))
					nlast++;
				if (k < (int)lengthof(last_db)) {
					last_db[k] = db;
					last_start[k] = now;
				}
			}
			list_free(dbs);
		}
		list_free(wanted);

		(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

void fn_hold_database(Oid dboid, int64 usec) {
	TimestampTz until = GetCurrentTimestamp() + usec;

	fn_slots_hold_database(dboid, until);
}
