/*
 * refresh_exec.c: runs a flow's refresh and create_flow's fill. The statements come
 * from refresh_sql.c and are kept per flow (refresh_plans.c); this file picks the one
 * a refresh needs (its plan by the refresh's size), and runs it as the flow's owner in
 * a snapshot taken after the source is locked, then trims the durable record in that
 * same snapshot (record/durable_record.c). What a refresh takes (take_probes.c), where
 * the data lies (extents.c) and what a moving now() changes (clock_changes.c) are
 * decided beside it.
 */
#include "flownode.h"

#include "refresh/refresh_exec.h"

#include "refresh/key_refresh.h"

#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "record/durable_record.h"
#include "refresh/refresh_args.h"
#include "refresh/refresh_plans.h"
#include "refresh/refresh_sql.h"
#include "registry/flow_dimensions.h"
#include "registry/stored_query.h"
#include "storage/lmgr.h"
#include "pgutil/pg_util.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

/*
 * A worker refreshes the same flows over and over: it keeps each flow's analysed
 * query and its statements prepared (SPI_keepplan; refresh_plans.c, a set per flow)
 * instead of analysing, parsing and planning them per refresh. Every statement takes
 * the windows as two arrays (starts and ends), so one statement of each kind serves
 * every refresh, of one window or a thousand. PostgreSQL's plan cache re-validates
 * them after DDL on the source or sink; after such DDL flownode drops them anyway
 * (analysed_query).
 */

/*
 * A refresh of a few windows (the steady state: the windows written since the last
 * evaluation) runs a generic plan: planning it again for every refresh would cost
 * about as much as running it. A backlog of many windows is planned for its actual
 * bounds (PostgreSQL's default choice), where the row estimates matter.
 */
#define GENERIC_PLAN_MAX_WINDOWS 64

/*
 * A refresh of few windows that the take's probes say reads at most this many source
 * rows (a late row, the steady state of a flow over an indexed source) runs a generic
 * plan made with enable_hashagg off: its groups are sorted instead of hashed.
 * PostgreSQL sizes a hash aggregate's table from the plan's estimate of the groups,
 * and a generic plan estimates a range of the time column as a fixed share of the
 * table, so each execution allocated and zeroed a table that grew with the source,
 * for the one group of a one-window refresh. Sorting stays cheaper than that up to a
 * few thousand rows (the measurements: bench/README.md, "Figures behind the code").
 */
#define SORTED_PLAN_MAX_ROWS 2000

/* What a refresh covers: windows, and at most how many source rows (PG_UINT64_MAX:
 * not known). Both pick its plan (run_refresh_statement). */
typedef struct RefreshSize {
	uint64 windows;
	uint64 rows;
} RefreshSize;

/* The flow's kept statements (refresh/refresh_plans.h), as the refresh functions
 * below use them: set by plans_for at each entry point, for the flow refreshed. Looked
 * up every time (the set just used is found first): the other files of src/refresh/
 * use the sets too, and a set this pointer kept could have been freed by them. */
static RefreshPlans *cur = NULL;

static void plans_for(TaskConfig *cfg) {
	cur = fn_plans_for(cfg);
}

void fn_refresh_forget_flow(int64 flow_id) {
	cur = NULL;
	fn_plans_forget(flow_id);
}

/* The flow's fold (its set made the current one). */
static FnFold *fold_of(TaskConfig *cfg) {
	plans_for(cfg);
	return cur->fold;
}

bool fn_refresh_folding(int64 flow_id) {
	RefreshPlans *p = fn_plans_find(flow_id);

	return p != NULL && fn_fold_folding(p->fold);
}

FnFoldSettled fn_refresh_settle_fold(int64 flow_id, bool committed) {
	RefreshPlans *p = fn_plans_find(flow_id);

	if (p == NULL) /* nothing kept: no fold to settle */
		return (FnFoldSettled){{0, 0}, false};
	return fn_fold_settle(p->fold, committed);
}

