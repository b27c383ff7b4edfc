/*
 * refresh_sql.c: GreptimeDB's gen_insert_plan. A copy of the flow's analysed query is
 * restricted on its parse tree to the windows being refreshed (parameters), deparsed
 * by PostgreSQL, and wrapped in one statement that
 *   - upserts every fresh group, rewriting a sink row only when its binary image
 *     changed (any type works, including those without "="), and
 *   - deletes the sink rows of the refreshed windows whose group vanished.
 * Identifiers are quoted by quote_identifier; no value is ever spliced into the text.
 */
#include "flownode.h"

#include "refresh/refresh_sql.h"

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "nodes/nodes.h"
#include "query/key_columns.h"
#include "query/key_filter.h"
#include "query/query_rewrite.h"
#include "query/range_filter.h"
#include "utils/builtins.h"

static const char *col(const FlowQuery *fq, int pos) {
	return quote_identifier((char *)list_nth(fq->out_names, pos));
}

/* The parameter of a key refresh's hashes: after the ranges, and after a date's or
 * an epoch's values when the time column is one (refresh_args.h). */
static int key_hashes_param(const FlowQuery *fq) {
	return fq->input.kind != FN_INPUT_TIMESTAMP ? 5 : 3;
}

/* A query of the flow's (its own, or fold's tail) restricted to the windows of the
 * ranges $1/$2 (or to every finite time), deparsed. */
static char *restricted_keyed(const FlowQuery *fq, const Query *query, FnRangeFilter filter, bool keyed) {
	Query *q = (Query *)copyObjectImpl(query);

	if (fq->window.kind != FN_WINDOW_NONE)
		fn_inject_input_filter(q, fq->source_rtindex, fq->time_attnum,
		                       fq->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID, &fq->input, filter);
	/* key marks: the groups whose keys hash to the hashes (a keyed flow has no clock) */
	if (keyed)
		fn_inject_key_filter(q, fq->source_rtindex, fn_key_mark_columns(fq, InvalidOid),
		                     key_hashes_param(fq));
	/* the evaluation's scheduled time: after the ranges, if any (four of them for a
	 * date or an epoch column: the windows' times, then the column's values) */
	if (fq->now_preds != NIL)
		q = fn_bind_clock_param(q, filter == FN_FILTER_ALL_FINITE         ? 1
		                           : fq->input.kind != FN_INPUT_TIMESTAMP ? 5
		                                                                  : 3);
	return fn_deparse_query(q);
}

static char *restricted(const FlowQuery *fq, const Query *query, FnRangeFilter filter) {
	return restricted_keyed(fq, query, filter, false);
}

static char *restricted_query(const FlowQuery *fq, FnRangeFilter filter) {
	return restricted(fq, fq->query, filter);
}

/* `fn_sink.<window> lies in one of the ranges $1/$2`, one shape for any number:
 * against the ranges joined in the statement's FROM (JOIN: `fn_r`), or looked up in
 * them by flownode.in_ranges (CONTAINS). */
static void append_in_ranges(StringInfo s, const FlowQuery *fq, FnRangeFilter filter) {
	const char *w = col(fq, fq->window_position);

	if (filter == FN_FILTER_JOIN)
		appendStringInfo(s, "fn_sink.%s >= fn_r.lo AND fn_sink.%s < fn_r.hi", w, w);
	else
		appendStringInfo(s, FN_IN_RANGES_FUNCTION "(fn_sink.%s, $1, $2)", w);
}

static void append_columns(StringInfo s, const FlowQuery *fq) {
	for (int i = 0; i < list_length(fq->out_names); i++)
		appendStringInfo(s, "%s%s", i ? ", " : "", col(fq, i));
}

char *fn_plain_insert_sql(const FlowQuery *fq, const char *sink, FnRangeFilter source) {
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s, "INSERT INTO %s (", sink);
	append_columns(&s, fq);
	appendStringInfo(&s, ") %s", restricted_query(fq, source));
	return s.data;
}

