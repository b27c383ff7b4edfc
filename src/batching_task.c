/*
 * batching_task.c: the seed's BatchingTask, one dynamic background worker per flow,
 * plus the launcher that brings every flow's worker back after a server start.
 *
 * Worker loop (start_executing_loop): sleep until the next evaluation (eval_interval,
 * or adaptive), take at most flownode.max_windows_per_refresh dirty windows oldest
 * first, run the refresh in its own transaction, drop the taken windows on success
 * or put them back on failure. A backlog runs again at once. flush_flow requests
 * are served between cycles: everything dirty at that moment is refreshed.
 *
 * Launcher: a static worker that starts a short-lived "db starter" per database; the
 * starter starts the workers of that database's flows (if flownode is installed)
 * and the launcher retries flows left without a worker (no free worker slot).
 */
#include "flownode/flownode.h"

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

#define WORKER_START_GRACE_USEC (10 * USECS_PER_SEC)

/* ---- starting workers ---- */

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

/*
 * Registers the flow's worker. Cannot fail (it runs at COMMIT): when no worker slot
 * is free the flow is marked waiting_for_worker and the launcher retries.
 */
bool fn_start_flow_worker(Oid dboid, Oid catalog_relid, int64 flow_id, Oid owner, bool owner_can_login) {
	BackgroundWorker w;
	char name[BGW_MAXLEN];
	FlowSlot *slot;
	bool ok;

	snprintf(name, sizeof(name), "flownode flow " INT64_FORMAT, flow_id);
	fill_worker(&w, "flownode_flow_main", name, "flownode flow");
	w.bgw_main_arg = Int64GetDatum(flow_id);
	memcpy(w.bgw_extra, &dboid, sizeof(Oid));
	memcpy(w.bgw_extra + sizeof(Oid), &owner, sizeof(Oid));
	memcpy(w.bgw_extra + 2 * sizeof(Oid), &catalog_relid, sizeof(Oid));
	memcpy(w.bgw_extra + 3 * sizeof(Oid), &owner_can_login, sizeof(bool));
	ok = RegisterDynamicBackgroundWorker(&w, NULL);

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	slot = fn_find_slot(dboid, catalog_relid, flow_id);
	if (slot) {
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		slot->reserved_by = 0; /* the creating transaction committed */
		if (ok)
			slot->worker_registered_at = GetCurrentTimestamp();
		else if (slot->worker_pid == 0)
			slot->state = FLOW_WAITING_FOR_WORKER;
		LWLockRelease(fn_slot_lock(slot));
	}
	LWLockRelease(fn_registry_lock());
	if (!ok)
		ereport(WARNING, (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
		                  errmsg("flownode: no free background worker slot for flow " INT64_FORMAT, flow_id),
		                  errdetail("The flow keeps its dirty windows and starts as soon as a slot frees."),
		                  errhint("Raise max_worker_processes (now %d); it needs one per flow plus one.",
		                          max_worker_processes)));
	return ok;
}

/* True when the slot has no worker and no start in progress. */
static bool needs_worker(FlowSlot *slot, TimestampTz now) {
	return slot->in_use && !slot->dropped && slot->worker_pid == 0 && slot->reserved_by == 0 &&
	       now >= slot->hold_until &&
	       (slot->worker_registered_at == 0 || now - slot->worker_registered_at > WORKER_START_GRACE_USEC);
}

/*
 * A role without LOGIN cannot be a background worker's session user (PostgreSQL
 * 15 refuses it), so such an owner's worker connects as the bootstrap superuser;
 * either way every refresh runs with the owner's identity and privileges
 * (SetUserIdAndSecContext, as REFRESH MATERIALIZED VIEW does).
 */
bool fn_role_can_login(Oid roleid) {
	HeapTuple tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(roleid));
	bool can = false;

	if (HeapTupleIsValid(tup)) {
		can = ((Form_pg_authid)GETSTRUCT(tup))->rolcanlogin;
		ReleaseSysCache(tup);
	}
	return can;
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
	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	for (int i = 0; i < fn_slot_count(); i++) {
		FlowSlot *slot = fn_slot_at(i);

		if (!slot->in_use || slot->dboid != dboid)
			continue;
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		slot->hold_until = hold;
		if (slot->worker_pid != 0)
			(void)kill(slot->worker_pid, SIGTERM);
		LWLockRelease(fn_slot_lock(slot));
	}
	LWLockRelease(fn_registry_lock());
}

