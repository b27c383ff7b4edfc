/*
 * batching_engine.c: the seed's BatchingEngine.
 *
 * - The source's row triggers (their WHEN clause: flownode.mark_row) map each written
 *   row to the window of its time value for every flow on the table, and add that
 *   window to a set kept in backend memory for the current (sub)transaction. Per
 *   row: one function call, the window (remembered: consecutive rows usually share
 *   one, and a row inside the set needs none), no SPI, no catalog.
 * - The flows of a table are cached per backend; the cache is filled from the
 *   catalog on a miss and invalidated by relcache callbacks.
 * - Marks become visible to workers only when the writer commits (invariant 2): at
 *   PRE_COMMIT the fallible work (claiming slots), at COMMIT a non-failing copy into
 *   shared memory. A rolled-back subtransaction's marks are dropped with it.
 * - Commit-time actions of create_flow/drop_flow/DROP EXTENSION: start or stop workers
 *   only once the catalog change is committed.
 */
#include "flownode/flownode.h"

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"
#include "executor/executor.h"
#include "utils/acl.h"
#include "utils/snapmgr.h"
#include "utils/lsyscache.h"
#include "catalog/namespace.h"

PG_FUNCTION_INFO_V1(flownode_mark_dirty);
PG_FUNCTION_INFO_V1(flownode_mark_insert);
PG_FUNCTION_INFO_V1(flownode_mark_row);
PG_FUNCTION_INFO_V1(flownode_mark_row_removed);
PG_FUNCTION_INFO_V1(flownode_mark_truncate);

/* Windows staged before a merge into the sorted set: a merge and, once the set is
 * full, a coalesce pass over it cost O(set + stage), so a deeper stage makes rows
 * scattered over time cheaper (256: a quarter fewer instructions per row than 64
 * with five flows, by callgrind), at 4 KiB per flow per transaction. */
#define LOCAL_STAGE 256

/* The marks one flow collected in one (sub)transaction. */
typedef struct LocalMarks {
	int64 flow_id;
	SubTransactionId subid;
	FlowSlot *slot;   /* claimed at PRE_COMMIT */
	bool recorded;    /* written to flownode.pending at PRE_COMMIT */
	bool removes;     /* an UPDATE or DELETE marked a window: groups may vanish */
	FnTimeRange last; /* the range added last: a repeat costs nothing */
	uint32 count;
	uint32 capacity;
	/* A window whose gap to a neighbouring range is below this joins that range at
	 * once (fn_ranges_absorb): 1 (touching only) until the set first coalesces, then
	 * about the gap a merge of a full stage would close (fn_dirty_merge_stage). */
	uint64 absorb_below;
	/* Windows not yet in `ranges`, in arrival order: inserting each one into the
	 * sorted set would shift the array every time; a full stage is sorted and merged
	 * in one pass (fn_dirty_add_batch). Everything that reads the set flushes it. */
	uint32 staged;
	FnTimeRange stage[LOCAL_STAGE];
	FnTimeRange ranges[FLEXIBLE_ARRAY_MEMBER]; /* capacity + LOCAL_STAGE entries */
} LocalMarks;

/* One flow of a source table, as the trigger needs it. */
typedef struct FlowMarker {
	int64 flow_id;
	Oid owner;
	Oid sink_relid;
	AttrNumber time_attnum;
	FnWindow *window;    /* NULL: window-less flow */
	int64 stride;        /* > 0: fixed stride from stride_anchor; 0: not known yet; -1: calendar */
	int64 stride_anchor; /* both copied from the core once (fn_window_stride): no call per row */
	LocalMarks *marks;   /* this transaction's set, if current */
	LocalTransactionId marks_lxid;
	uint64 marks_epoch; /* see marks_epoch */
} FlowMarker;

typedef struct SourceEntry {
	Oid relid; /* hash key */
	bool valid;
	Oid writer_checked; /* a role found allowed to write the table (may_mark) */
	int nflows;
	FlowMarker *flows;
	MemoryContext cxt;
} SourceEntry;

