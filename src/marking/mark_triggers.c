/*
 * mark_triggers.c: the marking half of the seed's BatchingEngine: the triggers.
 *
 * - The source's row triggers (their WHEN clause: flownode.mark_row) map each written
 *   row to the window of its time value for every group of the table's flows whose
 *   windows nest (MarkGroup), and add that window to a set kept in backend memory for
 *   the current (sub)transaction. Per row: one function call, the window
 *   (remembered: consecutive rows usually share one, and a row inside the set needs
 *   none), no SPI, no catalog. At PRE_COMMIT each flow's own windows are derived
 *   from its group's set.
 * - The flows of a table come from the per-backend cache (source_cache.c).
 * - Marks become visible to workers only when the writer commits (docs/internals.md §2, invariant 2; see
 *   commit_marks.c). A rolled-back subtransaction's marks are dropped with it.
 * - TRUNCATE of a source empties its flows' sinks.
 */
#include "flownode.h"

#include "marking/mark_triggers.h"

#include "catalog/pg_type.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xlog.h"
#include "catalog/partition.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "marking/source_cache.h"
#include "miscadmin.h"
#include "pgutil/pg_util.h"
#include "query/flow_query.h"
#include "query/query_rewrite.h"
#include "query/time_column.h"
#include "registry/flow_registry.h"
#include "registry/stored_query.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(flownode_mark_dirty);
PG_FUNCTION_INFO_V1(flownode_mark_insert);
PG_FUNCTION_INFO_V1(flownode_mark_row);
PG_FUNCTION_INFO_V1(flownode_mark_row_removed);
PG_FUNCTION_INFO_V1(flownode_mark_truncate);

static List *xact_marks = NIL; /* LocalMarks *, in TopTransactionContext */
/* The flows whose source this transaction truncated (int64 ids as pointers to them,
 * TopTransactionContext): their sinks were emptied, their folds must start afresh */
static List *truncated_flows = NIL;

static const FnTimeRange WINDOWLESS_MARK = {0, 1};

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
	MarkScope s = {fn_my_lxid(), GetCurrentSubTransactionId(), marks_epoch};

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
		    lm->leader_id == g->leader->flow_id && lm->set.subid == subid) {
			add_members(lm, g->member_ids, g->nmembers);
			goto done;
		}
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	/* only the header is zeroed: the stage past `staged` and the ranges past `count`
	 * are never read */
	lm = palloc(sizeof(LocalMarks));
	memset(lm, 0, offsetof(LocalMarks, stage));
	lm->limit = (uint32)fn_local_ranges_per_flow; /* the GUC may change mid-transaction */
	lm->capacity = Min(lm->limit, LOCAL_FIRST_RANGES);
	lm->ranges = palloc(sizeof(FnTimeRange) * (lm->capacity + LOCAL_STAGE));
	lm->relid = e->relid;
	lm->time_attnum = g->leader->time_attnum;
	lm->leader_id = g->leader->flow_id;
	lm->set.subid = subid;
	lm->last.start = lm->last.end = 0;
	lm->absorb_below = 1;
	lm->lo = PG_INT64_MAX;
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
	           g->marks->set.subid == scope.subid))
		return g->marks;
	return find_or_create_marks(e, g, scope);
}

static inline FnDirtySet local_set(LocalMarks *lm) {
	FnDirtySet s = {lm->ranges, &lm->count, lm->capacity};

	return s;
}

/* Moves the staged windows into the sorted set and sets the gap below which the
 * windows that follow join its ranges in place. Cannot fail. */
void fn_marks_flush_stage(LocalMarks *lm) {
	if (lm->staged == 0)
		return;
	lm->absorb_below =
	    fn_dirty_merge_stage(local_set(lm), lm->stage, lm->staged, LOCAL_STAGE, lm->absorb_below);
	lm->staged = 0;
}

/*
 * Most transactions touch a few windows, so a set starts small; one that writes rows
 * scattered over many windows (late data, a backfill) doubles it as it fills, up to
 * its limit, before anything coalesces: a coalesced set makes the refresh recompute
 * every window between the ones written (1,000 late rows over 2M rows: 250,000
 * windows with 256 ranges, 1,000 with 4,096).
 */
