/*
 * gen_insert_plan.c: the seed's gen_insert_plan. The flow's stored query is
 * analyzed again (so an ALTER TABLE that breaks it fails loudly), restricted on its
 * parse tree to the dirty ranges of the time column, deparsed by PostgreSQL, and
 * wrapped in one statement that
 *   - upserts every fresh group, rewriting a sink row only when a value changed, and
 *   - deletes the sink rows of the refreshed windows whose group vanished.
 * Identifiers are quoted by quote_identifier; constants come from the types' own
 * output functions and are quoted by quote_literal.
 */
#include "flownode/flownode.h"

#include "miscadmin.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

static const char *col(FlowQuery *fq, int pos) {
	return quote_identifier((char *)list_nth(fq->out_names, pos));
}

static bool is_key(FlowQuery *fq, int pos) {
	return list_member_int(fq->key_positions, pos);
}

static char *timestamp_literal(Oid coltype, int64 value) {
	Oid outfunc;
	bool varlena;

	getTypeOutputInfo(coltype, &outfunc, &varlena);
	return quote_literal_cstr(OidOutputFunctionCall(outfunc, Int64GetDatum(value)));
}

char *fn_gen_insert_plan(TaskConfig *cfg, const FnTimeRange *ranges, int nranges) {
	FlowQuery *fq = fn_analyze_flow_query(cfg->query, cfg->timezone);
	int ncols = list_length(fq->out_names);
	const char *sink = fn_qualified_relname(cfg->sink_relid);
	Oid coltype = cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	StringInfoData s;
	bool have_values = false;
	ListCell *lc;
	int i;

	if (fq->window.kind != FN_WINDOW_NONE)
		fn_inject_time_filter(fq->query, fq->source_rtindex, fq->time_attnum, coltype, ranges, nranges);

	initStringInfo(&s);
	appendStringInfoString(&s, "WITH fn_fresh (");
	for (i = 0; i < ncols; i++)
		appendStringInfo(&s, "%s%s", i ? ", " : "", col(fq, i));
	appendStringInfo(&s, ") AS MATERIALIZED (%s),\n", fn_deparse_query(fq->query));

	/* upsert: rewrite a row only when some value differs */
	appendStringInfo(&s, "fn_upsert AS (INSERT INTO %s AS fn_sink (", sink);
	for (i = 0; i < ncols; i++)
		appendStringInfo(&s, "%s%s", i ? ", " : "", col(fq, i));
	appendStringInfoString(&s, ") SELECT * FROM fn_fresh ON CONFLICT (");
	i = 0;
	foreach (lc, fq->key_positions)
		appendStringInfo(&s, "%s%s", i++ ? ", " : "", col(fq, lfirst_int(lc)));
	appendStringInfoString(&s, ") DO ");
	for (i = 0; i < ncols; i++)
		have_values |= !is_key(fq, i);
	if (!have_values)
		appendStringInfoString(&s, "NOTHING");
	else {
		bool first = true;

		appendStringInfoString(&s, "UPDATE SET ");
		for (i = 0; i < ncols; i++)
			if (!is_key(fq, i)) {
				appendStringInfo(&s, "%s%s = EXCLUDED.%s", first ? "" : ", ", col(fq, i), col(fq, i));
				first = false;
			}
		appendStringInfoString(&s, " WHERE ROW(");
		first = true;
		for (i = 0; i < ncols; i++)
			if (!is_key(fq, i)) {
				appendStringInfo(&s, "%sfn_sink.%s", first ? "" : ", ", col(fq, i));
				first = false;
			}
		appendStringInfoString(&s, ") IS DISTINCT FROM ROW(");
		first = true;
		for (i = 0; i < ncols; i++)
			if (!is_key(fq, i)) {
				appendStringInfo(&s, "%sEXCLUDED.%s", first ? "" : ", ", col(fq, i));
				first = false;
			}
		appendStringInfoChar(&s, ')');
	}
	appendStringInfoString(&s, " RETURNING 1),\n");

	/* delete the groups of the refreshed windows that no longer exist */
	appendStringInfo(&s, "fn_delete AS (DELETE FROM %s AS fn_sink WHERE ", sink);
	if (fq->window.kind != FN_WINDOW_NONE && nranges > 0) {
		const char *w = col(fq, fq->window_position);

		appendStringInfoChar(&s, '(');
		for (i = 0; i < nranges; i++)
			appendStringInfo(&s, "%s(fn_sink.%s >= %s AND fn_sink.%s < %s)", i ? " OR " : "", w,
			                 timestamp_literal(coltype, ranges[i].start), w,
			                 timestamp_literal(coltype, ranges[i].end));
		appendStringInfoString(&s, ") AND ");
	}
	appendStringInfoString(&s, "NOT EXISTS (SELECT 1 FROM fn_fresh WHERE ");
	i = 0;
	foreach (lc, fq->key_positions) {
		int pos = lfirst_int(lc);
		bool notnull = list_nth_int(fq->key_notnull, i) != 0;

		appendStringInfo(&s, "%sfn_fresh.%s %s fn_sink.%s", i ? " AND " : "", col(fq, pos),
		                 notnull ? "=" : "IS NOT DISTINCT FROM", col(fq, pos));
		i++;
	}
	appendStringInfoString(&s, ") RETURNING 1)\n");
	appendStringInfoString(&s, "SELECT (SELECT count(*) FROM fn_upsert) + (SELECT count(*) FROM fn_delete)");
	return s.data;
}

