/*
 * refresh_exec.c: runs a flow's refresh. The statements come from refresh_sql.c; this
 * file keeps them prepared, picks the one a refresh needs, and runs it as the flow's
 * owner in a snapshot taken after the source is locked, then trims the durable
 * record in that same snapshot (record/durable_record.c).
 */
#include "flownode.h"

#include "refresh/refresh_exec.h"

#include "refresh/key_refresh.h"

#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "query/query_rewrite.h"
#include "query/time_column.h"
#include "record/durable_record.h"
#include "refresh/refresh_plans.h"
#include "refresh/refresh_sql.h"
#include "registry/flow_dimensions.h"
#include "registry/sink_table.h"
#include "registry/stored_query.h"
#include "storage/lmgr.h"
#include "pgutil/pg_util.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/inval.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "access/stratnum.h"
#include "executor/executor.h"
#include "optimizer/optimizer.h"

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
 * below use them: set by plans_for at each entry point, for the flow refreshed. */
static RefreshPlans *cur = NULL;

static void plans_for(TaskConfig *cfg) {
	if (cur == NULL || cur->flow_id != cfg->flow_id)
		cur = fn_plans_for(cfg);
}

void fn_refresh_forget_flow(int64 flow_id) {
	if (cur != NULL && cur->flow_id == flow_id)
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
	MemoryContext old;

	if (fill)
		return fn_load_flow_dimensions(cfg->flow_id);
	plans_for(cfg);
	if (!cur->dimensions_known) {
		old = MemoryContextSwitchTo(TopMemoryContext);
		cur->dimensions = fn_load_flow_dimensions(cfg->flow_id);
		MemoryContextSwitchTo(old);
		cur->dimensions_known = true;
	}
	return cur->dimensions;
}

/* Whether a policy may hide rows of a table the query reads. */
static bool row_security_on_any(TaskConfig *cfg);

/*
 * The flow's analysed query and sink name, for statements about to be built; called
 * as the flow's owner, under the pinned settings. After a change to the source or
 * sink (the relcache says so) the query is read from the catalog again (a rename
 * rewrote it there: utility_hook.c), analysed again and checked against the sink as
 * create_flow checked it, so a type that drifted makes the refresh fail naming the
 * column and both types, until the sink or the flow is fixed; and every statement
 * built before is dropped. Until the check passes the query stays stale.
 */
static FlowQuery *analysed_query(TaskConfig *cfg) {
	TaskConfig *now;
	FlowQuery *fq;
	MemoryContext old;

	plans_for(cfg);
	if (cur->fq != NULL && !cur->stale)
		return cur->fq;
	if (cur->cxt == NULL)
		cur->cxt = AllocSetContextCreate(TopMemoryContext, "flownode refresh", ALLOCSET_SMALL_SIZES);
	fn_plans_free_statements(cur);
	MemoryContextReset(cur->cxt);
	cur->fq = NULL;
	cur->stale = false; /* an invalidation from here on is seen at the next call */
	old = MemoryContextSwitchTo(cur->cxt);
	now = fn_load_task_config(cfg->flow_id, false);
	fq = fn_analyze_flow_query(now->query, now->timezone);
	fn_check_sink(cfg->sink_relid, fq);
	cur->sink = fn_qualified_relname(cfg->sink_relid);
	cur->fq = fq;
	MemoryContextSwitchTo(old);
	return cur->fq;
}

typedef enum StatementKind { STMT_REFRESH, STMT_UPSERT, STMT_PROBE, STMT_FILL } StatementKind;

static bool has_time_index(TaskConfig *cfg);
static bool sink_has_window_index(TaskConfig *cfg, FlowQuery *fq);

/* A statement's text over the windows of $1/$2 (ranged) or the whole query, from
 * the analysed query (analysed first: it may be analysed again, and the sink's name
 * with it). Each side reads the ranges through its index when it has one. */
