/*
 * read_exec.c: read_flow's statements (docs/internals.md §6, "Real-time reads"). Two
 * statements in the caller's snapshot:
 *   - the sink's rows outside the dirty windows (fn_read_sink_sql), as the caller:
 *     its privileges and locks, as a SELECT from the sink would;
 *   - the flow's query restricted to the dirty windows, the refresh's own statement
 *     text (fn_read_query_sql), run as a refresh runs it: as the flow's owner in a
 *     restricted security context, under the pinned settings, with jit off. So the
 *     rows are the ones the next refresh will write, and the read equals the sink as
 *     it will be (and the flow's query) whoever calls it.
 * Their rows go straight into the caller's tuplestore, each column to the sink's
 * column of its name (a sink column the flow does not write is NULL in computed
 * rows), or to a read view's: the query's columns only. Nothing here depends on the number of sink rows but
 * reading them.
 */
#include "flownode.h"

#include "refresh/read_exec.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "parser/parsetree.h"
#include "pgutil/pg_util.h"
#include "query/query_rewrite.h"
#include "query/time_input.h"
#include "refresh/refresh_args.h"
#include "refresh/refresh_exec.h"
#include "refresh/refresh_sql.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/timestamp.h"

FlowQuery *fn_read_analyse(TaskConfig *cfg) {
	Oid save_userid;
	int save_sec;
	int nest;
	FlowQuery *fq;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	nest = fn_pin_deparse_settings(cfg->timezone);
	SetUserIdAndSecContext(cfg->owner,
	                       save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	fq = fn_analyze_flow_query(cfg->query, cfg->timezone);
	SetUserIdAndSecContext(save_userid, save_sec);
	fn_unpin_settings(nest);
	return fq;
}

static void refuse_row_security(Oid relid, const char *detail) {
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
		        (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		         errmsg("read_flow is not available to roles subject to row-level security on table \"%s\"",
		                get_rel_name(relid)),
		         errdetail("%s", detail), errhint("Read the sink table itself.")));
}

void fn_read_check_caller(TaskConfig *cfg, FlowQuery *fq) {
	Oid user = GetUserId();
	RangeTblEntry *source = rt_fetch(fq->source_rtindex, fq->query->rtable);

	if (pg_class_aclcheck(cfg->sink_relid, user, ACL_SELECT) != ACLCHECK_OK &&
	    pg_attribute_aclcheck_all(cfg->sink_relid, user, ACL_SELECT, ACLMASK_ALL) != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied for table %s", get_rel_name(cfg->sink_relid)),
		                errdetail("read_flow needs SELECT on the flow's sink and source tables.")));
	/* the columns the flow's query reads, as running it yourself would check them */
	Assert(source->rtekind == RTE_RELATION && !OidIsValid(fn_rte_check_as_user(fq->query, source)));
	if (!fn_rte_permitted(fq->query, source))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied for table %s", get_rel_name(cfg->source_relid)),
		                errdetail("read_flow needs SELECT on the flow's sink and source tables.")));
	refuse_row_security(cfg->source_relid,
	                    "Windows not yet refreshed are computed as the flow's owner sees the source, "
	                    "so rows the policies hide from you could reach the result.");
	refuse_row_security(cfg->sink_relid,
	                    "The sink's policies cannot be applied to the windows computed at read time.");
}

/* ---- the rows, into the caller's tuplestore ---- */

typedef struct ReadReceiver {
	DestReceiver pub;
	Tuplestorestate *store;
	TupleDesc desc; /* the sink's row type, or a read view's (subset) */
	bool subset;    /* desc is a read view's: the query's columns only */
	Datum *values;  /* desc->natts of each */
	bool *nulls;
	int *map; /* per statement column: its column in desc (0-based), set at startup */
} ReadReceiver;

/* The column of desc named as statement column a; -1: none. */
static int column_named(TupleDesc desc, Form_pg_attribute a) {
	for (int j = 0; j < desc->natts; j++) {
		Form_pg_attribute b = TupleDescAttr(desc, j);

		if (!b->attisdropped && namestrcmp(&b->attname, NameStr(a->attname)) == 0)
			return j;
	}
	return -1;
}

