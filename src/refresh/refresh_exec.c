/*
 * refresh_exec.c: runs a flow's refresh. The statements come from refresh_sql.c; this
 * file keeps them prepared, picks the one a refresh needs, and runs it as the flow's
 * owner in a snapshot taken after the source is locked, then trims the durable
 * record in that same snapshot (record/durable_record.c).
 */
#include "flownode.h"

#include "refresh/refresh_exec.h"

#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "query/query_rewrite.h"
#include "record/durable_record.h"
#include "refresh/refresh_sql.h"
#include "registry/sink_table.h"
#include "storage/lmgr.h"
#include "pgutil/pg_util.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

/*
 * A worker refreshes the same flow over and over: it keeps the flow's analysed query
 * and its statements prepared (SPI_keepplan) instead of analysing, parsing and
 * planning them per refresh. The refresh statement takes its window bounds as
 * parameters and is kept per power-of-two number of ranges (unused ranges are
 * empty: lo = hi), so a flow needs at most a handful of plans, PLAN_SLOTS at most.
 * PostgreSQL's plan cache re-validates them after DDL on the source or sink, so an
 * ALTER TABLE that breaks the query still fails the refresh.
 */
#define PLAN_SLOTS 32

/*
 * A refresh of a few windows (the steady state: the windows written since the last
 * evaluation) runs a generic plan: planning it again for every refresh would cost
 * about as much as running it. A backlog of many windows is planned for its actual
 * bounds (PostgreSQL's default choice), where the row estimates matter.
 */
#define GENERIC_PLAN_MAX_WINDOWS 64

typedef struct RefreshPlans {
	int64 flow_id;
	MemoryContext cxt; /* holds fq and sink */
	FlowQuery *fq;     /* the stored query, analysed once */
	char *sink;        /* the sink's qualified name, as the statements were built */
	bool stale;        /* the source or sink changed: analyse again before a new plan */
	Oid source_relid;
	Oid sink_relid;
	/* [generic][log2(k)]; [.][0] also serves window-less flows */
	SPIPlanPtr refresh[2][PLAN_SLOTS];
	SPIPlanPtr upsert[2][PLAN_SLOTS]; /* the same without the vanished-groups DELETE */
	SPIPlanPtr probe[PLAN_SLOTS];     /* does the sink hold rows in these windows? */
	SPIPlanPtr fill[PLAN_SLOTS];      /* plain INSERT, for windows it holds none of */
	bool upsert_refused;              /* the query needs the DELETE even after inserts */
} RefreshPlans;

static RefreshPlans plans = {.flow_id = -1};

/* A relcache invalidation of the source or sink (ALTER TABLE, RENAME) makes the
 * analysed query stale: statements built later analyse it again, as the plan cache
 * re-analyses the prepared ones. Only flagged here: the refresh may be using it. */
static void invalidate_plans(Datum arg pg_attribute_unused(), Oid relid) {
	if (!OidIsValid(relid) || relid == plans.source_relid || relid == plans.sink_relid)
		plans.stale = true;
}

/* The plans are the flow's (a backend refreshes one flow; create_flow's fill keeps
 * nothing here). */
static void plans_for(TaskConfig *cfg) {
	MemoryContext cxt = plans.cxt;

	if (plans.flow_id == cfg->flow_id)
		return;
	if (cxt != NULL)
		MemoryContextReset(cxt);
	memset(&plans, 0, sizeof(plans));
	plans.cxt = cxt;
	plans.flow_id = cfg->flow_id;
	plans.source_relid = cfg->source_relid;
	plans.sink_relid = cfg->sink_relid;
}

/* Every statement kept for the flow goes: built from an analysis that no longer
 * holds, the plan cache would re-analyse its text, with the types of now. */
static void free_plans(void) {
	SPIPlanPtr *all[] = {&plans.refresh[0][0], &plans.upsert[0][0], &plans.probe[0], &plans.fill[0]};
	int counts[] = {2 * PLAN_SLOTS, 2 * PLAN_SLOTS, PLAN_SLOTS, PLAN_SLOTS};

	for (size_t k = 0; k < lengthof(all); k++)
		for (int i = 0; i < counts[k]; i++)
			if (all[k][i] != NULL) {
				SPI_freeplan(all[k][i]);
				all[k][i] = NULL;
			}
	plans.upsert_refused = false;
}

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
	static bool registered = false;
	TaskConfig *now;
	FlowQuery *fq;
	MemoryContext old;

	plans_for(cfg);
	if (!registered) {
		CacheRegisterRelcacheCallback(invalidate_plans, (Datum)0);
		registered = true;
	}
	if (plans.fq != NULL && !plans.stale)
		return plans.fq;
	if (plans.cxt == NULL)
		plans.cxt = AllocSetContextCreate(TopMemoryContext, "flownode refresh", ALLOCSET_SMALL_SIZES);
	free_plans();
	MemoryContextReset(plans.cxt);
	plans.fq = NULL;
	plans.stale = false; /* an invalidation from here on is seen at the next call */
	old = MemoryContextSwitchTo(plans.cxt);
	now = fn_load_task_config(cfg->flow_id, false);
	fq = fn_analyze_flow_query(now->query, now->timezone);
	fn_check_sink(cfg->sink_relid, fq);
	plans.sink = fn_qualified_relname(cfg->sink_relid);
	plans.fq = fq;
	MemoryContextSwitchTo(old);
	return plans.fq;
}