/*
 * The tables the flow joins (a flow's never change: replacing it makes another flow):
 * locked with the source before the snapshot, so a TRUNCATE of one is wholly before
 * the refresh or after it; a change to one makes the analysed query stale like a
 * change to the source; row-level security on one keeps the DELETE of vanished
 * groups. create_flow's fill reads them from the catalog (nothing is cached for it).
 */
static List *dimension_relids(TaskConfig *cfg, bool fill) {
	return fill ? fn_load_flow_dimensions(cfg->flow_id) : fn_plans_dimensions(cfg);
}

typedef enum StatementKind { STMT_REFRESH, STMT_UPSERT, STMT_PROBE, STMT_FILL } StatementKind;

/* A statement's text over the windows of $1/$2 (ranged) or the whole query, from
 * the analysed query (analysed first: it may be analysed again, and the sink's name
 * with it). Each side reads the ranges through its index when it has one. */
static char *statement_sql(TaskConfig *cfg, StatementKind kind, bool ranged) {
	FlowQuery *fq = fn_plans_analysed(cfg);
	FnRefreshShape shape = {FN_FILTER_ALL_FINITE, FN_FILTER_ALL_FINITE};

	if (ranged) {
		shape.source = fn_plans_time_index(cfg) ? FN_FILTER_JOIN : FN_FILTER_CONTAINS;
		shape.sink = fn_plans_sink_window_index(cfg, fq) ? FN_FILTER_JOIN : FN_FILTER_CONTAINS;
	}
	switch (kind) {
	case STMT_REFRESH:
		return fn_refresh_sql(fq, cur->sink, shape, false);
	case STMT_UPSERT:
		return fn_refresh_sql(fq, cur->sink, shape, true);
	case STMT_PROBE:
		return fn_sink_probe_sql(fq, cur->sink, shape.sink);
	case STMT_FILL:
		return fn_plain_insert_sql(fq, cur->sink, shape.source);
	}
	pg_unreachable();
}

/* A statement over the whole query: its one parameter, if any, is the evaluation's
 * scheduled time (a flow comparing its time column with now()). */
static int64 run_sql(const char *sql, FlowQuery *fq, TimestampTz clock_at, Snapshot snap, int expect) {
	Oid type = TIMESTAMPTZOID;
	Datum value = TimestampTzGetDatum(clock_at);
	bool clock = fq->now_preds != NIL;
	SPIPlanPtr plan = SPI_prepare(sql, clock ? 1 : 0, &type);

	if (plan == NULL)
		elog(ERROR, "flownode: preparing a refresh statement failed: %s", SPI_result_code_string(SPI_result));
	return fn_spi_run_plan(plan, clock ? &value : NULL, snap, expect);
}

static bool row_security_enabled(Oid relid) {
	HeapTuple tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool on = true; /* a vanished relation: the statement will say so */

	if (HeapTupleIsValid(tup)) {
		on = ((Form_pg_class)GETSTRUCT(tup))->relrowsecurity;
		ReleaseSysCache(tup);
	}
	return on;
}

static bool row_security_on_any(TaskConfig *cfg) {
	ListCell *lc;

	if (row_security_enabled(cfg->source_relid))
		return true;
	foreach (lc, dimension_relids(cfg, false))
		if (row_security_enabled(lfirst_oid(lc)))
			return true;
	return false;
}

/* The refresh statement for the ranges, as the flow's owner, in the plan `kind`;
 * without the vanished-groups DELETE when the windows saw only inserts and the query
 * allows. */