/* ---- the flow worker ---- */

typedef struct TaskRun {
	TaskConfig *cfg;
	FnWindow *window; /* NULL for window-less flows */
	FlowSlot *slot;
	MemoryContext cxt;    /* lives as long as the worker */
	FnTimeRange *buf;     /* copy of the dirty set */
	FnTimeRange *chunk;   /* this cycle's ranges */
	uint32 nchunk;        /* >0 while a refresh holds them (put back at exit) */
	FnTimeRange *backlog; /* a flush's ranges */
	uint32 nbacklog;
	bool backlog_removals; /* slot->removals, for the backlog a flush took */
	uint64 budget;         /* windows the next refresh may take (next_window_budget) */
	int timeout_ms;        /* the owner's statement_timeout, or flownode.statement_timeout */
} TaskRun;

static TaskRun task;

static FnDirtySet backlog_set(void) {
	FnDirtySet s = {task.backlog, &task.nbacklog, (uint32)fn_dirty_ranges_per_flow};

	return s;
}

/* Exit callback: ranges taken by an unfinished refresh go back (over-marking is safe). */
static void worker_exit(int code, Datum arg) {
	FlowSlot *slot = task.slot;
	bool dropped;

	if (slot == NULL)
		return;
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	if (slot->worker_pid == MyProcPid) {
		fn_dirty_add_all(fn_slot_dirty_set(slot), task.chunk, task.nchunk);
		fn_dirty_add_all(fn_slot_dirty_set(slot), task.backlog, task.nbacklog);
		if (task.nchunk + task.nbacklog > 0)
			slot->removals = true; /* not known which of them saw removals */
		slot->worker_pid = 0;
		slot->worker_latch = NULL;
		slot->worker_registered_at = 0;
	}
	dropped = slot->dropped;
	LWLockRelease(fn_slot_lock(slot));
	ConditionVariableBroadcast(&slot->flush_cv);
	if (dropped)
		fn_free_slot(slot);
}

static void record_failure(ErrorData *edata) {
	FlowSlot *slot = task.slot;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->failures++;
	slot->consecutive_failures++;
	slot->state = FLOW_FAILING;
	slot->last_error_at = GetCurrentTimestamp();
	strlcpy(slot->last_error, edata->message ? edata->message : "unknown error", FN_ERROR_LEN);
	LWLockRelease(fn_slot_lock(slot));
}

/*
 * Plans and runs one refresh transaction over at most max_windows windows of `from`
 * (the shared dirty set, or a flush's backlog). The ranges are taken out of `from`
 * before the refresh takes its snapshot; on failure they are put back.
 */
