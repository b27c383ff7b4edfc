/*
 * slot_worker.c: what the flow's own worker does with its slot: attach and detach,
 * note the outcome of its refreshes, read what it is asked to do, answer flush_flow
 * and refresh_flow, and the steps of taking ranges out of the dirty set and giving
 * them back (the *_locked functions, under the slot's exclusive lock, which the
 * worker holds across a step so commits see it as one), its turns at the flow and
 * the hand-over of a stuck worker's flows. The locking rules are at the top of
 * flow_slots.h.
 */
#include "flownode.h"

#include "shmem/flow_slot_fields.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/timestamp.h"

/* Claims the slot for this process; false when the flow was dropped, another worker
 * serves it, or its database is being dropped: a start requested at a commit just
 * before DROP DATABASE could attach after the drop stopped the others, and the drop
 * then failed on this session. *handed_due: when the flow is due, if a stuck worker
 * handed it over (fn_slots_hand_over), else 0. */
bool fn_slot_attach_worker(FlowSlot *slot, TimestampTz *handed_due) {
	bool ok;

	*handed_due = 0;
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	ok = !slot->dropped && slot->worker_pid == 0 && GetCurrentTimestamp() >= slot->drop_db_until;
	if (ok) {
		slot->worker_pid = MyProcPid;
		slot->worker_latch = MyLatch;
		slot->worker_registered_at = 0;
		slot->worker_busy = false;
		*handed_due = slot->handed_due;
		slot->handed_due = 0;
		slot->state = slot->consecutive_failures > 0 ? FLOW_FAILING : FLOW_ACTIVE;
	}
	LWLockRelease(fn_slot_lock(slot));
	if (ok) /* a flush waiting for a worker goes on */
		ConditionVariableBroadcast(&slot->flush_cv);
	return ok;
}

/* The attached worker turns to the flow (a run, a flush, a request): from now until
 * fn_slot_end_turn no other worker takes it over. False when this process no longer
 * serves it (a worker took it over while this one was stuck in another flow): the
 * caller drops its task, touching the slot no more. */
bool fn_slot_begin_turn(FlowSlot *slot) {
	bool mine;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	mine = slot->in_use && slot->worker_pid == MyProcPid;
	if (mine)
		slot->worker_busy = true;
	LWLockRelease(fn_slot_lock(slot));
	return mine;
}

/* The turn is over (or, outside a turn, the schedule moved): the flow is next due at
 * `due` (DT_NOEND: not before a request). */
void fn_slot_end_turn(FlowSlot *slot, TimestampTz due) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	if (slot->worker_pid == MyProcPid) {
		slot->worker_busy = false;
		slot->next_due = due;
	}
	LWLockRelease(fn_slot_lock(slot));
}

/* Whether this process still serves the flow (the slot's lock shared). */
bool fn_slot_served_by_me(FlowSlot *slot) {
	bool mine;

	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	mine = slot->in_use && slot->worker_pid == MyProcPid;
	LWLockRelease(fn_slot_lock(slot));
	return mine;
}

/* One slot handed over if its worker is one of the stuck ones, it is not in their
 * turn, and it is due or a flush_flow or refresh_flow waits for it. */
static bool hand_over_one(FlowSlot *slot, Oid dboid, const pid_t *stuck, int nstuck, TimestampTz now) {
	bool handed = false;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	if (slot->in_use && slot->dboid == dboid && !slot->dropped && slot->worker_pid != 0 &&
	    !slot->worker_busy &&
	    (slot->next_due <= now || slot->flush_requested > slot->flush_completed ||
	     slot->repair_requested > slot->repair_completed)) {
		for (int i = 0; i < nstuck && !handed; i++)
			handed = slot->worker_pid == stuck[i];
		if (handed) {
			/* it holds no range of this flow outside a turn: nothing to give back */
			slot->worker_pid = 0;
			slot->worker_latch = NULL;
			slot->worker_registered_at = 0;
			slot->handed_due = Max(slot->next_due, 1);
		}
	}
	LWLockRelease(fn_slot_lock(slot));
	return handed;
}

int fn_slots_hand_over(Oid dboid, const pid_t *stuck, int nstuck, TimestampTz now) {
	int handed = 0;

	for (int i = 0; i < fn_slot_count() && nstuck > 0; i++)
		handed += hand_over_one(fn_slot_at(i), dboid, stuck, nstuck, now);
	return handed;
}

/* A flow of the database with no worker, not held back (DROP DATABASE, a create_flow
 * not committed yet): a pool worker of the database may adopt it. Its key in
 * *catalog_relid and *flow_id. */
