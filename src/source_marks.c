/*
 * source_marks.c: the marking half of the seed's BatchingEngine.
 *
 * - The source's row triggers (their WHEN clause: flownode.mark_row) map each written
 *   row to the window of its time value for every group of the table's flows whose
 *   windows nest (MarkGroup), and add that window to a set kept in backend memory for
 *   the current (sub)transaction. Per row: one function call, the window
 *   (remembered: consecutive rows usually share one, and a row inside the set needs
 *   none), no SPI, no catalog. At PRE_COMMIT each flow's own windows are derived
 *   from its group's set.
 * - The flows of a table are cached per backend; the cache is filled from the
 *   catalog on a miss and invalidated by relcache callbacks.
 * - Marks become visible to workers only when the writer commits (invariant 2): at
 *   PRE_COMMIT the fallible work (claiming slots, the durable record), at COMMIT a
 *   non-failing copy into shared memory. A rolled-back subtransaction's marks are
 *   dropped with it.
 * - TRUNCATE of a source empties its flows' sinks.
 */
#include "flownode/flownode.h"

#include "access/xact.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/acl.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(flownode_mark_dirty);
PG_FUNCTION_INFO_V1(flownode_mark_insert);
PG_FUNCTION_INFO_V1(flownode_mark_row);
PG_FUNCTION_INFO_V1(flownode_mark_row_removed);
PG_FUNCTION_INFO_V1(flownode_mark_truncate);

/* Windows staged before a merge into the sorted set: a merge and, once the set is
 * full, a coalesce pass over it cost O(set + stage), so a deeper stage makes rows
 * scattered over time cheaper (256: a quarter fewer instructions per row than 64
 * with five flows, by callgrind), at 4 KiB per group of flows per transaction. */
#define LOCAL_STAGE 256

/*
 * The marks one group of flows (MarkGroup) collected in one (sub)transaction: the
 * windows of the group's marking window that the transaction wrote rows into.
 */
typedef struct LocalMarks {
	Oid relid; /* key: source table, time column, the group's leading flow, subtransaction */
	AttrNumber time_attnum;
	int64 leader_id;
	SubTransactionId subid;
	int nmembers;      /* the flows these marks are for (every flow of the group when a */
	int64 *member_ids; /* row was marked; TopTransactionContext) */
	bool removes;      /* an UPDATE or DELETE marked a window: sink rows may vanish */
	FnTimeRange last;  /* the range added last: a repeat costs nothing */
	uint32 count;
	uint32 capacity;
	/* A window whose gap to a neighbouring range is below this joins that range at
	 * once (fn_ranges_absorb): 1 (touching only) until the set first coalesces, then
	 * about the gap a merge of a full stage would close (fn_dirty_merge_stage). */
	uint64 absorb_below;
	/* Windows not yet in `ranges`, in arrival order: inserting each one into the
	 * sorted set would shift the array every time; a full stage is sorted and merged
	 * in one pass (fn_dirty_merge_stage). Everything that reads the set flushes it. */
	uint32 staged;
	FnTimeRange stage[LOCAL_STAGE];
	FnTimeRange ranges[FLEXIBLE_ARRAY_MEMBER]; /* capacity + LOCAL_STAGE entries */
} LocalMarks;

/* What one flow publishes when the transaction commits, built at PRE_COMMIT from the
 * LocalMarks it is a member of (TopTransactionContext). */
typedef struct FlowCommit {
	int64 flow_id;
	FlowSlot *slot; /* claimed at PRE_COMMIT */
	bool recorded;  /* written to flownode.pending at PRE_COMMIT */
	bool removes;
	uint32 count;
	uint32 capacity;
	FnTimeRange *ranges; /* the flow's own windows */
} FlowCommit;

/* One flow of a source table, as the trigger needs it. */
typedef struct FlowMarker {
	int64 flow_id;
	Oid owner;
	Oid sink_relid;
	AttrNumber time_attnum;
	FnWindowSpec spec;
	FnWindow *window;    /* NULL: window-less flow */
	int64 stride;        /* > 0: fixed stride from stride_anchor; -1: calendar */
	int64 stride_anchor; /* both copied from the core once (fn_window_stride): no call per row */
} FlowMarker;

