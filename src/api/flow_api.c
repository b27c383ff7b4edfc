/*
 * flow_api.c: the SQL API: create_flow, drop_flow, flush_flow, refresh_flow, and the
 * steering calls alter_flow, pause_flow, resume_flow (docs/reference.md).
 * Everything create_flow does happens in the caller's transaction, so a failure
 * leaves no flow, trigger, sink or worker behind; workers are started and stopped
 * only when that transaction commits.
 *
 * On a hot standby each of them fails at once (after its arguments are checked),
 * as PostgreSQL's own commands do there: PreventCommandDuringRecovery, SQLSTATE
 * 25006, "cannot execute flush_flow() during recovery". The catalog cannot change
 * there, and no worker can start before the promotion.
 */
#include "flownode.h"

#include "api/flow_api.h"
#include "api/flow_caps.h"
#include "api/read_flow.h"
#include "lifecycle/flow_binding.h"
#include "lifecycle/flow_removal.h"
#include "lifecycle/xact_hooks.h"
#include "marking/key_triggers.h"
#include "marking/source_triggers.h"
#include "pgutil/pg_util.h"
#include "query/flow_joins.h"
#include "query/flow_query.h"
#include "query/query_rewrite.h"
#include "record/run_history.h"
#include "refresh/extents.h"
#include "refresh/refresh_exec.h"
#include "refresh/sink_fill.h"
#include "registry/flow_chain.h"
#include "registry/flow_dimensions.h"
#include "registry/flow_registry.h"
#include "registry/sink_table.h"
#include "shmem/flow_slots.h"
#include "shmem/inflight.h"
#include "worker/launcher.h"
#include "worker/requests.h"

#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "pgtime.h"
#include "storage/lmgr.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/inval.h"
#include "utils/wait_event.h"
#include "utils/guc.h"
#include "access/relation.h"
#include "access/table.h"
#include "parser/parse_func.h"

PG_FUNCTION_INFO_V1(flownode_create_flow);
PG_FUNCTION_INFO_V1(flownode_drop_flow);
PG_FUNCTION_INFO_V1(flownode_flush_flow);
PG_FUNCTION_INFO_V1(flownode_refresh_flow);
PG_FUNCTION_INFO_V1(flownode_alter_flow);
PG_FUNCTION_INFO_V1(flownode_pause_flow);
PG_FUNCTION_INFO_V1(flownode_resume_flow);

/* A length in the largest unit that writes it whole: "100 milliseconds", "1 second". */
static char *duration_text(int64 usec) {
	long long n;

	if (usec % USECS_PER_SEC == 0) {
		n = usec / USECS_PER_SEC;
		return psprintf(ngettext("%lld second", "%lld seconds", n), n);
	}
	if (usec % 1000 == 0) {
		n = usec / 1000;
		return psprintf(ngettext("%lld millisecond", "%lld milliseconds", n), n);
	}
	n = usec;
	return psprintf(ngettext("%lld microsecond", "%lld microseconds", n), n);
}

void fn_check_flow_interval(const Interval *iv, const char *name, int64 min_usec) {
	if (fn_interval_usec(iv) <= 0 || iv->month < 0 || iv->day < 0 || iv->time < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("the value of %s must be a positive interval", name)));
	if (fn_interval_usec(iv) < min_usec)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("the value of %s must be at least %s", name, duration_text(min_usec))));
}

static Interval *interval_arg(FunctionCallInfo fcinfo, int argno, const char *name, int64 min_usec) {
	Interval *iv;

	if (PG_ARGISNULL(argno))
		return NULL;
	iv = PG_GETARG_INTERVAL_P(argno);
	fn_check_flow_interval(iv, name, min_usec);
	return iv;
}

static bool bool_arg(FunctionCallInfo fcinfo, int argno, const char *name) {
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
		        (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("argument %s must not be NULL", name)));
	return PG_GETARG_BOOL(argno);
}

static void check_owner(TaskConfig *cfg) {
	if (!has_privs_of_role(GetUserId(), cfg->owner))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("must be owner of flow \"%s\"", cfg->flow_name)));
}

/*
 * Without an index leading with the time column a refresh cannot find the rows of
 * its windows: it reads the whole source (once, for every dirty window at a time).
 * Not an error: a small table needs no index. The NOTICE gives the command.
 */
static void notice_missing_time_index(Oid source_relid, const FlowQuery *fq) {
	if (fq->window.kind == FN_WINDOW_NONE || fn_btree_index_leads_with(source_relid, fq->time_attnum))
		return;
	ereport(NOTICE, (errmsg("source table \"%s\" has no index on its time column \"%s\"",
	                        get_rel_name(source_relid), fq->time_column),
	                 errdetail("A refresh then reads the whole table to find the rows of its windows."),
	                 errhint("CREATE INDEX ON %s (%s);", fn_qualified_relname(source_relid),
	                         quote_identifier(fq->time_column))));
}

/*
 * The dimension tables of a query that joins (query/flow_joins.h): the creator needs
 * SELECT on each (the query reads it) and TRIGGER (flownode puts triggers on it), and
 * each is locked against writes, after the source, until the flow is created: a
 * write that commits before the fill's snapshot is in the fill, a later one finds
 * the triggers. The sink cannot be one of them.
 */
