/*
 * flow_slots.h: TaskState in shared memory. One fixed-size slot per flow
 * (flownode.max_flows of them), keyed by (database, catalog table, flow id), each
 * with its own LWLock: the worker's state, the status the flows view shows, the
 * flush_flow handshake, and the flow's dirty and durable sets of time ranges (in
 * the slot while small, else in a pool the slots share: slot_ranges.c).
 *
 * The slot is opaque outside src/shmem/ (its fields are in flow_slot_fields.h):
 * callers use the functions below, grouped by who calls them, and the functions
 * keep these rules.
 *
 * LOCKING RULES
 *
 * Two kinds of LWLock: the registry lock (fn_registry_lock, one for all slots) and
 * each slot's own lock (fn_slot_lock). Taking both, the registry lock comes first.
 * The pool's lock (shmem/pool.h) is never held with either.
 * Nothing under a slot's lock waits for anything else or may fail (no catalog
 * access, no ERROR): a writer's COMMIT publishes under it.
 *
 * - Registry lock: who owns a slot. in_use, dboid, catalog_relid and flow_id are
 *   written only when a slot is claimed or freed, holding the registry lock
 *   exclusively AND the slot's lock, so either lock (shared) is enough to read
 *   them: a flush waiting on its slot checks under the slot's lock alone that the
 *   slot still holds its flow. acquired_seq is bumped at every claim under the
 *   registry lock (exclusive) and read under it: an orphan is freed only if nobody
 *   claimed it since it was looked at (fn_free_slot_if_unclaimed). fn_find_slot
 *   and the scans over every slot run under the registry lock (shared is enough),
 *   so no slot changes hands during them.
 * - The slot's lock: everything else. The worker's attachment (worker_pid,
 *   worker_latch, worker_registered_at, state, worker_busy, next_due, handed_due),
 *   the starts held back (hold_until,
 *   drop_db_until, reserved_by), dropped, paused, config_seq, the flush and
 *   refresh_flow handshakes (flush_*, repair_*), the dirty and durable sets (their
 *   ranges, count, capacity and place), removals, refreshing, refresh_seq, dirty_since,
 *   held_since, fold_lo, fold_window, reload_requested, upstream_wrote, and the
 *   status the flows view shows (runs, failures, last_*, the last evaluation's
 *   due and start times, ...). Readers take it
 *   shared, writers exclusive. The functions take it themselves, except those
 *   named *_locked, whose caller holds it (exclusive if they write): the steps of
 *   a refresh's take and give-back, which commits must see as one, and
 *   fn_slot_dirty_set/fn_slot_durable_set, whose views point into the slot or
 *   the pool.
 * - The sets' storage (slot_ranges.c): a set lives in its slot or, once it grew,
 *   in the shared pool; it moves only under the slot's exclusive lock (grown by
 *   fn_slot_dirty_set/fn_slot_durable_set with `adding` > 0, moved back into the
 *   slot at the end of a take, freed with the slot). So a view is good only until
 *   the lock is released: take it again under each hold, never keep one across.
 *   The pool's own locks (DSA's, in flownode's tranche) are taken under a slot's
 *   lock, never the other way; the pool never maps or creates a DSM segment and
 *   allocates with DSA_ALLOC_NO_OOM, so growing cannot fail under the lock: a set
 *   without room keeps its capacity and coalesces.
 *
 * - Who runs a flow: only the worker in slot->worker_pid, and only inside a turn
 *   (fn_slot_begin_turn .. fn_slot_end_turn, which set worker_busy under the lock
 *   and check worker_pid is still its own). Another worker changes worker_pid only
 *   to hand a stuck worker's flow over (fn_slots_hand_over), under the lock and only
 *   while worker_busy is false, when that worker holds no range of the flow (a take
 *   and a flush's backlog live inside a turn). So no flow is ever run by two
 *   workers, and a worker that lost a flow finds out at its next turn and drops
 *   its task without touching the slot again (it frees no slot it lost:
 *   fn_slot_detach_worker).
 *
 * Read without a lock, and why that is safe:
 * - lock_index and flush_cv: set at startup, never written again.
 * - consecutive_failures, by the worker serving the flow (fn_slot_failure_streak):
 *   once a worker is attached only that worker writes it (fn_slot_note_success,
 *   fn_slot_note_failure, under the lock, for the flows view), so the writer's
 *   own read is exact. The claim's reset happens before any worker attached.
 * - The identity fields under the slot's lock alone: see above.
 * Every other read takes a lock; the flows view copies the slot under both.
 */
#ifndef FLOWNODE_FLOW_SLOTS_H
#define FLOWNODE_FLOW_SLOTS_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "nodes/pg_list.h"
#include "storage/lwlock.h"

#include "bridge/core_bridge.h"