/*
 * Flows on one time column whose windows are all unions of one flow's windows (the
 * leader's: the finest fixed stride, every other one a multiple of it on the same
 * grid; or the same calendar window) are marked once per row, in the leader's
 * windows, and each flow's own windows are derived at PRE_COMMIT (round_to_windows).
 * So a row costs one marking per group, not per flow: five flows of 1 minute, 5
 * minutes, an hour and a day on one column are one group.
 */
typedef struct MarkGroup {
	FlowMarker *leader; /* whose windows the group marks in (its time column, window, stride) */
	int nmembers;
	int64 *member_ids;
	LocalMarks *marks; /* this transaction's set, if current */
	LocalTransactionId marks_lxid;
	uint64 marks_epoch; /* see marks_epoch */
} MarkGroup;

typedef struct SourceEntry {
	Oid relid; /* hash key */
	bool valid;
	Oid writer_checked; /* a role found allowed to write the table (may_mark) */
	int nflows;
	FlowMarker *flows;
	int ngroups;
	MarkGroup *groups;
	MemoryContext cxt;
} SourceEntry;

static HTAB *source_cache = NULL;
static Oid cached_catalog_relid = InvalidOid;
static List *xact_marks = NIL;   /* LocalMarks *, in TopTransactionContext */
static List *xact_commits = NIL; /* FlowCommit *, built at PRE_COMMIT */
static bool inflight = false;    /* registered as a writer in flight (fn_inflight_begin) */

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

/* A fixed stride's grid, copied from the core once; -1 for calendar windows. */
static void learn_stride(FlowMarker *m) {
	int known;

	m->stride = -1;
	if (m->window == NULL)
		return;
	known = fn_window_stride(m->window, &m->stride_anchor, &m->stride);
	if (known == 0) {
		(void)fn_window_of(m->window, 0); /* the anchor is a window PostgreSQL computed */
		known = fn_window_stride(m->window, &m->stride_anchor, &m->stride);
	}
	if (known != 1)
		m->stride = -1;
}

static bool same_spec(const FnWindowSpec *a, const FnWindowSpec *b) {
	return a->kind == b->kind && a->with_time_zone == b->with_time_zone && a->stride_time == b->stride_time &&
	       a->stride_day == b->stride_day && a->origin == b->origin &&
	       strncmp(a->unit, b->unit, FN_UNIT_LEN) == 0 && strncmp(a->zone, b->zone, FN_ZONE_LEN) == 0;
}

/* Whether every window of f is a union of the leader's windows. */
static bool nests_in(const FlowMarker *f, const FlowMarker *leader) {
	if (f->time_attnum != leader->time_attnum)
		return false;
	if (f->window == NULL || leader->window == NULL)
		return f->window == NULL && leader->window == NULL;
	if (f->stride > 0 && leader->stride > 0)
		return fn_stride_nests(f->stride_anchor, f->stride, leader->stride_anchor, leader->stride);
	return f->stride < 0 && leader->stride < 0 && same_spec(&f->spec, &leader->spec);
}

/* Finest fixed strides first (they lead), then calendar windows, then window-less. */
static int flow_order(const void *a, const void *b) {
	const FlowMarker *x = *(FlowMarker *const *)a, *y = *(FlowMarker *const *)b;
	int64 kx = x->window == NULL ? PG_INT64_MAX : x->stride > 0 ? x->stride : PG_INT64_MAX - 1;
	int64 ky = y->window == NULL ? PG_INT64_MAX : y->stride > 0 ? y->stride : PG_INT64_MAX - 1;

	if (kx != ky)
		return kx < ky ? -1 : 1;
	return x->flow_id < y->flow_id ? -1 : x->flow_id > y->flow_id ? 1 : 0;
}

