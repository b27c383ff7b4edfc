/*
 * mark_truncate.c: the TRUNCATE triggers. TRUNCATE of a flow's source empties its
 * flows' sinks through SPI, as each flow's owner (or marks their windows where the
 * owner may not); TRUNCATE of a partition under a source marks its rows' windows
 * for the tables above it that the statement leaves alone.
 */
#include "flownode.h"

#include "marking/mark_truncate.h"
#include "marking/mark_rows.h"
#include "commands/trigger.h"
#include "marking/mark_triggers.h"
#include "marking/source_cache.h"
#include "pgutil/pg_util.h"
#include "query/flow_query.h"
#include "query/time_column.h"
#include "registry/flow_registry.h"
#include "registry/stored_query.h"

#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(flownode_mark_truncate);

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
		                     fn_sink_window_column(s->flow_id));
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
	col = get_attnum(s->sink_relid, fn_sink_window_name(s->flow_id));
	return col != InvalidAttrNumber &&
	       pg_attribute_aclcheck(s->sink_relid, col, s->owner, ACL_SELECT) == ACLCHECK_OK;
}

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
	found = fn_marks_time_extent(psprintf("ONLY %s", fn_qualified_relname(m->sink_relid)),
	                             fn_sink_window_column(m->flow_id), coltype, NULL, &lo, &hi);
	fn_spi_end(&scope);
	PopActiveSnapshot();
	if (found)
		fn_marks_add_range(lm, (FnTimeRange){fn_flow_window_at(m, lo).start, fn_flow_window_at(m, hi).end});
}

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

		if (m->source_relid != relid)
			continue;
		if (m->window == NULL) {
			/* a window-less flow is recomputed whole anyway, and an empty source is
			 * not an empty answer for all of them: count(*) without GROUP BY is one
			 * row of 0 */
			mark_sink_windows(m);
			continue;
		}
		fn_marks_note_truncated(m->flow_id);
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