typedef enum FlowRunState {
	FLOW_STARTING = 0,
	FLOW_ACTIVE,
	FLOW_FAILING,
	FLOW_WAITING_FOR_WORKER
} FlowRunState;

#define FN_ERROR_LEN 512

/* A refresh's failure as the worker caught it, kept in the flow's slot: what a
 * flush_flow or refresh_flow waiting for that refresh raises again, with the same
 * SQLSTATE, message, detail and hint. The three texts share one buffer, so that a
 * slot keeps three of them in little more than it kept three messages (max_flows
 * slots live in shared memory): the detail is cut at FN_ERROR_DETAIL_LEN bytes, the
 * hint at FN_ERROR_HINT_LEN, the message gets the rest (at least 190 bytes), each
 * cut at a character boundary. Read through fn_slot_error_message/_detail/_hint. */
#define FN_ERROR_DETAIL_LEN 192
#define FN_ERROR_HINT_LEN 128
typedef struct FnSlotError {
	int sqlerrcode;
	uint16 detail_at; /* offset of the detail in text; 0: none */
	uint16 hint_at;   /* offset of the hint in text; 0: none */
	char text[FN_ERROR_LEN];
} FnSlotError;

/* Packs an error into *e (no lock: e is the caller's; nothing here fails). */
extern void fn_slot_error_set(FnSlotError *e, int sqlerrcode, const char *message, const char *detail,
                              const char *hint);
static inline const char *fn_slot_error_message(const FnSlotError *e) {
	return e->text;
}
/* "" when there is none */
static inline const char *fn_slot_error_detail(const FnSlotError *e) {
	return e->detail_at != 0 ? e->text + e->detail_at : "";
}
static inline const char *fn_slot_error_hint(const FnSlotError *e) {
	return e->hint_at != 0 ? e->text + e->hint_at : "";
}

/* a requested start that has not attached yet is waited for this long before another */
#define FN_WORKER_START_GRACE_USEC (10 * USECS_PER_SEC)

typedef struct FlowSlot FlowSlot;

/* ---- shared memory, the registry: claiming and freeing (flow_slots.c) ---- */

/* shmem_request_hook / shmem_startup_hook parts */
extern void fn_slots_shmem_request(void);
extern void fn_slots_shmem_startup(void);

/* ERROR unless flownode was loaded through shared_preload_libraries. */
extern void fn_check_preloaded(void);
extern LWLock *fn_registry_lock(void);
extern LWLock *fn_slot_lock(FlowSlot *slot);
extern FlowSlot *fn_find_slot(Oid dboid, Oid catalog_relid, int64 flow_id); /* registry lock held by caller */
extern FlowSlot *fn_acquire_slot(Oid dboid, Oid catalog_relid, int64 flow_id, bool missing_error);
extern void fn_free_slot(FlowSlot *slot);
extern bool fn_free_slot_if_unclaimed(FlowSlot *slot, uint64 seen_seq);
extern int fn_slot_count(void);
extern FlowSlot *fn_slot_at(int i);
/* Views of the slot's sets, under the slot's lock only and for as long as it is
 * held (a set moves when it grows): with room for `adding` more ranges if the pool
 * has it (exclusive lock; a subtraction that may split a range adds one), 0 to
 * look (either lock). Never fail (slot_ranges.c). */
extern FnDirtySet fn_slot_dirty_set(FlowSlot *slot, uint32 adding);
extern FnDirtySet fn_slot_durable_set(FlowSlot *slot, uint32 adding);

/* ---- flows created, changed, dropped: at their transaction's end (slot_lifecycle.c) ---- */

/* an uncommitted create_flow holds the slot until its transaction ends */
extern void fn_slot_reserve(FlowSlot *slot);
/* create_flow's fill, shown by the flows view as the flow's first run */
extern void fn_slot_note_fill(FlowSlot *slot, TimestampTz start, TimestampTz end, int64 rows);
/* a worker is asked for the flow (before the pool is), then it was registered or
 * woken (or none could be): never fail */
extern void fn_slot_start_asked(Oid dboid, Oid catalog_relid, int64 flow_id);
extern void fn_slot_worker_requested(Oid dboid, Oid catalog_relid, int64 flow_id, bool registered);
extern bool fn_slot_has_worker(Oid dboid, Oid catalog_relid, int64 flow_id);
/* the drop of one flow (all: every flow of the catalog) committed: never fails */
extern void fn_slots_drop_flows(Oid dboid, Oid catalog_relid, bool all, int64 flow_id);
extern void fn_slots_request_reload(Oid dboid, Oid catalog_relid);
extern void fn_slot_config_changed(Oid dboid, Oid catalog_relid, int64 flow_id, bool paused);

/* ---- the launcher, the database starters, DROP DATABASE (slot_lifecycle.c) ---- */

