/*
 * flow_worker.c: GreptimeDB's BatchingTask, one per flow, run by the pool's workers
 * (docs/internals.md §6). A pool worker is connected to one database and serves
 * one or many of its flows, each with its own task (settings, window, buffers,
 * budget, backoff, schedule).
 *
 * Loop (start_executing_loop, over the worker's flows): serve what a flow's slot
 * asks for (a drop, new settings, refresh_flow, flush_flow), else run the flow that
 * is due soonest, else sleep until the earliest due time or the latch (shared by
 * every slot the worker serves). A run takes the oldest dirty windows whose source
 * rows fit the budget (at most flownode.max_rows_per_refresh), refreshes them in its
 * own transaction, drops the taken windows on success or puts them back on
 * failure; a backlog is due again at once, after the flows due before it. A flush
 * refreshes everything dirty at that moment.
 *
 * Steering: the flow's settings are read again when alter_flow, pause_flow or
 * resume_flow commits (the slot's config_seq); a paused flow refreshes nothing. A
 * background backfill (create_flow's backfill => 'background') is filled chunk by
 * chunk, oldest first, between evaluations, its progress committed with each chunk.
 */
#include "flownode.h"

#include "worker/flow_worker.h"

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
#include "storage/lmgr.h"

#include "pgutil/pg_util.h"
#include "query/query_rewrite.h"
#include "record/durable_record.h"
#include "record/key_record.h"
#include "record/run_history.h"
#include "refresh/clock_changes.h"
#include "refresh/extents.h"
#include "refresh/refresh_exec.h"
#include "refresh/take_probes.h"
#include "refresh/sink_fill.h"
#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"
#include "shmem/inflight.h"
#include "shmem/pool.h"
#include "worker/pool_policy.h"

typedef struct TaskRun {
	TaskConfig *cfg;
	MemoryContext cfg_cxt; /* holds cfg: replaced when the settings are read again */
	uint64 config_seq;     /* the slot's config_seq that cfg was read at */
	FnWindow *window;      /* NULL for window-less flows */
	FlowSlot *slot;
	MemoryContext cxt;    /* lives as long as the worker */
	FnTimeRange *buf;     /* copy of the dirty set */
	FnTimeRange *chunk;   /* this cycle's ranges */
	uint32 room;          /* buf and backlog hold this many ranges, chunk one more */
	uint32 nchunk;        /* >0 while a refresh holds them (put back at exit) */
	FnTimeRange *backlog; /* a flush's ranges */
	uint32 nbacklog;
	bool backlog_removals;         /* the slot's removals, for the backlog a flush took */
	uint64 budget;                 /* source rows the next refresh may take (next_row_budget) */
	bool flow_gone;                /* a refresh found the flow dropped, holding the flow's lock */
	bool halted;                   /* a refresh found the flow paused, holding the flow's lock */
	int timeout_ms;                /* the owner's statement_timeout, or flownode.statement_timeout */
	bool clock;                    /* the query compares its time column with now() (flownode.flow_clock) */
	TimestampTz clock_at;          /* the scheduled time every window not marked follows */
	TimestampTz backfill_retry_at; /* the next backfill chunk not before (a failure's backoff) */
	TimestampTz next_eval;         /* the next scheduled evaluation */
	uint64 history_writes;         /* rows written to flownode.run_history: the prune's cadence */
} TaskRun;

/* The worker's flows, each task in its own memory context (TaskRun.cxt), and the
 * one being served now, which every function below works on. */
static TaskRun **tasks = NULL;
static int ntasks = 0;
static TaskRun *task = NULL;
static TaskRun *shown = NULL;    /* the flow whose name and time zone the session shows */
static int pool_index = -1;      /* the worker's entry in the pool (shmem/pool.h) */
static bool adopted_any = false; /* it has served a flow: once it holds none, it leaves */
static char *server_timezone = NULL;

static bool run_backfill_chunk(int64 *windows);
static void serve(TaskRun *t);
static TimestampTz due_at(TaskRun *t);

/* A background backfill has windows left to fill (not only its end to write). */
static bool backfill_left(void) {
	return task->cfg->backfilling && task->cfg->backfill_next < task->cfg->backfill_to;
}

static FnDirtySet backlog_set(void) {
	FnDirtySet s = {task->backlog, &task->nbacklog, task->room};

	return s;
}

/* The worker's buffers grown to hold n ranges (doubling, up to the cap of a set):
 * outside the slot's lock, as an allocation may fail. */
static void fit_buffers(uint32 n) {
	uint32 room = Min(Max(n, task->room * 2), (uint32)fn_dirty_ranges_per_flow);

	if (n <= task->room || room <= task->room)
		return;
	task->buf = repalloc(task->buf, sizeof(FnTimeRange) * room);
	task->chunk = repalloc(task->chunk, sizeof(FnTimeRange) * (room + 1));
	task->backlog = repalloc(task->backlog, sizeof(FnTimeRange) * room);
	task->room = room;
}

/* The slot's exclusive lock, once the buffers can hold all of its dirty set. */
static void lock_with_room(void) {
	for (;;) {
		uint32 n;

		LWLockAcquire(fn_slot_lock(task->slot), LW_EXCLUSIVE);
		n = *fn_slot_dirty_set(task->slot, 0).count;
		if (n <= task->room)
			return;
		LWLockRelease(fn_slot_lock(task->slot));
		fit_buffers(n);
	}
}

/* The set a run takes from, under the slot's exclusive lock, with room for `adding`
 * more ranges: looked up again under each hold, as the shared one moves when it
 * grows and the backlog when the buffers do. */
static FnDirtySet from_locked(bool from_shared, uint32 adding) {
	return from_shared ? fn_slot_dirty_set(task->slot, adding) : backlog_set();
}

/* A refresh's take ends (committed, failed or given back at exit): commits may claim
 * their records in the durable set again (publish_marks). */
static void end_take(void) {
	LWLockAcquire(fn_slot_lock(task->slot), LW_EXCLUSIVE);
	fn_slot_end_take_locked(task->slot);
	LWLockRelease(fn_slot_lock(task->slot));
}

/* The task of tasks[i] goes: the flow left the worker. With `detach`, the worker
 * lets the flow go (dropped, or handed back): the ranges its unfinished runs took go
 * back into the slot (over-marking is safe), and the slot is free for another
 * worker; without, another worker took it over, and the slot is no longer ours to
 * touch. What the refresh kept for the flow goes either way. */
static void drop_task(int i, bool detach) {
	TaskRun *t = tasks[i];

	tasks[i] = tasks[--ntasks];
	if (t->slot != NULL && detach)
		fn_slot_detach_worker(t->slot, t->chunk, t->nchunk, t->backlog, t->nbacklog);
	else if (t->slot != NULL)
		ereport(LOG, (errmsg("flownode: flow \"%s\" was taken over by another worker", t->cfg->flow_name),
		              errdetail("This worker spent too long in another flow's turn.")));
	if (t->cfg != NULL && !proc_exit_inprogress) /* an exiting process frees it all at once */
		fn_refresh_forget_flow(t->cfg->flow_id);
	if (task == t)
		task = NULL;
	if (shown == t && !proc_exit_inprogress) /* it no longer shows a flow it lets go */
		pgstat_report_appname("");
	if (shown == t)
		shown = NULL;
	MemoryContextDelete(t->cxt);
	if (pool_index >= 0)
		fn_pool_note_load(pool_index, ntasks);
}

static void release_task(int i) {
	drop_task(i, true);
}

