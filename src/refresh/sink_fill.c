/*
 * sink_fill.c: a new flow's sink filled from what its source holds (create_flow's
 * backfill => 'now'), or the windows its worker is to fill recorded (backfill =>
 * 'background'). create_flow (api/flow_api.c) calls these once the flow's row and
 * triggers are in place.
 */
#include "flownode.h"

#include "refresh/sink_fill.h"
#include "refresh/refresh_exec.h"

#include "miscadmin.h"
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