extern bool fn_slot_needs_worker(FlowSlot *slot, TimestampTz now);
extern List *fn_slots_databases_needing_workers(TimestampTz now);
extern void fn_slots_free_unserved(Oid dboid);
extern void fn_slots_database_dropped(Oid dboid);
extern void fn_slots_stop_database(Oid dboid, TimestampTz until);
extern void fn_slots_hold_database(Oid dboid, TimestampTz until);
/* a database's flows, as the pool's workers balance them (slot_lifecycle.c) */
typedef struct FnDbFlows {
	Oid dboid;
	int flows;    /* not dropped */
	int unserved; /* without a worker, and a worker may adopt them now (fn_slot_adoptable) */
} FnDbFlows;
extern int fn_slots_census(FnDbFlows *out, int max, TimestampTz now);
/* whether a flow of another database has no worker (a free pool entry is its) */
extern bool fn_slots_other_db_unserved(Oid dboid, TimestampTz now);
extern bool fn_slot_orphan_candidate(FlowSlot *slot, Oid dboid, Oid *catalog_relid, int64 *flow_id,
                                     uint64 *seen_seq);

/* ---- flush_flow and refresh_flow, the flows view, writers' commits (slot_clients.c) ---- */

typedef enum FlowSlotRequest { FN_REQUEST_FLUSH, FN_REQUEST_REPAIR } FlowSlotRequest;

/* what a caller waiting for its request sees */
typedef struct FlowSlotAnswer {
	bool gone;       /* the slot no longer holds the flow, or it was dropped */
	bool paused;     /* the worker will not serve it */
	bool done;       /* served: windows, failed and error are set */
	bool attached;   /* a worker serves the flow */
	bool waiting;    /* no worker slot was free for it */
	bool registered; /* a start was requested and has not attached yet */
	int64 windows;
	bool failed;
	FnSlotError error; /* failed: the refresh's failure */
} FlowSlotAnswer;

extern uint64 fn_slot_post_request(FlowSlot *slot, FlowSlotRequest kind, FnTimeRange range);
extern void fn_slot_poll_request(FlowSlot *slot, int64 flow_id, FlowSlotRequest kind, uint64 mine,
                                 FlowSlotAnswer *out);
extern void fn_slot_wait_prepare(FlowSlot *slot);
extern void fn_slot_wait(FlowSlot *slot, long timeout_ms);
extern void fn_slot_wake_waiters(FlowSlot *slot);

/* the flows view's copy of a slot */
typedef struct FlowSlotView {
	uint32 nranges;
	FnTimeRange *ranges; /* palloc'd, nranges of them */
	TimestampTz since;   /* the oldest change that may not be in the sink yet; 0: none */
	pid_t worker_pid;
	int32 consecutive_failures;
	TimestampTz last_run_at;
	int64 last_run_usec;
	TimestampTz last_success_at;
	TimestampTz last_failure_at;
	char last_failure[FN_ERROR_LEN];
	int last_failure_sqlstate;
	TimestampTz last_due_at; /* the last scheduled evaluation was due; 0: none yet */
	TimestampTz last_started_at;
	int64 runs;
	int64 failures;
	int64 rows_written;
	int64 folds;
} FlowSlotView;

extern bool fn_slot_view(Oid dboid, Oid catalog_relid, int64 flow_id, FlowSlotView *out);

/* A writer's commit: at PRE_COMMIT (under the slot's lock) it notes whether a
 * refresh was taking windows; at COMMIT it publishes. */
typedef struct FlowSlotRefreshMark {
	bool refreshing;
	uint64 refresh_seq;
} FlowSlotRefreshMark;

typedef struct FlowSlotCommit {
	Oid dboid;
	int64 flow_id;
	const FnTimeRange *ranges; /* sorted, to add to the dirty set */
	uint32 count;
	bool removes;                /* it may have removed rows */
	int64 lo;                    /* the earliest time of a row it marked */
	FnTimeRange hull;            /* its own windows' hull, before widening */
	bool recorded;               /* written to flownode.pending */
	FlowSlotRefreshMark at_look; /* at PRE_COMMIT's look at the durable set */
	TimestampTz commit_time;
	bool wake; /* a flow worker's commit: downstream flows' workers are woken */
} FlowSlotCommit;

extern FlowSlotRefreshMark fn_slot_refresh_mark_locked(FlowSlot *slot);
extern void fn_slot_publish_commit(FlowSlot *slot, const FlowSlotCommit *c);
/* the flow's durable record added to its sets (a worker's start, a restore) */
extern void fn_slot_load_record(FlowSlot *slot, const FnTimeRange *ranges, uint32 n, TimestampTz oldest);

/* ---- the flow's worker, of the pool (slot_worker.c) ---- */