/*
 * A turn at the flow of tasks[i] (a run, a flush, a request), made the one served:
 * until end_turn no other worker takes the flow over, and the pool entry says since
 * when this worker is in it (a turn much longer than a refresh lets the other
 * workers take this one's due flows: worker/pool_policy.c). False when another
 * worker took the flow over meanwhile: its task is dropped.
 */
static bool begin_turn(int i) {
	TaskRun *t = tasks[i];

	if (!fn_slot_begin_turn(t->slot)) {
		drop_task(i, false);
		return false;
	}
	fn_pool_note_busy(pool_index, GetCurrentTimestamp());
	serve(t);
	return true;
}

/* The turn is over: the flow's next due time is published (a stuck worker's flows
 * are handed over once due). */
static void end_turn(TaskRun *t) {
	fn_pool_note_busy(pool_index, 0);
	fn_slot_end_turn(t->slot, due_at(t));
}

/* The tasks of flows another worker took over, dropped (their load no longer ours). */
static void drop_lost_tasks(void) {
	for (int i = ntasks - 1; i >= 0; i--)
		if (!fn_slot_served_by_me(tasks[i]->slot))
			drop_task(i, false);
}

/* Exit callback: every flow is let go, then the pool entry (its flows go to the
 * database's other workers, or to a new one). */
static void worker_exit(int code pg_attribute_unused(), Datum arg pg_attribute_unused()) {
	while (ntasks > 0)
		release_task(ntasks - 1);
	if (pool_index >= 0)
		fn_pool_leave(pool_index);
	pool_index = -1;
}

static void record_success(TimestampTz start, int64 rows) {
	/* with no backlog left, what it held is in the sink now */
	fn_slot_note_success(task->slot, start, rows, task->nbacklog == 0);
}

/* The flow is failing from now until a refresh succeeds (record_success resets
 * consecutive_failures); the failure itself stays in the slot after that. */
static void record_failure(TimestampTz start, ErrorData *edata) {
	fn_slot_note_failure(task->slot, start, edata);
}

/* The slot says the flow was dropped (set when the drop commits). Caller holds the
 * slot's lock or does not need a stable answer. */
static bool flow_dropped(void) {
	return fn_slot_is_dropped(task->slot);
}

/*
 * A short transaction of the worker's own, to read or write the catalog (loading the
 * task, its settings, its record): a statement's start, so that now() is this
 * moment's, and a snapshot for the catalog's reads. It has no PG_TRY: an error in one
 * ends the worker, as an error outside a run does.
 */
static void begin_catalog_transaction(void) {
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
}

static void end_catalog_transaction(void) {
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/*
 * A run's transaction (run_in_transaction). The flow's lock comes first, before the
 * source's: a drop_flow takes it first too, so the two wait for each other in one
 * order (a drop waits for the refresh in flight; a refresh that waited for a drop
 * finds the flow dropped and does nothing).
 */
static void begin_refresh_transaction(const char *activity) {
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, activity);
	if (task->timeout_ms > 0)
		enable_timeout_after(STATEMENT_TIMEOUT, task->timeout_ms);
	fn_lock_flow(task->cfg->flow_id, AccessShareLock);
}

static void end_refresh_transaction(void) {
	if (task->timeout_ms > 0)
		disable_timeout(STATEMENT_TIMEOUT, false);
	CommitTransactionCommand();
}

/*
 * A flow whose query compares its time column with now(): before refreshing at a new
 * scheduled time, mark the windows whose rows' answer to those comparisons changed
 * since the last one (the windows entering and leaving a sliding filter), in `from`,
 * the set this evaluation refreshes from, and in the durable record, and move the
 * flow's clock, both in this transaction. Every other window gives the same answer at
 * both times, so a sink equal to the query at the old time is equal at the new one
 * wherever nothing is marked. If the transaction fails, the marks stay in `from` and
 * the clock in the catalog stays behind: after a restart the worker marks again from
 * there (more, never less).
 */
static void mark_clock_changes(bool from_shared, TimestampTz clock_at) {
	FlowSlot *slot = task->slot;
	int n;
	FnTimeRange *changes;

	/* the source first, as every refresh locks it before writing anything */
	LockRelationOid(task->cfg->source_relid, AccessShareLock);
	PushActiveSnapshot(GetTransactionSnapshot()); /* for the catalog; the refresh takes its own */
	changes = fn_refresh_clock_changes(task->cfg, task->clock_at, clock_at, &n);
	for (int i = 0; i < n; i++) { /* whole windows */
		FnTimeRange r = changes[i];

		changes[i].start = fn_window_of(task->window, r.start).start;
		changes[i].end = fn_window_of(task->window, r.end - 1).end;
	}
	if (n > 0) {
		PendingWriter *w = fn_pending_open();

		TimestampTz changed_at = GetCurrentTimestamp(); /* the clock's change is this moment's */

		fn_pending_write(w, task->cfg->flow_id, changes, (uint32)n, changed_at);
		fn_pending_close(w);
		if (!from_shared)
			fit_buffers(task->nbacklog + (uint32)n);
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		fn_dirty_add_all(from_locked(from_shared, (uint32)n), changes, (uint32)n);
		if (from_shared) /* rows left windows: their groups may vanish */
			fn_slot_note_marks_locked(slot, changed_at, true);
		else
			task->backlog_removals = true;
		LWLockRelease(fn_slot_lock(slot));
	}
	fn_registry_clock_set(task->cfg->flow_id, clock_at);
	PopActiveSnapshot();
	CommandCounterIncrement(); /* the refresh's trim sees the new record */
	task->clock_at = clock_at;
}

/*
 * The fold's reports (refresh/fold_refresh.h): the earliest time of the rows that
 * commits added to the folded window since the last look. Read after the refresh's
 * snapshot, once the writers in flight have published: every commit the snapshot
 * sees has reported by then.
 */
static int64 take_fold_reports(void *arg pg_attribute_unused()) {
	fn_inflight_wait_all();
	return fn_slot_take_fold_lo(task->slot);
}

/* The refresh's transaction ended: the fold's window goes to the slot, for the
 * commits to report against. */
static void settle_fold(bool committed) {
	FnFoldSettled settled = fn_refresh_settle_fold(task->cfg->flow_id, committed);

	fn_slot_settle_fold(task->slot, settled.window, settled.folded);
}

/*
 * The kinds of run: an evaluation or a flush's chunk (run_refresh), refresh_flow's
 * range (run_repair) and a background backfill's chunk (run_backfill_chunk). Each is
 * one transaction of run_in_transaction, which begins it, commits it or rolls it
 * back, and records the outcome the same way for all; a kind says only what its work
 * inside the transaction is.
 */
typedef struct Run Run;

typedef struct RunKind {
	const char *activity;   /* pg_stat_activity's query while it runs */
	FnRunKind history;      /* its kind in flownode.run_history (a flush's: FN_RUN_FLUSH) */
	bool folds;             /* may fold the open window: the fold settles with the transaction */
	void (*work)(Run *run); /* inside the transaction, once the flow's lock is held */
} RunKind;

struct Run {
	const RunKind *kind;
	void *arg; /* the kind's own */
	/* where the ranges the work takes (task->chunk) come from and go back if the run
	 * fails: the shared dirty set (from_shared) or a flush's backlog (from_locked);
	 * removals, the flag they were taken with, goes back with them */
	bool from_shared;
	bool removals;
	/* set by the skeleton and the work, read once the transaction has ended */
	TimestampTz start; /* when the run started: its duration in the slot */
	int64 rows;        /* sink rows written */
	bool counts;       /* a success to record (record_success) if it commits */
	bool logs;         /* it refreshed something: a row of flownode.run_history */
	int64 windows;     /* for that row: the windows it refreshed, */
	int64 rows_read;   /* and the source rows in them (< 0: not known) */
};