typedef enum StatementKind { STMT_REFRESH, STMT_UPSERT, STMT_PROBE, STMT_FILL } StatementKind;

/* A statement's text over `nranges` parameter pairs of windows, from the analysed
 * query (analysed first: it may be analysed again, and the sink's name with it). */
static char *statement_sql(TaskConfig *cfg, StatementKind kind, int nranges) {
	FlowQuery *fq = analysed_query(cfg);

	switch (kind) {
	case STMT_REFRESH:
		return fn_refresh_sql(fq, plans.sink, nranges, false);
	case STMT_UPSERT:
		return fn_refresh_sql(fq, plans.sink, nranges, true);
	case STMT_PROBE:
		return fn_sink_probe_sql(fq, plans.sink, nranges);
	case STMT_FILL:
		return fn_plain_insert_sql(fq, plans.sink, nranges);
	}
	pg_unreachable();
}

static SPIPlanPtr prepare_kept(const char *sql, int nargs, Oid *argtypes, int cursor_options) {
	SPIPlanPtr plan = SPI_prepare_cursor(sql, nargs, argtypes, cursor_options);

	if (plan == NULL)
		elog(ERROR, "flownode: preparing a refresh statement failed: %s", SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "flownode: keeping a refresh statement failed");
	return plan;
}

/* Runs a plan in the given snapshot; returns the first column of its one row, or
 * the number of rows processed. */
static int64 run_plan(SPIPlanPtr plan, Datum *values, Snapshot snap, int expect) {
	int rc = SPI_execute_snapshot(plan, values, NULL, snap, InvalidSnapshot, false, true, 0);
	bool isnull;

	if (rc != expect)
		elog(ERROR, "flownode: refresh statement failed: %s", SPI_result_code_string(rc));
	if (rc == SPI_OK_SELECT && SPI_processed == 1)
		return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return (int64)SPI_processed;
}