typedef enum PendingKind {
	PENDING_START,
	PENDING_DROP,
	PENDING_DROP_ALL,
	PENDING_TRIGGER_CLEANUP
} PendingKind;

typedef struct PendingAction {
	PendingKind kind;
	int64 flow_id;
	Oid owner;
	bool owner_can_login;
	Oid catalog_relid;      /* the source, for PENDING_TRIGGER_CLEANUP */
	SubTransactionId subid; /* undone if this subtransaction aborts */
} PendingAction;

static HTAB *source_cache = NULL;
static Oid cached_catalog_relid = InvalidOid;
static List *xact_marks = NIL;      /* LocalMarks *, in TopTransactionContext */
static List *pending_actions = NIL; /* PendingAction *, in TopTransactionContext */
static bool inflight = false;
static object_access_hook_type prev_object_access_hook = NULL;

static const FnTimeRange WINDOWLESS_MARK = {0, 1};

/* ---- the per-backend cache of flows by source table ---- */

static void invalidate_source(Datum arg, Oid relid) {
	HASH_SEQ_STATUS status;
	SourceEntry *e;

	fn_forget_catalog_relids(relid);
	fn_forget_when_clauses(relid);
	if (source_cache == NULL)
		return;
	if (OidIsValid(relid) && relid != cached_catalog_relid) {
		e = hash_search(source_cache, &relid, HASH_FIND, NULL);
		if (e)
			e->valid = false;
		return;
	}
	hash_seq_init(&status, source_cache);
	while ((e = hash_seq_search(&status)) != NULL)
		e->valid = false;
	cached_catalog_relid = InvalidOid;
}