/* The shared dirty set, as a run that takes from it (repair, backfill) gives back. */
static Run run_on_shared(const RunKind *kind, void *arg) {
	Run run = {
	    .kind = kind, .arg = arg, .from_shared = true, .removals = true, .windows = -1, .rows_read = -1};

	return run;
}

/*
 * A failed run gives back the ranges it took (not into the durable set: the record,
 * whose trim was rolled back, still holds them, and they may hold coalesced gaps).
 * Commits may claim their records again (fn_slot_end_take_locked).
 */
static void put_back(bool from_shared, bool removals) {
	FlowSlot *slot = task->slot;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	fn_slot_end_take_locked(slot);
	fn_dirty_add_all(from_locked(from_shared, task->nchunk), task->chunk, task->nchunk);
	if (task->nchunk > 0 && removals && from_shared)
		fn_slot_note_marks_locked(slot, 0, true);
	else if (task->nchunk > 0 && removals)
		task->backlog_removals = true;
	if (task->nchunk > 0 && from_shared)
		fn_slot_put_back_since_locked(slot, task->nbacklog == 0);
	LWLockRelease(fn_slot_lock(slot));
	task->nchunk = 0;
}

/* The run's row of flownode.run_history, in the current transaction; every tenth
 * of the setting's rows, the flow's oldest beyond it go. */
static void write_history(const Run *run, const ErrorData *edata) {
	FnRunKind kind = run->kind->history;

	if (kind == FN_RUN_REFRESH && !run->from_shared)
		kind = FN_RUN_FLUSH;
	fn_history_write(
	    &(FnRunRecord){.flow_id = task->cfg->flow_id,
	                   .kind = kind,
	                   .start = run->start,
	                   .end = GetCurrentTimestamp(),
	                   .windows = run->windows,
	                   .rows_read = run->rows_read,
	                   .rows_written = edata == NULL ? run->rows : 0,
	                   .folded = edata == NULL && run->kind->folds && fn_refresh_folding(task->cfg->flow_id),
	                   .sqlstate = edata != NULL ? edata->sqlerrcode : 0,
	                   .error = edata != NULL ? edata->message : NULL});
	if (fn_history_prune_due(++task->history_writes))
		fn_history_prune(task->cfg->flow_id);
}

/*
 * A failed run's row, in a transaction of its own since the run's was rolled back.
 * If even that fails (the flow was dropped meanwhile: its key is gone), the row is
 * given up with a LOG: the flow's failure is in its slot and the server log.
 */
static void write_failure_history(const Run *run, const ErrorData *edata) {
	MemoryContext oldcxt = CurrentMemoryContext;

	PG_TRY();
	{
		begin_catalog_transaction();
		write_history(run, edata);
		end_catalog_transaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		FlushErrorState();
		AbortCurrentTransaction();
		ereport(LOG, (errmsg("flownode: the failure of flow \"%s\" could not be written to its run history",
		                     task->cfg->flow_name)));
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcxt);
}

/*
 * In the PG_CATCH of a run: the error reported and kept as the flow's failure (the
 * backoff follows from it), the transaction rolled back (the sink's writes, the
 * record's trim, a backfill's progress, the clock's move), the fold's window
 * dropped, the ranges the run took given back. The worker goes on.
 */
static void abandon_run(Run *run) {
	ErrorData *edata;

	if (task->timeout_ms > 0)
		disable_timeout(STATEMENT_TIMEOUT, false);
	MemoryContextSwitchTo(task->cxt);
	edata = CopyErrorData();
	EmitErrorReport();
	FlushErrorState();
	AbortCurrentTransaction();
	if (run->kind->folds)
		settle_fold(false);
	put_back(run->from_shared, run->removals);
	record_failure(run->start, edata);
	if (run->logs)
		write_failure_history(run, edata);
	FreeErrorData(edata);
}

/*
 * The one transaction skeleton of every kind of run: begin (the flow's lock, the
 * statement timeout), the kind's work, commit; the ranges the work took are dropped
 * with the commit and may be claimed durably again (end_take), or given back if
 * anything failed (abandon_run). Returns false on failure. A longjmp crosses only
 * this frame, whose one variable changed inside PG_TRY is volatile; what the work
 * sets is in *run, in the caller's frame.
 */
static bool run_in_transaction(Run *run) {
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool ok = true;

	run->start = GetCurrentTimestamp();
	PG_TRY();
	{
		begin_refresh_transaction(run->kind->activity);
		run->kind->work(run);
		if (run->counts && run->logs) /* committed with the run, or not at all */
			write_history(run, NULL);
		end_refresh_transaction();
		if (run->kind->folds)
			settle_fold(true);
		task->nchunk = 0;
		end_take();
	}
	PG_CATCH();
	{
		abandon_run(run);
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcxt);
	pgstat_report_activity(STATE_IDLE, NULL);
	if (ok && run->counts)
		record_success(run->start, run->rows);
	return ok;
}

/* Whether a drop or a pause committed while the run waited for the flow's lock: then
 * it refreshes nothing, and its flush or refresh_flow is not answered as done
 * (task->flow_gone, task->halted). The slot's lock held. */
static bool flow_stopped_locked(void) {
	fn_slot_stopped_locked(task->slot, &task->flow_gone, &task->halted);
	return task->flow_gone || task->halted;
}

/* What run_refresh's work reports to it. */
typedef struct RefreshRun {
	int64 *windows_done;   /* += the windows refreshed */
	bool *backlog_remains; /* the take left ranges over the budget in the set */
	bool worked;           /* it took ranges: the budget follows its duration */
} RefreshRun;

/*
 * Under the slot's lock, the refresh's view of `from`: nothing if the flow stopped;
 * else windows that ended before *expired_before (if not 0) cut out of it and of the
 * durable set (whatever marked them: they are frozen; a range across the line is cut
 * at a window start, so whole windows stay), and the rest copied into task->buf.
 * Returns how many ranges were copied; *expired_before becomes 0 when nothing is to
 * be removed from the record.
 */
static uint32 copy_dirty(const Run *run, int64 *expired_before) {
	FlowSlot *slot = task->slot;
	FnDirtySet from;
	uint32 n;

	lock_with_room();
	from = from_locked(run->from_shared, 0);
	if (!flow_stopped_locked() && *expired_before != 0 && fn_dirty_cut_below(from, *expired_before)) {
		(void)fn_dirty_cut_below(fn_slot_durable_set(slot, 0), *expired_before);
		if (run->from_shared)
			fn_slot_clean_since_locked(slot);
	} else
		*expired_before = 0;
	n = (task->flow_gone || task->halted) ? 0 : *from.count;
	memcpy(task->buf, from.ranges, sizeof(FnTimeRange) * n);
	LWLockRelease(fn_slot_lock(slot));
	return n;
}

/*
 * Takes the ranges of task->buf that fit the budget out of `from` into task->chunk:
 * from here on they are ours until the commit or put back; and they are no longer
 * known as durably recorded, since the refresh removes them from the record. The
 * set's removals flag goes with the last of its ranges (run->removals: what the
 * taken ranges carry). *windows, *rows: the size of the take.
 */