char *fn_sink_probe_sql(const FlowQuery *fq, const char *sink, FnRangeFilter filter) {
	StringInfoData s;

	initStringInfo(&s);
	if (filter == FN_FILTER_JOIN) {
		/* range by range through the sink's index (LIMIT 1 keeps each apart) */
		appendStringInfo(
		    &s,
		    "SELECT EXISTS (SELECT 1 FROM unnest($1, $2) AS fn_r(lo, hi), LATERAL (SELECT 1 FROM %s "
		    "AS fn_sink WHERE ",
		    sink);
		append_in_ranges(&s, fq, filter);
		appendStringInfoString(&s, " LIMIT 1) AS fn_any)");
		return s.data;
	}
	appendStringInfo(&s, "SELECT EXISTS (SELECT 1 FROM %s AS fn_sink WHERE ", sink);
	append_in_ranges(&s, fq, filter);
	appendStringInfoChar(&s, ')');
	return s.data;
}

/*
 * Whether a refresh that saw only inserts may skip deleting vanished groups: a
 * group of a GROUP BY query without HAVING exists as long as one of its rows does,
 * so inserted rows never make one vanish (the query has no subqueries, LIMIT,
 * DISTINCT or volatile functions: fn_analyze_flow_query refuses them). The keys
 * must be NOT NULL so that ON CONFLICT finds every existing group. (Row-level
 * security on the source is checked per refresh: a policy can hide rows.)
 */
bool fn_refresh_can_skip_vanished(const FlowQuery *fq) {
	ListCell *lc;

	if (fq->shape == FLOW_SHAPE_SINGLE || fq->query->havingQual != NULL)
		return false;
	foreach (lc, fq->key_notnull)
		if (lfirst_int(lc) == 0)
			return false;
	return true;
}

/* ROW(prefix.c1, prefix.c2, ...)::record over every output column. */
static void append_row_image(StringInfo s, const FlowQuery *fq, const char *prefix) {
	appendStringInfoString(s, "ROW(");
	for (int i = 0; i < list_length(fq->out_names); i++)
		appendStringInfo(s, "%s%s.%s", i ? ", " : "", prefix, col(fq, i));
	appendStringInfoString(s, ")::pg_catalog.record");
}

/*
 * ON CONFLICT (keys) DO UPDATE SET every column WHERE the sink row's binary image
 * differs from the fresh one's: the record image operator *<> (record_image_ne), as
 * REFRESH MATERIALIZED VIEW CONCURRENTLY compares rows. Not "=" or IS DISTINCT FROM:
 * many types have no "=" (json, xml, point, tdigest; arrays and composites of them),
 * and some have one that is not identity (box compares areas, numeric 1.0 = 1.00, a
 * nondeterministic collation), which would leave a changed value unwritten. Equal
 * images are the same value, so an unchanged row is never rewritten; NULLs compare
 * equal to each other. The keys are compared and set too: ON CONFLICT matched them
 * with the unique index's equality, under which 1.0 and 1.00 are one group, and the
 * sink shows the group's key as the query does now. The casts to record keep the
 * parser from comparing ROW() with ROW() column by column, with each type's own
 * operator.
 */
static void append_on_conflict(StringInfo s, const FlowQuery *fq) {
	ListCell *lc;
	int i = 0;

	appendStringInfoString(s, " ON CONFLICT (");
	foreach (lc, fq->key_positions)
		appendStringInfo(s, "%s%s", i++ ? ", " : "", col(fq, lfirst_int(lc)));
	appendStringInfoString(s, ") DO UPDATE SET ");
	for (i = 0; i < list_length(fq->out_names); i++)
		appendStringInfo(s, "%s%s = EXCLUDED.%s", i ? ", " : "", col(fq, i), col(fq, i));
	appendStringInfoString(s, " WHERE ");
	append_row_image(s, fq, "fn_sink");
	appendStringInfoString(s, " OPERATOR(pg_catalog.*<>) ");
	append_row_image(s, fq, "EXCLUDED");
}