static bool run_refresh(FnDirtySet from, bool from_shared, int64 *windows_done, bool *backlog_remains) {
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool ok = true;
	volatile bool worked = false;
	volatile bool removals = true;
	TimestampTz start = GetCurrentTimestamp();
	int64 rows = 0;
	FlowSlot *slot = task.slot;

	*backlog_remains = false;
	/* an idle evaluation costs no transaction (unless marks may have to expire) */
	if (task.cfg->expire_after == NULL || task.window == NULL) {
		uint32 n;

		LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
		n = *from.count;
		LWLockRelease(fn_slot_lock(slot));
		if (n == 0)
			return true;
	}
	PG_TRY();
	{
		uint32 n;
		uint64 windows = 1;
		int64 cutoff = 0;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		pgstat_report_activity(STATE_RUNNING, "flownode: refreshing dirty windows");
		if (task.timeout_ms > 0)
			enable_timeout_after(STATEMENT_TIMEOUT, task.timeout_ms);

		if (task.cfg->expire_after != NULL && task.window != NULL) { /* at every evaluation, flush included */
			cutoff = GetCurrentTimestamp() - fn_interval_usec(task.cfg->expire_after);
			if (!task.cfg->window.with_time_zone) /* a timestamp column holds the flow's local time */
				cutoff = DatumGetTimestamp(DirectFunctionCall2(
				    timestamptz_zone, CStringGetTextDatum(task.cfg->timezone), TimestampTzGetDatum(cutoff)));
		}
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		if (cutoff != 0 && fn_dirty_drop_ending_at_or_before(from, cutoff) > 0)
			(void)fn_dirty_drop_ending_at_or_before(fn_slot_durable_set(slot), cutoff);
		else
			cutoff = 0; /* nothing expired: nothing to remove from the record */
		n = *from.count;
		memcpy(task.buf, from.ranges, sizeof(FnTimeRange) * n);
		LWLockRelease(fn_slot_lock(slot));

		if (n > 0) {
			worked = true;
			if (task.window == NULL) {
				memcpy(task.chunk, task.buf, sizeof(FnTimeRange) * n);
				task.nchunk = n;
			} else
				task.nchunk = fn_plan_take(task.window, task.buf, n, task.budget, task.chunk, &windows,
				                           backlog_remains);

			/* take them: from here on they are ours until commit or put back; and they
			 * are no longer known as durably recorded, since this refresh removes them
			 * from the record */
			LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
			for (uint32 i = 0; i < task.nchunk; i++) {
				fn_dirty_subtract(from, task.chunk[i]);
				fn_durable_remove(fn_slot_durable_set(slot), task.chunk[i]);
			}
			/* the set's removals flag goes with the last of its ranges */
			removals = from_shared ? slot->removals : task.backlog_removals;
			if (*from.count == 0 && from_shared)
				slot->removals = false;
			else if (*from.count == 0)
				task.backlog_removals = false;
			LWLockRelease(fn_slot_lock(slot));

			/* a writer that skipped its record on the strength of these windows is
			 * between PRE_COMMIT and COMMIT: the snapshot must come after it */
			fn_inflight_wait_all();
			rows = fn_execute_refresh(task.cfg, task.chunk, (int)task.nchunk, cutoff, removals, windows);
			*windows_done += (int64)windows;
		} else if (cutoff != 0)
			(void)fn_execute_refresh(task.cfg, NULL, 0, cutoff, true, 0);
		if (task.timeout_ms > 0)
			disable_timeout(STATEMENT_TIMEOUT, false);
		CommitTransactionCommand();
		task.nchunk = 0;
	}
	PG_CATCH();
	{
		ErrorData *edata;

		if (task.timeout_ms > 0)
			disable_timeout(STATEMENT_TIMEOUT, false);

		MemoryContextSwitchTo(task.cxt);
		edata = CopyErrorData();
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		/* put them back (not into the durable set: they may hold coalesced gaps) */
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		fn_dirty_add_all(from, task.chunk, task.nchunk);
		if (task.nchunk > 0 && removals && from_shared)
			slot->removals = true;
		else if (task.nchunk > 0 && removals)
			task.backlog_removals = true;
		LWLockRelease(fn_slot_lock(slot));
		task.nchunk = 0;
		record_failure(edata);
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcxt);
	pgstat_report_activity(STATE_IDLE, NULL);
	if (worked) /* an idle evaluation says nothing about how big a refresh may be */
		task.budget = fn_next_window_budget(task.budget, (uint64)fn_max_windows_per_refresh,
		                                    GetCurrentTimestamp() - start, !ok);

	if (ok) {
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		slot->runs++;
		slot->rows_written += rows;
		slot->last_run_at = GetCurrentTimestamp();
		slot->last_run_usec = slot->last_run_at - start;
		slot->consecutive_failures = 0;
		slot->state = FLOW_ACTIVE;
		LWLockRelease(fn_slot_lock(slot));
	}
	return ok;
}

/* flush_flow: refresh everything dirty now, chunk by chunk, then answer the callers. */
static void serve_flush(void) {
	FlowSlot *slot = task.slot;
	uint64 serving;
	int64 windows = 0;
	bool ok = true;
	bool more;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	serving = slot->flush_requested;
	fn_dirty_add_all(backlog_set(), slot->dirty, slot->ndirty);
	slot->ndirty = 0;
	task.backlog_removals = slot->removals;
	slot->removals = false;
	LWLockRelease(fn_slot_lock(slot));

	while (ok && task.nbacklog > 0) {
		CHECK_FOR_INTERRUPTS();
		ok = run_refresh(backlog_set(), false, &windows, &more);
	}
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	fn_dirty_add_all(fn_slot_dirty_set(slot), task.backlog, task.nbacklog);
	if (task.nbacklog > 0 && task.backlog_removals)
		slot->removals = true;
	task.nbacklog = 0;
	task.backlog_removals = false;
	slot->flush_completed = serving;
	slot->flush_windows = windows;
	slot->flush_failed = !ok;
	LWLockRelease(fn_slot_lock(slot));
	ConditionVariableBroadcast(&slot->flush_cv);
}