static void take_chunk(Run *run, uint32 n, uint64 *windows, uint64 *rows) {
	RefreshRun *r = run->arg;
	FlowSlot *slot = task->slot;
	FnDirtySet from;

	/* a lowered flownode.max_rows_per_refresh applies at once */
	task->nchunk = fn_refresh_take(task->cfg, task->window, task->buf, n,
	                               Min(task->budget, (uint64)fn_max_rows_per_refresh), task->chunk, windows,
	                               rows, r->backlog_remains);
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	fn_slot_begin_take_locked(slot);         /* until end_take: no durable claims meanwhile */
	from = from_locked(run->from_shared, 1); /* a subtraction may split a range */
	for (uint32 i = 0; i < task->nchunk; i++) {
		fn_dirty_subtract(from, task->chunk[i]);
		fn_durable_remove(fn_slot_durable_set(slot, 1), task->chunk[i]);
	}
	if (run->from_shared) {
		fn_slot_take_since_locked(slot);
		run->removals = fn_slot_take_removals_locked(slot, *from.count == 0);
	} else {
		run->removals = task->backlog_removals;
		if (*from.count == 0)
			task->backlog_removals = false;
	}
	LWLockRelease(fn_slot_lock(slot));
}

/*
 * run_refresh's work: the clock's marks, the expiry, then at most a budget's worth of
 * the oldest ranges of `from` refreshed, taken before the refresh takes its snapshot.
 * At every evaluation, flush included, the windows that ended before now -
 * expire_after are frozen.
 */
static void refresh_work(Run *run) {
	RefreshRun *r = run->arg;
	FnFoldInput fold = {take_fold_reports, NULL};
	TimestampTz clock_at = 0;
	int64 expired_before;
	uint32 n;

	if (task->clock && !flow_dropped()) {
		clock_at = fn_scheduled_time(GetCurrentTimestamp(), task->cfg->eval_interval);
		if (clock_at != task->clock_at)
			mark_clock_changes(run->from_shared, clock_at);
	}
	expired_before = fn_expiry_start(task->cfg->expire_after, task->cfg->window.with_time_zone,
	                                 task->cfg->timezone, task->window, GetCurrentTimestamp());
	n = copy_dirty(run, &expired_before);
	if (n > 0) {
		uint64 windows = 1;
		uint64 take_rows = PG_UINT64_MAX;

		r->worked = run->logs = true;
		take_chunk(run, n, &windows, &take_rows);
		run->windows = (int64)windows;
		run->rows_read = take_rows == PG_UINT64_MAX ? -1 : (int64)take_rows;
		/* a writer that skipped its record on the strength of these windows is
		 * between PRE_COMMIT and COMMIT: the snapshot must come after it */
		fn_inflight_wait_all();
		run->rows = fn_refresh_run(task->cfg, &(FnRefreshRequest){.ranges = task->chunk,
		                                                          .nranges = (int)task->nchunk,
		                                                          .expired_before = expired_before,
		                                                          .removals = run->removals,
		                                                          .windows = windows,
		                                                          .rows = take_rows,
		                                                          .clock_at = clock_at,
		                                                          .fold = &fold});
		*r->windows_done += (int64)windows;
	} else if (expired_before != 0 && !task->flow_gone) /* only the record's expired windows go */
		(void)fn_refresh_run(task->cfg, &(FnRefreshRequest){.expired_before = expired_before,
		                                                    .removals = true,
		                                                    .rows = PG_UINT64_MAX,
		                                                    .clock_at = clock_at});
	run->counts = !task->flow_gone && !task->halted;
}

static const RunKind refresh_kind = {"flownode: refreshing dirty windows", FN_RUN_REFRESH, true,
                                     refresh_work};

/*
 * Plans and runs one refresh transaction over at most a budget of `from` (the shared
 * dirty set, or a flush's backlog). The ranges are taken out of `from` before the
 * refresh takes its snapshot; on failure they are put back.
 */
static bool run_refresh(bool from_shared, int64 *windows_done, bool *backlog_remains) {
	RefreshRun r = {windows_done, backlog_remains, false};
	Run run = {.kind = &refresh_kind,
	           .arg = &r,
	           .from_shared = from_shared,
	           .removals = true,
	           .windows = -1,
	           .rows_read = -1};
	bool ok;

	*backlog_remains = false;
	/* an idle evaluation costs no transaction (unless marks may have to expire, or the
	 * clock moves windows in and out of the query) */
	if ((task->cfg->expire_after == NULL || task->window == NULL) && !task->clock) {
		uint32 n;

		LWLockAcquire(fn_slot_lock(task->slot), LW_SHARED);
		n = *from_locked(from_shared, 0).count;
		LWLockRelease(fn_slot_lock(task->slot));
		if (n == 0)
			return true;
	}
	ok = run_in_transaction(&run);
	if (r.worked) /* an idle evaluation says nothing about how big a refresh may be */
		task->budget = fn_next_row_budget(task->budget, (uint64)fn_max_rows_per_refresh,
		                                  GetCurrentTimestamp() - run.start, !ok);
	return ok;
}

/*
 * The key marks' refresh (refresh/key_refresh.h): the groups of the late rows that
 * commits marked by their keys, whose marks wait in flownode.pending_keys. Runs when
 * a commit noted some (or at the worker's start); a stopped flow refreshes nothing.
 */
static void keys_work(Run *run) {
	bool stopped;

	LWLockAcquire(fn_slot_lock(task->slot), LW_SHARED);
	stopped = flow_stopped_locked();
	LWLockRelease(fn_slot_lock(task->slot));
	if (stopped)
		return;
	run->logs = true; /* a failure has its row in the history */
	run->rows = fn_refresh_run(
	    task->cfg, &(FnRefreshRequest){.keys = true,
	                                   .key_count = run->arg,
	                                   .expired_before = fn_expiry_start(
	                                       task->cfg->expire_after, task->cfg->window.with_time_zone,
	                                       task->cfg->timezone, task->window, GetCurrentTimestamp()),
	                                   .rows = PG_UINT64_MAX});
	run->windows = ((FnKeyCount *)run->arg)->read;
	run->counts = true;
	run->logs = run->windows > 0; /* a success that read no mark has none */
}

static const RunKind keys_kind = {"flownode: refreshing the groups of late rows", FN_RUN_REFRESH, false,
                                  keys_work};

/* Refreshes the key marks if a commit noted some; a failure notes them again, for
 * the next evaluation. *count: the windows refreshed (those outside count->done
 * in count->fresh). */
static bool run_keys(bool from_shared, FnKeyCount *count) {
	Run run = run_on_shared(&keys_kind, count);

	if (task->window == NULL || !fn_slot_take_wakeup(task->slot, FN_WAKE_KEYS))
		return true;
	run.from_shared = from_shared;
	if (run_in_transaction(&run) && !task->halted && !task->flow_gone)
		return true;
	count->read = count->fresh = 0; /* rolled back */
	fn_slot_note_keys(task->slot, (FnTimeRange){0, 0});
	return false;
}

/* After a flush's backlog: its key marks, their windows counted in *windows unless
 * the backlog (`done`, as taken) refreshed them whole already. */
static bool flush_keys(const FnTimeRange *done, uint32 ndone, int64 *windows) {
	FnKeyCount count = {done, ndone, 0, 0, {0, 0}};
	bool ok = run_keys(false, &count);

	*windows += count.fresh;
	return ok;
}

/*
 * flush_flow: refresh everything dirty now, chunk by chunk, then answer the callers.
 * A background backfill is part of it (its rows were committed before the call), so
 * it is finished first.
 */
