/*
 * fold_refresh.c: the folded refresh of the open window (fold_refresh.h). The prefix
 * is a tuplestore in the worker's memory, handed to the statements of
 * refresh_sql.h as an ephemeral named relation (as AFTER triggers hand over their
 * transition tables); a refresh builds the next one and it replaces the kept one only
 * when the refresh commits. Each flow the worker keeps statements for has its own
 * fold (FnFold, kept with them by refresh_exec.c), so a worker serving many flows
 * folds each of them between the others' refreshes.
 */
#include "flownode.h"

#include "refresh/fold_refresh.h"

#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgutil/pg_util.h"
#include "query/fold_shape.h"
#include "refresh/refresh_sql.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/queryenvironment.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

/*
 * How far below the earliest new row the line stays: the slack. A writer whose rows
 * are older than those of writers that committed before it (it ran longer, or its
 * rows come late from their devices) lands above the line as long as it is less
 * than the slack late; one later still makes the next refresh recompute the window.
 * The rows between the line and the newest are read by every refresh, so the slack
 * follows the lateness seen (core/task_state.hpp: fold_slack_after_late_row, _fold).
 */

typedef struct FoldState {
	bool valid;
	FnTimeRange window;
	int64 line;
	Tuplestorestate *prefix; /* the groups of the window's rows below the line */
} FoldState;

struct FnFold {
	const FlowQuery *fq; /* the analysed query all of this is for */
	FnFoldShape *shape;  /* NULL: the query does not fold */
	FnWindow *window;
	TupleDesc desc; /* the prefix's columns: the query's outputs */
	SPIPlanPtr prefix_plan;
	SPIPlanPtr upsert_plan;
	SPIPlanPtr verify_plan;
	MemoryContext cxt; /* shape, window, desc, prefixes */
	FoldState now;     /* as of the last refresh that committed */
	FoldState next;    /* this refresh's, until it commits */
	bool next_set;
	bool folded;
	int64 reported; /* the earliest new row reported to this refresh */
	int64 slack;    /* the line's distance below it (0: the least) */
};

static void drop_prefix(FnFold *f, Tuplestorestate *ts) {
	if (ts != NULL && ts != f->now.prefix && ts != f->next.prefix)
		tuplestore_end(ts);
}

static void drop_now(FnFold *f) {
	Tuplestorestate *ts = f->now.prefix;

	f->now.valid = false;
	f->now.prefix = NULL;
	drop_prefix(f, ts);
}

static bool overlaps(FnTimeRange a, FnTimeRange b) {
	return a.start < b.end && b.start < a.end;
}

void fn_fold_forget_within(FnFold *f, FnTimeRange hull) {
	if ((f->now.valid && overlaps(f->now.window, hull)) ||
	    (f->next_set && f->next.valid && overlaps(f->next.window, hull)))
		fn_fold_forget(f);
}

void fn_fold_forget(FnFold *f) {
	SPIPlanPtr *plans[] = {&f->prefix_plan, &f->upsert_plan, &f->verify_plan};
	Tuplestorestate *next = f->next_set ? f->next.prefix : NULL;

	f->next_set = false;
	f->next.prefix = NULL;
	drop_prefix(f, next);
	drop_now(f);
	for (size_t i = 0; i < lengthof(plans); i++)
		if (*plans[i] != NULL) {
			SPI_freeplan(*plans[i]);
			*plans[i] = NULL;
		}
	f->fq = NULL;
	f->shape = NULL;
	f->folded = false;
	if (f->cxt != NULL)
		MemoryContextReset(f->cxt);
}

FnFold *fn_fold_new(void) {
	return MemoryContextAllocZero(TopMemoryContext, sizeof(FnFold));
}

void fn_fold_free(FnFold *f) {
	if (f == NULL)
		return;
	fn_fold_forget(f);
	if (f->cxt != NULL)
		MemoryContextDelete(f->cxt);
	pfree(f);
}

/* The prefix's columns: the fold's parts' (query/fold_shape.h). */
static TupleDesc prefix_desc(const FnFoldShape *shape) {
	TupleDesc desc = CreateTemplateTupleDesc(shape->nparts);

	for (int i = 0; i < shape->nparts; i++) {
		TupleDescInitEntry(desc, (AttrNumber)(i + 1), shape->names[i], shape->types[i], shape->typmods[i], 0);
		TupleDescInitEntryCollation(desc, (AttrNumber)(i + 1), shape->collations[i]);
	}
	return desc;
}