static void check_dimensions(const FlowQuery *fq) {
	ListCell *lc;

	foreach (lc, fq->dimensions) {
		Oid relid = ((FlowDimension *)lfirst(lc))->relid;
		FlowDimensionKind kind = ((FlowDimension *)lfirst(lc))->kind;

		/* what a view reads, it reads with its owner's rights; the query checks the rest */
		if (kind == FN_DIM_TABLE && pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			                errmsg("permission denied for table %s", get_rel_name(relid)),
			                errdetail("Creating a flow needs SELECT on every table its query reads.")));
		if (kind != FN_DIM_VIEW && pg_class_aclcheck(relid, GetUserId(), ACL_TRIGGER) != ACLCHECK_OK)
			ereport(
			    ERROR,
			    (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			     errmsg("permission denied for table %s", get_rel_name(relid)),
			     errdetail("Creating a flow needs TRIGGER on every table it joins, also through a view or "
			               "a subquery (writes to a dimension table are marked by a trigger).")));
	}
	foreach (lc, fq->dimensions)
		LockRelationOid(((FlowDimension *)lfirst(lc))->relid, ShareRowExclusiveLock);
}

static void check_sink_not_dimension(const FlowQuery *fq, Oid sink_relid) {
	if (list_member_oid(fn_dimension_relids(fq->dimensions), sink_relid))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("table \"%s\" is read by the flow query; it cannot be its sink",
		                       get_rel_name(sink_relid))));
}

/* A dimension whose join columns lead no index of the fact table: a write to it
 * marks every window (dimension_marks.c). Not an error; the NOTICE gives the
 * command. */
static void notice_missing_join_index(Oid source_relid, const FlowQuery *fq) {
	ListCell *lc, *lc2;

	foreach (lc, fq->dimensions) {
		FlowDimension *d = lfirst(lc);
		bool indexed = false;

		if (d->keys == NIL)
			continue; /* every write marks every window: fn_notice_every_write says so */
		foreach (lc2, d->keys)
			indexed |= fn_btree_index_leads_with(source_relid, ((FlowJoinKey *)lfirst(lc2))->fact_attnum);
		if (!indexed)
			ereport(
			    NOTICE,
			    (errmsg("fact table \"%s\" has no index on its join column \"%s\"",
			            get_rel_name(source_relid),
			            get_attname(source_relid, ((FlowJoinKey *)linitial(d->keys))->fact_attnum, false)),
			     errdetail("A write to dimension table \"%s\" then marks every window of the flow.",
			               get_rel_name(d->relid)),
			     errhint("CREATE INDEX ON %s (%s);", fn_qualified_relname(source_relid),
			             quote_identifier(get_attname(
			                 source_relid, ((FlowJoinKey *)linitial(d->keys))->fact_attnum, false)))));
	}
}

/* How the arguments are named in messages: create_flow's, or the clauses of the
 * CREATE FLOW statement flownode.execute ran. The hints are whole sentences, one per
 * way of naming them (gettext_noop: translated where they are raised). */
typedef struct ArgWords {
	const char *eval_interval; /* eval_interval, EVAL INTERVAL */
	const char *expire_after;
	const char *exists_hint;
	const char *single_hint;  /* a flow of one row needs eval_interval */
	const char *copy_hint;    /* a flow without aggregation and without a time column needs it */
	const char *grouped_hint; /* a GROUP BY without a time window needs it */
	const char *now_hint;     /* a query comparing with now() needs it */
} ArgWords;

static const ArgWords api_words = {
    "eval_interval",
    "expire_after",
    gettext_noop("Use or_replace => true to replace it, or if_not_exists => true to keep it."),
    gettext_noop("Pass eval_interval => '1 minute', for example."),
    gettext_noop(
        "Output the rows' time (a NOT NULL timestamp column), whose seconds become the flow's windows, "
        "or pass eval_interval => '1 minute'."),
    gettext_noop(
        "Group by date_bin(...), date_trunc(...) or flownode.time_bucket(...) over a timestamp column, or "
        "pass eval_interval => '1 minute'."),
    gettext_noop(
        "Pass eval_interval => '1 minute': each evaluation then also refreshes the windows whose rows "
        "entered or left the comparison since the one before.")};
static const ArgWords clause_words = {
    "EVAL INTERVAL",
    "EXPIRE AFTER",
    gettext_noop("Use CREATE OR REPLACE FLOW to replace it, or CREATE FLOW IF NOT EXISTS to keep it."),
    gettext_noop("Add EVAL INTERVAL '1 minute', for example."),
    gettext_noop(
        "Output the rows' time (a NOT NULL timestamp column), whose seconds become the flow's windows, "
        "or add EVAL INTERVAL '1 minute'."),
    gettext_noop("Group by date_bin(...), date_trunc(...) or flownode.time_bucket(...) over a timestamp "
                 "column, or add EVAL INTERVAL '1 minute'."),
    gettext_noop("Add EVAL INTERVAL '1 minute': each evaluation then also refreshes the windows whose rows "
                 "entered or left the comparison since the one before.")};

/* A flow without windows is recomputed whole at each evaluation after a change
 * (GreptimeDB's rule): it has no adaptive cadence, so it needs eval_interval. */
pg_noreturn static void window_less_needs_eval_interval(FlowQuery *fq, const ArgWords *w);
static void window_less_needs_eval_interval(FlowQuery *fq, const ArgWords *w) {
	if (fq->shape == FLOW_SHAPE_SINGLE)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("a flow whose query aggregates without GROUP BY needs %s", w->eval_interval),
		                errdetail("A flow of one row is recomputed whole at each evaluation after a change."),
		                errhint("%s", _(w->single_hint))));
	if (fq->shape == FLOW_SHAPE_COPY)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		         errmsg("a flow whose query outputs no NOT NULL timestamp column of its source needs %s",
		                w->eval_interval),
		         errdetail("A flow without windows is recomputed whole at each evaluation after a change."),
		         errhint("%s", _(w->copy_hint))));
	if (fq->window_in_key) /* the window inside a key: group by the window, output the key */
		ereport(
		    ERROR,
		    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		     errmsg("a flow whose query has no time window in its GROUP BY needs %s", w->eval_interval),
		     errdetail("A group key computed from a window, such as date_trunc('day', ts)::date, is not a "
		               "window itself."),
		     errhint("Group by the window and output the expression of it: SELECT date_trunc('day', "
		             "ts)::date AS day ... GROUP BY date_trunc('day', ts). The sink keeps the window as a "
		             "hidden key column.")));
	ereport(ERROR,
	        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
	         errmsg("a flow whose query has no time window in its GROUP BY needs %s", w->eval_interval),
	         errdetail("A window-less flow is recomputed whole at each evaluation after a change."),
	         errhint("%s", _(w->grouped_hint))));
}