static void load_task(int64 flow_id, Oid dboid, Oid catalog_relid) {
	MemoryContext old;

	task.cxt = AllocSetContextCreate(TopMemoryContext, "flownode task", ALLOCSET_DEFAULT_SIZES);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	old = MemoryContextSwitchTo(task.cxt);
	if (fn_catalog_relid(true) != catalog_relid)
		task.cfg = NULL;
	else
		task.cfg = fn_load_task_config(flow_id, true);
	if (task.cfg != NULL && task.cfg->window.kind != FN_WINDOW_NONE)
		task.window = fn_window_create(&task.cfg->window);
	task.buf = palloc(sizeof(FnTimeRange) * fn_dirty_ranges_per_flow);
	task.chunk = palloc(sizeof(FnTimeRange) * (fn_dirty_ranges_per_flow + 1));
	task.backlog = palloc(sizeof(FnTimeRange) * fn_dirty_ranges_per_flow);
	MemoryContextSwitchTo(old);
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/*
 * The refresh runs under the owner's statement_timeout (ALTER ROLE ... SET, for
 * this database or all) when there is one, else under flownode.statement_timeout.
 * A background worker arms it itself: only client statements get it for free.
 */
static void load_statement_timeout(void) {
	SpiAs scope;
	Oid types[2] = {OIDOID, OIDOID};
	Datum args[2] = {ObjectIdGetDatum(task.cfg->owner), ObjectIdGetDatum(MyDatabaseId)};
	int ms = fn_statement_timeout_ms;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	if (SPI_execute_with_args(
	        "SELECT pg_catalog.substr(s, 19) FROM pg_catalog.pg_db_role_setting d,"
	        " pg_catalog.unnest(d.setconfig) s WHERE d.setrole = $1 AND d.setdatabase IN (0, $2)"
	        " AND s LIKE 'statement_timeout=%' ORDER BY d.setdatabase DESC LIMIT 1",
	        2, types, args, NULL, true, 1) == SPI_OK_SELECT &&
	    SPI_processed == 1) {
		char *value = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (value == NULL || !parse_int(value, &ms, GUC_UNIT_MS, NULL))
			ms = fn_statement_timeout_ms;
	}
	fn_spi_end(&scope);
	PopActiveSnapshot();
	CommitTransactionCommand();
	task.timeout_ms = ms;
}

/* Claims the slot for this process; false when the flow is gone or already served. */
static bool attach_slot(Oid dboid, Oid catalog_relid, int64 flow_id) {
	FlowSlot *slot = fn_acquire_slot(dboid, catalog_relid, flow_id, true);
	bool ok;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	ok = !slot->dropped && slot->worker_pid == 0;
	if (ok) {
		slot->worker_pid = MyProcPid;
		slot->worker_latch = MyLatch;
		slot->worker_registered_at = 0;
		slot->state = slot->consecutive_failures > 0 ? FLOW_FAILING : FLOW_ACTIVE;
	}
	LWLockRelease(fn_slot_lock(slot));
	if (ok) {
		task.slot = slot;
		before_shmem_exit(worker_exit, (Datum)0);
		ConditionVariableBroadcast(&slot->flush_cv);
	}
	return ok;
}

/*
 * Whether the flow's row is still in the catalog, in a fresh snapshot. A drop that
 * committed before attach_slot ran found no worker on the slot and freed it, so no
 * one will tell this worker; the drop's commit is visible before its commit
 * callback frees the slot, so checking after attaching never misses it. A drop that
 * commits later finds this worker on the slot and stops it.
 */
static bool flow_still_exists(int64 flow_id, Oid catalog_relid) {
	bool exists;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	exists = fn_catalog_relid(true) == catalog_relid && fn_load_task_config(flow_id, true) != NULL;
	PopActiveSnapshot();
	CommitTransactionCommand();
	return exists;
}

void flownode_flow_main(Datum arg) {
	int64 flow_id = DatumGetInt64(arg);
	Oid dboid, owner, catalog_relid;
	bool owner_can_login;
	TimestampTz next_eval;

	memcpy(&dboid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	memcpy(&owner, MyBgworkerEntry->bgw_extra + sizeof(Oid), sizeof(Oid));
	memcpy(&catalog_relid, MyBgworkerEntry->bgw_extra + 2 * sizeof(Oid), sizeof(Oid));
	memcpy(&owner_can_login, MyBgworkerEntry->bgw_extra + 3 * sizeof(Oid), sizeof(bool));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, owner_can_login ? owner : InvalidOid, 0);

	load_task(flow_id, dboid, catalog_relid);
	if (task.cfg == NULL)
		proc_exit(0); /* dropped before we started */
	if (!attach_slot(dboid, catalog_relid, flow_id))
		proc_exit(0); /* another worker serves it, or it was dropped */
	if (!flow_still_exists(flow_id, catalog_relid)) {
		/* dropped between load_task and attach_slot: the drop freed the slot it
		 * found without a worker, and attach_slot made a new one; free that too */
		LWLockAcquire(fn_slot_lock(task.slot), LW_EXCLUSIVE);
		task.slot->dropped = true;
		LWLockRelease(fn_slot_lock(task.slot));
		proc_exit(0);
	}

	/* shared memory may have been lost (restart, crash): rebuild it from the record */
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	fn_reload_pending(flow_id, task.slot);
	PopActiveSnapshot();
	CommitTransactionCommand();
	task.budget = fn_next_window_budget(0, (uint64)fn_max_windows_per_refresh, 0, false);
	load_statement_timeout();
	SetConfigOption("application_name", task.cfg->flow_name, PGC_USERSET, PGC_S_SESSION);
	/* A refresh need not wait for its WAL flush: if a crash loses its commit, it
	 * loses the removal of its windows from the durable record with it, and they are
	 * refreshed again after recovery. Writers' commits are untouched. */
	SetConfigOption("synchronous_commit", "off", PGC_USERSET, PGC_S_SESSION);
	/* what each refresh would pin (fn_pin_deparse_settings), once for the session */
	fn_pin_session_settings(task.cfg->timezone);
	pgstat_report_appname(task.cfg->flow_name);
	ereport(LOG, (errmsg("flownode: worker for flow \"%s\" started", task.cfg->flow_name)));

	/* the first evaluation follows the cadence like every other: create_flow has
	 * just filled the sink, and flush_flow wakes the worker when asked to */
	next_eval = GetCurrentTimestamp() +
	            fn_next_sleep_usec(task.cfg->eval_interval ? fn_interval_usec(task.cfg->eval_interval) : 0,
	                               task.window ? fn_window_nominal_usec(task.window) : 0,
	                               (int64)fn_min_refresh_interval_ms * 1000, (int64)fn_max_backoff_ms * 1000,
	                               0, false, 0);
	for (;;) {
		bool dropped, flush;
		TimestampTz now;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending) {
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			load_statement_timeout();
		}
		LWLockAcquire(fn_slot_lock(task.slot), LW_SHARED);
		dropped = task.slot->dropped;
		flush = task.slot->flush_requested > task.slot->flush_completed;
		LWLockRelease(fn_slot_lock(task.slot));
		if (dropped)
			break;
		if (flush) {
			serve_flush();
			continue;
		}
		now = GetCurrentTimestamp();
		if (now >= next_eval) {
			int64 windows = 0;
			bool backlog = false;
			TimestampTz started = now;

			(void)run_refresh(fn_slot_dirty_set(task.slot), true, &windows, &backlog);
			now = GetCurrentTimestamp();
			next_eval =
			    fn_next_eval_at(task.cfg->eval_interval ? fn_interval_usec(task.cfg->eval_interval) : 0,
			                    task.window ? fn_window_nominal_usec(task.window) : 0,
			                    (int64)fn_min_refresh_interval_ms * 1000, (int64)fn_max_backoff_ms * 1000,
			                    started, now, backlog, (uint32)task.slot->consecutive_failures);
			continue;
		}
		(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
		                Max(1L, (long)((next_eval - now + 999) / 1000)), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	ereport(LOG,
	        (errmsg("flownode: worker for flow \"%s\" stopped: the flow was dropped", task.cfg->flow_name)));
	proc_exit(0);
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
 * Every second: flows without a worker (the server just started, a worker was
 * terminated or crashed, no worker slot was free) get their database's starter,
 * at most once per 5 s per database; slots of databases that no longer exist are
 * freed.
 */
void flownode_launcher_main(Datum arg) {
	Oid last_db[64];
	TimestampTz last_start[64];
	int nlast = 0;
	bool first = true;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	for (;;) {
		List *wanted = NIL;
		List *dbs;
		ListCell *lc;
		TimestampTz now = GetCurrentTimestamp();

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending) {
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		LWLockAcquire(fn_registry_lock(), LW_SHARED);
		for (int i = 0; i < fn_slot_count(); i++) {
			FlowSlot *slot = fn_slot_at(i);

			if (needs_worker(slot, now))
				wanted = list_append_unique_oid(wanted, slot->dboid);
		}
		LWLockRelease(fn_registry_lock());

		if (first || wanted != NIL) {
			dbs = database_list();
			if (first)
				wanted = list_concat_unique_oid(wanted, dbs);
			first = false;

			/* free the slots of databases that are gone */
			foreach (lc, wanted) {
				Oid db = lfirst_oid(lc);

				if (list_member_oid(dbs, db))
					continue;
				for (int i = 0; i < fn_slot_count(); i++) {
					FlowSlot *slot = fn_slot_at(i);

					if (slot->in_use && slot->dboid == db && slot->worker_pid == 0)
						fn_free_slot(slot);
				}
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
				if (k == nlast && nlast < lengthof(last_db))
					nlast++;
				if (k < lengthof(last_db)) {
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

void flownode_db_starter_main(Datum arg) {
	Oid dboid = DatumGetObjectId(arg);
	Oid catalog;
	List *flows = NIL;
	ListCell *lc;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	catalog = OidIsValid(get_extension_oid("flownode", true)) ? fn_catalog_relid(true) : InvalidOid;
	if (OidIsValid(catalog))
		flows = fn_load_all_flows();

	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		FlowSlot *slot = fn_acquire_slot(dboid, catalog, cfg->flow_id, false);
		bool start;

		if (slot == NULL) {
			ereport(WARNING, (errmsg("flownode: no shared memory slot for flow \"%s\"", cfg->flow_name),
			                  errhint("Raise flownode.max_flows.")));
			continue;
		}
		LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
		start = needs_worker(slot, GetCurrentTimestamp());
		LWLockRelease(fn_slot_lock(slot));
		if (start)
			(void)fn_start_flow_worker(dboid, catalog, cfg->flow_id, cfg->owner,
			                           fn_role_can_login(cfg->owner));
	}

	PopActiveSnapshot();
	CommitTransactionCommand();

	/*
	 * Slots of this database whose flow does not exist (a writer claimed one for a
	 * flow dropped meanwhile, or the extension was reinstalled) are freed: only if
	 * a fresh look at the catalog still finds no flow and nobody claimed the slot
	 * since we first looked, so a flow created meanwhile keeps its marks.
	 */
	for (int i = 0; i < fn_slot_count(); i++) {
		FlowSlot *slot = fn_slot_at(i);
		uint64 seq;
		bool orphan;

		LWLockAcquire(fn_registry_lock(), LW_SHARED);
		orphan = slot->in_use && slot->dboid == dboid && slot->worker_pid == 0 && slot->reserved_by == 0;
		seq = slot->acquired_seq;
		LWLockRelease(fn_registry_lock());
		if (!orphan)
			continue;
		if (slot->catalog_relid == catalog) {
			SetCurrentStatementStartTimestamp();
			StartTransactionCommand();
			PushActiveSnapshot(GetTransactionSnapshot());
			orphan = fn_load_task_config(slot->flow_id, true) == NULL;
			PopActiveSnapshot();
			CommitTransactionCommand();
		}
		if (orphan)
			(void)fn_free_slot_if_unclaimed(slot, seq);
	}
	proc_exit(0);
}