/* The query's fold, analysed once per analysed query. */
static FnFoldShape *shape_for(FnFold *f, const FlowQuery *fq) {
	MemoryContext old;
	const char *why;

	if (f->fq == fq)
		return f->shape;
	fn_fold_forget(f);
	if (f->cxt == NULL)
		f->cxt = AllocSetContextCreate(TopMemoryContext, "flownode fold", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(f->cxt);
	f->fq = fq;
	f->shape = fn_fold_shape(fq, &why);
	if (f->shape != NULL) {
		f->window = fn_window_create(&fq->window);
		f->desc = prefix_desc(f->shape);
	}
	MemoryContextSwitchTo(old);
	return f->shape;
}

/* A tuplestore that outlives transactions (its files too, should it spill). */
static Tuplestorestate *new_prefix(FnFold *f) {
	MemoryContext old = MemoryContextSwitchTo(f->cxt);
	Tuplestorestate *ts = tuplestore_begin_heap(false, true, work_mem);

	MemoryContextSwitchTo(old);
	return ts;
}

bool fn_fold_begin(FnFold *f, const FlowQuery *fq, bool time_index, const FnTimeRange *ranges, int nranges,
                   const FnFoldInput *in, FnTimeRange *w) {
	int64 reported;

	f->next_set = false;
	f->next.prefix = NULL;
	f->folded = false;
	/* a flow that cannot fold waits for no writer: the reports it leaves in its slot
	 * only make the first check of a fold started later stricter than it need be */
	if (!fn_fold_open_window || !time_index || nranges == 0 || shape_for(f, fq) == NULL) {
		drop_now(f);
		return false;
	}
	reported = in->take_reports(in->arg);
	/* a row below the line that the prefix may not hold: start afresh; a late row in
	 * the window (not a removal, nor a row of an older window) widens the slack */
	if (f->now.valid && !fn_fold_holds(f->now.line, reported)) {
		if (reported >= f->now.window.start)
			f->slack = fn_fold_slack_after_late_row(f->slack, f->now.window.end - f->now.window.start);
		drop_now(f);
	}
	f->reported = reported;
	if (!f->now.valid)
		return false;
	for (int i = 0; i < nranges; i++)
		if (ranges[i].start <= f->now.window.start && f->now.window.end <= ranges[i].end) {
			*w = f->now.window;
			return true;
		}
	return false;
}

/* The window folds start at: the ranges' latest, but not past a day from now (a row
 * from a clock gone wrong must not take the fold from the window being written);
 * start >= end when there is none. */
static FnTimeRange fold_window_of(FnFold *f, const FnTimeRange *ranges, int nranges) {
	int64 limit = GetCurrentTimestamp() + USECS_PER_DAY; /* any zone's local time is before it */

	for (int i = nranges - 1; i >= 0; i--)
		if (ranges[i].start <= limit)
			return fn_window_of(f->window, Min(ranges[i].end - 1, limit));
	return (FnTimeRange){0, 0};
}

void fn_fold_after_recompute(FnFold *f, const FlowQuery *fq, const FnTimeRange *ranges, int nranges) {
	FnTimeRange latest;

	if (!fn_fold_open_window || nranges == 0 || shape_for(f, fq) == NULL)
		return;
	latest = fold_window_of(f, ranges, nranges);
	if (latest.start >= latest.end || (f->now.valid && f->now.window.start >= latest.start))
		return; /* late rows of older windows: the fold keeps its window */
	f->next.valid = true;
	f->next.window = latest;
	f->next.line = latest.start; /* the prefix holds the rows below it: none */
	f->next.prefix = new_prefix(f);
	f->next_set = true;
}

/* The ranges' two arrays for a statement: [lo, hi). */
static void one_range(const FlowQuery *fq, int64 lo, int64 hi, Datum *values) {
	Oid type = fq->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	Datum a = Int64GetDatum(lo);
	Datum b = Int64GetDatum(hi);

	values[0] =
	    PointerGetDatum(construct_array(&a, 1, type, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[1] =
	    PointerGetDatum(construct_array(&b, 1, type, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

static SPIPlanPtr kept_plan(SPIPlanPtr *plan, const FlowQuery *fq, const char *sql) {
	Oid type = get_array_type(fq->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID);
	Oid types[2] = {type, type};

	if (*plan == NULL)
		*plan = fn_spi_prepare_kept(sql, 2, types, CURSOR_OPT_GENERIC_PLAN);
	return *plan;
}

/* The statements see `prefix` as FN_FOLD_PREFIX until unregister_prefix. */
static void register_prefix(FnFold *f, Tuplestorestate *prefix) {
	EphemeralNamedRelation enr = palloc0(sizeof(EphemeralNamedRelationData));

	enr->md.name = FN_FOLD_PREFIX;
	enr->md.reliddesc = InvalidOid;
	enr->md.tupdesc = f->desc;
	enr->md.enrtype = ENR_NAMED_TUPLESTORE;
	enr->md.enrtuples = (double)tuplestore_tuple_count(prefix);
	enr->reldata = prefix;
	if (SPI_register_relation(enr) != SPI_OK_REL_REGISTER)
		elog(ERROR, "flownode: registering the folded prefix failed");
}

static void unregister_prefix(void) {
	if (SPI_unregister_relation(FN_FOLD_PREFIX) != SPI_OK_REL_UNREGISTER)
		elog(ERROR, "flownode: unregistering the folded prefix failed");
}

/* The prefix with the rows of [from, to) folded in: a new tuplestore. */
static Tuplestorestate *fold_into_prefix(FnFold *f, const FlowQuery *fq, Tuplestorestate *prefix, int64 from,
                                         int64 to, Snapshot snap) {
	SPIPlanPtr plan;
	Tuplestorestate *out;
	Datum values[2];
	int rc;

	one_range(fq, from, to, values);
	register_prefix(f, prefix); /* before the statement is prepared: it reads it */
	plan = kept_plan(&f->prefix_plan, fq, fn_fold_prefix_sql(fq, f->shape, FN_FILTER_JOIN));
	rc = SPI_execute_snapshot(plan, values, NULL, snap, InvalidSnapshot, false, true, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "flownode: folding rows into the prefix failed: %s", SPI_result_code_string(rc));
	unregister_prefix();
	out = new_prefix(f);
	for (uint64 i = 0; i < SPI_processed; i++)
		tuplestore_puttuple(out, SPI_tuptable->vals[i]);
	SPI_freetuptable(SPI_tuptable);
	return out;
}

/* flownode.verify_folds: the sink's window against the query over all its rows. */
static void verify_window(FnFold *f, const FlowQuery *fq, const char *sink, FnTimeRange w, Snapshot snap) {
	SPIPlanPtr plan = kept_plan(&f->verify_plan, fq, fn_fold_verify_sql(fq, sink, FN_FILTER_JOIN));
	Datum values[2];
	int64 differ;

	one_range(fq, w.start, w.end, values);
	differ = fn_spi_run_plan(plan, values, snap, SPI_OK_SELECT);
	if (differ != 0)
		ereport(
		    ERROR,
		    (errcode(ERRCODE_INTERNAL_ERROR),
		     errmsg("flownode: the folded refresh of the window at %s left %lld sink rows different "
		            "from the query",
		            DatumGetCString(DirectFunctionCall1(
		                fq->window.with_time_zone ? timestamptz_out : timestamp_out, Int64GetDatum(w.start))),
		            (long long)differ)));
}

int64 fn_fold_window(FnFold *f, const FlowQuery *fq, const char *sink, FnTimeRange w, Snapshot snap) {
	SPIPlanPtr upsert;
	Tuplestorestate *prefix = f->now.prefix;
	int64 line = f->now.line;
	int64 to;
	Datum values[2];
	int64 rows;

	/* the rows below the new line are old enough to stay put: fold them in */
	to = fn_fold_next_line(line, f->reported, f->slack, w.end);
	if (to > line) {
		prefix = fold_into_prefix(f, fq, prefix, line, to, snap);
		/* kept for the commit (or dropped at the abort) from here on */
		f->next.prefix = prefix;
		f->next_set = true;
	}
	one_range(fq, to, w.end, values);
	register_prefix(f, prefix);
	upsert = kept_plan(&f->upsert_plan, fq, fn_fold_upsert_sql(fq, f->shape, sink, FN_FILTER_JOIN));
	rows = fn_spi_run_plan(upsert, values, snap, SPI_OK_INSERT);
	unregister_prefix();
	if (fn_verify_folds)
		verify_window(f, fq, sink, w, snap);
	f->next.valid = true;
	f->next.window = w;
	f->next.line = to;
	f->next.prefix = prefix;
	f->next_set = true;
	f->folded = true;
	return rows;
}

bool fn_fold_folding(const FnFold *f) {
	return f->folded;
}

FnFoldSettled fn_fold_settle(FnFold *f, bool committed) {
	FnFoldSettled out = {{0, 0}, false};

	if (committed && f->next_set) {
		Tuplestorestate *old = f->now.prefix;

		f->now = f->next;
		f->next.prefix = NULL;
		if (old != f->now.prefix)
			drop_prefix(f, old);
		out.folded = f->folded;
		if (out.folded)
			f->slack = fn_fold_slack_after_fold(f->slack);
	} else if (!committed) {
		Tuplestorestate *next = f->next_set ? f->next.prefix : NULL;

		f->next.prefix = NULL;
		drop_prefix(f, next);
		drop_now(f); /* what the refresh did is gone: start afresh */
	}
	f->next_set = false;
	f->folded = false;
	if (f->now.valid)
		out.window = f->now.window;
	return out;
}