/* What the creator gave the flow, as its row keeps it (a flow's or a waiting flow's). */
static FlowSettings settings_of(const CreateFlowArgs *a, const char *timezone, TimestampTz created_at) {
	FlowSettings s;

	s.flow_name = a->flow_name;
	s.owner = GetUserId();
	s.user_query = a->query;
	s.timezone = timezone;
	s.eval_interval = a->eval_interval;
	s.expire_after = a->expire_after;
	s.comment = a->comment;
	s.dialect = a->dialect;
	s.options = a->options;
	s.created_at = created_at;
	return s;
}

/*
 * A flow whose source table does not exist yet (defer_on_missing_source): its row
 * keeps the text, the sink's name and the search_path they are read with, until a
 * table of that name is created (greptime/gt_waiting.c starts it then).
 */
static int64 create_waiting_flow(const CreateFlowArgs *a, const char *timezone, TimestampTz created_at,
                                 RangeVar *source) {
	WaitingFlowDefinition def;
	int64 flow_id;

	def.settings = settings_of(a, timezone, created_at);
	def.sink_name = a->sink_name;
	def.search_path = GetConfigOption("search_path", false, false);
	flow_id = fn_registry_insert_waiting_flow(&def);
	ereport(NOTICE, (errmsg("flow \"%s\" waits for its source table \"%s\"", a->flow_name,
	                        NameListToString(list_make1(makeString(source->relname)))),
	                 errdetail("It starts when a table of that name is created.")));
	return flow_id;
}

/* create_flow's backfill argument: true for 'background' (the worker fills the sink
 * after create_flow returned), false for 'now' (create_flow fills it). A library
 * called through 0.1's create_flow, which has no such argument, fills now. */
static bool background_arg(FunctionCallInfo fcinfo, int argno) {
	char *v;

	if (PG_NARGS() <= argno)
		return false;
	if (PG_ARGISNULL(argno))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("backfill must not be NULL")));
	v = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (strcmp(v, "background") != 0 && strcmp(v, "now") != 0)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("backfill must be 'now' or 'background'"),
		         errdetail("'now' fills the sink in create_flow's transaction; 'background' returns at once "
		                   "and lets the flow's worker fill it, oldest first, in chunks.")));
	return strcmp(v, "background") == 0;
}

static int creating_depth = 0;

bool fn_creating_flow(void) {
	return creating_depth > 0;
}

static int64 create_flow(const CreateFlowArgs *a, bool *waiting);

int64 fn_create_flow(const CreateFlowArgs *a, bool *waiting) {
	volatile int64 flow_id = 0;

	creating_depth++;
	PG_TRY();
	{ flow_id = create_flow(a, waiting); }
	PG_FINALLY();
	{ creating_depth--; }
	PG_END_TRY();
	return flow_id;
}

/* Phase 1, validate: the arguments, and a transaction create_flow can run in. */
static void validate_create(const CreateFlowArgs *a) {
	PreventCommandDuringRecovery("create_flow()");
	fn_check_catalog_version();
	if (a->if_not_exists && a->or_replace)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("if_not_exists and or_replace cannot both be true")));
	if (a->eval_interval != NULL)
		fn_check_flow_interval(a->eval_interval, "eval_interval", MIN_EVAL_INTERVAL_USEC);
	if (a->expire_after != NULL)
		fn_check_flow_interval(a->expire_after, "expire_after", 1);
	fn_check_preloaded();
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
		        (errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
		         errmsg("create_flow must run in a READ COMMITTED transaction"),
		         errdetail("It fills the sink from a snapshot taken after it locked the source, so that "
		                   "no concurrent write is missed.")));
}

/*
 * Phase 2, replace: a flow of the same name is removed when it is replaced (or_replace)
 * or is the waiting flow that starts now; *created_at keeps its creation time. Returns
 * its id when if_not_exists keeps it instead (nothing more to do), else 0.
 */
static int64 replace_existing(const CreateFlowArgs *a, const ArgWords *w, TimestampTz *created_at) {
	TaskConfig *existing = fn_load_task_config_by_name(a->flow_name, true);

	*created_at = 0;
	if (existing != NULL && a->start_waiting_flow_id > 0 && existing->flow_id == a->start_waiting_flow_id) {
		/* a waiting flow starts: it keeps its id and its creation time */
		*created_at = existing->created_at;
		fn_remove_flow(existing);
		CommandCounterIncrement();
	} else if (existing != NULL) {
		if (a->if_not_exists) {
			ereport(NOTICE, (errcode(ERRCODE_DUPLICATE_OBJECT),
			                 errmsg("flow \"%s\" already exists, skipping", a->flow_name)));
			return existing->flow_id;
		}
		if (!a->or_replace)
			ereport(ERROR,
			        (errcode(ERRCODE_DUPLICATE_OBJECT), errmsg("flow \"%s\" already exists", a->flow_name),
			         errhint("%s", _(w->exists_hint))));
		check_owner(existing);
		*created_at = existing->created_at; /* replaced: created then, updated now */
		fn_remove_flow(existing);
		CommandCounterIncrement();
	} else if (a->start_waiting_flow_id > 0)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
		                errmsg("flow \"%s\" no longer waits for its source", a->flow_name)));
	/* a waiting flow that starts was counted when it was created; one replaced is
	 * gone from the count already */
	if (a->start_waiting_flow_id == 0)
		fn_check_flow_caps(GetUserId());
	return 0;
}

