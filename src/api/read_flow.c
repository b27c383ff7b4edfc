/*
 * read_flow.c: exact real-time reads (docs/reference.md "flownode.read_flow", docs/
 * internals.md §6 "Real-time reads").
 *
 * read_flow(NULL::sink) answers, in the caller's snapshot, with the sink's rows of
 * the windows that snapshot holds clean and the flow's query over the windows it
 * holds dirty. Which windows are dirty in a snapshot is read from the durable record
 * (flownode.pending) in that very snapshot, plus the caller's own uncommitted marks:
 * a writer records its windows in its own transaction (or relies on a record the
 * durable set vouches for), and a refresh trims them in the transaction that writes
 * the sink, so a snapshot sees a writer's rows exactly when it sees its windows
 * pending or their refresh done (internals §2, invariant 9). Nothing is read from
 * shared memory and nobody is waited for: the read works the same on a hot standby.
 *
 * create_read_view makes a view over it, which goes with the sink (an AUTO
 * dependency, as an index has), with the extension, and with the flow (drop_flow).
 */
#include "flownode.h"

#include "api/read_flow.h"

#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "access/genam.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/comment.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "marking/commit_marks.h"
#include "marking/dimension_marks.h"
#include "miscadmin.h"
#include "pgutil/pg_util.h"
#include "record/durable_record.h"
#include "record/key_record.h"
#include "refresh/read_exec.h"
#include "refresh/clock_changes.h"
#include "refresh/refresh_exec.h"
#include "registry/flow_registry.h"
#include "registry/stored_query.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/regproc.h"

PG_FUNCTION_INFO_V1(flownode_read_flow);
PG_FUNCTION_INFO_V1(flownode_create_read_view);

/* The sink a view made by create_read_view reads: its AUTO dependency on the sink
 * (a view's own dependencies are its rule's, NORMAL); InvalidOid for any other
 * relation. */
static Oid read_view_sink(Oid relid) {
	Relation depend;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple tup;
	Oid sink = InvalidOid;

	if (get_rel_relkind(relid) != RELKIND_VIEW)
		return InvalidOid;
	depend = table_open(DependRelationId, AccessShareLock);
	ScanKeyInit(&key[0], Anum_pg_depend_classid, BTEqualStrategyNumber, F_OIDEQ,
	            ObjectIdGetDatum(RelationRelationId));
	ScanKeyInit(&key[1], Anum_pg_depend_objid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(depend, DependDependerIndexId, true, NULL, 2, key);
	while (!OidIsValid(sink) && HeapTupleIsValid(tup = systable_getnext(scan))) {
		Form_pg_depend d = (Form_pg_depend)GETSTRUCT(tup);

		if (d->deptype == DEPENDENCY_AUTO && d->refclassid == RelationRelationId && d->refobjsubid == 0 &&
		    get_rel_relkind(d->refobjid) != RELKIND_VIEW)
			sink = d->refobjid;
	}
	systable_endscan(scan);
	table_close(depend, AccessShareLock);
	return sink;
}

/*
 * The flow whose sink has the row type of argument 0, or whose read view has it
 * (*subset: the result has the view's columns, the query's, not the sink's hidden key
 * columns; PostgreSQL gives a polymorphic function's result its argument's type, so
 * the sink's type always has all of the sink's columns).
 */
static TaskConfig *flow_of_row_type(FunctionCallInfo fcinfo, bool *subset) {
	Oid type = get_fn_expr_argtype(fcinfo->flinfo, 0);
	Oid relid = OidIsValid(type) ? get_typ_typrelid(type) : InvalidOid;
	Oid sink = OidIsValid(relid) ? read_view_sink(relid) : InvalidOid;
	ListCell *lc;

	if (!OidIsValid(relid))
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
		                errmsg("read_flow takes the row type of a flow's sink table, not %s",
		                       OidIsValid(type) ? format_type_be(type) : "an unknown type"),
		                errhint("Call it as flownode.read_flow(NULL::sink_table).")));
	*subset = OidIsValid(sink);
	if (!*subset)
		sink = relid;
	foreach (lc, fn_load_flows_of_relation(sink)) {
		TaskConfig *cfg = lfirst(lc);

		if (cfg->sink_relid == sink)
			return cfg;
	}
	ereport(
	    ERROR,
	    (errcode(ERRCODE_UNDEFINED_OBJECT),
	     errmsg("\"%s\" is neither the sink table of a flow nor a read view of one", format_type_be(type)),
	     errhint(
	         "flownode.flows lists each flow's sink_table; flownode.create_read_view makes a read view.")));
	pg_unreachable();
}

