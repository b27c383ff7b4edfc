/*
 * take_probes.c: which dirty ranges the next refresh takes (take_probes.h): the
 * pure core's take (fn_plan_take) asks how many source rows a range holds, and these
 * probes answer through the time column's index.
 */
#include "flownode.h"

#include "refresh/take_probes.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "query/query_rewrite.h"
#include "executor/spi.h"
#include "pgutil/pg_util.h"
#include "query/time_input.h"
#include "refresh/refresh_args.h"
#include "refresh/refresh_plans.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

/*
 * The take's probes, run as the owner under the pinned settings, each prepared once.
 * One range: its first rows in time order, counted up to a limit, and the time of the
 * last one counted (as the query makes it of the time column's value), in one read of
 * the time index, clamped into the range (a date's midnight in a zone may lie before
 * it). Many ranges (a timestamp column): the same for each of them through one
 * cursor, fetched a range at a time as the take asks, with the limit of the take's
 * whole budget. A thousand late rows in a thousand windows cost a thousand
 * executions of the one-range probe, each started and ended (half of the probes'
 * time), or one fetch each from the cursor. A range asked for with a smaller limit
 * than the cursor's (the budget is partly spent) is counted again by the one-range
 * probe when the cursor found more rows than that limit, since its last row is not
 * the one the take needs.
 */
typedef struct TakeProbe {
	TaskConfig *cfg;
	RefreshPlans *plans;       /* the flow's kept statements: its probes */
	const FnTimeRange *ranges; /* the take's ranges, in the order the take asks */
	uint32 n;
	uint32 next;   /* the cursor's next range */
	uint64 limit;  /* the cursor's limit per range (0: no cursor yet) */
	Portal cursor; /* NULL: none, or given up */
} TakeProbe;

#define BATCH_PROBE_MIN_RANGES 8 /* fewer: one probe each costs no more */

static uint64 probe_result(TaskConfig *cfg, FnTimeRange r, int64_t *last) {
	bool isnull;
	int64 n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);

	if (n > 0 && !isnull)
		*last = Max(Min(fn_time_input_time_of(&cfg->input, d), r.end - 1), r.start);
	return (uint64)n;
}

static uint64 probe_one(TaskConfig *cfg, RefreshPlans *plans, FnTimeRange r, uint64 limit, int64_t *last) {
	Datum args[3] = {0, 0, Int64GetDatum((int64)Min(limit, (uint64)PG_INT64_MAX))};

	if (!fn_time_input_args(&cfg->input, r, &args[0], &args[1]))
		return 0; /* no value of the column has a time in r */
	if (SPI_execute_plan(plans->count, args, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "flownode: probing the source failed");
	return probe_result(cfg, r, last);
}

static void open_batch(TakeProbe *p, uint64 limit) {
	Oid coltype = p->cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	Datum values[4] = {0, 0, 0, 0};
	Datum args[3];

	p->limit = limit;
	fn_refresh_range_arrays(p->ranges, (int)p->n, coltype, values);
	args[0] = values[0];
	args[1] = values[1];
	args[2] = Int64GetDatum((int64)Min(limit, (uint64)PG_INT64_MAX));
	p->cursor = SPI_cursor_open(NULL, p->plans->batch, args, NULL, true);
}

/* The cursor's answer for r, if r is the range it is at and its limit gives the
 * take's answer; false: probe r alone. */
static bool probe_from_batch(TakeProbe *p, FnTimeRange r, uint64 limit, uint64 *rows, int64_t *last) {
	bool isnull;

	if (p->cursor == NULL || p->next >= p->n || p->ranges[p->next].start != r.start ||
	    p->ranges[p->next].end != r.end)
		return false;
	SPI_cursor_fetch(p->cursor, true, 1);
	if (SPI_processed != 1 || DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3,
	                                                      &isnull)) != p->next + 1) {
		SPI_cursor_close(p->cursor); /* not the order asked for: each range alone from here */
		p->cursor = NULL;
		return false;
	}
	p->next++;
	*rows = probe_result(p->cfg, r, last);
	return *rows < limit || limit == p->limit;
}