/* A read view's column that no statement column fills: the view no longer has the
 * query's columns (a column renamed or added with ALTER VIEW, a flow replaced). */
static void check_view_filled(ReadReceiver *r, TupleDesc typeinfo) {
	for (int j = 0; j < r->desc->natts; j++) {
		Form_pg_attribute b = TupleDescAttr(r->desc, j);
		bool filled = b->attisdropped;

		for (int i = 0; i < typeinfo->natts && !filled; i++)
			filled = r->map[i] == j;
		if (!filled)
			ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
			                errmsg("read view does not match the flow query: the flow has no column \"%s\"",
			                       NameStr(b->attname)),
			                errhint("Drop the view and make it again with flownode.create_read_view.")));
	}
}

/* Each statement column goes to the sink column of its name, of the same type; a
 * read view leaves out the sink's columns it does not have (the hidden key columns,
 * the columns the flow does not write). */
static void read_startup(DestReceiver *self, int operation pg_attribute_unused(), TupleDesc typeinfo) {
	ReadReceiver *r = (ReadReceiver *)self;

	r->map = palloc(sizeof(int) * Max(typeinfo->natts, 1));
	for (int i = 0; i < typeinfo->natts; i++) {
		Form_pg_attribute a = TupleDescAttr(typeinfo, i);
		int k = column_named(r->desc, a);

		r->map[i] = k;
		if (k < 0 && r->subset)
			continue;
		if (k < 0)
			ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
			                errmsg("sink does not match the flow query: it has no column \"%s\"",
			                       NameStr(a->attname))));
		if (TupleDescAttr(r->desc, k)->atttypid != a->atttypid)
			ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
			                errmsg("sink does not match the flow query: column \"%s\" has type %s, the query "
			                       "produces %s",
			                       NameStr(a->attname), format_type_be(TupleDescAttr(r->desc, k)->atttypid),
			                       format_type_be(a->atttypid))));
	}
	if (r->subset)
		check_view_filled(r, typeinfo);
}

static bool read_receive(TupleTableSlot *slot, DestReceiver *self) {
	ReadReceiver *r = (ReadReceiver *)self;

	slot_getallattrs(slot);
	for (int j = 0; j < r->desc->natts; j++) {
		r->values[j] = (Datum)0;
		r->nulls[j] = true;
	}
	for (int i = 0; i < slot->tts_tupleDescriptor->natts; i++) {
		if (r->map[i] < 0)
			continue;
		r->values[r->map[i]] = slot->tts_values[i];
		r->nulls[r->map[i]] = slot->tts_isnull[i];
	}
	tuplestore_putvalues(r->store, r->desc, r->values, r->nulls);
	return true;
}

static void read_shutdown(DestReceiver *self pg_attribute_unused()) {}

static void read_destroy(DestReceiver *self pg_attribute_unused()) {}

/* ---- the statements ---- */

/* A statement's parameters: the dirty ranges as two arrays of the time column's
 * type ($1 starts, $2 ends) and, for the sink, the bounds ($3, $4); for the query, the
 * column values of the ranges when the time column is a date or an epoch ($3, $4),
 * then the clock when it compares its time column with now() (after the ranges, $1
 * without them). */
typedef struct ReadArgs {
	int n;
	Oid types[5];
	Datum values[5];
} ReadArgs;

