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
#include "utils/syscache.h"
#include "catalog/pg_class.h"

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

/* The query into a sink that holds nothing of it: nothing to upsert or delete.
 * nranges = 0: the whole query (a new sink); else restricted to the windows of
 * nranges parameter pairs (windows the sink has no row in). */
static char *gen_plain_insert(TaskConfig *cfg, int nranges) {
	FlowQuery *fq = fn_analyze_flow_query(cfg->query, cfg->timezone);
	StringInfoData s;

	if (fq->window.kind != FN_WINDOW_NONE)
		fn_inject_time_filter(fq->query, fq->source_rtindex, fq->time_attnum,
		                      cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID, NULL, nranges);
	initStringInfo(&s);
	appendStringInfo(&s, "INSERT INTO %s (", fn_qualified_relname(cfg->sink_relid));
	for (int i = 0; i < list_length(fq->out_names); i++)
		appendStringInfo(&s, "%s%s", i ? ", " : "", col(fq, i));
	appendStringInfo(&s, ") %s", fn_deparse_query(fq->query));
	return s.data;
}

/* Whether the sink holds any row in the windows of nranges parameter pairs. */
static char *gen_sink_probe(TaskConfig *cfg, int nranges) {
	FlowQuery *fq = fn_analyze_flow_query(cfg->query, cfg->timezone);
	const char *w = col(fq, fq->window_position);
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s, "SELECT EXISTS (SELECT 1 FROM %s AS fn_sink WHERE ",
	                 fn_qualified_relname(cfg->sink_relid));
	for (int i = 0; i < nranges; i++)
		appendStringInfo(&s, "%s(fn_sink.%s >= $%d AND fn_sink.%s < $%d)", i ? " OR " : "", w, 2 * i + 1, w,
		                 2 * i + 2);
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
static bool can_skip_vanished(FlowQuery *fq) {
	ListCell *lc;

	if (fq->query->havingQual != NULL)
		return false;
	foreach (lc, fq->key_notnull)
		if (lfirst_int(lc) == 0)
			return false;
	return true;
}

char *fn_gen_insert_plan(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, bool *insert_only) {
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
	if (insert_only != NULL && !(*insert_only && can_skip_vanished(fq)))
		*insert_only = false;

	initStringInfo(&s);
	if (insert_only != NULL && *insert_only) {
		/* the upsert alone, straight from the query */
		appendStringInfo(&s, "INSERT INTO %s AS fn_sink (", sink);
		for (i = 0; i < ncols; i++)
			appendStringInfo(&s, "%s%s", i ? ", " : "", col(fq, i));
		appendStringInfo(&s, ") %s ON CONFLICT (", fn_deparse_query(fq->query));
	} else {
		appendStringInfoString(&s, "WITH fn_fresh (");
		for (i = 0; i < ncols; i++)
			appendStringInfo(&s, "%s%s", i ? ", " : "", col(fq, i));
		appendStringInfo(&s, ") AS MATERIALIZED (%s),\n", fn_deparse_query(fq->query));

		/* upsert: rewrite a row only when some value differs */
		appendStringInfo(&s, "fn_upsert AS (INSERT INTO %s AS fn_sink (", sink);
		for (i = 0; i < ncols; i++)
			appendStringInfo(&s, "%s%s", i ? ", " : "", col(fq, i));
		appendStringInfoString(&s, ") SELECT * FROM fn_fresh ON CONFLICT (");
	}
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
	if (insert_only != NULL && *insert_only)
		return s.data;
	appendStringInfoString(&s, " RETURNING 1),\n");

	/* delete the groups of the refreshed windows that no longer exist */
	appendStringInfo(&s, "fn_delete AS (DELETE FROM %s AS fn_sink WHERE ", sink);
	if (fq->window.kind != FN_WINDOW_NONE && nranges > 0) {
		const char *w = col(fq, fq->window_position);

		appendStringInfoChar(&s, '(');
		for (i = 0; i < nranges; i++) {
			char *lo = ranges ? timestamp_literal(coltype, ranges[i].start) : psprintf("$%d", 2 * i + 1);
			char *hi = ranges ? timestamp_literal(coltype, ranges[i].end) : psprintf("$%d", 2 * i + 2);

			appendStringInfo(&s, "%s(fn_sink.%s >= %s AND fn_sink.%s < %s)", i ? " OR " : "", w, lo, w, hi);
		}
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
/*
 * A worker refreshes the same flow over and over: it keeps its statements prepared
 * (SPI_keepplan) instead of parsing and analyzing them per refresh. The refresh
 * statement takes its window bounds as parameters and is kept per power-of-two
 * number of ranges (unused ranges are empty: lo = hi), so a flow needs at most a
 * handful of plans. PostgreSQL's plan cache re-validates them after DDL on the
 * source or sink, so an ALTER TABLE that breaks the query still fails the refresh.
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
	/* [generic][log2(k)]; [.][0] also serves window-less flows */
	SPIPlanPtr refresh[2][PLAN_SLOTS];
	SPIPlanPtr upsert[2][PLAN_SLOTS]; /* the same without the vanished-groups DELETE */
	SPIPlanPtr probe[PLAN_SLOTS];     /* does the sink hold rows in these windows? */
	SPIPlanPtr fill[PLAN_SLOTS];      /* plain INSERT, for windows it holds none of */
	bool upsert_refused;              /* the query needs the DELETE even after inserts */
	SPIPlanPtr trim;
	SPIPlanPtr expire;
	SPIPlanPtr delete_empty;
} RefreshPlans;

static RefreshPlans plans = {-1};

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
	if (plans.flow_id != cfg->flow_id) {
		memset(&plans, 0, sizeof(plans));
		plans.flow_id = cfg->flow_id;
	}
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
			plans.probe[slot] = prepare_kept(gen_sink_probe(cfg, k), 2 * k, types, 0);
		held = run_plan(plans.probe[slot], values, snap, SPI_OK_SELECT) != 0;
		if (!held) {
			if (plans.fill[slot] == NULL)
				plans.fill[slot] = prepare_kept(gen_plain_insert(cfg, k), 2 * k, types, 0);
			return run_plan(plans.fill[slot], values, snap, SPI_OK_INSERT);
		}
	}
	/* Row-level security makes groups vanish without a removal: a policy change
	 * hides rows from the owner. With RLS on, every refresh deletes. */
	if (!removals && !plans.upsert_refused && !row_security_enabled(cfg->source_relid)) {
		if (plans.upsert[g][slot] == NULL) {
			bool insert_only = true;
			char *sql = fn_gen_insert_plan(cfg, NULL, windowed ? k : 0, &insert_only);

			if (insert_only)
				plans.upsert[g][slot] = prepare_kept(sql, windowed ? 2 * k : 0, types, opts);
			else
				plans.upsert_refused = true;
		}
		if (plans.upsert[g][slot] != NULL)
			return run_plan(plans.upsert[g][slot], values, snap, SPI_OK_INSERT);
	}
	if (plans.refresh[g][slot] == NULL)
		plans.refresh[g][slot] = prepare_kept(fn_gen_insert_plan(cfg, NULL, windowed ? k : 0, NULL),
		                                      windowed ? 2 * k : 0, types, opts);
	return run_plan(plans.refresh[g][slot], values, snap, SPI_OK_SELECT);
}