/* `NOT EXISTS (a fresh group with the keys of <alias>'s row)` */
static void append_not_fresh(StringInfo s, const FlowQuery *fq, const char *alias) {
	ListCell *lc;
	int i = 0;

	appendStringInfoString(s, "NOT EXISTS (SELECT 1 FROM fn_fresh WHERE ");
	foreach (lc, fq->key_positions) {
		int pos = lfirst_int(lc);
		bool notnull = list_nth_int(fq->key_notnull, i) != 0;

		appendStringInfo(s, "%sfn_fresh.%s %s %s.%s", i ? " AND " : "", col(fq, pos),
		                 notnull ? "=" : "IS NOT DISTINCT FROM", alias, col(fq, pos));
		i++;
	}
	appendStringInfoChar(s, ')');
}

/* ` AND flownode.key_hash(<alias>.<key>, ...) = ANY ($n)`: the sink's groups of
 * the marked hashes (their key columns hold the source columns' types and
 * collations, so they hash alike: fn_key_mark_columns). */
static void append_key_filter(StringInfo s, const FlowQuery *fq, const char *alias) {
	ListCell *lc;
	bool first = true;

	appendStringInfoString(s, " AND " FN_KEY_HASH_FUNCTION "(");
	foreach (lc, fq->key_positions) {
		if (lfirst_int(lc) == fq->window_position)
			continue;
		appendStringInfo(s, "%s%s.%s", first ? "" : ", ", alias, col(fq, lfirst_int(lc)));
		first = false;
	}
	appendStringInfo(s, ") OPERATOR(pg_catalog.=) ANY ($%d)", key_hashes_param(fq));
}

/*
 * With an index on the window column (JOIN), the sink rows of the windows are read
 * range by range through it, in a LATERAL subquery that OFFSET 0 keeps apart (the
 * planner, weighing each range as a ninth of the sink, otherwise read the whole sink
 * once per range or anti-joined all of it with the fresh groups), into a
 * materialized CTE, so the anti-join with the fresh groups runs once over both (not
 * once per range), and deleted by their ctids (a TID scan).
 */
static void append_delete_by_ranges(StringInfo s, const FlowQuery *fq, const char *sink, bool keyed) {
	const char *w = col(fq, fq->window_position);
	ListCell *lc;

	appendStringInfoString(s, "fn_old AS MATERIALIZED (SELECT fn_s.* FROM unnest($1, $2) AS fn_r(lo, hi), "
	                          "LATERAL (SELECT fn_s.ctid AS \"fn ctid\"");
	foreach (lc, fq->key_positions)
		appendStringInfo(s, ", fn_s.%s", col(fq, lfirst_int(lc)));
	appendStringInfo(s, " FROM %s AS fn_s WHERE fn_s.%s >= fn_r.lo AND fn_s.%s < fn_r.hi", sink, w, w);
	if (keyed)
		append_key_filter(s, fq, "fn_s");
	appendStringInfoString(s, " OFFSET 0) AS fn_s),\n");
	appendStringInfo(s,
	                 "fn_delete AS (DELETE FROM %s AS fn_sink WHERE fn_sink.ctid OPERATOR(pg_catalog.=) ANY "
	                 "(ARRAY(SELECT fn_old.\"fn ctid\" FROM fn_old WHERE ",
	                 sink);
	append_not_fresh(s, fq, "fn_old");
	appendStringInfoString(s, ")) RETURNING 1)\n");
}

/*
 * DELETE of the windows' sink rows whose group is not among the fresh ones. The keys
 * are compared with "=": a GROUP BY key's type always has an equality (GROUP BY needs
 * one), and it is the equality that made the group and that the sink's unique index
 * uses, so 1.0 and 1.00 are one group here as in the upsert. Comparing binary images
 * instead would delete a group the upsert has just matched.
 */