/* Phase 3, analyse: the query read, and what its shape asks of the arguments. */
static FlowQuery *analyse_query(const CreateFlowArgs *a, const char *timezone, const ArgWords *w) {
	FlowQuery *fq = fn_analyze_flow_query_read(a->query, timezone, a->reading, &a->origin);

	if (fq->window.kind == FN_WINDOW_NONE && a->eval_interval == NULL)
		window_less_needs_eval_interval(fq, w);
	if (fq->now_preds != NIL && a->eval_interval == NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		         errmsg("a flow whose query compares its time column with now() needs %s", w->eval_interval),
		         errdetail("now() in a flow is the scheduled time of each evaluation (multiples of %s "
		                   "since the Unix epoch), as in GreptimeDB.",
		                   w->eval_interval),
		         errhint("%s", _(w->now_hint))));
	if (fq->window.kind == FN_WINDOW_NONE && a->expire_after != NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		         errmsg("a flow whose query has no time window cannot have %s", w->expire_after),
		         errhint(fq->shape == FLOW_SHAPE_COPY
		                     ? "A flow without aggregation has windows when it outputs a NOT NULL "
		                       "timestamp column of its source."
		                     : "Group by date_bin(...), date_trunc(...) or flownode.time_bucket(...) over a "
		                       "timestamp column.")));
	return fq;
}

/*
 * Phase 4, check privileges and lock: SELECT and TRIGGER on the source and on every
 * table it joins, which are locked against writes from here on (writers wait, and
 * see the triggers once this transaction commits).
 */
static void check_and_lock_tables(const FlowQuery *fq) {
	Oid source_relid = fq->source_relid;

	if (pg_class_aclcheck(source_relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied for table %s", get_rel_name(source_relid)),
		                errdetail("Creating a flow needs SELECT on its source table.")));
	if (pg_class_aclcheck(source_relid, GetUserId(), ACL_TRIGGER) != ACLCHECK_OK)
		ereport(ERROR,
		        (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		         errmsg("permission denied for table %s", get_rel_name(source_relid)),
		         errdetail("Creating a flow needs TRIGGER on its source table (its writes are marked by a "
		                   "trigger).")));
	LockRelationOid(source_relid, ShareRowExclusiveLock);
	check_dimensions(fq);
}

/* Phase 5, the sink: created or checked, and neither a table the query reads, another
 * flow's sink, nor a loop back into the flow's own source. */
static Oid prepare_sink(const CreateFlowArgs *a, FlowQuery *fq, bool *sink_is_new) {
	Oid sink_relid = fn_prepare_sink(a->sink_name, fq, fq->source_relid, sink_is_new);

	check_sink_not_dimension(fq, sink_relid);
	if (fn_registry_is_sink(sink_relid))
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		         errmsg("table \"%s\" is already the sink of another flow", get_rel_name(sink_relid))));
	fn_check_no_cycle(a->flow_name, fq->source_relid, sink_relid);
	return sink_relid;
}

/*
 * Phase 6, register: the query stored with every name schema-qualified, checked to
 * read back (def->fq: the analysis the fill runs), and the flow's row inserted.
 */
static int64 register_flow(const CreateFlowArgs *a, const FlowQuery *fq, const char *timezone,
                           TimestampTz created_at, Oid sink_relid, FlowDefinition *def) {
	int nest = fn_pin_deparse_settings(timezone);

	def->stored_query = fn_deparse_query(fq->as_written);
	def->fq = fn_analyze_flow_query(def->stored_query, timezone);
	fn_unpin_settings(nest);
	def->settings = settings_of(a, timezone, created_at);
	def->sink_relid = sink_relid;
	def->window_text = fq->window_text;
	def->flow_id = a->start_waiting_flow_id;
	return fn_registry_insert_flow(def);
}

/* Phase 7, install: the triggers, on every partition too (which locks them against
 * writes) and on the tables it joins; the flow's shared memory claimed now, so that
 * flownode.max_flows fails here; its worker started when this transaction commits. */
static FlowSlot *install_flow(int64 flow_id, Oid source_relid, const FlowQuery *stored) {
	FlowSlot *slot;

	CommandCounterIncrement();
	fn_sync_marking_triggers(source_relid);
	fn_rebind_dimensions(flow_id, stored->dimensions); /* recorded, their triggers put in place */
	slot = fn_acquire_slot(MyDatabaseId, fn_catalog_relid(false), flow_id, true);
	fn_slot_reserve(slot); /* until this transaction ends */
	fn_on_commit_start_worker(flow_id, GetUserId());
	return slot;
}

/*
 * Phase 8, fill: the sink filled from what the source holds now, or the worker left
 * to fill it (backfill => 'background'). A query comparing its time column with now()
 * is evaluated at this moment's scheduled time, which the flow's clock then holds
 * (the worker marks the windows that change from there).
 */