static char *statement_sql(TaskConfig *cfg, StatementKind kind, bool ranged) {
	FlowQuery *fq = analysed_query(cfg);
	FnRefreshShape shape = {FN_FILTER_ALL_FINITE, FN_FILTER_ALL_FINITE};

	if (ranged) {
		shape.source = has_time_index(cfg) ? FN_FILTER_JOIN : FN_FILTER_CONTAINS;
		shape.sink = sink_has_window_index(cfg, fq) ? FN_FILTER_JOIN : FN_FILTER_CONTAINS;
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

/* The ranges as the statements' two arguments: their starts and their ends. */
static void range_arrays(const FnTimeRange *ranges, int nranges, Oid coltype, Datum *values) {
	Datum *lo = palloc(sizeof(Datum) * Max(nranges, 1));
	Datum *hi = palloc(sizeof(Datum) * Max(nranges, 1));

	for (int i = 0; i < nranges; i++) {
		lo[i] = Int64GetDatum(ranges[i].start);
		hi[i] = Int64GetDatum(ranges[i].end);
	}
	values[0] = PointerGetDatum(
	    construct_array(lo, nranges, coltype, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[1] = PointerGetDatum(
	    construct_array(hi, nranges, coltype, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * For a date or an integer epoch column (query/time_input.h), the source side's
 * arguments $3 and $4: the column values of each range, [lo, hi] where the source is
 * read range by range (JOIN), [lo, hi) where it is read once through their
 * multirange (CONTAINS: hi NULL for an integer column, infinity for a date, when
 * unbounded, since hi + 1 may not exist). A range that holds no value is left out.
 */
void fn_refresh_input_arrays(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, bool joined,
                             Datum *values) {
	Oid type = fn_time_input_bound_type(&cfg->input, InvalidOid);
	int16 len;
	bool byval;
	char align;
	Datum *lo = palloc(sizeof(Datum) * Max(nranges, 1));
	Datum *hi = palloc(sizeof(Datum) * Max(nranges, 1));
	bool *hinull = palloc0(sizeof(bool) * Max(nranges, 1));
	int dims[1], lbs[1] = {1};
	int n = 0;

	get_typlenbyvalalign(type, &len, &byval, &align);
	for (int i = 0; i < nranges; i++) {
		int64 a, b;

		if (!fn_time_input_bounds(&cfg->input, ranges[i], &a, &b))
			continue;
		lo[n] = fn_time_input_datum(&cfg->input, a);
		if (joined)
			hi[n] = fn_time_input_datum(&cfg->input, b);
		else if (b < fn_time_input_max(&cfg->input))
			hi[n] = fn_time_input_datum(&cfg->input, b + 1);
		else if (type == DATEOID)
			hi[n] = DateADTGetDatum(DATEVAL_NOEND);
		else
			hinull[n] = true;
		n++;
	}
	dims[0] = n;
	values[2] = PointerGetDatum(construct_md_array(lo, NULL, 1, dims, lbs, type, len, byval, align));
	values[3] = PointerGetDatum(construct_md_array(hi, hinull, 1, dims, lbs, type, len, byval, align));
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
		(void)analysed_query(cfg);
	if (windowed)
		range_arrays(ranges, nranges, coltype, values);
	if (input)
		fn_refresh_input_arrays(cfg, ranges, nranges, has_time_index(cfg), values);
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
			if (fn_refresh_can_skip_vanished(analysed_query(cfg)))
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
	if (!fn_fold_begin(fold_of(cfg), analysed_query(cfg), has_time_index(cfg) && !row_security_on_any(cfg),
	                   ranges, nranges, fold, &w)) {
		rows = run_refresh_statement(cfg, ranges, nranges, snap, removals, size, clock_at);
		fn_fold_after_recompute(fold_of(cfg), analysed_query(cfg), ranges, nranges);
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
	range_arrays(&range, 1, coltype, values);
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
 * reads it; the fold starts afresh, its prefix may lack the marked groups' rows. */
static int64 refresh_keys(TaskConfig *cfg, Snapshot snap, int64 expired_before) {
	FlowQuery *fq = analysed_query(cfg);
	FnRefreshShape shape = {has_time_index(cfg) ? FN_FILTER_JOIN : FN_FILTER_CONTAINS,
	                        sink_has_window_index(cfg, fq) ? FN_FILTER_JOIN : FN_FILTER_CONTAINS};
	int64 windows;
	int64 rows = fn_key_refresh(cfg, fq, cur->sink, shape, snap, expired_before, &windows);

	if (windows > 0)
		fn_fold_forget(fold_of(cfg));
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
			rows = refresh_keys(cfg, snap, req->expired_before);
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
	fq = analysed_query(cfg);
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

/* The times of the first and last row of one column over [within), or false when
 * no row is there. `in`: how the column becomes the window's time (a source's date
 * or epoch column); NULL for a column of timestamps. */
static bool column_extent(const char *table, const char *column, Oid coltype, FnTimeInput *in,
                          FnTimeRange within, FnTimeRange *out) {
	FnTimeColumn c = {table, column, coltype, in};

	return fn_time_column_extent(&c, within, &out->start, &out->end);
}

/* The extent of the source's times, and of the sink's windows if `sink` is given
 * (fq NULL: the worker's analysed query). */
static FnTimeRange extent(TaskConfig *cfg, FlowQuery *fq, bool with_sink, FnTimeRange within) {
	Oid coltype = cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	FnTimeRange hull = {0, 0};
	FnTimeRange src, sink;
	bool have_src, have_sink = false;
	SpiAs scope;
	int nest;

	if (cfg->window.kind == FN_WINDOW_NONE)
		return hull;
	nest = fn_pin_deparse_settings(cfg->timezone);
	PushActiveSnapshot(GetTransactionSnapshot());
	fn_spi_begin_as(&scope, cfg->owner, SECURITY_RESTRICTED_OPERATION);
	if (fq == NULL)
		fq = analysed_query(cfg);
	have_src = column_extent(fn_qualified_relname(cfg->source_relid), quote_identifier(fq->time_column),
	                         coltype, &cfg->input, within, &src);
	if (with_sink)
		have_sink = column_extent(fn_qualified_relname(cfg->sink_relid),
		                          quote_identifier(list_nth(fq->out_names, fq->window_position)), coltype,
		                          NULL, within, &sink);
	fn_spi_end(&scope);
	PopActiveSnapshot();
	fn_unpin_settings(nest);
	if (have_src)
		hull = src;
	if (have_sink) {
		hull.start = have_src ? Min(hull.start, sink.start) : sink.start;
		hull.end = have_src ? Max(hull.end, sink.end) : sink.end;
	}
	if (have_src || have_sink)
		hull.end = hull.end == PG_INT64_MAX ? hull.end : hull.end + 1; /* [min, max] as [min, max + 1) */
	return hull;
}

FnTimeRange fn_refresh_extent(TaskConfig *cfg, FnTimeRange within) {
	return extent(cfg, NULL, true, within);
}

FnTimeRange fn_fill_extent(TaskConfig *cfg, FlowQuery *fq, bool with_sink) {
	FnTimeRange all = {MIN_TIMESTAMP, DT_NOEND};

	return extent(cfg, fq, with_sink, all);
}

int64 fn_refresh_window_count(TaskConfig *cfg, FnTimeRange r) {
	const uint64 cap = 1000000;
	bool fixed = cfg->window.kind == FN_WINDOW_DATE_BIN;
	FnWindow *w;
	uint64 n;

	if (r.start >= r.end || cfg->window.kind == FN_WINDOW_NONE)
		return r.start < r.end ? 1 : 0;
	w = fn_window_create(&cfg->window);
	n = fn_window_count(w, r, fixed ? PG_UINT64_MAX : cap);
	if (n >= cap && !fixed)
		n = Max(n, (uint64)((r.end - r.start) / fn_window_nominal_usec(w)));
	return (int64)n;
}

/* Whether an index of the source leads with its time column: the take's probes and
 * the refresh read through it. */
static bool has_time_index(TaskConfig *cfg) {
	plans_for(cfg);
	if (cur->time_index < 0)
		cur->time_index = fn_btree_index_leads_with(cfg->source_relid, cfg->time_attnum) ? 1 : 0;
	return cur->time_index == 1;
}

/* Whether an index of the sink leads with the window column: the DELETE of vanished
 * groups reads the refreshed windows through it. */
static bool sink_has_window_index(TaskConfig *cfg, FlowQuery *fq) {
	plans_for(cfg);
	if (cur->sink_index < 0) {
		AttrNumber attnum = get_attnum(cfg->sink_relid, list_nth(fq->out_names, fq->window_position));

		cur->sink_index =
		    attnum != InvalidAttrNumber && fn_btree_index_leads_with(cfg->sink_relid, attnum) ? 1 : 0;
	}
	return cur->sink_index == 1;
}

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

static uint64 probe_one(TaskConfig *cfg, FnTimeRange r, uint64 limit, int64_t *last) {
	Datum args[3] = {0, 0, Int64GetDatum((int64)Min(limit, (uint64)PG_INT64_MAX))};

	if (!fn_time_input_args(&cfg->input, r, &args[0], &args[1]))
		return 0; /* no value of the column has a time in r */
	if (SPI_execute_plan(cur->count, args, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "flownode: probing the source failed");
	return probe_result(cfg, r, last);
}

static void open_batch(TakeProbe *p, uint64 limit) {
	Oid coltype = p->cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	Datum values[4] = {0, 0, 0, 0};
	Datum args[3];

	p->limit = limit;
	range_arrays(p->ranges, (int)p->n, coltype, values);
	args[0] = values[0];
	args[1] = values[1];
	args[2] = Int64GetDatum((int64)Min(limit, (uint64)PG_INT64_MAX));
	p->cursor = SPI_cursor_open(NULL, cur->batch, args, NULL, true);
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

	if (p->limit == 0 && cur->batch != NULL && p->n >= BATCH_PROBE_MIN_RANGES &&
	    p->cfg->input.kind == FN_INPUT_TIMESTAMP)
		open_batch(p, limit);
	if (probe_from_batch(p, r, limit, &rows, last))
		return rows;
	return probe_one(p->cfg, r, limit, last);
}

static SPIPlanPtr prepare_probe(TaskConfig *cfg) {
	FlowQuery *fq = analysed_query(cfg);
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
	FlowQuery *fq = analysed_query(cfg);
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
	TakeProbe take = {cfg, ranges, n, 0, 0, NULL};
	FnRowProbe probe = {probe_rows, &take};
	SpiAs scope;
	uint32 k;
	int nest;

	if (w == NULL)
		return fn_plan_take(NULL, ranges, n, max_rows, NULL, out, windows, rows, backlog_remains);
	nest = fn_pin_deparse_settings(cfg->timezone);
	PushActiveSnapshot(GetTransactionSnapshot());
	fn_spi_begin_as(&scope, cfg->owner, SECURITY_RESTRICTED_OPERATION);
	plans_for(cfg);
	if (cur->stale || cur->fq == NULL)
		(void)analysed_query(cfg);
	if (!has_time_index(cfg))
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