static int64 run_refresh_plan(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, Snapshot snap,
                              bool removals, RefreshPlanKind g, TimestampTz clock_at) {
	bool windowed = cfg->window.kind != FN_WINDOW_NONE;
	bool input = windowed && cfg->input.kind != FN_INPUT_TIMESTAMP;
	int opts = g != PLAN_CUSTOM ? CURSOR_OPT_GENERIC_PLAN : 0;
	int nargs = input ? 4 : windowed ? 2 : 0;
	Oid coltype = cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	Oid bound = get_array_type(fn_time_input_bound_type(&cfg->input, coltype));
	Oid types[5] = {get_array_type(coltype), get_array_type(coltype), bound, bound, TIMESTAMPTZOID};
	Datum values[5] = {0, 0, 0, 0, 0};

	plans_for(cfg);
	/* the source or sink changed since the statements were built: drop them, read the
	 * query again and check it against the sink, before any of them runs */
	if (cur->stale || cur->fq == NULL)
		(void)fn_plans_analysed(cfg);
	if (windowed)
		fn_refresh_range_arrays(ranges, nranges, coltype, values);
	if (input)
		fn_refresh_input_arrays(cfg, ranges, nranges, fn_plans_time_index(cfg), values);
	/* the evaluation's scheduled time, when the query compares its time column with
	 * now(), follows the ranges (refresh_sql.h) */
	if (cur->fq->now_preds != NIL) {
		types[nargs] = TIMESTAMPTZOID;
		values[nargs++] = TimestampTzGetDatum(clock_at);
	}
	/* A backlog of windows the sink has never held (a backfill of old data) needs
	 * neither the upsert nor the DELETE: a plain INSERT, as create_flow fills a new
	 * sink. Probed for large refreshes only: a small one would pay more for the
	 * probe than it saves. Only this worker writes the sink, and a TRUNCATE of the
	 * source waits for the refresh; a row someone else adds meanwhile fails the
	 * refresh (unique violation), and the retry finds it and upserts. */
	if (windowed && g == PLAN_CUSTOM) {
		bool held;

		if (cur->probe == NULL)
			cur->probe = fn_spi_prepare_kept(statement_sql(cfg, STMT_PROBE, true), 2, types, 0);
		held = fn_spi_run_plan(cur->probe, values, snap, SPI_OK_SELECT) != 0;
		if (!held) {
			if (cur->fill == NULL)
				cur->fill = fn_spi_prepare_kept(statement_sql(cfg, STMT_FILL, true), nargs, types, 0);
			return fn_spi_run_plan(cur->fill, values, snap, SPI_OK_INSERT);
		}
	}
	/* Row-level security makes groups vanish without a removal: a policy change
	 * hides rows from the owner. With RLS on, every refresh deletes. */
	if (!removals && !cur->upsert_refused && !row_security_on_any(cfg)) {
		if (cur->upsert[g] == NULL) {
			if (fn_refresh_can_skip_vanished(fn_plans_analysed(cfg)))
				cur->upsert[g] =
				    fn_spi_prepare_kept(statement_sql(cfg, STMT_UPSERT, windowed), nargs, types, opts);
			else
				cur->upsert_refused = true;
		}
		if (cur->upsert[g] != NULL)
			return fn_spi_run_plan(cur->upsert[g], values, snap, SPI_OK_INSERT);
	}
	if (cur->refresh[g] == NULL)
		cur->refresh[g] = fn_spi_prepare_kept(statement_sql(cfg, STMT_REFRESH, windowed), nargs, types, opts);
	return fn_spi_run_plan(cur->refresh[g], values, snap, SPI_OK_SELECT);
}

/* The refresh statement in the plan its size calls for (SORTED_PLAN_MAX_ROWS,
 * GENERIC_PLAN_MAX_WINDOWS). A sorted plan is made, and made again after an
 * invalidation, only while enable_hashagg is off: the setting is the plan's. */
