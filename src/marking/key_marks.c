/*
 * key_marks.c: the marking of a keyed flow's rows (docs/internals.md §3, *Key
 * marks*). Its key triggers' WHEN clause (key_triggers.c) hands each row, whole, to
 * flownode.mark_keys, which marks the group the row belongs to: (its window, the
 * hash of its key values, pgutil/key_hash.h). A window that is still open (it ends
 * after the transaction started: the rows of the current window fold, §6), a window
 * past the budget of flownode.key_marks_per_window distinct groups in this
 * transaction, or a set that is full, is marked whole instead, as mark_row would:
 * in the flow's group's set (a keyed flow is a group of its own), with removals.
 * An UPDATE marks the old row's group and the new one's, so a key that moves
 * refreshes both.
 *
 * The sets are per flow and (sub)transaction, dropped with an aborted one and
 * handed to the parent with a committed one. At PRE_COMMIT they become rows of
 * flownode.pending_keys (record/key_record.h), in the transaction: they commit with
 * the rows they mark or not at all.
 */
#include "flownode.h"

#include "marking/key_marks.h"

#include "marking/mark_triggers.h"
#include "marking/source_cache.h"
#include "pgutil/key_hash.h"
#include "pgutil/subxact_sets.h"
#include "query/key_columns.h"
#include "query/time_input.h"
#include "registry/flow_registry.h"
#include "record/key_record.h"
#include "shmem/flow_slots.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(flownode_mark_keys);
PG_FUNCTION_INFO_V1(flownode_mark_keys_open);

typedef struct KeySet {
	SubxactSet set; /* first: pgutil/subxact_sets.h */
	Oid relid;
	int64 flow_id;
	uint32 count;
	uint32 capacity;
	FnKeyMark *marks;       /* TopTransactionContext */
	FnTimeRange last_whole; /* the window this set last handed back whole: its
	                         * next rows go whole at once (rows come in time order) */
} KeySet;

static List *xact_keys = NIL; /* KeySet * */

/* A flow's slot to tell at COMMIT, and the hull of the windows it marked. */
typedef struct NotedSlot {
	FlowSlot *slot;
	FnTimeRange hull;
} NotedSlot;

static List *noted_slots = NIL; /* NotedSlot *, TopTransactionContext */

/* What one trigger's WHEN clause needs, prepared at its first row (fn_extra). */
typedef struct KeyCall {
	int ncols; /* key columns */
	AttrNumber time_attnum;
	AttrNumber attnums[FN_MAX_KEY_COLUMNS];
	FnKeyColumn cols[FN_MAX_KEY_COLUMNS];
	TupleDesc desc;
	bool whole; /* a key column was dropped (the flow's query is broken): whole windows */
} KeyCall;

static KeyCall *key_call(FunctionCallInfo fcinfo, HeapTupleHeader row) {
	KeyCall *kc = fcinfo->flinfo->fn_extra;
	ArrayType *arr;
	Datum *elems;
	bool *nulls;
	int n;
	MemoryContext old;

	if (kc != NULL)
		return kc;
	kc = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(KeyCall));
	arr = PG_GETARG_ARRAYTYPE_P(2);
	deconstruct_array(arr, INT2OID, sizeof(int16), true, TYPALIGN_SHORT, &elems, &nulls, &n);
	if (n < 2 || n > FN_MAX_KEY_COLUMNS + 1)
		elog(ERROR, "flownode.mark_keys: %d columns", n);
	kc->time_attnum = DatumGetInt16(elems[0]);
	kc->ncols = n - 1;
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	kc->desc = lookup_rowtype_tupdesc_copy(HeapTupleHeaderGetTypeId(row), HeapTupleHeaderGetTypMod(row));
	MemoryContextSwitchTo(old);
	for (int i = 0; i < kc->ncols; i++) {
		Form_pg_attribute att;

		kc->attnums[i] = DatumGetInt16(elems[i + 1]);
		att = TupleDescAttr(kc->desc, kc->attnums[i] - 1);
		kc->whole |= att->attisdropped;
		if (!kc->whole &&
		    !fn_key_column_init(&kc->cols[i], att->atttypid, att->attcollation, fcinfo->flinfo->fn_mcxt))
			elog(ERROR, "flownode.mark_keys: column %d has no hash function", kc->attnums[i]);
	}
	fcinfo->flinfo->fn_extra = kc;
	return kc;
}