/*
 * Runs one refresh as the flow's owner, in the current transaction. The source is
 * locked before the statement takes its snapshot, so a TRUNCATE of the source is
 * either wholly before the refresh's snapshot or waits for the refresh to commit.
 */
/* '{[a,b),[c,d)}' as an int8multirange literal. */
static char *multirange_literal(const FnTimeRange *ranges, int nranges) {
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoChar(&s, '{');
	for (int i = 0; i < nranges; i++)
		appendStringInfo(&s, "%s[" INT64_FORMAT "," INT64_FORMAT ")", i ? "," : "", (int64)ranges[i].start,
		                 (int64)ranges[i].end);
	appendStringInfoChar(&s, '}');
	return quote_literal_cstr(s.data);
}

/* Runs a prepared statement in the given snapshot; returns the first column of its row. */
static int64 run_in_snapshot(const char *sql, Snapshot snap, int expect) {
	SPIPlanPtr plan = SPI_prepare(sql, 0, NULL);
	int rc;
	bool isnull;

	if (plan == NULL)
		elog(ERROR, "flownode: preparing a refresh statement failed: %s", SPI_result_code_string(SPI_result));
	rc = SPI_execute_snapshot(plan, NULL, NULL, snap, InvalidSnapshot, false, true, 0);
	if (rc != expect)
		elog(ERROR, "flownode: refresh statement failed: %s", SPI_result_code_string(rc));
	if (rc == SPI_OK_SELECT && SPI_processed == 1)
		return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return (int64)SPI_processed;
}

/*
 * Runs one refresh in the current transaction: the upsert/delete statement as the
 * flow's owner and, with the very same snapshot, the removal of the refreshed
 * windows from the durable record as the catalog's owner. A writer that committed
 * after that snapshot keeps both its rows out of this refresh and its record.
 *
 * The source is locked before the snapshot is taken, so a TRUNCATE of the source
 * is either wholly before the refresh's snapshot or waits for it to commit.
 */
static int64 execute(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, bool trim,
                     int64 expired_before) {
	Oid save_userid;
	int save_sec;
	int nest;
	int64 rows = 0;
	Snapshot snap;

	LockRelationOid(cfg->source_relid, AccessShareLock);
	GetUserIdAndSecContext(&save_userid, &save_sec);
	nest = fn_pin_deparse_settings(cfg->timezone);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	/* taken after the lock, and after the caller took its dirty ranges */
	snap = RegisterSnapshot(GetTransactionSnapshot());
	PushActiveSnapshot(snap);
	PG_TRY();
	{
		SetUserIdAndSecContext(cfg->owner,
		                       save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
		/* a refresh of no ranges is a trim only (expired windows); with trim off,
		 * no ranges means the whole query (create_flow's fill) */
		if (nranges > 0 || !trim)
			rows = run_in_snapshot(fn_gen_insert_plan(cfg, ranges, nranges), snap, SPI_OK_SELECT);
		if (trim) {
			char *sql;
			const char *windows = nranges > 0 ? multirange_literal(ranges, nranges) : "'{}'";

			SetUserIdAndSecContext(fn_catalog_owner(), save_sec | SECURITY_LOCAL_USERID_CHANGE);
			sql = psprintf("UPDATE flownode.pending SET ranges = ranges OPERATOR(pg_catalog.-) "
			               "%s::pg_catalog.int8multirange"
			               " WHERE flow_id = " INT64_FORMAT
			               " AND ranges OPERATOR(pg_catalog.&&) %s::pg_catalog.int8multirange",
			               windows, cfg->flow_id, windows);
			(void)run_in_snapshot(sql, snap, SPI_OK_UPDATE);
			if (expired_before != 0) {
				/* whole recorded windows that ended before the cutoff: never partial ones */
				sql = psprintf(
				    "UPDATE flownode.pending SET ranges = (SELECT "
				    "COALESCE(pg_catalog.range_agg(r),"
				    " '{}') FROM pg_catalog.unnest(ranges) r WHERE pg_catalog.upper(r) > " INT64_FORMAT ")"
				    " WHERE flow_id = " INT64_FORMAT " AND pg_catalog.lower(ranges) < " INT64_FORMAT,
				    expired_before, cfg->flow_id, expired_before);
				(void)run_in_snapshot(sql, snap, SPI_OK_UPDATE);
			}
			sql = psprintf("DELETE FROM flownode.pending WHERE flow_id = " INT64_FORMAT
			               " AND pg_catalog.isempty(ranges)",
			               cfg->flow_id);
			(void)run_in_snapshot(sql, snap, SPI_OK_DELETE);
		}
	}
	PG_FINALLY();
	{ SetUserIdAndSecContext(save_userid, save_sec); }
	PG_END_TRY();
	PopActiveSnapshot();
	UnregisterSnapshot(snap);
	SPI_finish();
	fn_unpin_settings(nest);
	return rows;
}

int64 fn_execute_insert_plan(TaskConfig *cfg, const FnTimeRange *ranges, int nranges) {
	return execute(cfg, ranges, nranges, false, 0);
}

int64 fn_execute_refresh(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, int64 expired_before) {
	return execute(cfg, ranges, nranges, true, expired_before);
}