/* A bound as the window column holds it (a timestamp column holds the flow's local
 * time); NULL or infinite: unbounded (every finite time). */
static int64 bound_arg(FunctionCallInfo fcinfo, int argno, TaskConfig *cfg, bool upper) {
	TimestampTz t;

	if (PG_ARGISNULL(argno) || TIMESTAMP_NOT_FINITE(PG_GETARG_TIMESTAMPTZ(argno)))
		return upper ? DT_NOEND : MIN_TIMESTAMP;
	t = PG_GETARG_TIMESTAMPTZ(argno);
	if (!cfg->window.with_time_zone)
		t = DatumGetTimestamp(DirectFunctionCall2(timestamptz_zone, CStringGetTextDatum(cfg->timezone),
		                                          TimestampTzGetDatum(t)));
	return t;
}

/* The windows overlapping [from, to), whole: from the start of the window holding
 * `from` to the end of the one holding the last instant before `to`. */
static FnTimeRange wanted_windows(FunctionCallInfo fcinfo, TaskConfig *cfg, FnWindow *w) {
	FnTimeRange want = {bound_arg(fcinfo, 1, cfg, false), bound_arg(fcinfo, 2, cfg, true)};

	if (want.start >= want.end)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("read_flow needs \"from\" before \"to\"")));
	if (w == NULL)
		return (FnTimeRange){MIN_TIMESTAMP, DT_NOEND};
	if (want.start != MIN_TIMESTAMP)
		want.start = fn_window_of(w, want.start).start;
	if (want.end != DT_NOEND)
		want.end = fn_window_of(w, want.end - 1).end;
	return want;
}

/*
 * A flow comparing its time column with now() (docs/reference.md, "now(): the
 * evaluation's clock"): in the read's snapshot its sink follows the query at the clock of flownode.flow_clock
 * (moved in the transaction that records the windows the move changes), and a repair may have refreshed
 * windows at its own scheduled time since, never later than now. The read takes the query at the reader's
 * now(), so it also computes the windows whose rows' answer to the comparisons differs anywhere between the
 * earliest and the latest of those times: the comparisons are monotonic in now(), so those are the windows
 * between the thresholds at the two ends (fn_refresh_clock_changes, as the worker
 * marks them). No clock in the snapshot: every window.
 */
static FnTimeRange *clock_windows(TaskConfig *cfg, FnWindow *w, TimestampTz read_at, uint32 *n) {
	TimestampTz sink_at;
	FnTimeRange *changes;
	int k;

	*n = 0;
	if (!fn_registry_clock_visible(cfg->flow_id, &sink_at)) {
		changes = palloc(sizeof(FnTimeRange));
		changes[(*n)++] = (FnTimeRange){MIN_TIMESTAMP, DT_NOEND};
		return changes;
	}
	changes = fn_refresh_clock_changes(cfg, Min(sink_at, read_at), Max(sink_at, GetCurrentTimestamp()), &k);
	for (int i = 0; i < k; i++) { /* whole windows of valid times */
		int64 start = Max(changes[i].start, MIN_TIMESTAMP);
		int64 end = Min(changes[i].end, END_TIMESTAMP);

		if (start < end)
			changes[(*n)++] = (FnTimeRange){fn_window_of(w, start).start, fn_window_of(w, end - 1).end};
	}
	return changes;
}

/*
 * Which windows the read computes from the query: those the snapshot holds dirty
 * (the record it sees, with this transaction's own uncommitted marks) inside `want`
 * and from the expiry line on. A frozen window (expire_after) is read from the sink
 * whatever marked it, as the flow keeps it; the line is taken now, after every
 * commit the snapshot sees, so a window a writer found frozen is frozen here too.
 */