static void build_groups(SourceEntry *e) {
	FlowMarker **order = palloc(sizeof(FlowMarker *) * Max(1, e->nflows));

	e->groups = MemoryContextAllocZero(e->cxt, sizeof(MarkGroup) * Max(1, e->nflows));
	for (int i = 0; i < e->nflows; i++)
		order[i] = &e->flows[i];
	qsort(order, e->nflows, sizeof(FlowMarker *), flow_order);
	for (int i = 0; i < e->nflows; i++) {
		FlowMarker *f = order[i];
		MarkGroup *g = NULL;

		for (int k = 0; k < e->ngroups && g == NULL; k++)
			if (nests_in(f, e->groups[k].leader))
				g = &e->groups[k];
		if (g == NULL) {
			g = &e->groups[e->ngroups++];
			g->leader = f;
			g->member_ids = MemoryContextAlloc(e->cxt, sizeof(int64) * e->nflows);
		}
		g->member_ids[g->nmembers++] = f->flow_id;
	}
	pfree(order);
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
	e->ngroups = 0;
	e->groups = NULL;
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
		m->spec = cfg->window;
		m->window = (cfg->window.kind == FN_WINDOW_NONE) ? NULL : fn_window_create(&cfg->window);
		MemoryContextSwitchTo(old);
		learn_stride(m);
	}
	e->nflows = i;
	build_groups(e);
	e->valid = true;
	last = e;
	return e;
}

/* ---- the transaction's local marks ---- */

/*
 * Bumped whenever a subtransaction's set is freed (its abort, or its merge into the
 * parent's): a MarkGroup's cached pointer may then point at freed memory, which a
 * later set can reuse, so the cache is trusted only within one epoch.
 */
static uint64 marks_epoch = 0;

/* The (sub)transaction a row is marked in: read once per row, not once per group. */
typedef struct MarkScope {
	LocalTransactionId lxid;
	SubTransactionId subid;
	uint64 epoch;
} MarkScope;

static inline MarkScope mark_scope(void) {
	MarkScope s = {MyProc->lxid, GetCurrentSubTransactionId(), marks_epoch};

	return s;
}

/* Adds the flows of ids that the set is not for yet (the group grew: a flow was
 * created on the table in this transaction). */
static void add_members(LocalMarks *lm, const int64 *ids, int n) {
	for (int i = 0; i < n; i++) {
		bool known = false;

		for (int k = 0; k < lm->nmembers && !known; k++)
			known = lm->member_ids[k] == ids[i];
		if (known)
			continue;
		lm->member_ids = lm->member_ids ? repalloc(lm->member_ids, sizeof(int64) * (lm->nmembers + 1))
		                                : MemoryContextAlloc(TopTransactionContext, sizeof(int64));
		lm->member_ids[lm->nmembers++] = ids[i];
	}
}