static int64 run_sql(const char *sql, Snapshot snap, int expect) {
	SPIPlanPtr plan = SPI_prepare(sql, 0, NULL);

	if (plan == NULL)
		elog(ERROR, "flownode: preparing a refresh statement failed: %s", SPI_result_code_string(SPI_result));
	return run_plan(plan, NULL, snap, expect);
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

/* The refresh statement for `nranges` ranges, as the flow's owner; without the
 * vanished-groups DELETE when the windows saw only inserts and the query allows. */
static int64 run_refresh_statement(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, Snapshot snap,
                                   bool removals, uint64 windows) {
	bool windowed = cfg->window.kind != FN_WINDOW_NONE;
	int g = windows <= GENERIC_PLAN_MAX_WINDOWS ? 1 : 0;
	int opts = g ? CURSOR_OPT_GENERIC_PLAN : 0;
	int slot = 0;
	int k = 1;
	Datum *values;
	Oid *types;
	Oid coltype = cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;

	while (windowed && k < nranges) {
		k *= 2;
		slot++;
	}
	if (slot >= PLAN_SLOTS)
		elog(ERROR, "flownode: too many ranges in one refresh (%d)", nranges);
	plans_for(cfg);
	/* the source or sink changed since the statements were built: drop them, read the
	 * query again and check it against the sink, before any of them runs */
	if (plans.stale || plans.fq == NULL)
		(void)analysed_query(cfg);
	values = palloc0(sizeof(Datum) * 2 * k);
	types = palloc(sizeof(Oid) * 2 * k);
	for (int i = 0; i < 2 * k; i++)
		types[i] = coltype;
	for (int i = 0; windowed && i < nranges; i++) {
		values[2 * i] = Int64GetDatum(ranges[i].start);
		values[2 * i + 1] = Int64GetDatum(ranges[i].end);
	}
	for (int i = windowed ? nranges : 0; i < k; i++)
		values[2 * i] = values[2 * i + 1] = Int64GetDatum(0); /* [0, 0): empty */
	/* A backlog of windows the sink has never held (a backfill of old data) needs
	 * neither the upsert nor the DELETE: a plain INSERT, as create_flow fills a new
	 * sink. Probed for large refreshes only: a small one would pay more for the
	 * probe than it saves. Only this worker writes the sink, and a TRUNCATE of the
	 * source waits for the refresh; a row someone else adds meanwhile fails the
	 * refresh (unique violation), and the retry finds it and upserts. */
	if (windowed && !g) {
		bool held;

		if (plans.probe[slot] == NULL)
			plans.probe[slot] = prepare_kept(statement_sql(cfg, STMT_PROBE, k), 2 * k, types, 0);
		held = run_plan(plans.probe[slot], values, snap, SPI_OK_SELECT) != 0;
		if (!held) {
			if (plans.fill[slot] == NULL)
				plans.fill[slot] = prepare_kept(statement_sql(cfg, STMT_FILL, k), 2 * k, types, 0);
			return run_plan(plans.fill[slot], values, snap, SPI_OK_INSERT);
		}
	}
	/* Row-level security makes groups vanish without a removal: a policy change
	 * hides rows from the owner. With RLS on, every refresh deletes. */
	if (!removals && !plans.upsert_refused && !row_security_enabled(cfg->source_relid)) {
		if (plans.upsert[g][slot] == NULL) {
			if (fn_refresh_can_skip_vanished(analysed_query(cfg)))
				plans.upsert[g][slot] = prepare_kept(statement_sql(cfg, STMT_UPSERT, windowed ? k : 0),
				                                     windowed ? 2 * k : 0, types, opts);
			else
				plans.upsert_refused = true;
		}
		if (plans.upsert[g][slot] != NULL)
			return run_plan(plans.upsert[g][slot], values, snap, SPI_OK_INSERT);
	}
	if (plans.refresh[g][slot] == NULL)
		plans.refresh[g][slot] = prepare_kept(statement_sql(cfg, STMT_REFRESH, windowed ? k : 0),
		                                      windowed ? 2 * k : 0, types, opts);
	return run_plan(plans.refresh[g][slot], values, snap, SPI_OK_SELECT);
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
static int64 execute(TaskConfig *cfg, FlowQuery *fill, bool sink_is_new, const FnTimeRange *ranges,
                     int nranges, int64 expired_before, bool removals, uint64 windows) {
	Oid save_userid;
	int save_sec;
	int nest;
	volatile int64 rows = 0;
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
		if (fill != NULL && sink_is_new)
			rows = run_sql(fn_plain_insert_sql(fill, fn_qualified_relname(cfg->sink_relid), 0), snap,
			               SPI_OK_INSERT);
		else if (fill != NULL)
			rows = run_sql(fn_refresh_sql(fill, fn_qualified_relname(cfg->sink_relid), 0, false), snap,
			               SPI_OK_SELECT);
		else {
			if (nranges > 0) /* no ranges: only expired windows to forget */
				rows = run_refresh_statement(cfg, ranges, nranges, snap, removals, windows);
			fn_record_trim(cfg->flow_id, ranges, nranges, expired_before, snap);
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

int64 fn_refresh_fill(TaskConfig *cfg, FlowQuery *fq, bool sink_is_new) {
	return execute(cfg, fq, sink_is_new, NULL, 0, 0, true, 0);
}

int64 fn_refresh_run(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, int64 expired_before,
                     bool removals, uint64 windows) {
	return execute(cfg, NULL, false, ranges, nranges, expired_before, removals, windows);
}

/* min and max of one column over [within), or false when no row is there. */
static bool column_extent(const char *table, const char *column, Oid coltype, FnTimeRange within,
                          FnTimeRange *out) {
	Oid types[2] = {coltype, coltype};
	Datum args[2] = {Int64GetDatum(within.start), Int64GetDatum(within.end)};
	char *sql =
	    psprintf("SELECT pg_catalog.min(%s), pg_catalog.max(%s) FROM %s WHERE %s OPERATOR(pg_catalog.>=) $1"
	             " AND %s OPERATOR(pg_catalog.<) $2",
	             column, column, table, column, column);
	bool null1, null2;

	if (SPI_execute_with_args(sql, 2, types, args, NULL, true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "flownode: reading the extent of %s failed", table);
	out->start = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &null1));
	out->end = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &null2));
	return !null1 && !null2;
}

FnTimeRange fn_refresh_extent(TaskConfig *cfg, FnTimeRange within) {
	Oid coltype = cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	FnTimeRange hull = {0, 0};
	FnTimeRange src, sink;
	bool have_src, have_sink;
	FlowQuery *fq;
	SpiAs scope;
	int nest;

	if (cfg->window.kind == FN_WINDOW_NONE)
		return hull;
	nest = fn_pin_deparse_settings(cfg->timezone);
	PushActiveSnapshot(GetTransactionSnapshot());
	fn_spi_begin_as(&scope, cfg->owner, SECURITY_RESTRICTED_OPERATION);
	fq = analysed_query(cfg);
	have_src = column_extent(fn_qualified_relname(cfg->source_relid), quote_identifier(fq->time_column),
	                         coltype, within, &src);
	have_sink = column_extent(plans.sink, quote_identifier(list_nth(fq->out_names, fq->window_position)),
	                          coltype, within, &sink);
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