static FnReadPlan read_plan(TaskConfig *cfg, FlowQuery *fq, FnWindow *w, FnTimeRange want) {
	FnReadPlan p = {.read_sink = true, .bounds = want};
	uint32 nrec, nown, nkeys, nclock = 0, n = 0;
	FnTimeRange *rec, *own, *keys, *all, *dirty, *clock = NULL;
	FnTimeRange unfilled;
	TimestampTz oldest; /* unused */
	FnDirtySet set;
	int64 lo, line;

	if (fq->now_preds != NIL) { /* the reader's now(), as the query would take it */
		p.clock = true;
		p.clock_at = GetCurrentTransactionStartTimestamp();
	}
	if (!fn_registry_flow_visible(cfg->flow_id, &unfilled.start, &unfilled.end)) {
		/* the snapshot predates the flow (created or replaced since): it holds no fill
		 * of the sink, but every row of the source the query reads */
		FnTimeRange *everything = palloc(sizeof(FnTimeRange));

		*everything = want;
		p.read_sink = false;
		p.dirty = everything;
		p.ndirty = 1;
		return p;
	}
	rec = fn_record_read(cfg->flow_id, &nrec, &oldest);
	own = fn_marks_local_windows(cfg->flow_id, &nown);
	keys = fn_key_record_windows(cfg->flow_id, &nkeys); /* windows of key marks: dirty too */
	if (w == NULL) {
		/* window-less: any mark means the whole query, else the whole sink */
		p.read_sink = nrec + nown + nkeys == 0 && !p.clock && unfilled.start >= unfilled.end;
		p.dirty = &p.bounds;
		p.ndirty = p.read_sink ? 0 : 1;
		return p;
	}
	if (p.clock)
		clock = clock_windows(cfg, w, p.clock_at, &nclock);
	all = palloc(sizeof(FnTimeRange) * (nrec + nown + nkeys + nclock + 1));
	set = (FnDirtySet){all, &n, nrec + nown + nkeys + nclock + 1}; /* room for all: nothing coalesces */
	fn_dirty_add_all(set, rec, nrec);
	fn_dirty_add_all(set, own, nown);
	fn_dirty_add_all(set, keys, nkeys);
	fn_dirty_add_all(set, clock, nclock);
	/* 0: no expire_after, nothing frozen (not the line at 2000-01-01, time 0) */
	line = fn_expiry_start(cfg->expire_after, cfg->window.with_time_zone, cfg->timezone, w,
	                       GetCurrentTimestamp());
	lo = line != 0 ? Max(want.start, line) : want.start;
	if (fq->dimensions != NIL && fn_dimension_marks_pending()) {
		/* this transaction wrote to a dimension table: the windows of the fact rows
		 * that join the rows it changed are looked up only at its commit, so every
		 * window not frozen may differ from the sink (an over-read, never a miss) */
		n = 1;
		all[0] = (FnTimeRange){lo, want.end};
	}
	dirty = palloc(sizeof(FnTimeRange) * (n + 2));
	for (uint32 i = 0; i < n; i++) {
		FnTimeRange r = {Max(all[i].start, lo), Min(all[i].end, want.end)};

		if (r.start < r.end)
			dirty[p.ndirty++] = r;
	}
	/* windows a background backfill has not reached in this snapshot hold no fill (past
	 * expire_after too: the backfill fills those), merged in: the query part reads each
	 * range once */
	unfilled = (FnTimeRange){Max(unfilled.start, want.start), Min(unfilled.end, want.end)};
	if (unfilled.start < unfilled.end) {
		uint32 k = (uint32)p.ndirty;

		fn_dirty_add((FnDirtySet){dirty, &k, n + 2}, unfilled);
		p.ndirty = (int)k;
	}
	p.dirty = dirty;
	return p;
}

/*
 * flownode.read_flow(sink anyelement, "from" timestamptz, "to" timestamptz) RETURNS
 * SETOF anyelement: the flow's current answer, in the sink's row type (or in a read
 * view's: the query's columns only), for the windows overlapping [from, to) (NULL:
 * unbounded).
 */
Datum flownode_read_flow(PG_FUNCTION_ARGS) {
	bool subset;
	TaskConfig *cfg = flow_of_row_type(fcinfo, &subset);
	FnWindow *w = cfg->window.kind == FN_WINDOW_NONE ? NULL : fn_window_create(&cfg->window);
	FnTimeRange want = wanted_windows(fcinfo, cfg, w);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;
	FlowQuery *fq;
	FnReadPlan plan;

	/* Its sink and record are what the restore brought back, and nothing marked the
	 * writes since: the sink's clean windows are no answer (as flush_flow refuses). */
	if (!cfg->bound)
		ereport(
		    ERROR,
		    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		     errmsg("flow \"%s\" was restored and is not bound to its tables yet", cfg->flow_name),
		     errdetail("Until it is bound, writes to its source are not marked, so its sink may miss them."),
		     errhint("SELECT flownode.refresh_flow(%s) binds it and recomputes its windows.",
		             quote_literal_cstr(cfg->flow_name))));
	InitMaterializedSRF(fcinfo, 0);
	fq = fn_read_analyse(cfg);
	fn_read_check_caller(cfg, fq);
	plan = read_plan(cfg, fq, w, want);
	fn_read_run(cfg, fq, &plan, rsinfo->setResult, rsinfo->setDesc, subset);
	return (Datum)0;
}