static uint64_t probe_rows(void *arg, FnTimeRange r, uint64_t limit, int64_t *last) {
	TakeProbe *p = (TakeProbe *)arg;
	uint64 rows;

	if (p->limit == 0 && p->plans->batch != NULL && p->n >= BATCH_PROBE_MIN_RANGES &&
	    p->cfg->input.kind == FN_INPUT_TIMESTAMP)
		open_batch(p, limit);
	if (probe_from_batch(p, r, limit, &rows, last))
		return rows;
	return probe_one(p->cfg, p->plans, r, limit, last);
}

static SPIPlanPtr prepare_probe(TaskConfig *cfg) {
	FlowQuery *fq = fn_plans_analysed(cfg);
	const char *src = fn_qualified_relname(cfg->source_relid);
	const char *c = quote_identifier(fq->time_column);
	Oid coltype =
	    fn_time_input_bound_type(&cfg->input, cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID);
	Oid types[3] = {coltype, coltype, INT8OID};
	char *sql =
	    psprintf("SELECT count(*), max(fn_t) FROM (SELECT %s AS fn_t FROM %s WHERE %s ORDER BY %s "
	             "LIMIT $3) fn_p",
	             fn_time_input_select(&cfg->input, c), src, fn_time_input_where(&cfg->input, c, 1), c);

	return fn_spi_prepare_kept(sql, 3, types, 0);
}

/* The many-ranges probe, for a timestamp column: a nested loop over the ranges in
 * their order (a generic plan; the ordinal checks it). */
static SPIPlanPtr prepare_batch_probe(TaskConfig *cfg) {
	FlowQuery *fq = fn_plans_analysed(cfg);
	const char *c = quote_identifier(fq->time_column);
	Oid arraytype = get_array_type(cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID);
	Oid types[3] = {arraytype, arraytype, INT8OID};
	char *sql =
	    psprintf("SELECT fn_p.n, fn_p.t, fn_r.i FROM unnest($1, $2) WITH ORDINALITY AS fn_r(lo, hi, i), "
	             "LATERAL (SELECT count(*) AS n, max(fn_q.fn_t) AS t FROM (SELECT %s AS fn_t FROM %s "
	             "WHERE %s >= fn_r.lo AND %s < fn_r.hi ORDER BY %s LIMIT $3) fn_q) fn_p",
	             c, fn_qualified_relname(cfg->source_relid), c, c, c);

	return fn_spi_prepare_kept(sql, 3, types, CURSOR_OPT_GENERIC_PLAN);
}

uint32 fn_refresh_take(TaskConfig *cfg, FnWindow *w, const FnTimeRange *ranges, uint32 n, uint64 max_rows,
                       FnTimeRange *out, uint64 *windows, uint64 *rows, bool *backlog_remains) {
	TakeProbe take = {cfg, NULL, ranges, n, 0, 0, NULL};
	FnRowProbe probe = {probe_rows, &take};
	RefreshPlans *cur;
	SpiAs scope;
	uint32 k;
	int nest;

	if (w == NULL)
		return fn_plan_take(NULL, ranges, n, max_rows, NULL, out, windows, rows, backlog_remains);
	nest = fn_pin_deparse_settings(cfg->timezone);
	PushActiveSnapshot(GetTransactionSnapshot());
	fn_spi_begin_as(&scope, cfg->owner, SECURITY_RESTRICTED_OPERATION);
	take.plans = fn_plans_for(cfg);
	cur = take.plans;
	if (cur->stale || cur->fq == NULL)
		(void)fn_plans_analysed(cfg);
	if (!fn_plans_time_index(cfg))
		k = fn_plan_take(w, ranges, n, max_rows, NULL, out, windows, rows, backlog_remains);
	else {
		if (cur->count == NULL)
			cur->count = prepare_probe(cfg);
		if (cur->batch == NULL && cfg->input.kind == FN_INPUT_TIMESTAMP && n >= BATCH_PROBE_MIN_RANGES)
			cur->batch = prepare_batch_probe(cfg);
		k = fn_plan_take(w, ranges, n, max_rows, &probe, out, windows, rows, backlog_remains);
		if (take.cursor != NULL)
			SPI_cursor_close(take.cursor);
	}
	fn_spi_end(&scope);
	PopActiveSnapshot();
	fn_unpin_settings(nest);
	return k;
}