static void fill_sink(const CreateFlowArgs *a, int64 flow_id, FlowQuery *stored, bool clocked,
                      bool sink_is_new, FlowSlot *slot) {
	TimestampTz clock_at = clocked ? fn_scheduled_time(GetCurrentTimestamp(), a->eval_interval) : 0;

	if (a->background)
		fn_plan_backfill(fn_load_task_config(flow_id, false), stored, sink_is_new);
	else if (!a->no_fill || !sink_is_new) { /* no_fill: windows reach the sink when written or refreshed */
		TimestampTz start = GetCurrentTimestamp();
		int64 rows = fn_fill_now(fn_load_task_config(flow_id, false), stored, sink_is_new, clock_at);
		TimestampTz end = GetCurrentTimestamp();

		if (end - start >= FILL_NOTICE_USEC)
			ereport(NOTICE, (errmsg("flow \"%s\": sink filled with " INT64_FORMAT " rows in %.1f s",
			                        a->flow_name, rows, fn_usec_to_sec(end - start))));
		/* the flows view shows the fill as the flow's first run (the slot is this
		 * transaction's until it commits, and freed if it aborts) */
		fn_slot_note_fill(slot, start, end, rows);
		fn_history_write(&(FnRunRecord){.flow_id = flow_id,
		                                .kind = FN_RUN_FILL,
		                                .start = start,
		                                .end = end,
		                                .windows = -1,
		                                .rows_read = -1,
		                                .rows_written = rows});
	}
	if (clocked)
		fn_registry_clock_set(flow_id, clock_at);
}

static int64 create_flow(const CreateFlowArgs *a, bool *waiting) {
	const char *timezone = a->timezone ? a->timezone : pg_get_timezone_name(session_timezone);
	const ArgWords *w = a->clauses ? &clause_words : &api_words;
	TimestampTz created_at;
	FlowQuery *fq;
	FlowDefinition def;
	bool sink_is_new = false;
	Oid sink_relid;
	int64 flow_id;
	FlowSlot *slot;

	*waiting = false;
	validate_create(a);
	flow_id = replace_existing(a, w, &created_at);
	if (flow_id != 0)
		return flow_id; /* if_not_exists: the flow there is kept */
	if (a->defer_on_missing_source) {
		RangeVar *source = fn_flow_query_source(a->query, &a->origin);

		if (source != NULL && !OidIsValid(RangeVarGetRelid(source, NoLock, true))) {
			*waiting = true;
			return create_waiting_flow(a, timezone, created_at, source);
		}
	}
	fq = analyse_query(a, timezone, w);
	check_and_lock_tables(fq);
	sink_relid = prepare_sink(a, fq, &sink_is_new);
	flow_id = register_flow(a, fq, timezone, created_at, sink_relid, &def);
	slot = install_flow(flow_id, fq->source_relid, def.fq);
	if (sink_is_new)
		fn_key_sink_index(flow_id, fq->source_relid, sink_relid, def.fq);
	fill_sink(a, flow_id, def.fq, fq->now_preds != NIL, sink_is_new, slot);
	notice_missing_time_index(fq->source_relid, fq);
	notice_missing_join_index(fq->source_relid, fq);
	fn_notice_every_write(fq->query, fq->source_rtindex, fq->dimensions);
	return flow_id;
}

Datum flownode_create_flow(PG_FUNCTION_ARGS) {
	CreateFlowArgs a;
	bool waiting;

	memset(&a, 0, sizeof(a));
	a.flow_name = fn_text_arg(fcinfo, 0, "flow_name");
	a.sink_name = fn_text_arg(fcinfo, 1, "sink_table");
	a.query = fn_text_arg(fcinfo, 2, "query");
	a.eval_interval = interval_arg(fcinfo, 3, "eval_interval", MIN_EVAL_INTERVAL_USEC);
	a.expire_after = interval_arg(fcinfo, 4, "expire_after", 1);
	a.comment = PG_ARGISNULL(5) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(5));
	a.if_not_exists = bool_arg(fcinfo, 6, "if_not_exists");
	a.or_replace = bool_arg(fcinfo, 7, "or_replace");
	a.dialect = FLOW_DIALECT_POSTGRES;
	a.background = background_arg(fcinfo, 8);
	PG_RETURN_INT64(fn_create_flow(&a, &waiting));
}

void fn_drop_flow(const char *flow_name, bool if_exists) {
	TaskConfig *cfg;

	PreventCommandDuringRecovery("drop_flow()");
	fn_check_catalog_version();
	cfg = fn_load_task_config_by_name(flow_name, true);
	if (cfg == NULL) {
		if (!if_exists)
			ereport(ERROR,
			        (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("flow \"%s\" does not exist", flow_name)));
		ereport(NOTICE, (errmsg("flow \"%s\" does not exist, skipping", flow_name)));
		return;
	}
	check_owner(cfg);
	fn_remove_flow(cfg);
	fn_drop_read_views(cfg->sink_relid); /* they read nothing without the flow */
}

Datum flownode_drop_flow(PG_FUNCTION_ARGS) {
	char *flow_name = fn_text_arg(fcinfo, 0, "flow_name");
	bool if_exists = bool_arg(fcinfo, 1, "if_exists");

	fn_drop_flow(flow_name, if_exists);
	PG_RETURN_VOID();
}