static int64 run_refresh_statement(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, Snapshot snap,
                                   bool removals, RefreshSize size, TimestampTz clock_at) {
	int64 rows;
	int nest;

	if (size.windows > GENERIC_PLAN_MAX_WINDOWS)
		return run_refresh_plan(cfg, ranges, nranges, snap, removals, PLAN_CUSTOM, clock_at);
	if (size.rows > SORTED_PLAN_MAX_ROWS)
		return run_refresh_plan(cfg, ranges, nranges, snap, removals, PLAN_GENERIC, clock_at);
	nest = NewGUCNestLevel();
	(void)set_config_option("enable_hashagg", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
	                        false);
	rows = run_refresh_plan(cfg, ranges, nranges, snap, removals, PLAN_SORTED, clock_at);
	AtEOXact_GUC(true, nest);
	return rows;
}

/*
 * The refresh of the ranges: the folded refresh of the open window when the fold
 * says so (refresh/fold_refresh.h), the refresh statement for the rest of them (or
 * all of them, after which the fold starts at their latest window).
 */
static int64 refresh_ranges(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, Snapshot snap,
                            bool removals, RefreshSize size, TimestampTz clock_at, const FnFoldInput *fold) {
	FnTimeRange *rest;
	FnTimeRange w;
	int nrest = 0;
	int64 rows;

	if (fold == NULL)
		return run_refresh_statement(cfg, ranges, nranges, snap, removals, size, clock_at);
	if (!fn_fold_begin(fold_of(cfg), fn_plans_analysed(cfg),
	                   fn_plans_time_index(cfg) && !row_security_on_any(cfg), ranges, nranges, fold, &w)) {
		rows = run_refresh_statement(cfg, ranges, nranges, snap, removals, size, clock_at);
		fn_fold_after_recompute(fold_of(cfg), fn_plans_analysed(cfg), ranges, nranges);
		return rows;
	}
	rows = fn_fold_window(cur->fold, cur->fq, cur->sink, w, snap);
	/* the other windows: the ranges without w (which lies inside one of them) */
	rest = palloc(sizeof(FnTimeRange) * (nranges + 1));
	for (int i = 0; i < nranges; i++) {
		FnTimeRange r = ranges[i];

		if (r.start <= w.start && w.end <= r.end) {
			if (r.start < w.start)
				rest[nrest++] = (FnTimeRange){r.start, w.start};
			if (w.end < r.end)
				rest[nrest++] = (FnTimeRange){w.end, r.end};
		} else
			rest[nrest++] = r;
	}
	if (nrest > 0) {
		size.windows = size.windows > 1 ? size.windows - 1 : 1;
		rows += run_refresh_statement(cfg, rest, nrest, snap, removals, size, clock_at);
	}
	return rows;
}

/*
 * A chunk of a fill (steer: backfill): the windows of one range, read as a refresh
 * reads them (ranges as arrays, through the time index if there is one), into a new
 * sink with a plain INSERT, else with the refresh statement.
 */
static int64 run_fill_chunk(TaskConfig *cfg, FlowQuery *fill, bool sink_is_new, FnTimeRange range,
                            TimestampTz clock_at, Snapshot snap) {
	Oid coltype = cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	/* a date or an epoch column: its values' ranges $3 and $4, the clock $5 */
	bool input = cfg->input.kind != FN_INPUT_TIMESTAMP;
	Oid bound = get_array_type(fn_time_input_bound_type(&cfg->input, coltype));
	int nargs = input ? 4 : 2;
	Oid types[5] = {get_array_type(coltype), get_array_type(coltype), bound, bound, TIMESTAMPTZOID};
	Datum values[5] = {0, 0, 0, 0, 0};
	const char *sink = fn_qualified_relname(cfg->sink_relid);
	AttrNumber window_attnum = get_attnum(cfg->sink_relid, list_nth(fill->out_names, fill->window_position));
	FnRefreshShape shape = {
	    fn_btree_index_leads_with(cfg->source_relid, cfg->time_attnum) ? FN_FILTER_JOIN : FN_FILTER_CONTAINS,
	    window_attnum != InvalidAttrNumber && fn_btree_index_leads_with(cfg->sink_relid, window_attnum)
	        ? FN_FILTER_JOIN
	        : FN_FILTER_CONTAINS};
	char *sql = sink_is_new ? fn_plain_insert_sql(fill, sink, shape.source)
	                        : fn_refresh_sql(fill, sink, shape, false);
	SPIPlanPtr plan;

	if (fill->now_preds != NIL) {
		types[nargs] = TIMESTAMPTZOID;
		values[nargs++] = TimestampTzGetDatum(clock_at);
	}
	plan = SPI_prepare(sql, nargs, types);
	if (plan == NULL)
		elog(ERROR, "flownode: preparing a fill statement failed: %s", SPI_result_code_string(SPI_result));
	fn_refresh_range_arrays(&range, 1, coltype, values);
	if (input)
		fn_refresh_input_arrays(cfg, &range, 1, shape.source == FN_FILTER_JOIN, values);
	return fn_spi_run_plan(plan, values, snap, sink_is_new ? SPI_OK_INSERT : SPI_OK_SELECT);
}

