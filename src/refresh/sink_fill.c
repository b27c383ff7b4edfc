/*
 * sink_fill.c: a new flow's sink filled from what its source holds (create_flow's
 * backfill => 'now'), or the windows its worker is to fill recorded (backfill =>
 * 'background'). create_flow (api/flow_api.c) calls these once the flow's row and
 * triggers are in place. Also the cut of a fill into chunks of about
 * flownode.backfill_chunk_rows source rows, which the worker's background backfill
 * uses too (fn_fill_chunk_end).
 */
#include "flownode.h"

#include "refresh/sink_fill.h"
#include "refresh/extents.h"
#include "refresh/refresh_exec.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "pgutil/pg_util.h"
#include "query/query_rewrite.h"
#include "query/time_input.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

double fn_usec_to_sec(int64 usec) {
	return (double)usec / USECS_PER_SEC;
}

/*
 * backfill => 'now': the sink filled from what the source holds, in this
 * transaction. A small source (fewer rows than flownode.backfill_chunk_rows, or no
 * index on the time column to cut it with) in one statement, as ever; a larger one
 * chunk by chunk, oldest first, with a NOTICE of the progress every few seconds.
 * The chunks cover every window of the source's rows and of an existing sink's, so
 * the sink ends exact either way. Returns the rows written.
 */
int64 fn_fill_now(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new, TimestampTz clock_at) {
	FnWindow *w = cfg->window.kind != FN_WINDOW_NONE ? fn_window_create(&cfg->window) : NULL;
	TimestampTz start = GetCurrentTimestamp();
	TimestampTz noticed = start;
	FnTimeRange all = {0, 0};
	int64 end = 0;
	int64 rows = 0;
	int64 total;

	if (w != NULL)
		all = fn_fill_extent(cfg, fq, !sink_is_new);
	if (all.start < all.end) {
		all = (FnTimeRange){fn_window_of(w, all.start).start, fn_window_of(w, all.end - 1).end};
		end = fn_fill_chunk_end(cfg, w, all, fn_backfill_chunk_rows);
	}
	if (all.start >= all.end || end >= all.end)
		return fn_refresh_fill(cfg, fq, sink_is_new, clock_at); /* one statement */

	if (!sink_is_new)
		fn_fill_forget_unwindowed(cfg, fq);
	total = fn_flow_windows(cfg, w, all);
	for (int64 next = all.start; next < all.end; next = end) {
		TimestampTz now;

		if (next != all.start)
			end = fn_fill_chunk_end(cfg, w, (FnTimeRange){next, all.end}, fn_backfill_chunk_rows);
		rows += fn_refresh_fill_range(cfg, fq, sink_is_new, (FnTimeRange){next, end}, clock_at);
		CHECK_FOR_INTERRUPTS();
		now = GetCurrentTimestamp();
		if (end < all.end && now - noticed >= FILL_NOTICE_USEC) {
			ereport(NOTICE, (errmsg("flow \"%s\": filled " INT64_FORMAT " of " INT64_FORMAT
			                        " windows (" INT64_FORMAT " sink rows) in %.1f s",
			                        cfg->flow_name, fn_flow_windows(cfg, w, (FnTimeRange){all.start, end}),
			                        total, rows, fn_usec_to_sec(now - start))));
			noticed = now;
		}
	}
	return rows;
}

/*
 * backfill => 'background': instead of filling, the flow records the windows its
 * worker fills, [backfill_from, backfill_to): every window of the source's rows (and
 * of an existing sink's), from the oldest; [0, 1) for a window-less flow. Nothing
 * to fill: no backfill.
 */
void fn_plan_backfill(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new) {
	FnTimeRange all = {0, 1};

	if (cfg->window.kind != FN_WINDOW_NONE) {
		FnWindow *w = fn_window_create(&cfg->window);

		all = fn_fill_extent(cfg, fq, !sink_is_new);
		if (all.start >= all.end)
			return; /* no row in the source, nor in the sink */
		all = (FnTimeRange){fn_window_of(w, all.start).start, fn_window_of(w, all.end - 1).end};
		if (!sink_is_new)
			fn_fill_forget_unwindowed(cfg, fq);
	}
	(void)fn_registry_set_backfill(cfg->flow_id, all.start, all.start, all.end); /* our own row */
}

int64 fn_fill_chunk_end(TaskConfig *cfg, FnWindow *w, FnTimeRange range, int64 rows) {
	Oid coltype =
	    fn_time_input_bound_type(&cfg->input, cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID);
	Oid types[3] = {coltype, coltype, INT8OID};
	Datum args[3] = {0, 0, Int64GetDatum(rows - 1)};
	const char *column;
	char *sql;
	int64 end = range.end;
	SpiAs scope;
	int nest;

	if (w == NULL || rows <= 0 || !fn_btree_index_leads_with(cfg->source_relid, cfg->time_attnum))
		return range.end;
	/* a date or an epoch column is read by its values' bounds (query/time_input.h) */
	if (!fn_time_input_args(&cfg->input, range, &args[0], &args[1]))
		return range.end;
	column = quote_identifier(get_attname(cfg->source_relid, cfg->time_attnum, false));
	sql = psprintf("SELECT %s FROM %s WHERE %s ORDER BY %s OFFSET $3 LIMIT 1",
	               fn_time_input_select(&cfg->input, column), fn_qualified_relname(cfg->source_relid),
	               fn_time_input_where(&cfg->input, column, 1), column);
	nest = fn_pin_deparse_settings(cfg->timezone);
	PushActiveSnapshot(GetTransactionSnapshot());
	fn_spi_begin_as(&scope, cfg->owner, SECURITY_RESTRICTED_OPERATION);
	if (SPI_execute_with_args(sql, 3, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading the source's times failed");
	if (SPI_processed == 1) {
		bool isnull;
		Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull) {
			/* clamped into the range: a date's midnight in a zone may lie before it */
			int64 t = Max(Min(fn_time_input_time_of(&cfg->input, d), range.end - 1), range.start);

			end = Min(fn_window_of(w, t).end, range.end);
		}
	}
	fn_spi_end(&scope);
	PopActiveSnapshot();
	fn_unpin_settings(nest);
	return end;
}

void fn_fill_forget_unwindowed(TaskConfig *cfg, FlowQuery *fq) {
	char *sql;
	SpiAs scope;
	int nest;

	if (cfg->window.kind == FN_WINDOW_NONE)
		return;
	sql = psprintf("DELETE FROM %s WHERE %s IS NULL", fn_qualified_relname(cfg->sink_relid),
	               quote_identifier(list_nth(fq->out_names, fq->window_position)));
	nest = fn_pin_deparse_settings(cfg->timezone);
	PushActiveSnapshot(GetTransactionSnapshot());
	fn_spi_begin_as(&scope, cfg->owner, SECURITY_RESTRICTED_OPERATION);
	if (SPI_execute(sql, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "flownode: emptying the sink's rows without a window failed");
	fn_spi_end(&scope);
	PopActiveSnapshot();
	fn_unpin_settings(nest);
}