static void serve_flush(void) {
	FlowSlot *slot = task->slot;
	uint64 serving;
	int64 windows = 0;
	bool ok = true;
	bool more;
	FnTimeRange *done;
	uint32 ndone;

	serving = fn_slot_serving(slot, FN_REQUEST_FLUSH, NULL);

	task->flow_gone = task->halted = false;
	while (ok && backfill_left() && !task->flow_gone && !task->halted) {
		CHECK_FOR_INTERRUPTS();
		ok = run_backfill_chunk(&windows);
	}
	if (ok) /* the chunks run again (a failure's backoff is over) */
		task->backfill_retry_at = 0;

	lock_with_room();
	task->backlog_removals = fn_slot_take_all_locked(slot, backlog_set());
	LWLockRelease(fn_slot_lock(slot));
	ndone = task->nbacklog;
	done = MemoryContextAlloc(task->cxt, sizeof(FnTimeRange) * Max(ndone, 1));
	memcpy(done, task->backlog, sizeof(FnTimeRange) * ndone);

	while (ok && task->nbacklog > 0 && !task->flow_gone && !task->halted) {
		CHECK_FOR_INTERRUPTS();
		ok = run_refresh(false, &windows, &more);
	}
	if (ok && !task->flow_gone && !task->halted)
		ok = flush_keys(done, ndone, &windows);
	pfree(done);
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	fn_dirty_add_all(fn_slot_dirty_set(slot, task->nbacklog), task->backlog, task->nbacklog);
	if (task->nbacklog > 0 && task->backlog_removals)
		fn_slot_note_marks_locked(slot, 0, true);
	task->nbacklog = 0;
	fn_slot_put_back_since_locked(slot, true);
	task->backlog_removals = false;
	/* a flow dropped before its refresh could run is not flushed: its callers are
	 * told it was dropped (they see the slot go); a paused one neither: they are
	 * told it is paused (the slot's paused flag). A failed flush stopped at the
	 * failure run_refresh has just recorded. */
	if (!task->flow_gone && !task->halted)
		fn_slot_answer_locked(slot, FN_REQUEST_FLUSH, serving, windows, ok);
	LWLockRelease(fn_slot_lock(slot));
	fn_slot_wake_waiters(slot);
}

/* Windows in r (estimated from the unit's usual width past a million calendar ones). */
static int64 windows_in(FnTimeRange r) {
	const uint64 cap = 1000000;
	uint64 n;

	if (r.start >= r.end || task->window == NULL)
		return r.start < r.end ? 1 : 0;
	n = fn_window_count(task->window, r, task->cfg->window.kind == FN_WINDOW_DATE_BIN ? PG_UINT64_MAX : cap);
	if (n >= cap && task->cfg->window.kind != FN_WINDOW_DATE_BIN)
		n = Max(n, (uint64)((r.end - r.start) / fn_window_nominal_usec(task->window)));
	return (int64)n;
}

/*
 * The dirty ranges inside `want` (a union of whole windows) are taken out of the
 * shared set into task->chunk: a refresh of `want` covers them; ours until it
 * commits, or put back (put_back). The slot's lock held.
 */
static void take_inside(FnTimeRange want) {
	FlowSlot *slot = task->slot;
	FnDirtySet dirty = fn_slot_dirty_set(slot, 1); /* the subtraction may split a range */

	task->nchunk = 0;
	for (uint32 i = 0; i < *dirty.count; i++) {
		FnTimeRange r = {Max(dirty.ranges[i].start, want.start), Min(dirty.ranges[i].end, want.end)};

		if (r.start < r.end)
			task->chunk[task->nchunk++] = r;
	}
	fn_slot_begin_take_locked(slot); /* until end_take: no durable claims meanwhile */
	fn_dirty_subtract(dirty, want);
	/* the refresh trims the record over all of `want`: the durable set must no longer
	 * claim any of it, or a writer would skip its record there */
	fn_durable_remove(fn_slot_durable_set(slot, 1), want);
	if (task->nchunk > 0)
		fn_slot_take_since_locked(slot);
}

/*
 * The refresh of one range of whole windows of unknown size (refresh_flow's range, a
 * backfill's chunk), with removals, at this moment's scheduled time without moving
 * the clock: the next evaluation marks from the clock, which covers the change since
 * now too.
 */
static int64 refresh_range(FnTimeRange range) {
	TimestampTz clock_at =
	    task->clock ? fn_scheduled_time(GetCurrentTimestamp(), task->cfg->eval_interval) : 0;

	return fn_refresh_run(task->cfg, &(FnRefreshRequest){.ranges = &range,
	                                                     .nranges = 1,
	                                                     .removals = true,
	                                                     .windows = PG_UINT64_MAX,
	                                                     .rows = PG_UINT64_MAX,
	                                                     .clock_at = clock_at});
}

/* What run_repair asks of its work and hears back. */
typedef struct RepairRun {
	FnTimeRange want;
	int64 *windows; /* the windows between the first and the last row there */
} RepairRun;

/* run_repair's work: the dirty ranges inside `want` taken, then `want` refreshed. */
static void repair_work(Run *run) {
	RepairRun *r = run->arg;
	FlowSlot *slot = task->slot;
	bool gone;

	lock_with_room(); /* task->chunk holds what it takes */
	gone = flow_stopped_locked();
	if (!gone)
		take_inside(r->want);
	LWLockRelease(fn_slot_lock(slot));
	if (!gone) {
		/* this commit waits for its WAL flush, unlike the worker's others: the range
		 * is recorded nowhere, so a commit lost to a crash after refresh_flow
		 * returned would lose its rows for good (reverted at the transaction's end) */
		(void)set_config_option("synchronous_commit", "on", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
		                        true, 0, false);
		fn_inflight_wait_all(); /* as a flush: every commit before the call is seen */
		/* counted first: the sink's rows there before, the source's rows now */
		*r->windows = windows_in(fn_refresh_extent(task->cfg, r->want));
		run->windows = *r->windows;
		run->logs = true;
		run->rows = refresh_range(r->want);
	}
	run->counts = !gone;
}

static const RunKind repair_kind = {"flownode: refreshing a range of windows", FN_RUN_REPAIR, false,
                                    repair_work};

/*
 * refresh_flow: recomputes every window of `want` (a union of whole windows, or all
 * time), frozen ones included, in one statement whose cost follows the rows there,
 * not the windows. The dirty ranges inside it are taken first (the refresh covers
 * them) and put back if it fails. Returns the windows between the first and the
 * last row of the source or sink there.
 */
static bool run_repair(FnTimeRange want, int64 *windows) {
	RepairRun r = {want, windows};
	Run run = run_on_shared(&repair_kind, &r);

	return run_in_transaction(&run);
}

/* What run_backfill_chunk's work reports to it. */
typedef struct BackfillRun {
	int64 *windows;   /* += the windows filled */
	bool worked;      /* the flow was there to fill: its progress is ours */
	int64 done_until; /* the progress: filled up to here */
	bool saved;       /* the progress is in the catalog */
} BackfillRun;

/* run_backfill_chunk's work: the next chunk filled (the marks inside it taken), and
 * the progress written in the same transaction. */