static KeySet *key_set(Oid relid, int64 flow_id) {
	SubTransactionId subid = GetCurrentSubTransactionId();
	MemoryContext old;
	KeySet *ks;
	ListCell *lc;

	foreach (lc, xact_keys) {
		ks = lfirst(lc);
		if (ks->flow_id == flow_id && ks->set.subid == subid)
			return ks;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	ks = palloc0(sizeof(KeySet));
	ks->set.subid = subid;
	ks->relid = relid;
	ks->flow_id = flow_id;
	ks->capacity = 64;
	ks->marks = palloc(sizeof(FnKeyMark) * ks->capacity);
	xact_keys = lappend(xact_keys, ks);
	MemoryContextSwitchTo(old);
	return ks;
}

/* Whether the group was kept as a key mark (else its window is to be marked whole). */
static bool add_key(Oid relid, int64 flow_id, FnTimeRange window, uint64 hash) {
	KeySet *ks = key_set(relid, flow_id);

	if (window.start == ks->last_whole.start && window.end == ks->last_whole.end)
		return false;
	if (ks->count == ks->capacity && ks->capacity < FN_KEY_MARKS_PER_XACT) {
		ks->capacity = Min(ks->capacity * 2, FN_KEY_MARKS_PER_XACT);
		ks->marks = repalloc(ks->marks, sizeof(FnKeyMark) * ks->capacity);
	}
	if (fn_key_marks_add(ks->marks, &ks->count, ks->capacity, (uint32)fn_key_marks_per_window, window, hash))
		return true;
	ks->last_whole = window;
	return false;
}

/*
 * Whether a window ended before the transaction started (else it may be the one
 * being written, which folds). A timestamp (without time zone) window's bounds are
 * local times of some zone, from 12 hours behind UTC to 14 ahead: it is taken as
 * ended only a day after its end in UTC: a window marked whole is exact too, so the
 * margin costs a few whole windows, never a group.
 */
static bool window_closed(const FlowMarker *m, FnTimeRange window) {
	TimestampTz started = GetCurrentTransactionStartTimestamp();

	return m->spec.with_time_zone ? window.end <= started : window.end <= started - USECS_PER_DAY;
}

/* A row's window marked whole, as mark_row would (with removals: an UPDATE or a
 * DELETE, whose groups may vanish). */
static void mark_whole(SourceEntry *e, MarkGroup *g, int64 ts, bool removes) {
	fn_marks_group_time(e, g, ts);
	if (removes)
		fn_marks_of_group(e, g)->removes = true;
}

static void mark_one(SourceEntry *e, FlowMarker *m, MarkGroup *g, KeyCall *kc, HeapTupleHeader row,
                     bool removes) {
	HeapTupleData tup;
	Datum values[FN_MAX_KEY_COLUMNS];
	bool nulls[FN_MAX_KEY_COLUMNS];
	bool isnull;
	Datum time;
	int64 ts;
	FnTimeRange window;

	tup.t_len = HeapTupleHeaderGetDatumLength(row);
	ItemPointerSetInvalid(&tup.t_self);
	tup.t_tableOid = InvalidOid;
	tup.t_data = row;
	time = heap_getattr(&tup, kc->time_attnum, kc->desc, &isnull);
	if (isnull) /* in no window: marks nothing, as mark_row */
		return;
	ts = fn_flow_time_of(m, time); /* a date's or an epoch's as mark_row reads it */
	if (TIMESTAMP_NOT_FINITE(ts))
		return;
	window = fn_flow_window_at(m, ts);
	for (int i = 0; i < kc->ncols; i++)
		values[i] = heap_getattr(&tup, kc->attnums[i], kc->desc, &nulls[i]);
	/* an open window folds its new rows: it is marked whole, as without keys */
	if (!kc->whole && window_closed(m, window) &&
	    add_key(e->relid, m->flow_id, window, fn_key_hash(kc->cols, values, nulls, kc->ncols)))
		return;
	mark_whole(e, g, ts, removes);
}

/* The keyed flow's group (a group of its own), or NULL when the writer may not mark
 * or the cache does not take the flow as keyed (mark_row marks it then). */
static MarkGroup *keyed_group(SourceEntry *e, int64 flow_id) {
	FlowMarker *m = fn_find_flow(e, flow_id);

	if (m == NULL || !m->keyed || !fn_marks_may_mark(e))
		return NULL;
	for (int i = 0; i < e->ngroups; i++)
		if (e->groups[i].leader == m)
			return &e->groups[i];
	Assert(false);
	return NULL;
}

/*
 * flownode.mark_keys_open(source, flow, time [, time]): the first half of a key
 * trigger's WHEN clause (key_triggers.c), evaluated before mark_keys and its whole
 * rows: a row of an open window (the common case, streaming ingest) is marked whole
 * here, as mark_one would, and the clause stops (a qual's first false), so no whole
 * row is built for it; true when a row's window is closed: mark_keys marks its key.
 * The times are the time column's values (NULL, infinite: no window).
 */
Datum flownode_mark_keys_open(PG_FUNCTION_ARGS) {
	SourceEntry *e;
	MarkGroup *g;
	bool late = false;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_BOOL(false);
	e = fn_source_entry(PG_GETARG_OID(0));
	g = keyed_group(e, PG_GETARG_INT64(1));
	if (g == NULL)
		PG_RETURN_BOOL(false);
	for (int i = 2; i < PG_NARGS(); i++) {
		FlowMarker *m = g->leader;
		int64 ts;

		if (PG_ARGISNULL(i))
			continue;
		ts = fn_flow_time_of(m, PG_GETARG_DATUM(i)); /* a date's or an epoch's as mark_row reads it */
		if (TIMESTAMP_NOT_FINITE(ts))
			continue;
		if (window_closed(m, fn_flow_window_at(m, ts)))
			late = true;
		else
			mark_whole(e, g, ts, PG_NARGS() > 3);
	}
	PG_RETURN_BOOL(late);
}

/*
 * flownode.mark_keys(source, flow, '{time, keys...}', row [, row]): the row(s) of a
 * keyed flow's trigger: NEW for an INSERT, OLD and NEW for an UPDATE, OLD twice for
 * a DELETE (two rows: the write may take rows out of groups). Always false.
 */
Datum flownode_mark_keys(PG_FUNCTION_ARGS) {
	SourceEntry *e;
	MarkGroup *g;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_BOOL(false);
	e = fn_source_entry(PG_GETARG_OID(0));
	g = keyed_group(e, PG_GETARG_INT64(1));
	if (g == NULL) /* a flow the cache does not take as keyed is marked by mark_row */
		PG_RETURN_BOOL(false);
	Assert(g->keyed);
	for (int i = 3; i < PG_NARGS(); i++)
		if (!PG_ARGISNULL(i))
			mark_one(e, g->leader, g, key_call(fcinfo, PG_GETARG_HEAPTUPLEHEADER(i)),
			         PG_GETARG_HEAPTUPLEHEADER(i), PG_NARGS() > 4);
	PG_RETURN_BOOL(false);
}

bool fn_key_marks_pending(void) {
	return xact_keys != NIL;
}

/* The flows' records written (a flow dropped meanwhile has none), and their slots
 * kept for COMMIT. */
void fn_key_marks_pre_commit(Oid catalog_relid) {
	ListCell *lc;

	foreach (lc, xact_keys) {
		KeySet *ks = lfirst(lc);
		FlowMarker *m = fn_find_flow(fn_source_entry(ks->relid), ks->flow_id);
		FlowSlot *slot;
		uint32 from = 0;

		if (ks->count == 0 || m == NULL)
			continue;
		/* windows frozen by expire_after mark nothing, as commit_marks.c's cut_expired;
		 * the marks are sorted by window: the frozen ones lead */
		if (m->expire_after != NULL) {
			int64 line = fn_expiry_start(m->expire_after, m->spec.with_time_zone, m->timezone, m->window,
			                             GetCurrentTimestamp());

			while (from < ks->count && ks->marks[from].window.start < line)
				from++;
		}
		if (from == ks->count)
			continue;
		fn_key_record_write(ks->flow_id, ks->marks + from, ks->count - from);
		slot = fn_acquire_slot(MyDatabaseId, catalog_relid, ks->flow_id, true);
		if (slot != NULL) {
			NotedSlot *n = MemoryContextAlloc(TopTransactionContext, sizeof(NotedSlot));

			n->slot = slot;
			/* sorted by window: the hull runs from the first to the last */
			n->hull = (FnTimeRange){ks->marks[from].window.start, ks->marks[ks->count - 1].window.end};
			noted_slots = lappend(noted_slots, n);
		}
	}
}

void fn_key_marks_commit(void) {
	ListCell *lc;

	foreach (lc, noted_slots) {
		fn_slot_note_keys(((NotedSlot *)lfirst(lc))->slot, ((NotedSlot *)lfirst(lc))->hull);
		/* a chain of flows: a refresh wrote a keyed flow's source, which follows soon */
		if (fn_is_flow_worker)
			fn_slot_wake_downstream(((NotedSlot *)lfirst(lc))->slot);
	}
}

void fn_key_marks_forget(void) {
	xact_keys = NIL;
	noted_slots = NIL;
}

static void key_set_free(SubxactSet *s) {
	pfree(((KeySet *)s)->marks);
	pfree(s);
}

/* Sets never merge: a committed subtransaction's go up as they are. */
static const SubxactSetKind keys_kind = {NULL, NULL, key_set_free};

void fn_key_marks_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid) {
	(void)fn_subxact_sets_end(&xact_keys, &keys_kind, event, mySubid, parentSubid);
}

uint32 fn_key_marks_count(int64 flow_id) {
	uint32 n = 0;
	ListCell *lc;

	foreach (lc, xact_keys)
		if (((KeySet *)lfirst(lc))->flow_id == flow_id)
			n += ((KeySet *)lfirst(lc))->count;
	return n;
}

void fn_key_marks_add_windows(int64 flow_id, FnDirtySet s) {
	ListCell *lc;

	foreach (lc, xact_keys) {
		KeySet *ks = lfirst(lc);

		for (uint32 i = 0; ks->flow_id == flow_id && i < ks->count; i++)
			fn_dirty_add(s, ks->marks[i].window);
	}
}