static void grow_marks(LocalMarks *lm, uint32 need, bool may_fail) {
	uint32 capacity;
	FnTimeRange *ranges;

	/* a set that fills up coalesces (fn_dirty_merge_stage makes room at once): grow
	 * before it would be full */
	if (need < lm->capacity || lm->capacity >= lm->limit)
		return;
	capacity = Min(Max(lm->capacity * 2, need + 1), lm->limit);
	/* out of memory: where nothing may fail the set stays as it is and coalesces */
	ranges = MemoryContextAllocExtended(TopTransactionContext, sizeof(FnTimeRange) * (capacity + LOCAL_STAGE),
	                                    may_fail ? 0 : MCXT_ALLOC_NO_OOM);
	if (ranges == NULL)
		return;
	memcpy(ranges, lm->ranges, sizeof(FnTimeRange) * lm->count);
	pfree(lm->ranges);
	lm->ranges = ranges;
	lm->capacity = capacity;
}

void fn_marks_grow_and_flush(LocalMarks *lm) {
	grow_marks(lm, lm->count + lm->staged, true);
	fn_marks_flush_stage(lm);
}

static pg_attribute_always_inline void stage_range(LocalMarks *lm, FnTimeRange r) {
	lm->stage[lm->staged++] = r;
	lm->last = r;
	if (lm->staged == LOCAL_STAGE)
		fn_marks_grow_and_flush(lm);
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

static pg_attribute_always_inline void mark_time(LocalMarks *lm, const FlowMarker *leader, int64 ts);

/* Inlined into the per-group loop: a call per group and row was a tenth of its cost. */
static pg_attribute_always_inline void mark_value(SourceEntry *e, MarkGroup *g, MarkScope scope, Datum d,
                                                  bool isnull) {
	LocalMarks *lm = current_marks(e, g, scope);
	FlowMarker *leader = g->leader;
	int64 ts;

	if (leader->window == NULL) {
		lm->lo = FN_TS_MIN;
		if (lm->count == 0 && lm->staged == 0)
			stage_range(lm, WINDOWLESS_MARK);
		return;
	}
	if (isnull)
		return; /* a NULL time belongs to no window */
	/* a date or an integer epoch: its timestamp as the query computes it */
	ts = likely(leader->input.kind == FN_INPUT_TIMESTAMP) ? DatumGetInt64(d)
	                                                      : fn_time_input_time_of(&leader->input, d);
	mark_time(lm, leader, ts);
}

/* The marking of one time in the group's set (its leader's windows). */
static pg_attribute_always_inline void mark_time(LocalMarks *lm, const FlowMarker *leader, int64 ts) {
	uint32 pos;
	FnTimeRange r;

	if (TIMESTAMP_NOT_FINITE(ts))
		return; /* nor does an infinite one */
	lm->lo = Min(lm->lo, ts);
	if (ts >= lm->last.start && ts < lm->last.end)
		return;
	/* The set is a union of whole windows: a timestamp inside it needs no window.
	 * Rows scattered over time fill the set within a few hundred rows, after which
	 * nearly every row stops here (computing a calendar window is the costly part). */
	pos = fn_ranges_search(lm->ranges, lm->count, ts);
	if (pos < lm->count && lm->ranges[pos].start <= ts)
		return;
	if (leader->stride > 0) /* no call into the core: rows scattered over time get here */
		r = fn_stride_window(leader->stride_anchor, leader->stride, ts);
	else
		r = fn_window_of(leader->window, ts);
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
 * direct call by someone else changes nothing. Nor does any call on a hot standby,
 * where no one writes (and a mark could not be recorded): checked before a role is
 * cached as allowed, which never happens during recovery, so the row path pays
 * nothing for it.
 */
static bool may_write(Oid relid, Oid user) {
	bool missing = false;

	if (pg_class_aclcheck_ext(relid, user, ACL_INSERT | ACL_UPDATE | ACL_DELETE, &missing) == ACLCHECK_OK)
		return true;
	return !missing &&
	       pg_attribute_aclcheck_all(relid, user, ACL_INSERT | ACL_UPDATE, ACLMASK_ANY) == ACLCHECK_OK;
}

bool fn_may_write_table(Oid relid, Oid user) {
	return may_write(relid, user);
}

/* The rows of a partitioned source's partitions are marked through the source's
 * entry (source_triggers.c), and PostgreSQL lets a role write a partition directly
 * with rights on that partition alone: such a writer may mark too. */
static bool may_write_a_partition(Oid relid, Oid user) {
	ListCell *lc;

	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return false;
	foreach (lc, find_all_inheritors(relid, NoLock, NULL))
		if (lfirst_oid(lc) != relid && may_write(lfirst_oid(lc), user))
			return true;
	return false;
}

static bool may_mark(SourceEntry *e) {
	Oid user = GetUserId();

	if (user == e->writer_checked)
		return true;
	if (RecoveryInProgress())
		return false;
	if (!may_write(e->relid, user) && !may_write_a_partition(e->relid, user))
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
	e = fn_source_entry(PG_GETARG_OID(0));
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

/* The sink's window column (its name, unquoted), from the flow's analysed query. */
static const char *sink_window_name(int64 flow_id) {
	TaskConfig *cfg = fn_load_task_config(flow_id, false);
	int nest = fn_pin_deparse_settings(cfg->timezone);
	FlowQuery *fq = fn_analyze_flow_query(cfg->query, cfg->timezone);

	fn_unpin_settings(nest);
	return list_nth(fq->out_names, fq->window_position);
}

static const char *sink_window_column(int64 flow_id) {
	return quote_identifier(sink_window_name(flow_id));
}

/* What TRUNCATE does to one flow's sink, decided before anything runs. */
typedef struct SinkEmptying {
	int64 flow_id;
	Oid owner;
	Oid sink_relid;
	Oid coltype;
	int64 frozen_before; /* expire_after's line, 0: none */
} SinkEmptying;

/* Empties the sink as its owner: the windows not frozen by expire_after (a DELETE
 * of those), or all of it (TRUNCATE when the owner may, as of a sink it created,
 * else DELETE: an existing sink needs only DELETE). The caller checked that the
 * owner may (owner_may_empty). */
static void empty_sink(const SinkEmptying *s) {
	const char *sink = fn_qualified_relname(s->sink_relid);
	SpiAs scope;
	int rc;

	if (s->frozen_before != 0) {
		char *sql = psprintf("DELETE FROM ONLY %s WHERE %s OPERATOR(pg_catalog.>=) $1", sink,
		                     sink_window_column(s->flow_id));
		Datum arg = Int64GetDatum(s->frozen_before);

		fn_spi_begin_as(&scope, s->owner, 0);
		rc = SPI_execute_with_args(sql, 1, (Oid *)&s->coltype, &arg, NULL, false, 0);
	} else {
		bool can_truncate = pg_class_aclcheck(s->sink_relid, s->owner, ACL_TRUNCATE) == ACLCHECK_OK;
		char *sql = psprintf("%s %s", can_truncate ? "TRUNCATE ONLY" : "DELETE FROM ONLY", sink);

		fn_spi_begin_as(&scope, s->owner, 0);
		rc = SPI_execute(sql, false, 0);
	}
	if (rc < 0)
		elog(ERROR, "flownode: emptying sink failed");
	fn_spi_end(&scope);
}

/* Whether the owner may run empty_sink's statement: DELETE (or TRUNCATE when nothing
 * is frozen), and SELECT on the window column that the DELETE of the windows not
 * frozen reads. */
static bool owner_may_empty(const SinkEmptying *s) {
	AttrNumber col;

	if (!OidIsValid(get_rel_namespace(s->sink_relid)))
		return false; /* gone: nothing to empty, the marks say so to the worker */
	if (pg_class_aclcheck(s->sink_relid, s->owner, ACL_DELETE) != ACLCHECK_OK)
		return s->frozen_before == 0 &&
		       pg_class_aclcheck(s->sink_relid, s->owner, ACL_TRUNCATE) == ACLCHECK_OK;
	if (s->frozen_before == 0 || pg_class_aclcheck(s->sink_relid, s->owner, ACL_SELECT) == ACLCHECK_OK)
		return true;
	col = get_attnum(s->sink_relid, sink_window_name(s->flow_id));
	return col != InvalidAttrNumber &&
	       pg_attribute_aclcheck(s->sink_relid, col, s->owner, ACL_SELECT) == ACLCHECK_OK;
}

static bool time_extent(const char *rel, const char *col, Oid coltype, FnTimeInput *in, int64 *lo, int64 *hi);

/*
 * A sink its owner may not empty now (pg_restore -j truncates a new source before
 * the last pass grants the sink to the flow's owner): the windows it holds are
 * marked for the flow instead, as removals, and its worker empties them once the
 * owner may, failing visibly until then. The TRUNCATE itself does not fail on the
 * owner's privileges, as no other write to the source does. The source has no row
 * left, so the sink's windows are the only ones whose answer changed. Read as the
 * catalog's owner in the latest snapshot (no refresh runs: TRUNCATE holds the
 * source). Frozen windows are cut at PRE_COMMIT as every mark is.
 */
static void mark_sink_windows(const FlowMarker *m) {
	LocalMarks *lm = fn_marks_for_flow(m);
	Oid coltype = m->spec.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	int64 lo, hi;
	bool found;
	SpiAs scope;

	lm->removes = true;
	if (m->window == NULL) {
		fn_marks_add_time(lm, m, 0);
		return;
	}
	if (!OidIsValid(get_rel_namespace(m->sink_relid)))
		return;
	PushActiveSnapshot(GetLatestSnapshot());
	fn_spi_begin_as(&scope, fn_catalog_owner(), SECURITY_RESTRICTED_OPERATION);
	found = time_extent(psprintf("ONLY %s", fn_qualified_relname(m->sink_relid)),
	                    sink_window_column(m->flow_id), coltype, NULL, &lo, &hi);
	fn_spi_end(&scope);
	PopActiveSnapshot();
	if (found)
		fn_marks_add_range(lm, (FnTimeRange){fn_flow_window_at(m, lo).start, fn_flow_window_at(m, hi).end});
}

/* ---- TRUNCATE ---- */

/* The tables each TRUNCATE statement in progress truncates (its named tables and
 * the partitions under them), innermost statement first; TopMemoryContext. */
static List *truncating_stack = NIL;

void fn_truncate_begin(List *relids) {
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	truncating_stack = lcons(list_copy(relids), truncating_stack);
	MemoryContextSwitchTo(old);
}

void fn_truncate_end(void) {
	List *top;

	if (truncating_stack == NIL)
		return;
	top = linitial(truncating_stack);
	truncating_stack = list_delete_first(truncating_stack);
	list_free(top);
}

/* Whether the TRUNCATE statement running now empties the table too. A truncated
 * table is locked ACCESS EXCLUSIVE before any trigger fires; the lock is checked as
 * well, so a stale list can only cost a redundant mark, never a missing one. A
 * TRUNCATE that bypasses the utility hook (a logical replication apply) leaves the
 * list empty: its partitions then mark for tables it empties too, which is only
 * redundant. */
static bool truncated_too(Oid relid) {
	LOCKTAG tag;

	if (truncating_stack == NIL || !list_member_oid(linitial(truncating_stack), relid))
		return false;
	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	return fn_lock_held_by_me(&tag, AccessExclusiveLock);
}

/* TRUNCATE of a flow's source: its flows' sinks are emptied (the windows that are not
 * frozen), as each flow's owner, or their windows marked where the owner may not, or
 * where a restored flow that reads the sink awaits its key (mark_sink_windows). Only the table's own flows: a
 * partition's rows are marked for the flows above it by its BEFORE trigger. */
static void empty_sinks_of(Oid relid) {
	TimestampTz now = GetCurrentTimestamp();
	SourceEntry *e = fn_source_entry(relid);
	SinkEmptying *todo = palloc(sizeof(SinkEmptying) * Max(e->nflows, 1));
	int n = 0;

	/* Marks first, emptying after: emptying a sink can invalidate the cache entry,
	 * so what it needs is copied out. */
	for (int i = 0; i < e->nflows; i++) {
		const FlowMarker *m = &e->flows[i];
		MemoryContext old;
		int64 *id;

		if (m->source_relid != relid)
			continue;
		if (m->window == NULL) {
			/* a window-less flow is recomputed whole anyway, and an empty source is
			 * not an empty answer for all of them: count(*) without GROUP BY is one
			 * row of 0 */
			mark_sink_windows(m);
			continue;
		}
		old = MemoryContextSwitchTo(TopTransactionContext);
		id = palloc(sizeof(int64));
		*id = m->flow_id;
		truncated_flows = lappend(truncated_flows, id);
		MemoryContextSwitchTo(old);
		todo[n].flow_id = m->flow_id;
		todo[n].owner = m->owner;
		todo[n].sink_relid = m->sink_relid;
		todo[n].coltype = m->spec.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
		todo[n].frozen_before =
		    fn_expiry_start(m->expire_after, m->spec.with_time_zone, m->timezone, m->window, now);
		/* a restored flow that reads the sink and awaits its key would be bound
		 * trusting its own sink, with the emptying unmarked for it: the windows are
		 * marked instead, and the worker's refresh waits for that binding
		 * (refresh_exec.c; pg_restore -j truncates a new source before COPY) */
		if (owner_may_empty(&todo[n]) && fn_unbound_reader_awaiting_key(m->sink_relid, m->flow_id) == NULL)
			n++;
		else
			mark_sink_windows(m);
	}
	for (int i = 0; i < n; i++)
		empty_sink(&todo[i]);
}

/* BEFORE TRUNCATE of a partition under a flow's source: its rows are about to go from
 * every table above it that this TRUNCATE leaves alone, so their windows are marked
 * for the flows of those tables. A table above it that is truncated too empties its
 * own sinks (and every partition under it goes with it), so marking stops below it. */
static void mark_truncated_rows(Oid relid) {
	List *above = get_partition_ancestors(relid); /* nearest first */
	ListCell *lc;

	foreach (lc, above)
		if (!truncated_too(lfirst_oid(lc))) {
			fn_mark_rows_of(relid, lfirst_oid(lc), true);
			return;
		}
}

/*
 * The TRUNCATE triggers. AFTER, on a flow's source: the sinks of its flows are
 * emptied in the truncating transaction, as each flow's owner; windows that ended
 * before now - expire_after are frozen and keep their rows. A refresh in flight
 * holds a lock on the source that TRUNCATE waits for, so it cannot write stale rows
 * afterwards. BEFORE, on a partition under a flow's source: the windows of its rows
 * are marked for the flows above it (mark_truncated_rows).
 */
Datum flownode_mark_truncate(PG_FUNCTION_ARGS) {
	TriggerData *td = (TriggerData *)fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.mark_truncate() must be called as a TRUNCATE trigger")));
	if (TRIGGER_FIRED_BEFORE(td->tg_event))
		mark_truncated_rows(RelationGetRelid(td->tg_relation));
	else
		empty_sinks_of(RelationGetRelid(td->tg_relation));
	return PointerGetDatum(NULL);
}

/* ---- the rows of a table that joins or leaves a flow's source ---- */

/* Distinct windows looked up one by one through a time index, at most this many per
 * group of flows; the rest of the table's rows are marked as one range. */
#define MAX_WINDOW_PROBES 10000

/* The first line below which none of the group's flows refreshes anything (every one
 * of them has expire_after), 0 when one of them never expires: rows below it need
 * not be read (PRE_COMMIT cuts each flow's marks at its own line anyway). */
static int64 group_line(SourceEntry *e, const MarkGroup *g, TimestampTz now) {
	int64 line = PG_INT64_MAX;

	for (int k = 0; k < g->nmembers; k++) {
		const FlowMarker *m = fn_find_flow(e, g->member_ids[k]);
		int64 l = m == NULL
		              ? 0
		              : fn_expiry_start(m->expire_after, m->spec.with_time_zone, m->timezone, m->window, now);

		if (l == 0)
			return 0;
		line = Min(line, l);
	}
	return line;
}

/* A union of whole windows of the group's leader added to its set at once. */
static void mark_range(SourceEntry *e, MarkGroup *g, FnTimeRange r) {
	LocalMarks *lm = current_marks(e, g, mark_scope());

	fn_marks_flush_stage(lm);
	fn_dirty_add(local_set(lm), r);
	lm->last.start = lm->last.end = 0;
	lm->lo = FN_TS_MIN; /* windows, not rows */
}

/* The rows of a table whose times a group's windows are marked with. */
typedef struct GroupRows {
	SourceEntry *e;
	MarkGroup *g;
	bool marked;
} GroupRows;

static void mark_group_time(int64 ts, void *arg) {
	GroupRows *rows = arg;

	mark_time(current_marks(rows->e, rows->g, mark_scope()), rows->g->leader, ts);
	rows->marked = true;
}

/* Through a time index: one probe per distinct window (the first row at or after the
 * end of the window found last), at most MAX_WINDOW_PROBES, then the rest as one
 * range up to the last row's window. */
static bool mark_windows_probed(GroupRows *rows, const FnTimeColumn *c, int64 from) {
	FlowMarker *leader = rows->g->leader;
	FnTimeProbe *first = fn_time_probe_prepare(c, false);
	int probes = 0;
	int64 ts;

	while (probes++ < MAX_WINDOW_PROBES && fn_time_probe(first, (FnTimeRange){from, DT_NOEND}, &ts)) {
		FnTimeRange r = fn_flow_window_at(leader, ts);

		mark_group_time(ts, rows);
		if (r.end == FN_TS_NOEND || r.end <= ts)
			break; /* the last window */
		from = r.end;
	}
	fn_time_probe_free(first);
	if (probes > MAX_WINDOW_PROBES) {
		FnTimeProbe *last = fn_time_probe_prepare(c, true);

		if (fn_time_probe(last, (FnTimeRange){from, DT_NOEND}, &ts))
			mark_range(rows->e, rows->g, (FnTimeRange){from, fn_flow_window_at(leader, ts).end});
		fn_time_probe_free(last);
	}
	return rows->marked;
}

/*
 * Marks, in the group's windows, the windows of rel's rows at or after `from`:
 * through a time index by probes (mark_windows_probed); without one, every row is
 * read and marked as a writer's would be. Rows at +-infinity belong to no window.
 * Returns whether anything was marked.
 */
static bool mark_windows_read(SourceEntry *e, MarkGroup *g, const char *rel, const char *col, Oid coltype,
                              bool indexed, int64 from) {
	FnTimeColumn c = {rel, col, coltype, &g->leader->input};
	GroupRows rows = {e, g, false};

	if (indexed)
		return mark_windows_probed(&rows, &c, from);
	fn_time_column_scan(&c, (FnTimeRange){from, DT_NOEND}, NULL, 0, NULL, NULL, mark_group_time, &rows);
	return rows.marked;
}

/* Whether the table holds a row (a window-less group: any row dirties it). */
static bool has_rows(const char *rel) {
	if (SPI_execute(psprintf("SELECT 1 FROM %s LIMIT 1", rel), true, 1) != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading a table failed");
	return SPI_processed > 0;
}

/*
 * Marks, for the flows over flows_relid (its own and those above it:
 * fn_source_entry), the windows of the rows rows_relid holds (with its partitions):
 * rows that join those flows' sources (ATTACH PARTITION) or leave them (DETACH,
 * DROP or TRUNCATE of a partition; `removes`: groups may vanish). Read in a fresh
 * snapshot, as the catalog's owner (row-level security must not hide rows), in the
 * caller's transaction: the marks are published when it commits, or dropped with
 * it. Windows frozen by expire_after are not even read; the rest are cut at
 * PRE_COMMIT as every mark is.
 */
void fn_mark_rows_of(Oid rows_relid, Oid flows_relid, bool removes) {
	/* nothing below reads the cache (a SELECT fires no trigger), so the entry and its
	 * groups stay in place while the table is read */
	SourceEntry *e = fn_source_entry(flows_relid);
	TimestampTz now = GetCurrentTimestamp();
	char *rel;
	SpiAs scope;

	if (e->nflows == 0)
		return;
	rel = fn_qualified_relname(rows_relid);
	PushActiveSnapshot(GetLatestSnapshot());
	fn_spi_begin_as(&scope, fn_catalog_owner(), SECURITY_RESTRICTED_OPERATION);
	for (int i = 0; i < e->ngroups; i++) {
		MarkGroup *g = &e->groups[i];
		FlowMarker *leader = g->leader;
		bool marked;

		if (leader->window == NULL) {
			marked = has_rows(rel);
			if (marked)
				mark_value(e, g, mark_scope(), (Datum)0, true);
		} else {
			const char *name = get_attname(flows_relid, leader->time_attnum, false);
			int64 line = group_line(e, g, now);

			marked = mark_windows_read(e, g, rel, quote_identifier(name),
			                           leader->spec.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID,
			                           fn_btree_index_leads_with(rows_relid, get_attnum(rows_relid, name)),
			                           line != 0 ? line : FN_TS_MIN);
		}
		if (marked && removes)
			current_marks(e, g, mark_scope())->removes = true;
	}
	fn_spi_end(&scope);
	PopActiveSnapshot();
}

/* The first and last time of a column that has a window (of the table with its
 * partitions; `in`: how the column becomes the window's timestamp, NULL for a sink's
 * window column); false when it has none. */
static bool time_extent(const char *rel, const char *col, Oid coltype, FnTimeInput *in, int64 *lo,
                        int64 *hi) {
	FnTimeColumn c = {rel, col, coltype, in};

	return fn_time_column_extent(&c, (FnTimeRange){FN_TS_MIN, DT_NOEND}, lo, hi);
}

/* Whether flow_ids (NIL: every flow) holds the flow. */
static bool listed(const List *flow_ids, int64 flow_id) {
	ListCell *lc;

	if (flow_ids == NIL)
		return true;
	foreach (lc, flow_ids) {
		if (*(const int64 *)lfirst(lc) == flow_id)
			return true;
	}
	return false;
}

/* The one range of the window-less flows of the group (of those listed: in a set of
 * each one's own), as a removal. */
static void mark_windowless(SourceEntry *e, MarkGroup *g, const List *flow_ids) {
	if (flow_ids == NIL) {
		mark_value(e, g, mark_scope(), (Datum)0, true);
		current_marks(e, g, mark_scope())->removes = true;
		return;
	}
	for (int k = 0; k < g->nmembers; k++) {
		const FlowMarker *m = fn_find_flow(e, g->member_ids[k]);
		LocalMarks *lm;

		if (m == NULL || !listed(flow_ids, m->flow_id))
			continue;
		lm = fn_marks_for_flow(m);
		lm->removes = true;
		fn_marks_add_time(lm, m, 0);
	}
}

/* The windows from the first to the last time of [lo, hi], and of the sinks' windows
 * of the group's listed members when with_sinks, marked as removals: in the group's
 * set for every member, or in a set of each listed flow's own, so that the others of
 * its group are not marked (fn_marks_for_flow; a row written later in the
 * transaction that finds such a set adds its group's flows to it: more marks, never
 * fewer). */
static void mark_extent(SourceEntry *e, MarkGroup *g, const List *flow_ids, bool with_sinks, int64 lo,
                        int64 hi) {
	Oid coltype = g->leader->spec.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	int64 all_lo = lo, all_hi = hi, a, b;

	for (int k = 0; k < g->nmembers; k++) {
		const FlowMarker *m = fn_find_flow(e, g->member_ids[k]);
		int64 my_lo = lo, my_hi = hi;
		LocalMarks *lm;

		if (m == NULL || !listed(flow_ids, m->flow_id))
			continue;
		if (with_sinks && OidIsValid(get_rel_namespace(m->sink_relid)) &&
		    time_extent(psprintf("ONLY %s", fn_qualified_relname(m->sink_relid)),
		                sink_window_column(m->flow_id), coltype, NULL, &a, &b)) {
			my_lo = Min(my_lo, a);
			my_hi = Max(my_hi, b);
		}
		all_lo = Min(all_lo, my_lo);
		all_hi = Max(all_hi, my_hi);
		if (flow_ids == NIL || my_lo > my_hi)
			continue;
		lm = fn_marks_for_flow(m);
		lm->removes = true;
		fn_marks_add_range(lm,
		                   (FnTimeRange){fn_flow_window_at(m, my_lo).start, fn_flow_window_at(m, my_hi).end});
	}
	if (flow_ids != NIL || all_lo > all_hi)
		return;
	mark_range(
	    e, g,
	    (FnTimeRange){fn_flow_window_at(g->leader, all_lo).start, fn_flow_window_at(g->leader, all_hi).end});
	current_marks(e, g, mark_scope())->removes = true;
}

/* Marks, for the flows over relid listed in flow_ids (NIL: all of them), every window
 * from the first to the last time of relid's rows (and of the flows' sinks when
 * with_sinks), as removals. */
static void mark_windows_between(Oid relid, const List *flow_ids, bool with_sinks) {
	SourceEntry *e = fn_source_entry(relid);
	SpiAs scope;

	if (e->nflows == 0)
		return;
	PushActiveSnapshot(GetLatestSnapshot());
	fn_spi_begin_as(&scope, fn_catalog_owner(), SECURITY_RESTRICTED_OPERATION);
	for (int i = 0; i < e->ngroups; i++) {
		MarkGroup *g = &e->groups[i];
		FlowMarker *leader = g->leader;
		Oid coltype = leader->spec.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
		int64 lo = PG_INT64_MAX, hi = PG_INT64_MIN;
		bool any = false;

		for (int k = 0; k < g->nmembers && !any; k++)
			any = listed(flow_ids, g->member_ids[k]);
		if (!any)
			continue;
		if (leader->window == NULL) {
			mark_windowless(e, g, flow_ids);
			continue;
		}
		(void)time_extent(fn_qualified_relname(relid),
		                  quote_identifier(get_attname(relid, leader->time_attnum, false)), coltype,
		                  &leader->input, &lo, &hi);
		mark_extent(e, g, flow_ids, with_sinks, lo, hi);
	}
	fn_spi_end(&scope);
	PopActiveSnapshot();
}

/*
 * A partition dropped without its rows being read first (a drop that cascaded from
 * another object: DROP SCHEMA ... CASCADE, DROP OWNED BY): the windows its rows were
 * in are unknown. Marked instead, for the flows over relid (the table it was a
 * partition of, and those above), every window from the first to the last that the
 * flows' sinks or the table's remaining rows hold. A window outside both had no
 * group in the sink and has no row now: its answer is empty either way. Frozen
 * windows are cut at PRE_COMMIT as every mark is.
 */
void fn_mark_all_windows(Oid relid) {
	mark_windows_between(relid, NIL, true);
}

/*
 * ALTER COLUMN TYPE of a column the listed flows read: the table was rewritten in
 * place, every row keeping its time (the time column itself is refused), so the
 * windows whose answer may have changed are those holding rows, all between the
 * first and the last row. The sinks are not read: a window without a pending mark
 * holds sink rows only where it holds source rows, and reading a sink needs its
 * flow's query, which the new type may have broken (its refresh then fails and says
 * why, as after any ALTER that breaks it). Frozen windows are cut at PRE_COMMIT.
 */
void fn_mark_rows_extent(Oid relid, const List *flow_ids) {
	mark_windows_between(relid, flow_ids, false);
}

/* ---- a flow's own set: the windows of the fact rows a dimension write joins ---- */

/*
 * A set of its own for one flow, marked in the flow's windows, added to the
 * transaction's list: made at PRE_COMMIT by the dimension lookups
 * (dimension_marks.c), after every row of the transaction was marked, so no row
 * ever finds it (a group's set of the same key would lend its windows to the other
 * flows of the group). build_flow_commits unites it with the flow's other sets.
 */
LocalMarks *fn_marks_for_flow(const FlowMarker *m) {
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	LocalMarks *lm = palloc(sizeof(LocalMarks));

	memset(lm, 0, offsetof(LocalMarks, stage));
	lm->limit = (uint32)fn_local_ranges_per_flow;
	lm->capacity = Min(lm->limit, LOCAL_FIRST_RANGES);
	lm->ranges = palloc(sizeof(FnTimeRange) * (lm->capacity + LOCAL_STAGE));
	lm->relid = m->source_relid;
	lm->time_attnum = m->time_attnum;
	lm->leader_id = m->flow_id;
	lm->set.subid = GetCurrentSubTransactionId();
	lm->absorb_below = 1;
	lm->lo = FN_TS_MIN; /* a dimension's rows moved groups: no fold */
	lm->member_ids = palloc(sizeof(int64));
	lm->member_ids[0] = m->flow_id;
	lm->nmembers = 1;
	xact_marks = lappend(xact_marks, lm);
	MemoryContextSwitchTo(old);
	return lm;
}

void fn_marks_add_time(LocalMarks *lm, const FlowMarker *m, int64 ts) {
	uint32 pos;

	if (m->window == NULL) {
		if (lm->count == 0 && lm->staged == 0)
			stage_range(lm, WINDOWLESS_MARK);
		return;
	}
	if (TIMESTAMP_NOT_FINITE(ts) || (ts >= lm->last.start && ts < lm->last.end))
		return;
	pos = fn_ranges_search(lm->ranges, lm->count, ts);
	if (pos < lm->count && lm->ranges[pos].start <= ts)
		return;
	mark_window(lm, pos, fn_flow_window_at(m, ts));
}

void fn_marks_add_range(LocalMarks *lm, FnTimeRange r) {
	fn_marks_grow_and_flush(lm);
	fn_dirty_add(local_set(lm), r);
	lm->last.start = lm->last.end = 0;
	lm->lo = FN_TS_MIN;
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

static bool marks_same_key(const SubxactSet *a, const SubxactSet *b) {
	const LocalMarks *x = (const LocalMarks *)a, *y = (const LocalMarks *)b;

	return x->relid == y->relid && x->time_attnum == y->time_attnum && x->leader_id == y->leader_id;
}

/* A child for flows the parent's set is not for (created in the child) moves up as a
 * set of its own: merging would allocate member ids, here. */
static bool marks_merge(SubxactSet *c, SubxactSet *p) {
	LocalMarks *child = (LocalMarks *)c, *parent = (LocalMarks *)p;

	if (!members_within(child, parent))
		return false;
	fn_marks_flush_stage(child);
	fn_marks_flush_stage(parent);
	/* a transaction of many subtransactions (a PL/pgSQL block with an EXCEPTION
	 * clause per row) grows its set here, as one would */
	grow_marks(parent, parent->count + child->count, false);
	fn_dirty_add_all(local_set(parent), child->ranges, child->count);
	parent->last.start = parent->last.end = 0;
	parent->removes |= child->removes;
	parent->lo = Min(parent->lo, child->lo);
	return true;
}

static void marks_free(SubxactSet *s) {
	LocalMarks *lm = (LocalMarks *)s;

	if (lm->member_ids)
		pfree(lm->member_ids);
	pfree(lm->ranges);
	pfree(lm);
}

static const SubxactSetKind marks_kind = {marks_same_key, marks_merge, marks_free};

/* A subtransaction's marks: dropped with it, or handed to its parent. */
void fn_marks_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid) {
	if (fn_subxact_sets_end(&xact_marks, &marks_kind, event, mySubid, parentSubid))
		marks_epoch++;
}

List *fn_xact_marks(void) {
	return xact_marks;
}

void fn_marks_forget(void) {
	xact_marks = NIL;
	truncated_flows = NIL;
}

bool fn_marks_pending(void) {
	return xact_marks != NIL || truncated_flows != NIL;
}

List *fn_marks_truncated_flows(void) {
	return truncated_flows;
}