/* The view's columns: the query's result, without the sink's hidden key columns
 * (query/hidden_keys.h); `*` when it has none. */
static char *visible_columns(TaskConfig *cfg) {
	FlowQuery *fq = fn_analyse_stored(cfg);
	StringInfoData s;

	if (fq->nvisible == list_length(fq->out_names))
		return "*";
	initStringInfo(&s);
	for (int i = 0; i < fq->nvisible; i++)
		appendStringInfo(&s, "%s%s", i ? ", " : "", quote_identifier(list_nth(fq->out_names, i)));
	return s.data;
}

/*
 * flownode.create_read_view(flow_name text, view_name text) RETURNS regclass:
 *   CREATE VIEW view_name WITH (security_invoker = true) AS
 *     SELECT * FROM flownode.read_flow(NULL::sink)
 * (the query's columns only, without hidden key columns, when the sink has them)
 * as the caller (a member of the flow's owner), and an AUTO dependency of the view on
 * the sink: DROP TABLE of the sink takes the view with it, as it takes the sink's
 * indexes (the view's rule still depends on the sink's columns and row type, so
 * ALTER TABLE of the sink treats it as any view over it), and on the extension.
 * drop_flow drops it too (fn_drop_read_views).
 */
Datum flownode_create_read_view(PG_FUNCTION_ARGS) {
	char *flow_name = fn_text_arg(fcinfo, 0, "flow_name");
	List *names = fn_string_to_qualified_name_list(fn_text_arg(fcinfo, 1, "view_name"));
	RangeVar *rv = makeRangeVarFromNameList(names);
	TaskConfig *cfg;
	ObjectAddress view, sink, extension;
	char *sql;

	PreventCommandDuringRecovery("create_read_view()");
	cfg = fn_load_task_config_by_name(flow_name, false);
	if (!has_privs_of_role(GetUserId(), cfg->owner))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("must be owner of flow \"%s\"", cfg->flow_name)));
	sql = psprintf(
	    "CREATE VIEW %s WITH (security_invoker = true) AS SELECT %s FROM flownode.read_flow(NULL::%s)",
	    NameListToQuotedString(names), visible_columns(cfg), fn_qualified_relname(cfg->sink_relid));
	/* as the caller, under its search_path: where CREATE VIEW would put it, with its
	 * privileges (CREATE on the schema), owned by it */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "flownode: creating the read view failed");
	SPI_finish();
	CommandCounterIncrement();
	ObjectAddressSet(view, RelationRelationId, RangeVarGetRelid(rv, NoLock, false));
	ObjectAddressSet(sink, RelationRelationId, cfg->sink_relid);
	ObjectAddressSet(extension, ExtensionRelationId, get_extension_oid("flownode", false));
	recordDependencyOn(&view, &sink, DEPENDENCY_AUTO);
	recordDependencyOn(&view, &extension, DEPENDENCY_AUTO); /* DROP EXTENSION takes it with the flows */
	CreateComments(view.objectId, RelationRelationId, 0,
	               psprintf("exact real-time read of flow %s (flownode.create_read_view)",
	                        quote_literal_cstr(cfg->flow_name)));
	PG_RETURN_OID(view.objectId);
}

void fn_drop_read_views(Oid sink_relid) {
	Oid types[1] = {OIDOID};
	Datum values[1] = {ObjectIdGetDatum(sink_relid)};
	MemoryContext caller = CurrentMemoryContext;
	List *views = NIL;
	ListCell *lc;

	/* the views that depend AUTO on the sink itself (create_read_view's mark; a view's
	 * own dependencies are its rule's, NORMAL) */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	if (SPI_execute_with_args(
	        "SELECT d.objid FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_class c ON c.oid = d.objid"
	        " WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass"
	        " AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass"
	        " AND d.refobjid = $1 AND d.refobjsubid = 0 AND d.deptype = 'a' AND c.relkind = 'v'"
	        " ORDER BY 1",
	        1, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading the read views of a sink failed");
	for (uint64 i = 0; i < SPI_processed; i++) {
		bool isnull;
		Oid oid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		MemoryContext spi = MemoryContextSwitchTo(caller);

		views = lappend_oid(views, oid);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	foreach (lc, views) {
		ObjectAddress view;
		char *name = fn_qualified_relname(lfirst_oid(lc));

		ObjectAddressSet(view, RelationRelationId, lfirst_oid(lc));
		performDeletion(&view, DROP_RESTRICT, 0);
		ereport(NOTICE, (errmsg("drop cascades to view %s", name)));
	}
}