static void backfill_work(Run *run) {
	BackfillRun *b = run->arg;
	FlowSlot *slot = task->slot;
	FnTimeRange all = {task->cfg->backfill_next, task->cfg->backfill_to};
	bool stop;

	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	stop = flow_stopped_locked();
	LWLockRelease(fn_slot_lock(slot));
	if (stop)
		return;
	b->worked = true;
	if (all.start < all.end) { /* else filled: only its end is left to write */
		FnTimeRange chunk = {all.start,
		                     fn_fill_chunk_end(task->cfg, task->window, all, fn_backfill_chunk_rows)};

		lock_with_room(); /* task->chunk holds what it takes */
		take_inside(chunk);
		LWLockRelease(fn_slot_lock(slot));
		fn_inflight_wait_all();
		run->logs = true;
		run->windows = windows_in(chunk);
		run->rows = refresh_range(chunk);
		*b->windows += run->windows;
		b->done_until = chunk.end;
		run->counts = true; /* a success once something was filled */
	}
	PushActiveSnapshot(GetTransactionSnapshot());
	b->saved = fn_registry_set_backfill(task->cfg->flow_id, task->cfg->backfill_from, b->done_until,
	                                    task->cfg->backfill_to);
	PopActiveSnapshot();
}

static const RunKind backfill_kind = {"flownode: backfilling", FN_RUN_BACKFILL, false, backfill_work};

/*
 * One chunk of a background backfill (create_flow's backfill => 'background'): the
 * windows from the catalog's backfill_next to the end of the window holding the
 * flownode.backfill_chunk_rows-th source row from there (fn_fill_chunk_end), or to
 * backfill_to, in one statement (a plain INSERT where the sink holds nothing yet),
 * windows past expire_after included, as create_flow's fill does. The progress is
 * written to the catalog in the same transaction, so a restart goes on from there.
 * Marks inside the chunk are taken and covered by it, as refresh_flow does.
 */
static bool run_backfill_chunk(int64 *windows) {
	BackfillRun b = {windows, false, task->cfg->backfill_next, false};
	Run run = run_on_shared(&backfill_kind, &b);

	if (!run_in_transaction(&run))
		return false;
	if (b.worked) {
		task->cfg->backfill_next = b.done_until;
		/* done once its end is in the catalog */
		task->cfg->backfilling = b.done_until < task->cfg->backfill_to || !b.saved;
		if (!task->cfg->backfilling)
			ereport(LOG, (errmsg("flownode: flow \"%s\" is backfilled", task->cfg->flow_name)));
	}
	return true;
}

/* refresh_flow: serve the requests pending now (their hull), then answer them. */
static void serve_repair(void) {
	FlowSlot *slot = task->slot;
	uint64 serving;
	FnTimeRange want;
	int64 windows = 0;
	bool ok;

	serving = fn_slot_serving(slot, FN_REQUEST_REPAIR, &want);
	ok = run_repair(want, &windows);
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	if (!task->flow_gone && !task->halted) /* as for a flush */
		fn_slot_answer_locked(slot, FN_REQUEST_REPAIR, serving, windows, ok);
	LWLockRelease(fn_slot_lock(slot));
	fn_slot_wake_waiters(slot);
}

/* A new task, empty, made the one served (`task`); in the list once its slot is
 * claimed (add_task). */
static void new_task(void) {
	/* small blocks: a worker may hold a thousand idle tasks, each a few kB */
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "flownode task", ALLOCSET_SMALL_SIZES);

	task = MemoryContextAllocZero(cxt, sizeof(TaskRun));
	task->cxt = cxt;
}

static void add_task(void) {
	if (ntasks % 64 == 0)
		tasks = tasks == NULL ? MemoryContextAlloc(TopMemoryContext, sizeof(TaskRun *) * 64)
		                      : repalloc(tasks, sizeof(TaskRun *) * (ntasks + 64));
	tasks[ntasks++] = task;
	adopted_any = true;
	fn_pool_note_load(pool_index, ntasks);
}