/* A refresh needs these locks; waiting for it while holding a conflicting one would hang. */
static void check_no_conflicting_locks(TaskConfig *cfg, FlowSlotRequest kind) {
	Relation src = try_relation_open(cfg->source_relid, NoLock);
	Relation sink = try_relation_open(cfg->sink_relid, NoLock);
	bool conflict = false;

	if (src) {
		/* a partition truncated, detached or dropped in this transaction too */
		List *tree = src->rd_rel->relkind == RELKIND_PARTITIONED_TABLE
		                 ? find_all_inheritors(cfg->source_relid, NoLock, NULL)
		                 : list_make1_oid(cfg->source_relid);
		ListCell *lc;

		foreach (lc, tree) {
			LOCKTAG tag;

			SET_LOCKTAG_RELATION(tag, MyDatabaseId, lfirst_oid(lc));
			conflict |= fn_lock_held_by_me(&tag, AccessExclusiveLock);
		}
		relation_close(src, NoLock);
	}
	if (sink) {
		conflict |= CheckRelationLockedByMe(sink, ShareLock, true);
		relation_close(sink, NoLock);
	}
	if (conflict)
		ereport(
		    ERROR,
		    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		     kind == FN_REQUEST_FLUSH
		         ? errmsg("cannot flush flow \"%s\" while this transaction holds a lock its refresh needs",
		                  cfg->flow_name)
		         : errmsg("cannot refresh flow \"%s\" while this transaction holds a lock its refresh needs",
		                  cfg->flow_name),
		     errhint("Commit the transaction that locked or truncated the source or sink first.")));
}

/* What the worker needs to serve a flush or refresh of the flow without waiting for
 * the caller: the flow named and, with cascade, every flow it reads from. */
static void check_servable(TaskConfig *cfg, FlowSlotRequest kind) {
	if (cfg->paused)
		fn_request_paused_error(cfg, kind);
	/* the worker follows the committed settings, and writes the catalog row (a
	 * backfill's progress) this transaction holds */
	if (fn_flow_changed_here(cfg->flow_id) && !fn_flow_created_here(cfg->flow_id))
		ereport(
		    ERROR,
		    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		     kind == FN_REQUEST_FLUSH
		         ? errmsg("cannot flush flow \"%s\" in the transaction that altered it", cfg->flow_name)
		         : errmsg("cannot refresh flow \"%s\" in the transaction that altered it", cfg->flow_name),
		     errhint("Commit the alter_flow, pause_flow or resume_flow first.")));
	if (!fn_flow_created_here(cfg->flow_id)) /* that one is answered without its worker */
		check_no_conflicting_locks(cfg, kind);
}

/* The flow a flush or refresh asks for, checked: the caller may ask, and the worker
 * can serve it without waiting for the caller. */
static TaskConfig *requested_flow(const char *flow_name, Oid *catalog, FlowSlotRequest kind) {
	TaskConfig *cfg;

	PreventCommandDuringRecovery(kind == FN_REQUEST_FLUSH ? "flush_flow()" : "refresh_flow()");

	*catalog = fn_current_catalog_relid();
	fn_check_preloaded();
	cfg = fn_load_task_config_by_name(flow_name, false);
	check_owner(cfg);
	if (cfg->waiting)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("flow \"%s\" is waiting for its source table", flow_name),
		                errdetail("Its query reads a table that does not exist yet: %s", cfg->user_query),
		                errhint("It starts when a table of that name is created.")));
	check_servable(cfg, kind);
	return cfg;
}

/* A flush or refresh in the transaction that created the flow: create_flow has just
 * filled the sink (0 windows), unless its worker is to fill it after the commit. */
static int64 created_here_flush(TaskConfig *cfg, FlowSlotRequest kind) {
	if (cfg->backfilling)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                kind == FN_REQUEST_FLUSH
		                    ? errmsg("cannot flush flow \"%s\" in the transaction that created it "
		                             "with backfill => 'background'",
		                             cfg->flow_name)
		                    : errmsg("cannot refresh flow \"%s\" in the transaction that created it "
		                             "with backfill => 'background'",
		                             cfg->flow_name),
		                errhint("Commit first: its worker fills the sink once the flow is committed.")));
	return 0;
}

/* One flow's flush: every change committed before the call is in its sink when it
 * returns; the windows refreshed. */
static int64 flush_one(TaskConfig *cfg, Oid catalog) {
	FnTimeRange none = {0, 0};

	if (!cfg->bound)
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("flow \"%s\" was restored and is not bound to its tables yet", cfg->flow_name),
		         errdetail("Until it is bound, writes to its source are not marked and it has no worker."),
		         errhint("SELECT flownode.refresh_flow(%s) binds it and recomputes its windows.",
		                 quote_literal_cstr(cfg->flow_name))));
	if (fn_flow_created_here(cfg->flow_id))
		return created_here_flush(cfg, FN_REQUEST_FLUSH);
	return fn_request_flow_work(cfg, catalog, FN_REQUEST_FLUSH, none);
}

TaskConfig *fn_flow_to_flush(const char *flow_name) {
	Oid catalog;

	return requested_flow(flow_name, &catalog, FN_REQUEST_FLUSH);
}

int64 fn_flush_flow(const char *flow_name) {
	Oid catalog;
	TaskConfig *cfg = requested_flow(flow_name, &catalog, FN_REQUEST_FLUSH);

	return flush_one(cfg, catalog);
}

/*
 * flush_flow(flow_name, cascade => true): a chain of flows flushed bottom up. Each
 * flow it reads from, directly or through others, is flushed before the flows that
 * read it, so each flush finds the windows the flush below it marked (the refresh
 * that wrote its source committed, and published its marks, before that flush
 * answered). Every flow of the chain is checked first: nothing is flushed unless
 * all of them can be. Returns the windows refreshed by all of them.
 */
int64 fn_flush_flow_cascade(const char *flow_name) {
	Oid catalog;
	TaskConfig *top = requested_flow(flow_name, &catalog, FN_REQUEST_FLUSH);
	List *order = fn_flows_to_flush(top);
	ListCell *lc;
	int64 windows = 0;

	foreach (lc, order) {
		TaskConfig *cfg = lfirst(lc);

		if (cfg->flow_id == top->flow_id)
			continue; /* checked by requested_flow */
		if (!has_privs_of_role(GetUserId(), cfg->owner))
			ereport(ERROR,
			        (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			         errmsg("must be owner of flow \"%s\" to flush flow \"%s\" with cascade", cfg->flow_name,
			                top->flow_name),
			         errdetail("Flow \"%s\" reads, directly or through other flows, the sink of flow \"%s\".",
			                   top->flow_name, cfg->flow_name),
			         errhint("Flush \"%s\" without cascade, or as a member of the role owning every flow "
			                 "it reads from.",
			                 top->flow_name)));
		check_servable(cfg, FN_REQUEST_FLUSH);
	}
	foreach (lc, order)
		windows += flush_one(lfirst(lc), catalog);
	return windows;
}