/* The group's set for this (sub)transaction, found in the list or created. */
static pg_noinline LocalMarks *find_or_create_marks(SourceEntry *e, MarkGroup *g, MarkScope scope) {
	SubTransactionId subid = scope.subid;
	LocalMarks *lm;
	ListCell *lc;
	MemoryContext old;

	foreach (lc, xact_marks) {
		lm = lfirst(lc);
		if (lm->relid == e->relid && lm->time_attnum == g->leader->time_attnum &&
		    lm->leader_id == g->leader->flow_id && lm->subid == subid) {
			add_members(lm, g->member_ids, g->nmembers);
			goto done;
		}
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	/* only the header is zeroed: the stage past `staged` and the ranges past `count`
	 * are never read */
	lm =
	    palloc(offsetof(LocalMarks, ranges) + sizeof(FnTimeRange) * (fn_local_ranges_per_flow + LOCAL_STAGE));
	memset(lm, 0, offsetof(LocalMarks, stage));
	lm->capacity = (uint32)fn_local_ranges_per_flow; /* the GUC may change mid-transaction */
	lm->relid = e->relid;
	lm->time_attnum = g->leader->time_attnum;
	lm->leader_id = g->leader->flow_id;
	lm->subid = subid;
	lm->last.start = lm->last.end = 0;
	lm->absorb_below = 1;
	lm->member_ids = palloc(sizeof(int64) * g->nmembers);
	memcpy(lm->member_ids, g->member_ids, sizeof(int64) * g->nmembers);
	lm->nmembers = g->nmembers;
	xact_marks = lappend(xact_marks, lm);
	MemoryContextSwitchTo(old);
done:
	g->marks = lm;
	g->marks_lxid = scope.lxid;
	g->marks_epoch = scope.epoch;
	return lm;
}

/* Every row after a transaction's first finds its set here, without a lookup. */
static inline LocalMarks *current_marks(SourceEntry *e, MarkGroup *g, MarkScope scope) {
	if (likely(g->marks && g->marks_lxid == scope.lxid && g->marks_epoch == scope.epoch &&
	           g->marks->subid == scope.subid))
		return g->marks;
	return find_or_create_marks(e, g, scope);
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

/* Inlined into the per-group loop: a call per group and row was a tenth of its cost. */
static pg_attribute_always_inline void mark_value(SourceEntry *e, MarkGroup *g, MarkScope scope, Datum d,
                                                  bool isnull) {
	LocalMarks *lm = current_marks(e, g, scope);
	const FlowMarker *leader = g->leader;
	int64 ts;
	uint32 pos;
	FnTimeRange r;

	if (leader->window == NULL) {
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
	if (leader->stride > 0 && fn_stride_window(leader->stride_anchor, leader->stride, ts, &r)) {
		mark_window(lm, pos, r); /* no call into the core: rows scattered over time get here */
		return;
	}
	mark_window(lm, pos, fn_window_of(leader->window, ts));
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
	for (int i = 0; i < e->ngroups; i++) {
		MarkGroup *g = &e->groups[i];

		if (g->leader->time_attnum != attnum)
			continue;
		mark_value(e, g, scope, PG_GETARG_DATUM(2), PG_ARGISNULL(2));
		if (removes) {
			if (PG_NARGS() > 3)
				mark_value(e, g, scope, PG_GETARG_DATUM(3), PG_ARGISNULL(3));
			current_marks(e, g, scope)->removes = true;
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

/* Whether every flow a's marks are for, b's are for too. */
static bool members_within(const LocalMarks *a, const LocalMarks *b) {
	for (int i = 0; i < a->nmembers; i++) {
		bool found = false;

		for (int k = 0; k < b->nmembers && !found; k++)
			found = b->member_ids[k] == a->member_ids[i];
		if (!found)
			return false;
	}
	return true;
}

/* A subtransaction's marks: dropped with it, or handed to its parent. */
void fn_marks_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid) {
	ListCell *lc;

	if (event == SUBXACT_EVENT_ABORT_SUB) {
		foreach (lc, xact_marks) {
			LocalMarks *lm = lfirst(lc);

			if (lm->subid == mySubid) {
				xact_marks = foreach_delete_current(xact_marks, lc);
				if (lm->member_ids)
					pfree(lm->member_ids);
				pfree(lm);
				marks_epoch++;
			}
		}
	} else if (event == SUBXACT_EVENT_COMMIT_SUB) {
		foreach (lc, xact_marks) {
			LocalMarks *child = lfirst(lc);
			LocalMarks *parent = NULL;
			ListCell *lc2;

			if (child->subid != mySubid)
				continue;
			foreach (lc2, xact_marks) {
				LocalMarks *p = lfirst(lc2);

				if (p->relid == child->relid && p->time_attnum == child->time_attnum &&
				    p->leader_id == child->leader_id && p->subid == parentSubid)
					parent = p;
			}
			/* a child for flows the parent's set is not for (created in the child)
			 * moves up as a set of its own: merging would allocate, here */
			if (parent == NULL || !members_within(child, parent))
				child->subid = parentSubid;
			else {
				flush_stage(child);
				flush_stage(parent);
				fn_dirty_add_all(local_set(parent), child->ranges, child->count);
				parent->last.start = parent->last.end = 0;
				parent->removes |= child->removes;
				xact_marks = foreach_delete_current(xact_marks, lc);
				if (child->member_ids)
					pfree(child->member_ids);
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
 * the set has coalesced. Called under the slot's lock. In place, in one pass: the
 * ranges are sorted and so are the dirty ranges that hold them, so widened ranges
 * can only merge with the one before.
 */
static void widen_to_dirty_ranges(FlowCommit *fc) {
	FnDirtySet dirty = fn_slot_dirty_set(fc->slot);
	uint32 ndirty = *dirty.count;
	uint32 k = 0;

	for (uint32 i = 0; i < fc->count; i++) {
		FnTimeRange w = fc->ranges[i];
		uint32 d = fn_ranges_search(dirty.ranges, ndirty, w.start);

		if (d < ndirty && dirty.ranges[d].start <= w.start && w.end <= dirty.ranges[d].end)
			w = dirty.ranges[d];
		if (k > 0 && w.start <= fc->ranges[k - 1].end)
			fc->ranges[k - 1].end = Max(fc->ranges[k - 1].end, w.end);
		else
			fc->ranges[k++] = w;
	}
	fc->count = k;
}

/* The window of ts in the flow's own windows. */
static FnTimeRange window_at(FlowMarker *m, int64 ts) {
	FnTimeRange r;

	if (m->stride > 0 && fn_stride_window(m->stride_anchor, m->stride, ts, &r))
		return r;
	return fn_window_of(m->window, ts);
}

/*
 * The flow's own windows over a set marked in its group leader's windows: each
 * range widened to the flow's windows at both ends, in one pass (sorted ranges stay
 * sorted; widened neighbours can only touch or overlap the one before). Every
 * timestamp of a range lies in a window of the result, whatever the windows are;
 * when they nest (MarkGroup), the result is exactly the flow's windows that the
 * transaction wrote rows into, as marking in them would have found.
 */
static uint32 round_to_windows(FlowMarker *m, const LocalMarks *lm, FnTimeRange *out) {
	uint32 k = 0;

	if (m->window == NULL || m->flow_id == lm->leader_id) {
		memcpy(out, lm->ranges, sizeof(FnTimeRange) * lm->count);
		return lm->count;
	}
	for (uint32 i = 0; i < lm->count; i++) {
		FnTimeRange r = {window_at(m, lm->ranges[i].start).start, window_at(m, lm->ranges[i].end - 1).end};

		if (k > 0 && r.start <= out[k - 1].end)
			out[k - 1].end = Max(out[k - 1].end, r.end);
		else
			out[k++] = r;
	}
	return k;
}

static FlowMarker *find_flow(SourceEntry *e, int64 flow_id) {
	for (int i = 0; i < e->nflows; i++)
		if (e->flows[i].flow_id == flow_id)
			return &e->flows[i];
	return NULL;
}

/* The flow's commit; a new one has room for `count` ranges (its first set's). */
static FlowCommit *flow_commit(int64 flow_id, uint32 count) {
	ListCell *lc;
	FlowCommit *fc;
	MemoryContext old;

	foreach (lc, xact_commits) {
		fc = lfirst(lc);
		if (fc->flow_id == flow_id)
			return fc;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	fc = palloc0(sizeof(FlowCommit));
	fc->flow_id = flow_id;
	fc->capacity = Max(count, 1);
	fc->ranges = palloc(sizeof(FnTimeRange) * fc->capacity);
	xact_commits = lappend(xact_commits, fc);
	MemoryContextSwitchTo(old);
	return fc;
}

/* Each flow's windows, from the sets of the groups it was marked in. */
static void build_flow_commits(void) {
	ListCell *lc;

	foreach (lc, xact_marks) {
		LocalMarks *lm = lfirst(lc);
		SourceEntry *e;

		flush_stage(lm);
		if (lm->count == 0)
			continue;
		e = source_entry(lm->relid);
		for (int i = 0; i < lm->nmembers; i++) {
			FlowMarker *m = find_flow(e, lm->member_ids[i]);
			FlowCommit *fc;

			if (m == NULL)
				continue; /* dropped in this transaction */
			fc = flow_commit(m->flow_id, lm->count);
			fc->removes |= lm->removes;
			if (fc->count == 0 && lm->count <= fc->capacity)
				fc->count = round_to_windows(m, lm, fc->ranges);
			else {
				/* the flow was in two groups (they changed in this transaction):
				 * both sets, coalesced to one set's capacity if need be */
				FnTimeRange *tmp = palloc(sizeof(FnTimeRange) * lm->count);
				FnDirtySet set;

				if (fc->capacity < lm->capacity) {
					fc->ranges = repalloc(fc->ranges, sizeof(FnTimeRange) * lm->capacity);
					fc->capacity = lm->capacity;
				}
				set = (FnDirtySet){fc->ranges, &fc->count, fc->capacity};
				fn_dirty_add_all(set, tmp, round_to_windows(m, lm, tmp));
				pfree(tmp);
			}
		}
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
void fn_marks_pre_commit(void) {
	ListCell *lc;
	Oid catalog = InvalidOid;
	PendingWriter *writer = NULL;

	if (xact_marks == NIL)
		return;
	catalog = fn_catalog_relid(true);
	if (!OidIsValid(catalog))
		return; /* the extension was dropped in this transaction: no flow is left */
	/* the flows of a table may have to be read again (one was created or dropped in
	 * this transaction, or the table itself), which takes a snapshot */
	PushActiveSnapshot(GetTransactionSnapshot());
	build_flow_commits();
	PopActiveSnapshot();
	fn_inflight_begin();
	inflight = true;
	foreach (lc, xact_commits) {
		FlowCommit *fc = lfirst(lc);
		bool covered = true;

		fc->slot = fn_acquire_slot(MyDatabaseId, catalog, fc->flow_id, true);
		fc->recorded = false;
		if (fc->slot == NULL || fc->count == 0)
			continue;
		LWLockAcquire(fn_slot_lock(fc->slot), LW_SHARED);
		for (uint32 i = 0; i < fc->count && covered; i++)
			covered = fn_dirty_covers(fn_slot_durable_set(fc->slot), fc->ranges[i]);
		if (!covered)
			widen_to_dirty_ranges(fc);
		LWLockRelease(fn_slot_lock(fc->slot));
		if (!covered) {
			if (writer == NULL)
				writer = fn_pending_open();
			fn_pending_write(writer, fc->flow_id, fc->ranges, fc->count);
			fc->recorded = true;
		}
	}
	if (writer != NULL)
		fn_pending_close(writer);
}

/* Runs at COMMIT: nothing here may fail. */
static void publish_marks(void) {
	ListCell *lc;

	foreach (lc, xact_commits) {
		FlowCommit *fc = lfirst(lc);
		FlowSlot *slot = fc->slot;

		if (slot == NULL || fc->count == 0)
			continue;
		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		if (slot->in_use && slot->flow_id == fc->flow_id && slot->dboid == MyDatabaseId && !slot->dropped) {
			fn_dirty_add_all(fn_slot_dirty_set(slot), fc->ranges, fc->count);
			slot->removals |= fc->removes;
			for (uint32 i = 0; fc->recorded && i < fc->count; i++)
				fn_durable_add(fn_slot_durable_set(slot), fc->ranges[i]);
		}
		LWLockRelease(fn_slot_lock(slot));
	}
}

/* The end of a transaction either way: its lists go with its memory. */
static void end_of_transaction(void) {
	if (inflight)
		fn_inflight_end();
	inflight = false;
	xact_marks = NIL;
	xact_commits = NIL;
}

/* At COMMIT, after PRE_COMMIT's fn_marks_pre_commit: publishes. Cannot fail. */
void fn_marks_commit(void) {
	publish_marks();
	end_of_transaction();
}

/* At ABORT: nothing is published. */
void fn_marks_abort(void) {
	end_of_transaction();
}

/* Whether the transaction marked anything (it cannot be PREPAREd then). */
bool fn_marks_pending(void) {
	return xact_marks != NIL;
}

void fn_marks_init(void) {
	fn_when_cache_init();
	CacheRegisterRelcacheCallback(invalidate_source, (Datum)0);
}