bool fn_slot_adoptable(FlowSlot *slot, Oid dboid, TimestampTz now, Oid *catalog_relid, int64 *flow_id) {
	bool ok;

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	ok = slot->in_use && slot->dboid == dboid && !slot->dropped && slot->worker_pid == 0 &&
	     slot->reserved_by == 0 && now >= slot->hold_until && now >= slot->drop_db_until;
	*catalog_relid = slot->catalog_relid;
	*flow_id = slot->flow_id;
	LWLockRelease(fn_slot_lock(slot));
	LWLockRelease(fn_registry_lock());
	return ok;
}

/* A worker found the flow not to be adopted now (not bound yet, its catalog not
 * this database's): no worker tries again before `until`, unless a start is asked
 * for (fn_slot_worker_requested), and the pool does not count it as waiting. */
void fn_slot_hold_adoption(FlowSlot *slot, TimestampTz until) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	if (slot->worker_pid == 0)
		slot->hold_until = Max(slot->hold_until, until);
	LWLockRelease(fn_slot_lock(slot));
}

/* The worker lets the flow go (it exits, or hands the flow back): the ranges of an unfinished refresh (held)
 * and of a flush's backlog go back into the dirty set (over-marking is safe), and the slot is freed if the
 * flow was dropped. */
void fn_slot_detach_worker(FlowSlot *slot, const FnTimeRange *held, uint32 nheld, const FnTimeRange *backlog,
                           uint32 nbacklog) {
	bool mine;
	bool dropped;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	mine = slot->worker_pid == MyProcPid;
	if (mine) {
		fn_slot_end_take_locked(slot);
		fn_dirty_add_all(fn_slot_dirty_set(slot, nheld), held, nheld);
		fn_dirty_add_all(fn_slot_dirty_set(slot, nbacklog), backlog, nbacklog);
		if (nheld + nbacklog > 0)
			slot->removals = true; /* not known which of them saw removals */
		fn_slot_put_back_since_locked(slot, true);
		slot->worker_pid = 0;
		slot->worker_latch = NULL;
		slot->worker_registered_at = 0;
		slot->worker_busy = false;
	}
	/* a slot taken over by another worker is that worker's to free */
	dropped = mine && slot->dropped;
	LWLockRelease(fn_slot_lock(slot));
	ConditionVariableBroadcast(&slot->flush_cv);
	if (dropped)
		fn_free_slot(slot);
}

void fn_slot_mark_dropped(FlowSlot *slot) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->dropped = true;
	LWLockRelease(fn_slot_lock(slot));
}

bool fn_slot_is_dropped(FlowSlot *slot) {
	bool dropped;

	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	dropped = slot->dropped;
	LWLockRelease(fn_slot_lock(slot));
	return dropped;
}

/* A refresh succeeded: the counters, and the flow is healed (last_failure is
 * history now, not the current error). holds_nothing: what it held is in the sink. */
void fn_slot_note_success(FlowSlot *slot, TimestampTz start, int64 rows, bool holds_nothing) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->runs++;
	slot->rows_written += rows;
	slot->last_run_at = slot->last_success_at = GetCurrentTimestamp();
	slot->last_run_usec = slot->last_run_at - start;
	if (holds_nothing)
		slot->held_since = 0;
	slot->consecutive_failures = 0;
	slot->state = FLOW_ACTIVE;
	LWLockRelease(fn_slot_lock(slot));
}

/* Copies at most `room` - 1 bytes of `src`, cut at a character boundary, into
 * dst; the bytes used, its NUL included. */
static int put_text(char *dst, const char *src, int room) {
	int len = pg_mbcliplen(src, (int)strnlen(src, (size_t)room), room - 1);

	memcpy(dst, src, (size_t)len);
	dst[len] = '\0';
	return len + 1;
}

void fn_slot_error_set(FnSlotError *e, int sqlerrcode, const char *message, const char *detail,
                       const char *hint) {
	int detail_room =
	    detail != NULL && detail[0] != '\0' ? Min((int)strlen(detail) + 1, FN_ERROR_DETAIL_LEN) : 0;
	int hint_room = hint != NULL && hint[0] != '\0' ? Min((int)strlen(hint) + 1, FN_ERROR_HINT_LEN) : 0;
	int at;

	memset(e, 0, sizeof(*e));
	e->sqlerrcode = sqlerrcode;
	at = put_text(e->text, message, FN_ERROR_LEN - detail_room - hint_room);
	if (detail_room > 0) {
		e->detail_at = (uint16)at;
		at += put_text(e->text + at, detail, detail_room);
	}
	if (hint_room > 0) {
		e->hint_at = (uint16)at;
		(void)put_text(e->text + at, hint, hint_room);
	}
}