/* flush_flow(flow_name) and flush_flow(flow_name, cascade) */
Datum flownode_flush_flow(PG_FUNCTION_ARGS) {
	char *flow_name = fn_text_arg(fcinfo, 0, "flow_name");

	if (PG_NARGS() > 1 && bool_arg(fcinfo, 1, "cascade"))
		PG_RETURN_INT64(fn_flush_flow_cascade(flow_name));
	PG_RETURN_INT64(fn_flush_flow(flow_name));
}

/* A refresh_flow bound: a timestamptz, as the flow's column holds it (a timestamp
 * column holds the flow's local time); NULL or infinite: unbounded, i.e. every
 * finite time (a row at +-infinity belongs to no window). */
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

/*
 * A restored flow not bound yet (lifecycle/flow_binding.c): bound in this
 * transaction, with its source locked against writes, then the range recomputed
 * here, since its worker starts only at commit. A fresh snapshot taken after the
 * lock sees every write committed before (writes made while it was unbound were
 * not marked: this is their repair); the triggers mark every later one; the
 * record's windows outside the range wait for the worker. Returns what the
 * worker's refresh_flow returns.
 */
static int64 bind_and_refresh(TaskConfig *cfg, FnTimeRange want) {
	int64 windows;
	TimestampTz clock_at;

	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
		        (errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
		         errmsg("refresh_flow must run in a READ COMMITTED transaction to bind restored flow \"%s\"",
		                cfg->flow_name),
		         errdetail("It recomputes the windows from a snapshot taken after it locked the source, so "
		                   "that no write is missed.")));
	fn_bind_flow(cfg);
	cfg = fn_load_task_config(cfg->flow_id, false);
	windows = fn_refresh_window_count(cfg, fn_refresh_extent(cfg, want));
	/* a flow with a clock: at this moment's scheduled time, without moving the clock,
	 * as the worker's refresh_flow (its first evaluation marks from the clock) */
	if (cfg->eval_interval != NULL && cfg->window.kind != FN_WINDOW_NONE &&
	    fn_registry_clock_get(cfg->flow_id, &clock_at))
		clock_at = fn_scheduled_time(GetCurrentTimestamp(), cfg->eval_interval);
	else
		clock_at = 0;
	(void)fn_refresh_run(
	    cfg, &(FnRefreshRequest){.ranges = &want,
	                             .nranges = 1,
	                             .removals = true, /* a repair: any group there may have vanished */
	                             .windows = PG_UINT64_MAX,
	                             .rows = PG_UINT64_MAX,
	                             .clock_at = clock_at});
	return windows;
}

/*
 * refresh_flow(flow_name, from, to): recomputes every window of the flow that
 * overlaps [from, to) (NULL: unbounded), windows past expire_after included: the
 * repair after triggers were disabled, after a restore, or after any doubt. Served
 * by the flow's worker, as flush_flow is, with the same guarantees.
 */
Datum flownode_refresh_flow(PG_FUNCTION_ARGS) {
	Oid catalog;
	TaskConfig *cfg = requested_flow(fn_text_arg(fcinfo, 0, "flow_name"), &catalog, FN_REQUEST_REPAIR);
	FnTimeRange want = {bound_arg(fcinfo, 1, cfg, false), bound_arg(fcinfo, 2, cfg, true)};

	if (want.start >= want.end)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("refresh_flow needs \"from\" before \"to\"")));
	if (cfg->window.kind != FN_WINDOW_NONE) {
		FnWindow *w = fn_window_create(&cfg->window);

		/* whole windows: from the start of the one holding `from` to the end of the
		 * one holding the last instant before `to` */
		if (want.start != MIN_TIMESTAMP)
			want.start = fn_window_of(w, want.start).start;
		if (want.end != DT_NOEND)
			want.end = fn_window_of(w, want.end - 1).end;
	} else
		want = (FnTimeRange){MIN_TIMESTAMP, DT_NOEND};
	if (!cfg->bound)
		PG_RETURN_INT64(bind_and_refresh(cfg, want));
	if (fn_flow_created_here(cfg->flow_id))
		PG_RETURN_INT64(created_here_flush(cfg, FN_REQUEST_REPAIR));
	PG_RETURN_INT64(fn_request_flow_work(cfg, catalog, FN_REQUEST_REPAIR, want));
}

/* ---- steering: alter_flow, pause_flow, resume_flow ---- */

static void both_error(const char *attr) {
	ereport(ERROR,
	        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
	         errmsg("arguments %s and reset_%s cannot both be given", attr, attr),
	         errhint("Pass %s => ... to set it, or reset_%s => true to set it back to none.", attr, attr)));
}

/*
 * The flow a steering call names, locked against other steering calls and drops
 * (fn_lock_flow), read again once locked, and the caller's. `mode`:
 * ShareUpdateExclusiveLock lets a refresh in flight run on (it reads the settings it
 * started with); pause_flow takes AccessExclusiveLock, which waits for it and keeps
 * the next from starting until the pause commits: from then on nothing is refreshed.
 */