static void load_task(int64 flow_id, Oid catalog_relid) {
	MemoryContext old;

	begin_catalog_transaction();
	task->cfg_cxt = AllocSetContextCreate(task->cxt, "flownode task config", ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(task->cfg_cxt);
	if (fn_catalog_relid(true) != catalog_relid)
		task->cfg = NULL;
	else {
		fn_check_catalog_version(); /* objects of another version: ERROR, the worker exits */
		task->cfg = fn_load_task_config(flow_id, true);
		if (task->cfg != NULL && !task->cfg->bound)
			task->cfg = NULL; /* restored, not bound yet: no triggers mark for it */
	}
	MemoryContextSwitchTo(task->cxt);
	/* the window never changes (alter_flow does not touch the query) */
	if (task->cfg != NULL && task->cfg->window.kind != FN_WINDOW_NONE)
		task->window = fn_window_create(&task->cfg->window);
	/* as small as a set starts in its slot, grown to the sets they copy (fit_buffers) */
	task->room = (uint32)Min(16, fn_dirty_ranges_per_flow);
	task->buf = palloc(sizeof(FnTimeRange) * task->room);
	task->chunk = palloc(sizeof(FnTimeRange) * (task->room + 1));
	task->backlog = palloc(sizeof(FnTimeRange) * task->room);
	MemoryContextSwitchTo(old);
	end_catalog_transaction();
}

/* The flow's name as its worker shows it (pg_stat_activity.application_name). */
static void show_name(void) {
	SetConfigOption("application_name", task->cfg->flow_name, PGC_USERSET, PGC_S_SESSION);
	pgstat_report_appname(task->cfg->flow_name);
}

/*
 * Reads the flow's settings again (alter_flow, pause_flow, resume_flow committed:
 * the slot's config_seq moved). The slot's paused flag follows the catalog unless
 * another change committed meanwhile (then this runs again).
 */
static void reload_config(void) {
	FlowSlot *slot = task->slot;
	MemoryContext cxt = AllocSetContextCreate(task->cxt, "flownode task config", ALLOCSET_SMALL_SIZES);
	MemoryContext old;
	TaskConfig *cfg;
	uint64 seq;

	seq = fn_slot_config_seq(slot);
	begin_catalog_transaction();
	old = MemoryContextSwitchTo(cxt);
	cfg = fn_load_task_config(task->cfg->flow_id, true);
	MemoryContextSwitchTo(old);
	end_catalog_transaction();
	task->config_seq = seq;
	if (cfg == NULL) { /* dropped: the slot says so at the drop's commit */
		MemoryContextDelete(cxt);
		return;
	}
	/* a backfill's progress not written yet (its row was held) is ours: keep it */
	if (cfg->backfilling && task->cfg->backfilling && task->cfg->backfill_next > cfg->backfill_next)
		cfg->backfill_next = task->cfg->backfill_next;
	MemoryContextDelete(task->cfg_cxt);
	task->cfg_cxt = cxt;
	task->cfg = cfg;
	fn_slot_follow_config(slot, seq, cfg->paused);
	show_name();
}

/* The evaluation period of the flow's settings now. */
static int64 first_sleep_usec(void) {
	return fn_next_sleep_usec(task->cfg->eval_interval ? fn_interval_usec(task->cfg->eval_interval) : 0,
	                          task->window ? fn_window_nominal_usec(task->window) : 0,
	                          (int64)fn_min_refresh_interval_ms * 1000, (int64)fn_max_backoff_ms * 1000, 0,
	                          false, 0);
}

/*
 * The refresh runs under the owner's statement_timeout (ALTER ROLE ... SET, for
 * this database or all) when there is one, else under flownode.statement_timeout.
 * A background worker arms it itself: only client statements get it for free.
 */
static void load_statement_timeout(void) {
	SpiAs scope;
	Oid types[2] = {OIDOID, OIDOID};
	Datum args[2] = {ObjectIdGetDatum(task->cfg->owner), ObjectIdGetDatum(MyDatabaseId)};
	int ms = fn_statement_timeout_ms;

	begin_catalog_transaction();
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
	end_catalog_transaction();
	task->timeout_ms = ms;
}

/* Claims the slot for this process; false when the flow is gone or already served,
 * or while its database is being dropped: a start requested at a commit just before
 * DROP DATABASE could attach after the drop stopped the others, and the drop then
 * failed on this session. */
static bool attach_slot(Oid dboid, Oid catalog_relid, int64 flow_id, TimestampTz *handed_due) {
	FlowSlot *slot = fn_acquire_slot(dboid, catalog_relid, flow_id, true);

	if (!fn_slot_attach_worker(slot, handed_due))
		return false;
	task->slot = slot;
	add_task(); /* from here on, the exit callback lets it go */
	return true;
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

	begin_catalog_transaction();
	if (fn_catalog_relid(true) == catalog_relid) {
		TaskConfig *cfg = fn_load_task_config(flow_id, true);

		exists = cfg != NULL && cfg->bound;
	} else
		exists = false;
	end_catalog_transaction();
	return exists;
}

/* Whether the flow has key marks in flownode.pending_keys (a catalog transaction). */
static bool key_marks_recorded(void) {
	uint32 n;

	(void)fn_key_record_windows(task->cfg->flow_id, &n);
	return n > 0;
}

/* The flow's durable record into its slot: at start (with its clock), and when a
 * restore added rows to it or to flownode.pending_keys later (reload_requested).
 * Adding what the slot holds already is harmless. */
static void reload_record(bool at_start) {
	(void)fn_slot_take_wakeup(task->slot,
	                          FN_WAKE_RELOAD); /* rows committed after this are read by the next one */
	begin_catalog_transaction();
	fn_reload_pending(task->cfg->flow_id, task->slot);
	/* key marks of a crash, a restore or a worker gone: the next evaluation runs them
	 * (a restore may load them after the worker started: its commit asks for this) */
	if (task->window != NULL && key_marks_recorded())
		fn_slot_note_keys(task->slot, (FnTimeRange){0, 0});
	if (at_start)
		task->clock = fn_registry_clock_get(task->cfg->flow_id, &task->clock_at) &&
		              task->cfg->eval_interval != NULL && task->window != NULL;
	end_catalog_transaction();
}

/*
 * An upstream flow's refresh wrote into this flow's source (a chain of flows): the
 * next evaluation of an adaptive flow comes min_refresh_interval from now, if it was
 * due later (next_eval_after_upstream). So a minute -> hour -> day chain with
 * default settings is fresh a few seconds after its minute level, not an hour or a
 * day later. The flag is cleared first: a write after this wakes us again.
 */
static TimestampTz follow_upstream(TimestampTz now, TimestampTz next_eval) {
	(void)fn_slot_take_wakeup(task->slot, FN_WAKE_UPSTREAM);
	return fn_next_eval_after_upstream(
	    task->cfg->eval_interval ? fn_interval_usec(task->cfg->eval_interval) : 0,
	    (int64)fn_min_refresh_interval_ms * 1000, now, next_eval, (uint32)fn_slot_failure_streak(task->slot));
}

/* The next evaluation after one that started and finished then (backoff included). */
static TimestampTz next_after(TimestampTz started, TimestampTz finished, bool backlog) {
	return fn_next_eval_at(task->cfg->eval_interval ? fn_interval_usec(task->cfg->eval_interval) : 0,
	                       task->window ? fn_window_nominal_usec(task->window) : 0,
	                       (int64)fn_min_refresh_interval_ms * 1000, (int64)fn_max_backoff_ms * 1000, started,
	                       finished, backlog, (uint32)fn_slot_failure_streak(task->slot));
}

/*
 * Adopts a flow of the worker's database that has no worker: its task loaded, its
 * slot claimed, its shared state rebuilt from the record and its settings read.
 * False when there is nothing to serve (dropped, not bound yet, or another worker
 * was quicker).
 */
static bool adopt_flow(Oid catalog_relid, int64 flow_id) {
	TimestampTz handed_due = 0;

	new_task();
	load_task(flow_id, catalog_relid);
	if (task->cfg == NULL || !attach_slot(MyDatabaseId, catalog_relid, flow_id, &handed_due)) {
		MemoryContextDelete(task->cxt);
		task = NULL;
		return false;
	}
	if (!flow_still_exists(flow_id, catalog_relid)) {
		/* dropped between load_task and attach_slot: the drop freed the slot it
		 * found without a worker, and attach_slot made a new one; free that too */
		fn_slot_mark_dropped(task->slot);
		release_task(ntasks - 1);
		return false;
	}
	/* shared memory may have been lost (restart, crash): rebuild it from the record */
	reload_record(true);
	/* the settings as of now: a change may have committed since load_task */
	reload_config();
	shown = NULL; /* it showed this flow's name: the next flow served shows its own */
	task->budget = fn_next_row_budget(0, (uint64)fn_max_rows_per_refresh, 0, false);
	load_statement_timeout();
	/* the first evaluation follows the cadence like every other: create_flow has
	 * just filled the sink, and flush_flow wakes the worker when asked to; a flow
	 * handed over by a stuck worker keeps the schedule it had there */
	task->next_eval = handed_due != 0 ? handed_due : GetCurrentTimestamp() + first_sleep_usec();
	fn_slot_end_turn(task->slot, due_at(task));
	ereport(LOG, (errmsg("flownode: worker for flow \"%s\" started", task->cfg->flow_name),
	              errdetail("Pool worker %d serves %d flows.", pool_index, ntasks)));
	return true;
}

/*
 * adopt_flow, with its errors caught: a flow that cannot be adopted (its catalog
 * unreadable, no slot) is logged and left for a later round, and the worker goes on
 * serving the others. Returns whether the flow was adopted.
 */
static bool try_adopt(Oid catalog_relid, int64 flow_id) {
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool adopted = false;

	PG_TRY();
	{ adopted = adopt_flow(catalog_relid, flow_id); }
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		/* attached already: let it go again; else only its memory */
		if (ntasks > 0 && tasks[ntasks - 1] == task)
			release_task(ntasks - 1);
		else if (task != NULL)
			MemoryContextDelete(task->cxt);
		task = NULL;
	}
	PG_END_TRY();
	return adopted;
}

/* The flow served from now on: the session shows its name, and its time zone is
 * the one its query was deparsed with (the other pinned settings are every flow's). */
static void serve(TaskRun *t) {
	task = t;
	if (shown == t)
		return;
	shown = t;
	show_name();
	fn_pin_session_settings(t->cfg->timezone != NULL ? t->cfg->timezone : server_timezone);
}

/*
 * Start-up: the pool entry the launcher registered this worker for (or another
 * free one), then the connection to its database as the bootstrap superuser:
 * every refresh runs with its flow owner's identity and privileges
 * (SetUserIdAndSecContext, as REFRESH MATERIALIZED VIEW does). Exits when the pool
 * is full.
 */