/* A refresh failed: the flow is failing until one succeeds; the failure itself
 * stays in the slot after that. */
void fn_slot_note_failure(FlowSlot *slot, TimestampTz start, const ErrorData *edata) {
	FnSlotError e;

	/* copied before the lock is taken: nothing under it may fail */
	fn_slot_error_set(&e, edata->sqlerrcode, edata->message ? edata->message : "unknown error", edata->detail,
	                  edata->hint);
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->failures++;
	slot->consecutive_failures++;
	slot->state = FLOW_FAILING;
	slot->last_run_at = slot->last_failure_at = GetCurrentTimestamp();
	slot->last_run_usec = slot->last_run_at - start;
	slot->last_failure = e;
	LWLockRelease(fn_slot_lock(slot));
}

/* A scheduled evaluation starts: how late, against when it was due, is the flows
 * view's last_start_delay. */
void fn_slot_note_start(FlowSlot *slot, TimestampTz due, TimestampTz started) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->last_due_at = due;
	slot->last_started_at = started;
	LWLockRelease(fn_slot_lock(slot));
}

/* Failed refreshes since the last success. Without the lock: only the attached
 * worker, the caller, writes it (the locking rules). */
int32 fn_slot_failure_streak(FlowSlot *slot) {
	return slot->consecutive_failures;
}

void fn_slot_read_requests(FlowSlot *slot, uint64 config_seq, FlowSlotRequests *out) {
	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	out->dropped = slot->dropped;
	out->flush = slot->flush_requested > slot->flush_completed;
	out->repair = slot->repair_requested > slot->repair_completed;
	out->reload = slot->reload_requested;
	out->changed = slot->config_seq != config_seq;
	out->upstream = slot->upstream_wrote;
	LWLockRelease(fn_slot_lock(slot));
}

/* The last request of the kind posted: the one an answer will serve (for a repair,
 * *range: the hull of every request pending). */
uint64 fn_slot_serving(FlowSlot *slot, FlowSlotRequest kind, FnTimeRange *range) {
	uint64 serving;

	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	serving = kind == FN_REQUEST_FLUSH ? slot->flush_requested : slot->repair_requested;
	if (range != NULL)
		*range = slot->repair_range;
	LWLockRelease(fn_slot_lock(slot));
	return serving;
}

uint64 fn_slot_config_seq(FlowSlot *slot) {
	uint64 seq;

	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	seq = slot->config_seq;
	LWLockRelease(fn_slot_lock(slot));
	return seq;
}

/* The catalog's paused flag read after config_seq was `seq`: the slot follows it
 * unless another change committed meanwhile (then the worker reads again). */
void fn_slot_follow_config(FlowSlot *slot, uint64 seq, bool paused) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	if (slot->config_seq == seq)
		slot->paused = paused;
	LWLockRelease(fn_slot_lock(slot));
}

/* The slot's flag of a kind of wake-up (the slot's lock held). */
static bool *wakeup_flag(FlowSlot *slot, FlowSlotWakeup what) {
	switch (what) {
	case FN_WAKE_RELOAD:
		return &slot->reload_requested;
	case FN_WAKE_UPSTREAM:
		return &slot->upstream_wrote;
	case FN_WAKE_KEYS:
		return &slot->keys_pending;
	}
	pg_unreachable();
}

/* The worker takes a wake-up into account: the record is read again now (rows
 * committed after this are read by the next one), the upstream's write is in its
 * schedule, or the key marks noted are refreshed now (a commit whose rows the
 * refresh's snapshot misses notes again after this). Returns whether it was set;
 * it is cleared. */
bool fn_slot_take_wakeup(FlowSlot *slot, FlowSlotWakeup what) {
	bool *flag;
	bool was;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	flag = wakeup_flag(slot, what);
	was = *flag;
	*flag = false;
	LWLockRelease(fn_slot_lock(slot));
	return was;
}

/* The fold's reports since the last look (refresh/fold_refresh.h); PG_INT64_MAX
 * from now on, until a commit reports. */
int64 fn_slot_take_fold_lo(FlowSlot *slot) {
	int64 lo;

	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	lo = slot->fold_lo;
	slot->fold_lo = PG_INT64_MAX;
	LWLockRelease(fn_slot_lock(slot));
	return lo;
}

/* The refresh's transaction ended: the fold's window goes to the slot, for the
 * commits to report against. */
void fn_slot_settle_fold(FlowSlot *slot, FnTimeRange window, bool folded) {
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	slot->fold_window = window;
	if (folded)
		slot->folds++;
	LWLockRelease(fn_slot_lock(slot));
}