static TaskConfig *steered_flow(const char *flow_name, const char *call, LOCKMODE mode) {
	TaskConfig *cfg;

	PreventCommandDuringRecovery(call);
	(void)fn_catalog_relid(false);
	cfg = fn_load_task_config_by_name(flow_name, false);
	check_owner(cfg);
	fn_lock_flow(cfg->flow_id, mode);
	cfg = fn_load_task_config(cfg->flow_id, true);
	if (cfg == NULL) /* dropped (or renamed) while we waited: as if it never was */
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("flow \"%s\" does not exist", flow_name)));
	return cfg;
}

/*
 * alter_flow(flow_name, eval_interval, expire_after, comment, new_name,
 * reset_eval_interval, reset_expire_after, reset_comment): changes what is named and
 * nothing else; the flow keeps its id, its sink and its pending work. A reset_*
 * argument sets that attribute back to none (adaptive, never expire, no comment).
 * The worker reads the settings again when the transaction commits: a new
 * eval_interval is its cadence from then on, a new expire_after applies from its
 * next evaluation.
 */
Datum flownode_alter_flow(PG_FUNCTION_ARGS) {
	char *flow_name = fn_text_arg(fcinfo, 0, "flow_name");
	Interval *eval_interval = interval_arg(fcinfo, 1, "eval_interval", MIN_EVAL_INTERVAL_USEC);
	Interval *expire_after = interval_arg(fcinfo, 2, "expire_after", 1);
	char *comment = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));
	char *new_name = PG_ARGISNULL(4) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(4));
	bool reset_eval = bool_arg(fcinfo, 5, "reset_eval_interval");
	bool reset_expire = bool_arg(fcinfo, 6, "reset_expire_after");
	bool reset_comment = bool_arg(fcinfo, 7, "reset_comment");
	FlowChanges ch = {0};
	TaskConfig *cfg;

	if (eval_interval != NULL && reset_eval)
		both_error("eval_interval");
	if (expire_after != NULL && reset_expire)
		both_error("expire_after");
	if (comment != NULL && reset_comment)
		both_error("comment");
	if (new_name != NULL && new_name[0] == '\0')
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("new_name must not be empty")));
	ch.set_eval_interval = eval_interval != NULL || reset_eval;
	ch.eval_interval = eval_interval;
	ch.set_expire_after = expire_after != NULL || reset_expire;
	ch.expire_after = expire_after;
	ch.set_comment = comment != NULL || reset_comment;
	ch.comment = comment;
	ch.new_name = new_name;
	if (!ch.set_eval_interval && !ch.set_expire_after && !ch.set_comment && new_name == NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("alter_flow needs something to change"),
		         errhint("Name at least one of eval_interval, expire_after, comment, new_name, "
		                 "reset_eval_interval, reset_expire_after or reset_comment.")));

	cfg = steered_flow(flow_name, "alter_flow()", ShareUpdateExclusiveLock);
	if (cfg->window.kind == FN_WINDOW_NONE && reset_eval)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("flow \"%s\" has no time window in its GROUP BY, so it needs an eval_interval",
		                       cfg->flow_name)));
	if (cfg->window.kind == FN_WINDOW_NONE && expire_after != NULL)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("expire_after needs a time window in the flow query's GROUP BY")));
	if (new_name != NULL && strcmp(new_name, cfg->flow_name) != 0 &&
	    fn_load_task_config_by_name(new_name, true) != NULL)
		ereport(ERROR, (errcode(ERRCODE_DUPLICATE_OBJECT), errmsg("flow \"%s\" already exists", new_name),
		                errhint("Flow names are unique in a database: drop or rename that flow first.")));

	/* Writers cut their marks at the expiry line they know (their source's cached
	 * flows): wait for every transaction writing the source, as create_flow does, and
	 * let the next ones see the new line (the relcache invalidation), so that no
	 * write is cut at the old one after this commits. */
	if (ch.set_expire_after) {
		LockRelationOid(cfg->source_relid, ShareRowExclusiveLock);
		CacheInvalidateRelcacheByRelid(cfg->source_relid);
	}
	fn_registry_alter_flow(cfg->flow_id, &ch);
	fn_on_commit_config_changed(cfg->flow_id, cfg->paused);
	PG_RETURN_VOID();
}

/* pause_flow / resume_flow: the flow's paused flag, in the catalog (it survives a
 * restart) and, at commit, in its slot. */
static void set_paused(FunctionCallInfo fcinfo, bool pause) {
	char *flow_name = fn_text_arg(fcinfo, 0, "flow_name");
	TaskConfig *cfg = steered_flow(flow_name, pause ? "pause_flow()" : "resume_flow()",
	                               pause ? AccessExclusiveLock : ShareUpdateExclusiveLock);

	if (cfg->paused == pause) {
		if (pause)
			ereport(NOTICE, (errmsg("flow \"%s\" is already paused, skipping", cfg->flow_name)));
		else
			ereport(NOTICE, (errmsg("flow \"%s\" is not paused, skipping", cfg->flow_name)));
		return;
	}
	fn_registry_set_paused(cfg->flow_id, pause);
	fn_on_commit_config_changed(cfg->flow_id, pause);
}

/*
 * pause_flow(flow_name): from its commit on, the flow refreshes nothing (a refresh
 * in flight is waited for) while its writes are still marked and recorded, until
 * resume_flow; flush_flow and refresh_flow fail saying it is paused.
 */
Datum flownode_pause_flow(PG_FUNCTION_ARGS) {
	set_paused(fcinfo, true);
	PG_RETURN_VOID();
}

/* resume_flow(flow_name): the worker catches up at once on what was written meanwhile. */
Datum flownode_resume_flow(PG_FUNCTION_ARGS) {
	set_paused(fcinfo, false);
	PG_RETURN_VOID();
}