extern bool fn_slot_attach_worker(FlowSlot *slot, TimestampTz *handed_due);
/* a turn of the attached worker at the flow, during which no worker takes it over;
 * begin: false if this process no longer serves it; end: the flow's next due time */
extern bool fn_slot_begin_turn(FlowSlot *slot);
extern void fn_slot_end_turn(FlowSlot *slot, TimestampTz due);
extern bool fn_slot_served_by_me(FlowSlot *slot);
/* The flows of the database served by the `stuck` workers (in one flow's turn for
 * too long, shmem/pool.h) that are not in that turn and are due (or a flush or
 * refresh_flow waits for them) are let go of: a worker adopts them. How many. */
extern int fn_slots_hand_over(Oid dboid, const pid_t *stuck, int nstuck, TimestampTz now);
/* a flow of the database without a worker, which one may adopt now; its key */
extern bool fn_slot_adoptable(FlowSlot *slot, Oid dboid, TimestampTz now, Oid *catalog_relid, int64 *flow_id);
extern void fn_slot_hold_adoption(FlowSlot *slot, TimestampTz until);
extern void fn_slot_detach_worker(FlowSlot *slot, const FnTimeRange *held, uint32 nheld,
                                  const FnTimeRange *backlog, uint32 nbacklog);
extern void fn_slot_mark_dropped(FlowSlot *slot);
extern bool fn_slot_is_dropped(FlowSlot *slot);
extern void fn_slot_note_success(FlowSlot *slot, TimestampTz start, int64 rows, bool holds_nothing);
extern void fn_slot_note_failure(FlowSlot *slot, TimestampTz start, const ErrorData *edata);
extern void fn_slot_note_start(FlowSlot *slot, TimestampTz due, TimestampTz started);
extern int32 fn_slot_failure_streak(FlowSlot *slot);

/* what the worker's loop is asked to do */
typedef struct FlowSlotRequests {
	bool dropped;
	bool flush;
	bool repair;
	bool reload;
	bool changed; /* config_seq moved past the one the worker read */
	bool upstream;
} FlowSlotRequests;

extern void fn_slot_read_requests(FlowSlot *slot, uint64 config_seq, FlowSlotRequests *out);
extern uint64 fn_slot_serving(FlowSlot *slot, FlowSlotRequest kind, FnTimeRange *range);
extern uint64 fn_slot_config_seq(FlowSlot *slot);
extern void fn_slot_follow_config(FlowSlot *slot, uint64 seq, bool paused);
/* What woke the worker: a restore's rows in the record, an upstream flow's write, a
 * commit's key marks. Taking one clears it and says whether it was set. */
typedef enum FlowSlotWakeup { FN_WAKE_RELOAD, FN_WAKE_UPSTREAM, FN_WAKE_KEYS } FlowSlotWakeup;
extern bool fn_slot_take_wakeup(FlowSlot *slot, FlowSlotWakeup what);
extern int64 fn_slot_take_fold_lo(FlowSlot *slot);
/* Key marks (slot_keys.c): a commit's note that it added some in the windows of
 * `hull` (at COMMIT: cannot fail; the fold's report too), taken by the worker as
 * FN_WAKE_KEYS and given back (noted again) when its run failed. */
extern void fn_slot_note_keys(FlowSlot *slot, FnTimeRange hull);
/* A flow worker's commit left key marks for the flow (a chain of flows): its worker
 * is woken and told, as a range mark's publication does (upstream_wrote). */
extern void fn_slot_wake_downstream(FlowSlot *slot);
extern void fn_slot_settle_fold(FlowSlot *slot, FnTimeRange window, bool folded);

/* the steps of a take and a give-back of ranges, under the slot's exclusive lock */
extern void fn_slot_stopped_locked(FlowSlot *slot, bool *dropped, bool *paused);
extern void fn_slot_begin_take_locked(FlowSlot *slot);
extern void fn_slot_end_take_locked(FlowSlot *slot);
extern void fn_slot_take_since_locked(FlowSlot *slot);
extern void fn_slot_put_back_since_locked(FlowSlot *slot, bool all);
extern void fn_slot_clean_since_locked(FlowSlot *slot);
extern void fn_slot_note_marks_locked(FlowSlot *slot, TimestampTz at, bool removals);
extern bool fn_slot_take_removals_locked(FlowSlot *slot, bool clear);
extern bool fn_slot_take_all_locked(FlowSlot *slot, FnDirtySet into);
extern void fn_slot_answer_locked(FlowSlot *slot, FlowSlotRequest kind, uint64 serving, int64 windows,
                                  bool ok);

/* The older of two `since` times, 0 meaning none. */
static inline TimestampTz fn_since_min(TimestampTz a, TimestampTz b) {
	return a == 0 ? b : (b == 0 ? a : Min(a, b));
}

#endif