static void append_delete_vanished(StringInfo s, const FlowQuery *fq, const char *sink, FnRangeFilter filter,
                                   bool keyed) {
	if (fq->window.kind != FN_WINDOW_NONE && filter == FN_FILTER_JOIN) {
		append_delete_by_ranges(s, fq, sink, keyed);
		return;
	}
	appendStringInfo(s, "fn_delete AS (DELETE FROM %s AS fn_sink WHERE ", sink);
	if (fq->window.kind != FN_WINDOW_NONE && filter == FN_FILTER_CONTAINS) {
		append_in_ranges(s, fq, filter);
		if (keyed)
			append_key_filter(s, fq, "fn_sink");
		appendStringInfoString(s, " AND ");
	}
	append_not_fresh(s, fq, "fn_sink");
	appendStringInfoString(s, " RETURNING 1)\n");
}

/*
 * A flow of one row (aggregates without GROUP BY; HAVING may leave none) has no key
 * to upsert on: the sink keeps one row whose binary image equals the fresh one, if
 * any (unchanged, it keeps its row version), and loses every other; the fresh row is
 * inserted when none was kept. So the sink holds exactly the query's row, whatever
 * it held before.
 */
static char *single_row_sql(const FlowQuery *fq, const char *sink) {
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoString(&s, "WITH fn_fresh (");
	append_columns(&s, fq);
	appendStringInfo(&s, ") AS MATERIALIZED (%s),\n", restricted_query(fq, FN_FILTER_ALL_FINITE));
	appendStringInfo(&s, "fn_keep AS (SELECT fn_sink.ctid AS fn_row FROM %s AS fn_sink, fn_fresh WHERE ",
	                 sink);
	append_row_image(&s, fq, "fn_sink");
	appendStringInfoString(&s, " OPERATOR(pg_catalog.*=) ");
	append_row_image(&s, fq, "fn_fresh");
	appendStringInfoString(&s, " LIMIT 1),\n");
	appendStringInfo(
	    &s,
	    "fn_delete AS (DELETE FROM %s AS fn_sink WHERE fn_sink.ctid NOT IN (SELECT fn_row FROM fn_keep)"
	    " RETURNING 1),\n",
	    sink);
	appendStringInfo(&s, "fn_insert AS (INSERT INTO %s (", sink);
	append_columns(&s, fq);
	appendStringInfoString(
	    &s, ") SELECT * FROM fn_fresh WHERE NOT EXISTS (SELECT 1 FROM fn_keep) RETURNING 1)\n");
	appendStringInfoString(&s, "SELECT (SELECT count(*) FROM fn_insert) + (SELECT count(*) FROM fn_delete)");
	return s.data;
}

static char *refresh_sql(const FlowQuery *fq, const char *sink, FnRefreshShape shape, bool upsert_only,
                         bool keyed) {
	StringInfoData s;

	if (fq->shape == FLOW_SHAPE_SINGLE)
		return single_row_sql(fq, sink);
	initStringInfo(&s);
	if (upsert_only) {
		/* the upsert alone, straight from the query */
		appendStringInfo(&s, "INSERT INTO %s AS fn_sink (", sink);
		append_columns(&s, fq);
		appendStringInfo(&s, ") %s", restricted_query(fq, shape.source));
		append_on_conflict(&s, fq);
		return s.data;
	}
	appendStringInfoString(&s, "WITH fn_fresh (");
	append_columns(&s, fq);
	appendStringInfo(&s, ") AS MATERIALIZED (%s),\n", restricted_keyed(fq, fq->query, shape.source, keyed));
	appendStringInfo(&s, "fn_upsert AS (INSERT INTO %s AS fn_sink (", sink);
	append_columns(&s, fq);
	appendStringInfoString(&s, ") SELECT * FROM fn_fresh");
	append_on_conflict(&s, fq);
	appendStringInfoString(&s, " RETURNING 1),\n");
	append_delete_vanished(&s, fq, sink,
	                       shape.source == FN_FILTER_ALL_FINITE ? FN_FILTER_ALL_FINITE : shape.sink, keyed);
	appendStringInfoString(&s, "SELECT (SELECT count(*) FROM fn_upsert) + (SELECT count(*) FROM fn_delete)");
	return s.data;
}