static SourceEntry *source_entry(Oid relid) {
	static SourceEntry *last = NULL; /* rows of one statement hit one table: skip the hash */
	SourceEntry *e;
	bool found;
	List *configs;
	ListCell *lc;
	int i = 0;

	if (last != NULL && last->relid == relid && last->valid)
		return last; /* entries are never removed from the hash, only invalidated */

	if (source_cache == NULL) {
		HASHCTL ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(SourceEntry);
		ctl.hcxt = CacheMemoryContext;
		source_cache = hash_create("flownode sources", 32, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(source_cache, &relid, HASH_ENTER, &found);
	if (found && e->valid) {
		last = e;
		return e;
	}
	if (!found)
		e->cxt = NULL;
	if (e->cxt)
		MemoryContextDelete(e->cxt);
	e->cxt = NULL;
	e->valid = false;
	e->nflows = 0;
	e->flows = NULL;
	e->writer_checked = InvalidOid;

	cached_catalog_relid = fn_catalog_relid(false);
	configs = fn_load_flows_of_source(relid);
	e->cxt = AllocSetContextCreate(CacheMemoryContext, "flownode source", ALLOCSET_SMALL_SIZES);
	e->flows = MemoryContextAllocZero(e->cxt, sizeof(FlowMarker) * Max(1, list_length(configs)));
	foreach (lc, configs) {
		TaskConfig *cfg = lfirst(lc);
		FlowMarker *m = &e->flows[i++];
		MemoryContext old = MemoryContextSwitchTo(e->cxt);

		m->flow_id = cfg->flow_id;
		m->owner = cfg->owner;
		m->sink_relid = cfg->sink_relid;
		m->time_attnum = cfg->time_attnum;
		m->window = (cfg->window.kind == FN_WINDOW_NONE) ? NULL : fn_window_create(&cfg->window);
		MemoryContextSwitchTo(old);
	}
	e->nflows = i;
	e->valid = true;
	last = e;
	return e;
}

/* ---- the transaction's local marks ---- */

/*
 * Bumped whenever a subtransaction's set is freed (its abort, or its merge into the
 * parent's): a FlowMarker's cached pointer may then point at freed memory, which a
 * later set can reuse, so the cache is trusted only within one epoch.
 */
static uint64 marks_epoch = 0;

/* The (sub)transaction a row is marked in: read once per row, not once per flow. */
typedef struct MarkScope {
	LocalTransactionId lxid;
	SubTransactionId subid;
	uint64 epoch;
} MarkScope;

static inline MarkScope mark_scope(void) {
	MarkScope s = {MyProc->lxid, GetCurrentSubTransactionId(), marks_epoch};

	return s;
}

/* The flow's set for this (sub)transaction, found in the list or created. */
static pg_noinline LocalMarks *find_or_create_marks(FlowMarker *m, MarkScope scope) {
	SubTransactionId subid = scope.subid;
	LocalMarks *lm;
	ListCell *lc;
	MemoryContext old;

	foreach (lc, xact_marks) {
		lm = lfirst(lc);
		if (lm->flow_id == m->flow_id && lm->subid == subid)
			goto done;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	/* only the header is zeroed: the stage past `staged` and the ranges past `count`
	 * are never read */
	lm =
	    palloc(offsetof(LocalMarks, ranges) + sizeof(FnTimeRange) * (fn_local_ranges_per_flow + LOCAL_STAGE));
	memset(lm, 0, offsetof(LocalMarks, stage));
	lm->capacity = (uint32)fn_local_ranges_per_flow; /* the GUC may change mid-transaction */
	lm->flow_id = m->flow_id;
	lm->subid = subid;
	lm->last.start = lm->last.end = 0;
	lm->absorb_below = 1;
	xact_marks = lappend(xact_marks, lm);
	MemoryContextSwitchTo(old);
done:
	m->marks = lm;
	m->marks_lxid = scope.lxid;
	m->marks_epoch = scope.epoch;
	return lm;
}

/* Every row after a transaction's first finds its set here, without a lookup. */
static inline LocalMarks *current_marks(FlowMarker *m, MarkScope scope) {
	if (likely(m->marks && m->marks_lxid == scope.lxid && m->marks_epoch == scope.epoch &&
	           m->marks->subid == scope.subid))
		return m->marks;
	return find_or_create_marks(m, scope);
}

static inline FnDirtySet local_set(LocalMarks *lm) {
	FnDirtySet s = {lm->ranges, &lm->count, lm->capacity};

	return s;
}

/* Moves the staged windows into the sorted set and sets the gap below which the
 * windows that follow join its ranges in place. Cannot fail. */
static void flush_stage(LocalMarks *lm) {
	if (lm->staged == 0)
		return;
	lm->absorb_below =
	    fn_dirty_merge_stage(local_set(lm), lm->stage, lm->staged, LOCAL_STAGE, lm->absorb_below);
	lm->staged = 0;
}

static pg_attribute_always_inline void stage_range(LocalMarks *lm, FnTimeRange r) {
	lm->stage[lm->staged++] = r;
	lm->last = r;
	if (lm->staged == LOCAL_STAGE)
		flush_stage(lm);
}

/* r: a window in no range of the set, in the gap before ranges[pos]. A window next
 * to a range (or, once the set has coalesced, near one) joins it in place; others
 * are staged. */
static pg_attribute_always_inline void mark_window(LocalMarks *lm, uint32 pos, FnTimeRange r) {
	if (fn_ranges_absorb(lm->ranges, &lm->count, pos, r, lm->absorb_below)) {
		lm->last = r;
		return;
	}
	stage_range(lm, r);
}

/* Inlined into the per-flow loop: a call per flow and row was a tenth of its cost. */
static pg_attribute_always_inline void mark_value(FlowMarker *m, MarkScope scope, Datum d, bool isnull) {
	LocalMarks *lm = current_marks(m, scope);
	int64 ts;
	uint32 pos;
	FnTimeRange r;

	if (m->window == NULL) {
		if (lm->count == 0 && lm->staged == 0)
			stage_range(lm, WINDOWLESS_MARK);
		return;
	}
	if (isnull)
		return; /* a NULL time belongs to no window */
	ts = DatumGetInt64(d);
	if (TIMESTAMP_NOT_FINITE(ts))
		return; /* nor does an infinite one */
	if (ts >= lm->last.start && ts < lm->last.end)
		return;
	/* The set is a union of whole windows: a timestamp inside it needs no window.
	 * Rows scattered over time fill the set within a few hundred rows, after which
	 * nearly every row stops here (computing a calendar window is the costly part). */
	pos = fn_ranges_search(lm->ranges, lm->count, ts);
	if (pos < lm->count && lm->ranges[pos].start <= ts)
		return;
	if (m->stride > 0 && fn_stride_window(m->stride_anchor, m->stride, ts, &r)) {
		mark_window(lm, pos, r); /* no call into the core: rows scattered over time get here */
		return;
	}
	r = fn_window_of(m->window, ts);
	if (m->stride == 0 && fn_window_stride(m->window, &m->stride_anchor, &m->stride) < 0)
		m->stride = -1; /* calendar windows: always asked of the core */
	mark_window(lm, pos, r);
}

/*
 * The source's row triggers mark from their WHEN clause, not from a trigger body:
 *   AFTER INSERT ... FOR EACH ROW WHEN (flownode.mark_row(source, attnum, NEW.ts))
 * PostgreSQL evaluates an AFTER ROW trigger's WHEN as it would queue the event, with
 * the row at hand, and queues nothing when it is false, which it always is. So a
 * row costs one function call: no after-trigger event, no copy of the row into a
 * transition table, no re-fetch (COPY keeps its multi-row inserts: only BEFORE ROW
 * triggers turn those off). One trigger per (source, time column); attnum 0 stands
 * for window-less flows, which any row dirties.
 *
 * The function is callable by anyone (a WHEN clause runs with the writer's
 * EXECUTE privilege), so it marks only for a role that may write the table: a
 * direct call by someone else changes nothing.
 */
static bool may_mark(SourceEntry *e) {
	Oid user = GetUserId();

	if (user == e->writer_checked)
		return true;
	if (pg_class_aclcheck(e->relid, user, ACL_INSERT | ACL_UPDATE | ACL_DELETE) != ACLCHECK_OK &&
	    pg_attribute_aclcheck_all(e->relid, user, ACL_INSERT | ACL_UPDATE, ACLMASK_ANY) != ACLCHECK_OK)
		return false;
	e->writer_checked = user;
	return true;
}

static void mark_row(FunctionCallInfo fcinfo, bool removes) {
	SourceEntry *e;
	int16 attnum;
	MarkScope scope;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return;
	e = source_entry(PG_GETARG_OID(0));
	if (e->nflows == 0 || !may_mark(e))
		return;
	attnum = PG_GETARG_INT16(1);
	scope = mark_scope();
	for (int i = 0; i < e->nflows; i++) {
		FlowMarker *m = &e->flows[i];

		if (m->time_attnum != attnum)
			continue;
		mark_value(m, scope, PG_GETARG_DATUM(2), PG_ARGISNULL(2));
		if (removes) {
			if (PG_NARGS() > 3)
				mark_value(m, scope, PG_GETARG_DATUM(3), PG_ARGISNULL(3));
			current_marks(m, scope)->removes = true;
		}
	}
}

/* flownode.mark_row(source oid, attnum int2, ts): an inserted row. Always false. */
Datum flownode_mark_row(PG_FUNCTION_ARGS) {
	mark_row(fcinfo, false);
	PG_RETURN_BOOL(false);
}

/* flownode.mark_row_removed(source oid, attnum int2, old_ts, new_ts): an updated or
 * deleted row (its old window loses it; groups may vanish). Always false. */
Datum flownode_mark_row_removed(PG_FUNCTION_ARGS) {
	mark_row(fcinfo, true);
	PG_RETURN_BOOL(false);
}

/* The row triggers' own functions never run: their WHEN clause is always false. */
Datum flownode_mark_dirty(PG_FUNCTION_ARGS) {
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.mark_dirty() must be called as an AFTER ROW trigger")));
	return PointerGetDatum(NULL);
}

Datum flownode_mark_insert(PG_FUNCTION_ARGS) {
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.mark_insert() must be called as an AFTER INSERT ROW trigger")));
	return PointerGetDatum(NULL);
}

/*
 * TRUNCATE empties the sinks of every flow on the table, in the truncating
 * transaction and as each flow's owner. A refresh in flight holds a lock on the
 * source that TRUNCATE waits for, so it cannot write stale rows afterwards.
 */
Datum flownode_mark_truncate(PG_FUNCTION_ARGS) {
	TriggerData *td = (TriggerData *)fcinfo->context;
	SourceEntry *e;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.mark_truncate() must be called as a TRUNCATE trigger")));
	e = source_entry(RelationGetRelid(td->tg_relation));
	for (int i = 0; i < e->nflows; i++) {
		FlowMarker *m = &e->flows[i];
		SpiAs scope;
		/* TRUNCATE when the owner may (a sink it created), else DELETE (an existing
		 * sink needs only DELETE); without either the writer gets the error */
		bool can_truncate = pg_class_aclcheck(m->sink_relid, m->owner, ACL_TRUNCATE) == ACLCHECK_OK;
		char *sql = psprintf("%s %s", can_truncate ? "TRUNCATE ONLY" : "DELETE FROM ONLY",
		                     fn_qualified_relname(m->sink_relid));

		fn_spi_begin_as(&scope, m->owner, 0);
		if (SPI_execute(sql, false, 0) < 0)
			elog(ERROR, "flownode: emptying sink failed");
		fn_spi_end(&scope);
	}
	return PointerGetDatum(NULL);
}

/* ---- transaction callbacks ---- */

static void undo_action(PendingAction *a);

static void subxact_callback(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid,
                             void *arg) {
	ListCell *lc;

	if (event == SUBXACT_EVENT_ABORT_SUB) {
		foreach (lc, pending_actions) {
			PendingAction *a = lfirst(lc);

			if (a->subid == mySubid) {
				undo_action(a);
				pending_actions = foreach_delete_current(pending_actions, lc);
			}
		}
		foreach (lc, xact_marks) {
			LocalMarks *lm = lfirst(lc);

			if (lm->subid == mySubid) {
				xact_marks = foreach_delete_current(xact_marks, lc);
				pfree(lm);
				marks_epoch++;
			}
		}
	} else if (event == SUBXACT_EVENT_COMMIT_SUB) {
		foreach (lc, pending_actions) {
			PendingAction *a = lfirst(lc);

			if (a->subid == mySubid)
				a->subid = parentSubid;
		}
		foreach (lc, xact_marks) {
			LocalMarks *child = lfirst(lc);
			LocalMarks *parent = NULL;
			ListCell *lc2;

			if (child->subid != mySubid)
				continue;
			foreach (lc2, xact_marks) {
				LocalMarks *p = lfirst(lc2);

				if (p->flow_id == child->flow_id && p->subid == parentSubid)
					parent = p;
			}
			if (parent == NULL)
				child->subid = parentSubid;
			else {
				flush_stage(child);
				flush_stage(parent);
				fn_dirty_add_all(local_set(parent), child->ranges, child->count);
				parent->last.start = parent->last.end = 0;
				parent->removes |= child->removes;
				xact_marks = foreach_delete_current(xact_marks, lc);
				pfree(child);
				marks_epoch++;
			}
		}
	}
}

/*
 * A window that the flow's dirty set already holds inside a wider range (the set
 * coalesced it with its neighbours) will be refreshed as part of that range anyway,
 * so the writer records and publishes the whole range instead of its window alone.
 * Recording more than was written is safe (a refresh of a clean window rewrites
 * what is there), and the next writer into that range finds it durably recorded and
 * skips its record: rows scattered over time stop paying one record per commit once
 * the set has coalesced. Called under the slot's lock.
 */
static void widen_to_dirty_ranges(LocalMarks *lm, FnTimeRange *wide) {
	FnDirtySet dirty = fn_slot_dirty_set(lm->slot);
	uint32 n = lm->count;
	bool changed = false;

	for (uint32 i = 0; i < n; i++) {
		wide[i] = lm->ranges[i];
		if (fn_dirty_containing(dirty, lm->ranges[i], &wide[i]))
			changed = true;
	}
	if (changed) {
		/* wider ranges can only merge: the set never needs more room than before */
		lm->count = 0;
		fn_dirty_add_all(local_set(lm), wide, n);
	}
}

/*
 * Claims (fallibly) the slots the commit will publish to, and records the marks
 * durably in this transaction, unless the slot's durable set already holds them.
 * The writer registers as in flight first: a refresh that removes windows from the
 * durable set waits for every writer in flight before taking its snapshot, so a
 * writer that skipped its record because of a window the refresh is about to clear
 * is always visible to that refresh.
 */
static void pre_commit(void) {
	ListCell *lc;
	Oid catalog = InvalidOid;

	/* a sink dropped with its flows: the source's triggers go with the last flow */
	foreach (lc, pending_actions) {
		PendingAction *a = lfirst(lc);

		if (a->kind == PENDING_TRIGGER_CLEANUP) {
			PushActiveSnapshot(GetTransactionSnapshot());
			fn_remove_triggers_if_unused(a->catalog_relid);
			PopActiveSnapshot();
		}
	}
	if (xact_marks == NIL)
		return;
	catalog = fn_catalog_relid(true);
	fn_inflight_begin();
	inflight = true;
	foreach (lc, xact_marks) {
		LocalMarks *lm = lfirst(lc);
		bool covered = true;
		FnTimeRange *wide;

		flush_stage(lm);
		lm->slot = OidIsValid(catalog) ? fn_acquire_slot(MyDatabaseId, catalog, lm->flow_id, true) : NULL;
		lm->recorded = false;
		if (lm->slot == NULL || lm->count == 0)
			continue;
		wide = palloc(sizeof(FnTimeRange) * lm->count);
		LWLockAcquire(fn_slot_lock(lm->slot), LW_SHARED);
		for (uint32 i = 0; i < lm->count && covered; i++)
			covered = fn_dirty_covers(fn_slot_durable_set(lm->slot), lm->ranges[i]);
		if (!covered)
			widen_to_dirty_ranges(lm, wide);
		LWLockRelease(fn_slot_lock(lm->slot));
		pfree(wide);
		if (!covered) {
			fn_record_pending(lm->flow_id, lm->ranges, lm->count);
			lm->recorded = true;
		}
	}
}

/* Runs at COMMIT: nothing here may fail. */
static void publish_marks(void) {
	ListCell *lc;

	foreach (lc, xact_marks) {
		LocalMarks *lm = lfirst(lc);
		FlowSlot *slot = lm->slot;

		if (slot == NULL || lm->count == 0)
			continue;
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		if (slot->in_use && slot->flow_id == lm->flow_id && slot->dboid == MyDatabaseId && !slot->dropped) {
			fn_dirty_add_all(fn_slot_dirty_set(slot), lm->ranges, lm->count);
			slot->removals |= lm->removes;
			for (uint32 i = 0; lm->recorded && i < lm->count; i++)
				fn_durable_add(fn_slot_durable_set(slot), lm->ranges[i]);
		}
		LWLockRelease(fn_slot_lock(slot));
	}
}

static void stop_flow_slot(FlowSlot *slot) {
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

static void run_commit_actions(void) {
	ListCell *lc;

	foreach (lc, pending_actions) {
		PendingAction *a = lfirst(lc);

		if (a->kind == PENDING_TRIGGER_CLEANUP)
			continue; /* done at PRE_COMMIT */
		if (a->kind == PENDING_START)
			(void)fn_start_flow_worker(MyDatabaseId, a->catalog_relid, a->flow_id, a->owner,
			                           a->owner_can_login);
		else {
			LWLockAcquire(fn_registry_lock(), LW_SHARED);
			for (int i = 0; i < fn_slot_count(); i++) {
				FlowSlot *slot = fn_slot_at(i);
				bool match = slot->in_use && slot->dboid == MyDatabaseId &&
				             slot->catalog_relid == a->catalog_relid &&
				             (a->kind == PENDING_DROP_ALL || slot->flow_id == a->flow_id);

				if (match) {
					LWLockRelease(fn_registry_lock());
					stop_flow_slot(slot);
					LWLockAcquire(fn_registry_lock(), LW_SHARED);
				}
			}
			LWLockRelease(fn_registry_lock());
		}
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

static void xact_callback(XactEvent event, void *arg) {
	switch (event) {
	case XACT_EVENT_PRE_COMMIT:
		pre_commit();
		break;
	case XACT_EVENT_PRE_PREPARE:
		if (xact_marks != NIL || pending_actions != NIL)
			ereport(ERROR,
			        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			         errmsg("cannot PREPARE a transaction that changed a flow's source table or a flow"),
			         errhint("Commit it directly; flownode publishes dirty windows at commit.")));
		break;
	case XACT_EVENT_COMMIT:
		publish_marks();
		if (inflight)
			fn_inflight_end();
		run_commit_actions();
		inflight = false;
		xact_marks = NIL;
		pending_actions = NIL;
		break;
	case XACT_EVENT_ABORT:
		if (inflight)
			fn_inflight_end();
		run_abort_actions();
		inflight = false;
		xact_marks = NIL;
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
	a->owner_can_login = OidIsValid(owner) && fn_role_can_login(owner);
	a->catalog_relid = catalog_relid;
	a->subid = GetCurrentSubTransactionId();
	pending_actions = lappend(pending_actions, a);
	MemoryContextSwitchTo(old);
}

void fn_on_commit_start_worker(int64 flow_id, Oid owner) {
	add_pending(PENDING_START, flow_id, owner, fn_catalog_relid(false));
}

void fn_on_commit_drop_flow(int64 flow_id) {
	add_pending(PENDING_DROP, flow_id, InvalidOid, fn_catalog_relid(false));
}

/*
 * DROP EXTENSION (or DROP SCHEMA flownode CASCADE) drops the flow catalog before
 * the extension itself, so the catalog's own drop is what tells us: every flow of
 * this database stops when that transaction commits.
 */
static void object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg) {
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP || classId != RelationRelationId || subId != 0 || !IsTransactionState())
		return;
	if (objectId == fn_catalog_relid(true))
		add_pending(PENDING_DROP_ALL, 0, InvalidOid, objectId);
	else if (get_rel_relkind(objectId) == RELKIND_RELATION &&
	         get_rel_persistence(objectId) != RELPERSISTENCE_TEMP && OidIsValid(fn_catalog_relid(true)) &&
	         get_rel_namespace(objectId) != get_namespace_oid(FLOWNODE_SCHEMA, true))
		fn_drop_flows_of_relation(objectId);
}

void fn_on_pre_commit_cleanup_triggers(Oid source_relid) {
	add_pending(PENDING_TRIGGER_CLEANUP, 0, InvalidOid, source_relid);
}

void fn_engine_init(void) {
	static bool done = false;

	if (done)
		return;
	done = true;
	RegisterXactCallback(xact_callback, NULL);
	fn_when_cache_init();
	RegisterSubXactCallback(subxact_callback, NULL);
	CacheRegisterRelcacheCallback(invalidate_source, (Datum)0);
	prev_object_access_hook = object_access_hook;
	object_access_hook = object_access;
}
