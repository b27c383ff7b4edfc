/*
 * flow_slot_fields.h: the fields of FlowSlot, for src/shmem/ only. Everyone else
 * holds a FlowSlot * and goes through the functions of flow_slots.h, which keep
 * the locking rules written at the top of that header.
 */
#ifndef FLOWNODE_FLOW_SLOT_FIELDS_H
#define FLOWNODE_FLOW_SLOT_FIELDS_H

#include "shmem/flow_slots.h"

#include "storage/condition_variable.h"
#include "storage/latch.h"

#include "shmem/slot_ranges.h"

struct FlowSlot {
	bool in_use;
	bool dropped; /* flow dropped: worker exits and frees the slot */
	Oid dboid;
	Oid catalog_relid; /* flownode.flow of that database: a new extension is a new key */
	int64 flow_id;
	int lock_index; /* into the flownode LWLock tranche */

	pid_t worker_pid; /* 0: no worker attached */
	Latch *worker_latch;
	TimestampTz worker_registered_at; /* a start was requested at; 0 when none pending */
	TimestampTz hold_until;           /* no restart before (DROP DATABASE in progress) */
	TimestampTz drop_db_until;        /* DROP DATABASE in progress: no worker attaches before */
	pid_t reserved_by;                /* an uncommitted create_flow holds it: neither start nor free it */
	/* the attached worker is inside a turn of this flow (a run, a flush, a request:
	 * fn_slot_begin_turn): the flow is not handed to another worker meanwhile */
	bool worker_busy;
	bool paused;         /* set by the commit that bumps config_seq (below) */
	uint64 acquired_seq; /* bumped whenever someone claims the slot: garbage collection
	                      * frees a slot only if nobody claimed it meanwhile */
	/* when the attached worker means to serve the flow next (its next evaluation or
	 * backfill chunk, published at the end of each turn): a worker stuck in another
	 * flow's turn past it hands the flow over (fn_slots_hand_over) */
	TimestampTz next_due;
	/* handed over by a stuck worker: the adopting worker keeps this schedule (0: not) */
	TimestampTz handed_due;
	FlowRunState state;
	/* some dirty window may have lost rows (an UPDATE or DELETE marked it, or it
	 * came back from the durable record): the next refresh that takes the rest of
	 * the set must also delete the sink groups that vanished */
	bool removals;
	/* rows were added to the flow's durable record by SQL (a restore): the worker
	 * reads it again (a worker reads it only when it starts otherwise) */
	bool reload_requested;
	/* an upstream flow's refresh (a flow worker's commit) marked windows of this
	 * flow, whose source is that flow's sink: an adaptive flow evaluates soon
	 * (next_eval_after_upstream) instead of a window's usual size later; cleared
	 * by the worker when it has taken it into its schedule */
	bool upstream_wrote;
	/* a commit added key marks (flownode.pending_keys) the worker has not looked
	 * at since (refresh/key_refresh.h); set at the worker's start too, for those of
	 * a crash or a restore */
	bool keys_pending;
	/* A refresh holds windows it took, from its take until it commits or gives them
	 * back: a commit that recorded windows meanwhile (or since it looked at the
	 * durable set) must not claim them in the durable set, since that refresh may
	 * trim its record without seeing the writers that would then skip theirs
	 * (commit_marks.c, publish_marks). refresh_seq counts the refreshes that ended. */
	bool refreshing;
	uint64 refresh_seq;

	/* alter_flow, pause_flow, resume_flow: bumped when one commits, so the worker reads
	 * its configuration again; `paused` is set at that commit too, so a flush that
	 * waits sees a pause at once (the catalog holds the truth across restarts) */
	uint64 config_seq;

	/* the flows view's lag: the commit time of the oldest change that may not be in
	 * the sink yet. dirty_since goes with the dirty set (set by the first commit into
	 * an empty set, 0 when it empties); held_since with the ranges the worker has
	 * taken out of it (a refresh's, a flush's backlog) until they are done or put
	 * back. A refresh of part of a set keeps the set's time: an upper bound. */
	TimestampTz dirty_since;
	TimestampTz held_since;

	/* flush_flow handshake: callers bump requested, the worker serves and bumps completed */
	uint64 flush_requested;
	uint64 flush_completed;
	int64 flush_windows;
	bool flush_failed;
	FnSlotError flush_error;    /* why the last flush served failed: the failure it stopped at, kept
	                             * apart from last_failure, which a later refresh may overwrite
	                             * before the caller reads it */
	ConditionVariable flush_cv; /* both handshakes' answers */

	/* refresh_flow handshake, the same way: the range is the hull of every request
	 * not served yet */
	uint64 repair_requested;
	uint64 repair_completed;
	FnTimeRange repair_range;
	int64 repair_windows;
	bool repair_failed;
	FnSlotError repair_error;

	/* The folded refresh of the open window (refresh/fold_state.h): the earliest time
	 * of the rows that commits into fold_window (any window while it is empty) added
	 * since the worker last looked, FN_TS_MIN when one may have removed rows or
	 * marked windows without their rows' times (PG_INT64_MAX: none; 0 after the slot
	 * was claimed, which makes the first look start the fold afresh) */
	int64 fold_lo;
	FnTimeRange fold_window;
	/* status for the flows view */
	TimestampTz last_success_at; /* end of the last successful refresh (or create_flow's fill) */
	TimestampTz last_run_at;     /* end of the last refresh, successful or not */
	int64 last_run_usec;
	int64 runs;
	int64 failures;
	int32 consecutive_failures; /* failed refreshes since the last success: > 0 means failing now */
	int64 rows_written;
	int64 folds; /* refreshes of the open window that folded its new rows in */
	/* the most recent failed refresh, kept after the flow heals; it is the current
	 * error (the view's last_error) only while consecutive_failures > 0 */
	TimestampTz last_failure_at;
	FnSlotError last_failure;
	/* the last scheduled evaluation: when it was due and when it started (the
	 * flows view's last_start_delay); written by the worker serving the flow */
	TimestampTz last_due_at;
	TimestampTz last_started_at;

	/* the dirty set, and the durable set: ranges known to be in flownode.pending */
	FnSlotRanges dirty;
	FnSlotRanges durable;
};

/* the sets' storage, the slot's exclusive lock held: emptied (the pool's part
 * freed), or moved back into the slot when they fit there again (flow_slots.c) */
extern void fn_slot_ranges_clear_locked(FlowSlot *slot);
extern void fn_slot_ranges_settle_locked(FlowSlot *slot);

#endif