/*
 * Runs a refresh (or create_flow's fill, fq != NULL) in the current transaction: the
 * statement as the flow's owner and, with the very same snapshot, the removal of the
 * refreshed windows from the durable record as the catalog's owner. A writer that
 * committed after that snapshot keeps both its rows out of this refresh and its
 * record.
 *
 * The source is locked before the snapshot is taken, so a TRUNCATE of the source
 * is either wholly before the refresh's snapshot or waits for it to commit.
 */
/*
 * A flow whose source is this flow's sink (a chain) that a restore brought back and
 * has not bound yet, and whose own sink has not its key yet, will be bound when the
 * restore builds that key, trusting its sink: nothing would mark a write to its
 * source before then (TAP 025). So the sink is not written meanwhile: the refresh
 * fails, and runs again once the restore is over. (A restored flow whose sink fits
 * already is bound only by refresh_flow, which recomputes it: no need to wait.)
 * After the refresh's snapshot (which a test orders against writers, TAP 018) and
 * its sink's lock: a binding that holds the source waits for this refresh to end,
 * and one that committed before the look is seen bound (its triggers then fire on
 * this refresh's writes); whichever snapshot the look takes, a binding it misses is
 * only a needless failure, retried.
 */
static void check_readers_bound(TaskConfig *cfg) {
	TaskConfig *reader;

	LockRelationOid(cfg->sink_relid, RowExclusiveLock);
	reader = fn_unbound_reader_awaiting_key(cfg->sink_relid, cfg->flow_id);
	if (reader != NULL)
		ereport(
		    ERROR,
		    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		     errmsg("flow \"%s\" cannot write its sink %s while flow \"%s\", which reads it, is not bound",
		            cfg->flow_name, fn_qualified_relname(cfg->sink_relid), reader->flow_name),
		     errdetail("A restore brought flow \"%s\" back; it is bound when the restore builds its sink's "
		               "key, and nothing marks a write to its source before then.",
		               reader->flow_name),
		     errhint("Let the restore finish, or run SELECT flownode.refresh_flow(%s), which binds it and "
		             "recomputes its sink.",
		             quote_literal_cstr(reader->flow_name))));
}

/* The key marks' refresh (key_refresh.c), each side read as the ranges' refresh
 * reads it; a fold whose window was among the marked ones starts afresh, its prefix
 * may lack the marked groups' rows (late rows of older windows leave it folding). */
static int64 refresh_keys(TaskConfig *cfg, Snapshot snap, int64 expired_before, FnKeyCount *asked) {
	FlowQuery *fq;
	FnRefreshShape shape;
	FnKeyCount own = {0};
	FnKeyCount *count = asked != NULL ? asked : &own;
	int64 rows;

	plans_for(cfg); /* the flow's set made the current one */
	fq = fn_plans_analysed(cfg);
	shape = (FnRefreshShape){fn_plans_time_index(cfg) ? FN_FILTER_JOIN : FN_FILTER_CONTAINS,
	                         fn_plans_sink_window_index(cfg, fq) ? FN_FILTER_JOIN : FN_FILTER_CONTAINS};
	rows =
	    fn_key_refresh(cfg, fq, cur->sink, shape, snap, expired_before, count, &cur->keys, &cur->keys_shape);

	if (count->read > 0)
		fn_fold_forget_within(fold_of(cfg), count->hull);
	return rows;
}

