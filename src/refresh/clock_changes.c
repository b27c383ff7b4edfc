/*
 * clock_changes.c: where a flow that compares its time column with now() changes its
 * answer when now() moves (clock_changes.h): each comparison's threshold evaluated at
 * both times as the flow's owner, and the column's values between them.
 */
#include "flownode.h"

#include "refresh/clock_changes.h"

#include "access/stratnum.h"
#include "miscadmin.h"
#include "executor/executor.h"
#include "optimizer/optimizer.h"
#include "pgutil/pg_util.h"
#include "query/query_rewrite.h"
#include "query/time_input.h"
#include "refresh/refresh_plans.h"

/* A threshold's value with now() at `at` (false when it is NULL), in the executor. */
static bool threshold_at(Expr *threshold, TimestampTz at, int64 *value) {
	EState *estate = CreateExecutorState();
	Expr *bound = expression_planner((Expr *)fn_bind_clock_const((Node *)threshold, at));
	ExprState *state = ExecPrepareExpr(bound, estate);
	bool isnull;
	Datum d = ExecEvalExprSwitchContext(state, GetPerTupleExprContext(estate), &isnull);

	*value = isnull ? 0 : DatumGetInt64(d); /* timestamp and timestamptz: int64, by value */
	FreeExecutorState(estate);
	return !isnull;
}

/*
 * `column OP v` holds for different rows with v = a and v = b exactly where the
 * column lies between them: in (min, max] for > and <= (a row at the upper value is
 * in one and not the other), in [min, max) for >= and <. As a half-open range of the
 * column's values; empty when a = b.
 */
static FnTimeRange clock_change(int strategy, bool a_null, int64 a, bool b_null, int64 b) {
	FnTimeRange r = {0, 0};
	int64 lo = Min(a, b), hi = Max(a, b);

	if (a_null != b_null) /* NULL keeps every row out: with a value, any row may change */
		return (FnTimeRange){PG_INT64_MIN, PG_INT64_MAX};
	if (a_null || a == b)
		return r;
	if (strategy == BTGreaterStrategyNumber || strategy == BTLessEqualStrategyNumber) {
		r.start = lo + 1;
		r.end = hi == PG_INT64_MAX ? hi : hi + 1;
	} else {
		r.start = lo;
		r.end = hi;
	}
	return r;
}

FnTimeRange *fn_refresh_clock_changes(TaskConfig *cfg, TimestampTz prev, TimestampTz next, int *n) {
	FnTimeRange *out;
	FlowQuery *fq;
	SpiAs scope;
	int nest;
	ListCell *lc;

	nest = fn_pin_deparse_settings(cfg->timezone);
	fn_spi_begin_as(&scope, cfg->owner, SECURITY_RESTRICTED_OPERATION);
	fq = fn_plans_analysed(cfg);
	*n = 0;
	out = palloc(sizeof(FnTimeRange) * Max(1, list_length(fq->now_preds)));
	foreach (lc, fq->now_preds) {
		NowPredicate *pred = lfirst(lc);
		int64 a = 0, b = 0;
		bool a_null = !threshold_at(pred->threshold, prev, &a);
		bool b_null = !threshold_at(pred->threshold, next, &b);
		/* values of a date or an epoch column: the times of the rows that change */
		FnTimeRange r = fn_time_input_times(&cfg->input, clock_change(pred->strategy, a_null, a, b_null, b));

		if (r.start < r.end)
			out[(*n)++] = r;
	}
	fn_spi_end(&scope);
	fn_unpin_settings(nest);
	return out;
}