char *fn_refresh_sql(const FlowQuery *fq, const char *sink, FnRefreshShape shape, bool upsert_only) {
	return refresh_sql(fq, sink, shape, upsert_only, false);
}

char *fn_refresh_keys_sql(const FlowQuery *fq, const char *sink, FnRefreshShape shape) {
	return refresh_sql(fq, sink, shape, false, true);
}

/*
 * read_flow's statements (refresh/read_exec.c). The query over the dirty windows of
 * $1/$2 is the refresh's own restricted query (one shape for any number of windows,
 * each range read through the source's time index where there is one).
 */
char *fn_read_query_sql(const FlowQuery *fq, FnRangeFilter source) {
	return restricted_query(fq, source);
}

/*
 * The sink's rows whose window lies in [$3, $4) and in none of the dirty ranges
 * $1/$2 (flownode.in_ranges: read once, each row a binary search of them). The
 * bounds are plain comparisons on the window column, so the planner, seeing their
 * values, reads a range through the sink's index on the window column and the
 * whole sink with a scan; the rows of dirty windows it reads are few. A window-less
 * flow's sink is read whole.
 */
char *fn_read_sink_sql(const FlowQuery *fq, const char *sink) {
	StringInfoData s;
	const char *w;

	initStringInfo(&s);
	appendStringInfo(&s, "SELECT fn_sink.* FROM %s AS fn_sink", sink);
	if (fq->window.kind == FN_WINDOW_NONE)
		return s.data;
	w = col(fq, fq->window_position);
	appendStringInfo(&s,
	                 " WHERE fn_sink.%s OPERATOR(pg_catalog.>=) $3 AND fn_sink.%s OPERATOR(pg_catalog.<) $4"
	                 " AND NOT " FN_IN_RANGES_FUNCTION "(fn_sink.%s, $1, $2)",
	                 w, w, w);
	return s.data;
}

/*
 * The folded refresh of the open window (refresh/fold_state.h): the groups of two
 * parts of its rows, combined column by column (query/fold_shape.h). One part is the
 * prefix the worker keeps (an ephemeral named relation, FN_FOLD_PREFIX, with the
 * query's output columns), the other the query over the ranges $1/$2.
 */
/* The fold's parts' columns (query/fold_shape.h). */
static void append_parts(StringInfo s, const FnFoldShape *fs) {
	for (int i = 0; i < fs->nparts; i++)
		appendStringInfo(s, "%s%s", i ? ", " : "", quote_identifier(fs->names[i]));
}

static void append_fold_select(StringInfo s, const FlowQuery *fq, const FnFoldShape *fs,
                               FnRangeFilter source) {
	static const char *const combine[] = {
	    [FN_FOLD_SUM_BIGINT] = "pg_catalog.sum(fn_u.%s)::pg_catalog.int8",
	    [FN_FOLD_SUM] = "pg_catalog.sum(fn_u.%s)",
	    [FN_FOLD_MIN] = "pg_catalog.min(fn_u.%s)",
	    [FN_FOLD_MAX] = "pg_catalog.max(fn_u.%s)",
	    [FN_FOLD_AND] = "pg_catalog.bool_and(fn_u.%s)",
	    [FN_FOLD_OR] = "pg_catalog.bool_or(fn_u.%s)",
	};
	int nkeys = 0;

	appendStringInfoString(s, "SELECT ");
	for (int i = 0; i < fs->nparts; i++) {
		const char *c = quote_identifier(fs->names[i]);

		if (i > 0)
			appendStringInfoString(s, ", ");
		if (fs->kinds[i] == FN_FOLD_KEY)
			appendStringInfo(s, "fn_u.%s", c);
		else
			appendStringInfo(s, combine[fs->kinds[i]], c);
		appendStringInfo(s, " AS %s", c);
	}
	appendStringInfoString(s, " FROM (SELECT ");
	append_parts(s, fs);
	appendStringInfo(s, " FROM %s UNION ALL SELECT * FROM (%s) AS fn_q (", FN_FOLD_PREFIX,
	                 restricted(fq, fs->tail, source));
	append_parts(s, fs);
	appendStringInfoString(s, ")) AS fn_u GROUP BY ");
	for (int i = 0; i < fs->nparts; i++)
		if (fs->kinds[i] == FN_FOLD_KEY)
			appendStringInfo(s, "%sfn_u.%s", nkeys++ ? ", " : "", quote_identifier(fs->names[i]));
}