static int64 execute(TaskConfig *cfg, FlowQuery *fill, bool sink_is_new, const FnRefreshRequest *req) {
	const FnTimeRange *ranges = req->ranges;
	int nranges = req->nranges;
	TimestampTz clock_at = req->clock_at;
	Oid save_userid;
	int save_sec;
	int nest;
	volatile int64 rows = 0;
	Snapshot snap;
	ListCell *lc;

	LockRelationOid(cfg->source_relid, AccessShareLock);
	foreach (lc, dimension_relids(cfg, fill != NULL))
		LockRelationOid(lfirst_oid(lc), AccessShareLock);
	GetUserIdAndSecContext(&save_userid, &save_sec);
	nest = fn_pin_deparse_settings(cfg->timezone);
	/* A refresh reads the rows of its windows through the ranges it is given; the
	 * planner, not knowing them, estimates a ninth of the table per range and would
	 * have LLVM compile a refresh of a few thousand rows for seconds (undone with the
	 * other pinned settings). create_flow's fill keeps the session's choice: its
	 * estimates are the query's own. */
	if (fill == NULL)
		(void)set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	/* taken after the lock, and after the caller took its dirty ranges */
	snap = RegisterSnapshot(GetTransactionSnapshot());
	PushActiveSnapshot(snap);
	check_readers_bound(cfg);
	PG_TRY();
	{
		SetUserIdAndSecContext(cfg->owner,
		                       save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
		if (fill != NULL && nranges == 1)
			rows = run_fill_chunk(cfg, fill, sink_is_new, ranges[0], clock_at, snap);
		else if (fill != NULL && sink_is_new)
			rows = run_sql(
			    fn_plain_insert_sql(fill, fn_qualified_relname(cfg->sink_relid), FN_FILTER_ALL_FINITE), fill,
			    clock_at, snap, SPI_OK_INSERT);
		else if (fill != NULL)
			rows =
			    run_sql(fn_refresh_sql(fill, fn_qualified_relname(cfg->sink_relid),
			                           (FnRefreshShape){FN_FILTER_ALL_FINITE, FN_FILTER_ALL_FINITE}, false),
			            fill, clock_at, snap, SPI_OK_SELECT);
		else if (req->keys)
			rows = refresh_keys(cfg, snap, req->expired_before, req->key_count);
		else {
			if (nranges > 0) /* no ranges: only expired windows to forget */
				rows = refresh_ranges(cfg, ranges, nranges, snap, req->removals,
				                      (RefreshSize){req->windows, req->rows}, clock_at, req->fold);
			fn_record_trim(cfg->flow_id, ranges, nranges, req->expired_before, snap);
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

/* A fill is a refresh of unknown size, with removals (an existing sink's vanished
 * groups go), and no fold. */
int64 fn_refresh_fill(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new, TimestampTz clock_at) {
	FnRefreshRequest req = {.removals = true, .rows = PG_UINT64_MAX, .clock_at = clock_at};

	return execute(cfg, fq, sink_is_new, &req);
}

int64 fn_refresh_fill_range(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new, FnTimeRange range,
                            TimestampTz clock_at) {
	FnRefreshRequest req = {
	    .ranges = &range, .nranges = 1, .removals = true, .rows = PG_UINT64_MAX, .clock_at = clock_at};

	return execute(cfg, fq, sink_is_new, &req);
}

int64 fn_refresh_run(TaskConfig *cfg, const FnRefreshRequest *req) {
	return execute(cfg, NULL, false, req);
}