/* Removes the refreshed (and expired) windows from the durable record. */
static void trim_record(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, int64 expired_before,
                        Snapshot snap) {
	Datum args[2];

	Oid t[2] = {INT8MULTIRANGEOID, INT8OID};
	Oid e[2] = {INT8OID, INT8OID};
	Oid d[1] = {INT8OID};

	/* one statement: records wholly refreshed go, the others lose the refreshed part
	 * (the two sets of rows are disjoint, so the DELETE and the UPDATE never meet) */
	if (plans.trim == NULL)
		plans.trim = prepare_kept("WITH fn_done AS (DELETE FROM flownode.pending WHERE flow_id = $2"
		                          " AND ranges OPERATOR(pg_catalog.<@) $1)"
		                          " UPDATE flownode.pending SET ranges = ranges OPERATOR(pg_catalog.-) $1"
		                          " WHERE flow_id = $2 AND ranges OPERATOR(pg_catalog.&&) $1 AND NOT ranges "
		                          "OPERATOR(pg_catalog.<@) $1",
		                          2, t, 0);
	/* whole recorded windows that ended before the cutoff: never partial ones */
	if (plans.expire == NULL)
		plans.expire =
		    prepare_kept("UPDATE flownode.pending SET ranges = (SELECT COALESCE(pg_catalog.range_agg(r),"
		                 " '{}') FROM pg_catalog.unnest(ranges) r WHERE pg_catalog.upper(r) > $1)"
		                 " WHERE flow_id = $2 AND pg_catalog.lower(ranges) < $1",
		                 2, e, 0);
	if (plans.delete_empty == NULL)
		plans.delete_empty = prepare_kept(
		    "DELETE FROM flownode.pending WHERE flow_id = $1 AND pg_catalog.isempty(ranges)", 1, d, 0);
	args[1] = Int64GetDatum(cfg->flow_id);
	if (nranges > 0) {
		args[0] = fn_ranges_datum(ranges, (uint32)nranges);
		(void)run_plan(plans.trim, args, snap, SPI_OK_UPDATE);
	}
	if (expired_before != 0) {
		args[0] = Int64GetDatum(expired_before);
		(void)run_plan(plans.expire, args, snap, SPI_OK_UPDATE);
		args[0] = Int64GetDatum(cfg->flow_id);
		(void)run_plan(plans.delete_empty, args, snap, SPI_OK_DELETE);
	}
}

/*
 * Runs one refresh in the current transaction: the upsert/delete statement as the
 * flow's owner and, with the very same snapshot, the removal of the refreshed
 * windows from the durable record as the catalog's owner. A writer that committed
 * after that snapshot keeps both its rows out of this refresh and its record.
 *
 * The source is locked before the snapshot is taken, so a TRUNCATE of the source
 * is either wholly before the refresh's snapshot or waits for it to commit.
 *
 * refresh = false is create_flow's fill: the whole query, once, not prepared.
 */
static int64 execute(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, bool refresh,
                     int64 expired_before, bool sink_is_new, bool removals, uint64 windows) {
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
		if (!refresh && sink_is_new)
			rows = run_sql(gen_plain_insert(cfg, 0), snap, SPI_OK_INSERT);
		else if (!refresh)
			rows = run_sql(fn_gen_insert_plan(cfg, ranges, nranges, NULL), snap, SPI_OK_SELECT);
		else if (nranges > 0) /* no ranges: only expired windows to forget */
			rows = run_refresh_statement(cfg, ranges, nranges, snap, removals, windows);
		if (refresh) {
			SetUserIdAndSecContext(fn_catalog_owner(), save_sec | SECURITY_LOCAL_USERID_CHANGE);
			trim_record(cfg, ranges, nranges, expired_before, snap);
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

int64 fn_execute_fill(TaskConfig *cfg, bool sink_is_new) {
	return execute(cfg, NULL, 0, false, 0, sink_is_new, true, 0);
}

int64 fn_execute_refresh(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, int64 expired_before,
                         bool removals, uint64 windows) {
	return execute(cfg, ranges, nranges, true, expired_before, false, removals, windows);
}