static void enter_pool(int index) {
	Oid dboid;

	memcpy(&dboid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	pool_index = fn_pool_enter(index, dboid);
	if (pool_index < 0)
		proc_exit(0);
	before_shmem_exit(worker_exit, (Datum)0);
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	/* A refresh need not wait for its WAL flush: if a crash loses its commit, it
	 * loses the removal of its windows from the durable record with it, and they are
	 * refreshed again after recovery. Writers' commits are untouched. */
	SetConfigOption("synchronous_commit", "off", PGC_USERSET, PGC_S_SESSION);
	server_timezone = MemoryContextStrdup(TopMemoryContext, GetConfigOption("timezone", false, false));
}

/* Steering committed: the settings read again, and the schedule follows them. */
static void apply_new_settings(TimestampTz *next_eval) {
	bool was_paused = task->cfg->paused;
	int64 was_every = first_sleep_usec();
	TimestampTz now;

	reload_config();
	now = GetCurrentTimestamp();
	/* a new cadence starts now, never later than the old one would have */
	if (first_sleep_usec() != was_every)
		*next_eval = Min(*next_eval, now + first_sleep_usec());
	/* resumed: catch up at once on what was written meanwhile */
	if (was_paused && !task->cfg->paused)
		*next_eval = task->backfill_retry_at = now;
}

/* When the flow has something to do next: its evaluation, or a backfill's chunk;
 * never while it is paused (a resume is a request). */
static TimestampTz due_at(TaskRun *t) {
	if (t->cfg->paused)
		return DT_NOEND;
	return t->cfg->backfilling ? Min(t->next_eval, t->backfill_retry_at) : t->next_eval;
}

/* The flow is due: the evaluation when it is due, else a backfill's chunk. */
static void run_due(void) {
	TimestampTz now = GetCurrentTimestamp();

	if (now >= task->next_eval) {
		int64 windows = 0;
		bool backlog = false;

		fn_slot_note_start(task->slot, task->next_eval, now);
		(void)run_keys(true, &(FnKeyCount){0});
		(void)run_refresh(true, &windows, &backlog);
		task->next_eval = next_after(now, GetCurrentTimestamp(), backlog);
	} else {
		int64 windows = 0;

		/* chunk after chunk between evaluations; after a failure, the backoff; a
		 * progress that could not be written is tried again a second later */
		if (!run_backfill_chunk(&windows))
			task->backfill_retry_at = next_after(now, GetCurrentTimestamp(), false);
		else if (task->cfg->backfilling && !backfill_left())
			task->backfill_retry_at = GetCurrentTimestamp() + USECS_PER_SEC;
	}
}

/*
 * What the flow's slot asks for, served in a turn, in this order: a drop (the task
 * goes), a restore's rows, new settings, refresh_flow, flush_flow (none while
 * paused); an upstream flow's write only moves the schedule. False when nothing was
 * served.
 */
static bool serve_requests(int i) {
	TaskRun *t = tasks[i];
	FlowSlotRequests r;

	fn_slot_read_requests(t->slot, t->config_seq, &r);
	if (r.dropped) {
		ereport(LOG, (errmsg("flownode: worker for flow \"%s\" stopped: the flow was dropped",
		                     t->cfg->flow_name)));
		release_task(i); /* one taken over is not ours to free (fn_slot_detach_worker) */
		return true;
	}
	if (!r.reload && !r.changed && (t->cfg->paused || (!r.repair && !r.flush)) &&
	    !(r.upstream && !t->cfg->paused))
		return false;
	if (!begin_turn(i))
		return true;
	if (r.reload)
		reload_record(false);
	else if (r.changed)
		apply_new_settings(&t->next_eval);
	else if (r.repair)
		serve_repair();
	else if (r.flush && !t->cfg->paused)
		serve_flush();
	else
		t->next_eval = follow_upstream(GetCurrentTimestamp(), t->next_eval);
	end_turn(t);
	return true;
}

/* One request of one flow served, taking the flows in turn from where the last
 * turn stopped, so that no flow's requests starve another's; false if none. */
static bool serve_one_request(void) {
	static int next = 0;

	for (int k = 0; k < ntasks; k++) {
		int i = (next + k) % ntasks;

		if (!serve_requests(i))
			continue;
		next = i + 1;
		return true;
	}
	return false;
}

/* Runs the flow due soonest if it is due; else *wake is when one will be. */
static bool run_soonest(TimestampTz *wake) {
	int soonest = -1;

	*wake = DT_NOEND;
	for (int i = 0; i < ntasks; i++)
		if (due_at(tasks[i]) < *wake) {
			*wake = due_at(tasks[i]);
			soonest = i;
		}
	if (soonest < 0 || *wake > GetCurrentTimestamp())
		return false;
	if (begin_turn(soonest)) {
		run_due();
		end_turn(task);
	}
	return true;
}

/* Sleeps until the latch is set (flush, drop, steering, a flow to adopt; never
 * marking) or `until`; the wait ends with the postmaster. */
static void sleep_until(TimestampTz until) {
	(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
	                Max(1L, (long)((until - GetCurrentTimestamp() + 999) / 1000)), PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
}

/* A reload: the settings, and each flow's statement timeout (its owner's may have
 * changed with them). */
static void reload_settings(void) {
	ConfigReloadPending = false;
	ProcessConfigFile(PGC_SIGHUP);
	for (int i = 0; i < ntasks; i++) {
		serve(tasks[i]);
		load_statement_timeout();
	}
}

/*
 * The pool's balance (worker/pool_policy.h): flows beyond the worker's part handed
 * to a new worker of the database, or flows of the database without a worker
 * adopted, up to its part and a few at a time (the others wait
 * a turn, not the adoption of a thousand flows). False when the worker should
 * leave the pool: its flows go back to the database's other workers.
 */
static bool balance(TimestampTz *next_look) {
	FnPoolPlan plan;
	int adopted = 0;
	TimestampTz now = GetCurrentTimestamp();

	if (now < *next_look && !fn_pool_take_wakeup(pool_index))
		return true;
	*next_look = now + USECS_PER_SEC;
	drop_lost_tasks();
	plan = fn_pool_plan(pool_index, ntasks);
	if (plan.leave)
		return false;
	while (plan.shed-- > 0 && ntasks > 0)
		release_task(ntasks - 1);
	for (int i = 0; i < fn_slot_count() && ntasks < plan.limit; i++) {
		Oid catalog_relid;
		int64 flow_id;

		if (!fn_slot_adoptable(fn_slot_at(i), MyDatabaseId, now, &catalog_relid, &flow_id))
			continue;
		if (!try_adopt(catalog_relid, flow_id)) /* none of the workers tries soon */
			fn_slot_hold_adoption(fn_slot_at(i), now + FN_ADOPT_RETRY_USEC);
		else if (++adopted == FN_ADOPT_PER_TURN) {
			*next_look = now; /* more next turn */
			break;
		}
	}
	return true;
}

/*
 * A pool worker (GreptimeDB's start_executing_loop over many tasks): each turn, the
 * pool's balance, then one flow's request, else the flow due soonest, else a sleep
 * until one is due or the latch is set.
 */
void flownode_flow_main(Datum arg) {
	TimestampTz next_look = 0;

	fn_is_flow_worker = true;
	enter_pool(DatumGetInt32(arg));
	for (;;) {
		TimestampTz wake;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
			reload_settings();
		/* a worker whose flows are all gone leaves at once, as a flow's own worker
		 * exited with its flow: it holds a connection to the database */
		if (!balance(&next_look) || (adopted_any && ntasks == 0))
			break;
		if (serve_one_request() || run_soonest(&wake))
			continue;
		sleep_until(Min(wake, next_look));
	}
	if (ntasks > 0)
		ereport(LOG, (errmsg("flownode: pool worker %d hands its %d flows back", pool_index, ntasks)));
	proc_exit(0);
}