static ReadArgs read_args(TaskConfig *cfg, const FnReadPlan *plan, bool with_bounds) {
	Oid coltype = cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	Datum *lo = palloc(sizeof(Datum) * Max(plan->ndirty, 1));
	Datum *hi = palloc(sizeof(Datum) * Max(plan->ndirty, 1));
	ReadArgs a = {0};

	if (cfg->window.kind == FN_WINDOW_NONE)
		return a;
	for (int i = 0; i < plan->ndirty; i++) {
		lo[i] = Int64GetDatum(plan->dirty[i].start);
		hi[i] = Int64GetDatum(plan->dirty[i].end);
	}
	a.n = with_bounds ? 4 : 2;
	a.types[0] = a.types[1] = get_array_type(coltype);
	a.types[2] = a.types[3] = coltype;
	a.values[0] = PointerGetDatum(
	    construct_array(lo, plan->ndirty, coltype, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	a.values[1] = PointerGetDatum(
	    construct_array(hi, plan->ndirty, coltype, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	a.values[2] = Int64GetDatum(plan->bounds.start);
	a.values[3] = Int64GetDatum(plan->bounds.end);
	return a;
}

/* Runs one statement read-only (in the active snapshot: the caller's), planned for
 * its arguments' values, its rows into the receiver. */
static void run_into(const char *sql, const ReadArgs *a, ReadReceiver *r) {
	SPIPlanPtr plan;
	SPIExecuteOptions opts;
	ParamListInfo params = makeParamList(a->n);
	int rc;

	for (int i = 0; i < a->n; i++) {
		params->params[i].value = a->values[i];
		params->params[i].isnull = false;
		params->params[i].pflags = PARAM_FLAG_CONST;
		params->params[i].ptype = a->types[i];
	}
	plan = SPI_prepare(sql, a->n, (Oid *)a->types);
	if (plan == NULL)
		elog(ERROR, "flownode: preparing a read statement failed: %s", SPI_result_code_string(SPI_result));
	memset(&opts, 0, sizeof(opts));
	opts.params = params;
	opts.read_only = true;
	opts.dest = (DestReceiver *)r;
	rc = SPI_execute_plan_extended(plan, &opts);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "flownode: read statement failed: %s", SPI_result_code_string(rc));
	SPI_freeplan(plan);
}

/* The flow's query over the dirty windows, as the owner runs it in a refresh. */
static void run_query_part(TaskConfig *cfg, FlowQuery *fq, const FnReadPlan *plan, ReadReceiver *r) {
	FnRangeFilter filter =
	    fn_btree_index_leads_with(cfg->source_relid, cfg->time_attnum) ? FN_FILTER_JOIN : FN_FILTER_CONTAINS;
	ReadArgs a = read_args(cfg, plan, false);
	Oid save_userid;
	int save_sec;

	if (a.n > 0 && cfg->input.kind != FN_INPUT_TIMESTAMP) { /* as run_refresh_statement */
		Oid coltype = cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;

		a.types[2] = a.types[3] = get_array_type(fn_time_input_bound_type(&cfg->input, coltype));
		fn_refresh_input_arrays(cfg, plan->dirty, plan->ndirty, filter == FN_FILTER_JOIN, a.values);
		a.n = 4;
	}
	if (plan->clock) { /* after the ranges, as in a refresh (refresh_sql.h) */
		a.types[a.n] = TIMESTAMPTZOID;
		a.values[a.n++] = TimestampTzGetDatum(plan->clock_at);
	}

	/* as in a refresh: the planner cannot see the ranges, and JIT chosen on its
	 * defaults compiled for seconds statements that read a few thousand rows */
	(void)set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(cfg->owner,
	                       save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		run_into(fn_read_query_sql(fq, cfg->window.kind == FN_WINDOW_NONE ? FN_FILTER_ALL_FINITE : filter),
		         &a, r);
	}
	PG_FINALLY();
	{ SetUserIdAndSecContext(save_userid, save_sec); }
	PG_END_TRY();
}

void fn_read_run(TaskConfig *cfg, FlowQuery *fq, const FnReadPlan *plan, Tuplestorestate *store,
                 TupleDesc desc, bool subset) {
	ReadReceiver r;
	int nest;

	memset(&r, 0, sizeof(r));
	r.pub.receiveSlot = read_receive;
	r.pub.rStartup = read_startup;
	r.pub.rShutdown = read_shutdown;
	r.pub.rDestroy = read_destroy;
	r.pub.mydest = DestTuplestore;
	r.store = store;
	r.desc = desc;
	r.subset = subset;
	r.values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	r.nulls = palloc(sizeof(bool) * Max(desc->natts, 1));

	/* the settings the statements were written under (search_path: unnest) and run
	 * under; undone with jit below */
	nest = NewGUCNestLevel();
	(void)fn_pin_deparse_settings(cfg->timezone);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	if (plan->read_sink) {
		ReadArgs a = read_args(cfg, plan, true);

		run_into(fn_read_sink_sql(fq, fn_qualified_relname(cfg->sink_relid)), &a, &r);
	}
	if (plan->ndirty > 0)
		run_query_part(cfg, fq, plan, &r);
	SPI_finish();
	AtEOXact_GUC(true, nest);
}
