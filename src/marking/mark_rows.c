/*
 * mark_rows.c: the rows a table holds, read (as the catalog's owner, in a fresh
 * snapshot) and marked for the flows over it, in the sets of mark_triggers.c: the
 * rows of a partition attached, detached, dropped or truncated, and every window
 * between a table's first and last row after a rewrite or an unread drop. Also the
 * sink's window column and a column's time extent, which TRUNCATE reads too.
 */
#include "flownode.h"

#include "marking/mark_rows.h"
#include "marking/mark_triggers.h"
#include "marking/source_cache.h"
#include "pgutil/pg_util.h"
#include "query/flow_query.h"
#include "query/query_rewrite.h"
#include "query/time_column.h"
#include "registry/flow_registry.h"

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

/* The sink's window column (its name, unquoted), from the flow's analysed query. */
const char *fn_sink_window_name(int64 flow_id) {
	TaskConfig *cfg = fn_load_task_config(flow_id, false);
	int nest = fn_pin_deparse_settings(cfg->timezone);
	FlowQuery *fq = fn_analyze_flow_query(cfg->query, cfg->timezone);

	fn_unpin_settings(nest);
	return list_nth(fq->out_names, fq->window_position);
}

const char *fn_sink_window_column(int64 flow_id) {
	return quote_identifier(fn_sink_window_name(flow_id));
}

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

/* The rows of a table whose times a group's windows are marked with. */
typedef struct GroupRows {
	SourceEntry *e;
	MarkGroup *g;
	bool marked;
} GroupRows;

static void mark_group_time(int64 ts, void *arg) {
	GroupRows *rows = arg;

	fn_marks_group_time(rows->e, rows->g, ts);
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
			fn_marks_group_range(rows->e, rows->g, (FnTimeRange){from, fn_flow_window_at(leader, ts).end});
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
				fn_marks_group_windowless(e, g);
		} else {
			const char *name = get_attname(flows_relid, leader->time_attnum, false);
			int64 line = group_line(e, g, now);

			marked = mark_windows_read(e, g, rel, quote_identifier(name),
			                           leader->spec.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID,
			                           fn_btree_index_leads_with(rows_relid, get_attnum(rows_relid, name)),
			                           line != 0 ? line : FN_TS_MIN);
		}
		if (marked && removes)
			fn_marks_of_group(e, g)->removes = true;
	}
	fn_spi_end(&scope);
	PopActiveSnapshot();
}

/* The first and last time of a column that has a window (of the table with its
 * partitions; `in`: how the column becomes the window's timestamp, NULL for a sink's
 * window column); false when it has none. */
bool fn_marks_time_extent(const char *rel, const char *col, Oid coltype, FnTimeInput *in, int64 *lo,
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
		fn_marks_group_windowless(e, g);
		fn_marks_of_group(e, g)->removes = true;
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
		    fn_marks_time_extent(psprintf("ONLY %s", fn_qualified_relname(m->sink_relid)),
		                         fn_sink_window_column(m->flow_id), coltype, NULL, &a, &b)) {
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
	fn_marks_group_range(
	    e, g,
	    (FnTimeRange){fn_flow_window_at(g->leader, all_lo).start, fn_flow_window_at(g->leader, all_hi).end});
	fn_marks_of_group(e, g)->removes = true;
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
		(void)fn_marks_time_extent(fn_qualified_relname(relid),
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