char *fn_fold_prefix_sql(const FlowQuery *fq, const FnFoldShape *fs, FnRangeFilter source) {
	StringInfoData s;

	initStringInfo(&s);
	append_fold_select(&s, fq, fs, source);
	return s.data;
}

/* The sink's columns from the combined parts: an avg is its sum over its count, as
 * numerics (PostgreSQL's avg over integers and numeric: numeric_div of the two). */
char *fn_fold_upsert_sql(const FlowQuery *fq, const FnFoldShape *fs, const char *sink, FnRangeFilter source) {
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s, "INSERT INTO %s AS fn_sink (", sink);
	append_columns(&s, fq);
	appendStringInfoString(&s, ") SELECT ");
	for (int i = 0; i < fs->ncolumns; i++) {
		if (i > 0)
			appendStringInfoString(&s, ", ");
		if (fs->count_of[i] < 0)
			appendStringInfo(&s, "fn_c.%s", col(fq, i));
		else
			appendStringInfo(&s,
			                 "fn_c.%s::pg_catalog.numeric OPERATOR(pg_catalog./) "
			                 "NULLIF(fn_c.%s, 0)::pg_catalog.numeric",
			                 col(fq, i), quote_identifier(fs->names[fs->count_of[i]]));
	}
	appendStringInfoString(&s, " FROM (");
	append_fold_select(&s, fq, fs, source);
	appendStringInfoString(&s, ") AS fn_c");
	append_on_conflict(&s, fq);
	return s.data;
}

/* The sink's rows of the window [$1[1], $2[1]) that the query does not return, and the
 * query's that the sink does not hold, counted (rows compared by their text). */
char *fn_fold_verify_sql(const FlowQuery *fq, const char *sink, FnRangeFilter source) {
	StringInfoData s;
	StringInfoData sink_rows;
	StringInfoData query_rows;
	const char *w = col(fq, fq->window_position);

	initStringInfo(&sink_rows);
	appendStringInfoString(&sink_rows, "SELECT ROW(");
	append_columns(&sink_rows, fq);
	appendStringInfo(&sink_rows,
	                 ")::pg_catalog.text FROM %s AS fn_sink WHERE %s OPERATOR(pg_catalog.>=) $1[1] AND %s "
	                 "OPERATOR(pg_catalog.<) $2[1]",
	                 sink, w, w);
	initStringInfo(&query_rows);
	appendStringInfoString(&query_rows, "SELECT ROW(");
	append_columns(&query_rows, fq);
	appendStringInfo(&query_rows, ")::pg_catalog.text FROM (%s) AS fn_q (", restricted_query(fq, source));
	append_columns(&query_rows, fq);
	appendStringInfoChar(&query_rows, ')');
	initStringInfo(&s);
	appendStringInfo(
	    &s, "SELECT pg_catalog.count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) AS fn_d",
	    sink_rows.data, query_rows.data, query_rows.data, sink_rows.data);
	return s.data;
}
