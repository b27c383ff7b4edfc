/*
 * flow_api.c: the SQL API (DESIGN §1): create_flow, drop_flow, flush_flow and the
 * status function behind the flows view. Everything create_flow does happens in the
 * caller's transaction, so a failure leaves no flow, trigger, sink or worker behind;
 * workers are started and stopped only when that transaction commits.
 */
#include "flownode/flownode.h"

#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_extension.h"
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
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/inval.h"
#include "utils/wait_event.h"
#include "access/relation.h"
#include "access/table.h"
#include "parser/parse_func.h"

PG_FUNCTION_INFO_V1(flownode_create_flow);
PG_FUNCTION_INFO_V1(flownode_drop_flow);
PG_FUNCTION_INFO_V1(flownode_flush_flow);
PG_FUNCTION_INFO_V1(flownode_flow_status);

#define MIN_EVAL_INTERVAL_USEC 100000
#define WALK_CAP 100000

static Interval *interval_arg(FunctionCallInfo fcinfo, int argno, const char *name, int64 min_usec) {
	Interval *iv;

	if (PG_ARGISNULL(argno))
		return NULL;
	iv = PG_GETARG_INTERVAL_P(argno);
	if (fn_interval_usec(iv) <= 0 || iv->month < 0 || iv->day < 0 || iv->time < 0)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must be a positive interval", name)));
	if (fn_interval_usec(iv) < min_usec)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("%s must be at least 100 milliseconds", name)));
	return iv;
}

static bool bool_arg(FunctionCallInfo fcinfo, int argno, const char *name) {
	if (PG_ARGISNULL(argno))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not be NULL", name)));
	return PG_GETARG_BOOL(argno);
}

/* Runs catalog DML as the catalog's owner: users cannot write flownode.flow directly. */
static int64 catalog_exec(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls) {
	SpiAs scope;
	int64 result;
	int rc;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	rc = SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0);
	if (rc < 0)
		elog(ERROR, "flownode: catalog update failed: %s", SPI_result_code_string(rc));
	if (rc == SPI_OK_INSERT_RETURNING && SPI_processed == 1) {
		bool isnull;

		result = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	} else
		result = (int64)SPI_processed;
	fn_spi_end(&scope);
	return result;
}

static void check_owner(TaskConfig *cfg) {
	if (!has_privs_of_role(GetUserId(), cfg->owner))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("must be owner of flow \"%s\"", cfg->flow_name)));
}

/*
 * DROP TABLE (or DROP SCHEMA ... CASCADE, DROP OWNED) of a flow's source or sink
 * drops the flow too, with a NOTICE, as PostgreSQL does for dependent objects.
 * Called from the object-access hook while the table is being dropped: the source's
 * triggers go with the source; when only the sink goes, they are removed at
 * PRE_COMMIT if no other flow reads the source.
 */
void fn_drop_flows_of_relation(Oid relid) {
	List *flows = fn_load_flows_of_relation(relid);
	ListCell *lc;

	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		Oid types[1] = {INT8OID};
		Datum values[1] = {Int64GetDatum(cfg->flow_id)};

		ereport(NOTICE, (errmsg("drop cascades to flow \"%s\"", cfg->flow_name)));
		catalog_exec("DELETE FROM " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " WHERE flow_id = $1", 1, types,
		             values, NULL);
		catalog_exec("DELETE FROM " FLOWNODE_SCHEMA ".pending WHERE flow_id = $1", 1, types, values, NULL);
		if (cfg->source_relid != relid) {
			CacheInvalidateRelcacheByRelid(cfg->source_relid);
			fn_on_pre_commit_cleanup_triggers(cfg->source_relid);
		}
		fn_on_commit_drop_flow(cfg->flow_id);
	}
}

/* Removes a flow in the current transaction; its worker stops at commit. */
static void drop_flow_internal(TaskConfig *cfg) {
	Oid types[1] = {INT8OID};
	Datum values[1] = {Int64GetDatum(cfg->flow_id)};

	catalog_exec("DELETE FROM " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " WHERE flow_id = $1", 1, types, values,
	             NULL);
	catalog_exec("DELETE FROM " FLOWNODE_SCHEMA ".pending WHERE flow_id = $1", 1, types, values, NULL);
	fn_remove_triggers_if_unused(cfg->source_relid);
	if (OidIsValid(get_rel_namespace(cfg->source_relid)))
		CacheInvalidateRelcacheByRelid(cfg->source_relid);
	fn_on_commit_drop_flow(cfg->flow_id);
}

Datum flownode_create_flow(PG_FUNCTION_ARGS) {
	char *flow_name = fn_text_arg(fcinfo, 0, "flow_name");
	char *sink_name = fn_text_arg(fcinfo, 1, "sink_table");
	char *query = fn_text_arg(fcinfo, 2, "query");
	Interval *eval_interval = interval_arg(fcinfo, 3, "eval_interval", MIN_EVAL_INTERVAL_USEC);
	Interval *expire_after = interval_arg(fcinfo, 4, "expire_after", 1);
	char *comment = PG_ARGISNULL(5) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(5));
	bool if_not_exists = bool_arg(fcinfo, 6, "if_not_exists");
	bool or_replace = bool_arg(fcinfo, 7, "or_replace");
	const char *timezone = pg_get_timezone_name(session_timezone);
	TaskConfig *existing;
	FlowQuery *fq;
	bool sink_is_new = false;
	Oid source_relid, sink_relid;
	AclResult acl;
	char *stored_query;
	int nest;
	int64 flow_id;

	if (if_not_exists && or_replace)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("if_not_exists and or_replace cannot both be true")));
	(void)fn_registry_lock(); /* ERROR unless preloaded */
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
		        (errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
		         errmsg("create_flow must run in a READ COMMITTED transaction"),
		         errdetail("It fills the sink from a snapshot taken after it locked the source, so that "
		                   "no concurrent write is missed.")));

	existing = fn_load_task_config_by_name(flow_name, true);
	if (existing != NULL) {
		if (if_not_exists) {
			ereport(NOTICE, (errcode(ERRCODE_DUPLICATE_OBJECT),
			                 errmsg("flow \"%s\" already exists, skipping", flow_name)));
			PG_RETURN_INT64(existing->flow_id);
		}
		if (!or_replace)
			ereport(ERROR,
			        (errcode(ERRCODE_DUPLICATE_OBJECT), errmsg("flow \"%s\" already exists", flow_name),
			         errhint("Use or_replace => true to replace it, or if_not_exists => true to keep it.")));
		check_owner(existing);
		drop_flow_internal(existing);
		CommandCounterIncrement();
	}

	fq = fn_analyze_flow_query(query, timezone);
	source_relid = fq->source_relid;
	if (fq->window.kind == FN_WINDOW_NONE && eval_interval == NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		         errmsg("the flow query has no time window in its GROUP BY, so eval_interval is required"),
		         errhint("Group by date_bin(...) or date_trunc(...) over a timestamp column, or pass "
		                 "eval_interval => '1 minute': a window-less flow is recomputed whole at each "
		                 "evaluation after a change.")));
	if (fq->window.kind == FN_WINDOW_NONE && expire_after != NULL)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("expire_after needs a time window in the flow query's GROUP BY")));

	acl = pg_class_aclcheck(source_relid, GetUserId(), ACL_SELECT);
	if (acl != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied for table %s", get_rel_name(source_relid)),
		                errdetail("Creating a flow needs SELECT on its source table.")));
	acl = pg_class_aclcheck(source_relid, GetUserId(), ACL_TRIGGER);
	if (acl != ACLCHECK_OK)
		ereport(ERROR,
		        (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		         errmsg("permission denied for table %s", get_rel_name(source_relid)),
		         errdetail("Creating a flow needs TRIGGER on its source table (its writes are marked by a "
		                   "trigger).")));

	/* writers wait from here on, and see the trigger once we commit */
	LockRelationOid(source_relid, ShareRowExclusiveLock);
	sink_relid = fn_prepare_sink(sink_name, fq, source_relid, &sink_is_new);
	{
		Oid types[1] = {OIDOID};
		Datum values[1] = {ObjectIdGetDatum(sink_relid)};

		if (catalog_exec("SELECT 1 FROM " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " WHERE sink_table = $1", 1,
		                 types, values, NULL) > 0)
			ereport(ERROR,
			        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			         errmsg("table \"%s\" is already the sink of another flow", get_rel_name(sink_relid))));
	}

	/* store the query with every name schema-qualified, and check it reads back */
	nest = fn_pin_deparse_settings(timezone);
	stored_query = fn_deparse_query(fq->query);
	(void)fn_analyze_flow_query(stored_query, timezone);
	fn_unpin_settings(nest);

	{
		Oid types[18] = {TEXTOID, OIDOID,  OIDOID,      OIDOID,  NAMEOID,     INT2OID,
		                 TEXTOID, TEXTOID, INTERVALOID, INT8OID, TEXTOID,     TEXTOID,
		                 BOOLOID, TEXTOID, TEXTOID,     TEXTOID, INTERVALOID, INTERVALOID};
		Datum v[18];
		char n[19];
		bool win = fq->window.kind != FN_WINDOW_NONE;
		bool bin = fq->window.kind == FN_WINDOW_DATE_BIN;
		Interval *stride = palloc0(sizeof(Interval));

		memset(n, ' ', sizeof(n));
		n[18] = '\0';
		stride->time = fq->window.stride_time;
		stride->day = fq->window.stride_day;
		v[0] = CStringGetTextDatum(flow_name);
		v[1] = ObjectIdGetDatum(GetUserId());
		v[2] = ObjectIdGetDatum(source_relid);
		v[3] = ObjectIdGetDatum(sink_relid);
		v[4] = win ? DirectFunctionCall1(namein, CStringGetDatum(fq->time_column)) : (n[4] = 'n', 0);
		v[5] = win ? Int16GetDatum(fq->time_attnum) : (n[5] = 'n', 0);
		v[6] = win ? CStringGetTextDatum(fq->window_text) : (n[6] = 'n', 0);
		v[7] = win ? CStringGetTextDatum(bin ? "date_bin" : "date_trunc") : (n[7] = 'n', 0);
		v[8] = bin ? IntervalPGetDatum(stride) : (n[8] = 'n', 0);
		v[9] = bin ? Int64GetDatum(fq->window.origin) : (n[9] = 'n', 0);
		v[10] = (win && !bin) ? CStringGetTextDatum(fq->window.unit) : (n[10] = 'n', 0);
		v[11] = (win && !bin && fq->window.zone[0]) ? CStringGetTextDatum(fq->window.zone) : (n[11] = 'n', 0);
		v[12] = win ? BoolGetDatum(fq->window.with_time_zone) : (n[12] = 'n', 0);
		v[13] = CStringGetTextDatum(stored_query);
		v[14] = CStringGetTextDatum(query);
		v[15] = CStringGetTextDatum(timezone);
		v[16] = eval_interval ? IntervalPGetDatum(eval_interval) : (n[16] = 'n', 0);
		v[17] = expire_after ? IntervalPGetDatum(expire_after) : (n[17] = 'n', 0);
		flow_id = catalog_exec(
		    "INSERT INTO " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
		    " (flow_name, owner, source_table, sink_table, time_column, time_attnum, window_expr,"
		    " window_kind, window_stride, window_origin, window_unit, window_zone, with_time_zone,"
		    " query, user_query, timezone, eval_interval, expire_after)"
		    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
		    " $18) RETURNING flow_id",
		    18, types, v, n);
	}
	if (comment != NULL) {
		Oid types[2] = {TEXTOID, INT8OID};
		Datum values[2] = {CStringGetTextDatum(comment), Int64GetDatum(flow_id)};

		catalog_exec("UPDATE " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " SET comment = $1 WHERE flow_id = $2", 2,
		             types, values, NULL);
	}

	fn_install_source_triggers(source_relid, fq->window.kind != FN_WINDOW_NONE ? fq->time_attnum : 0);
	CommandCounterIncrement();

	/* claim the flow's shared memory now, so flownode.max_flows fails here */
	{
		FlowSlot *slot = fn_acquire_slot(MyDatabaseId, fn_catalog_relid(false), flow_id, true);

		LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
		slot->reserved_by = MyProcPid; /* until this transaction ends */
		LWLockRelease(fn_slot_lock(slot));
	}
	fn_on_commit_start_worker(flow_id, GetUserId());

	/* fill the sink from what the source holds now */
	(void)fn_execute_fill(fn_load_task_config(flow_id, false), sink_is_new);
	PG_RETURN_INT64(flow_id);
}

Datum flownode_drop_flow(PG_FUNCTION_ARGS) {
	char *flow_name = fn_text_arg(fcinfo, 0, "flow_name");
	bool if_exists = bool_arg(fcinfo, 1, "if_exists");
	TaskConfig *cfg;

	(void)fn_catalog_relid(false);
	cfg = fn_load_task_config_by_name(flow_name, true);
	if (cfg == NULL) {
		if (!if_exists)
			ereport(ERROR,
			        (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("flow \"%s\" does not exist", flow_name)));
		ereport(NOTICE, (errmsg("flow \"%s\" does not exist, skipping", flow_name)));
		PG_RETURN_VOID();
	}
	check_owner(cfg);
	drop_flow_internal(cfg);
	PG_RETURN_VOID();
}

/* A refresh needs these locks; waiting for it while holding a conflicting one would hang. */
static void check_no_conflicting_locks(TaskConfig *cfg) {
	Relation src = try_relation_open(cfg->source_relid, NoLock);
	Relation sink = try_relation_open(cfg->sink_relid, NoLock);
	bool conflict = false;

	if (src) {
		conflict |= CheckRelationLockedByMe(src, AccessExclusiveLock, false);
		relation_close(src, NoLock);
	}
	if (sink) {
		conflict |= CheckRelationLockedByMe(sink, ShareLock, true);
		relation_close(sink, NoLock);
	}
	if (conflict)
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("cannot flush flow \"%s\" while this transaction holds a lock its refresh needs",
		                cfg->flow_name),
		         errhint("Commit the transaction that locked or truncated the source or sink first.")));
}

Datum flownode_flush_flow(PG_FUNCTION_ARGS) {
	char *flow_name = fn_text_arg(fcinfo, 0, "flow_name");
	TaskConfig *cfg;
	Oid catalog;
	FlowSlot *slot;
	uint64 my_request;
	int64 windows = 0;
	bool failed = false;
	char error[FN_ERROR_LEN];
	bool started = false;
	TimestampTz wait_start;

	catalog = fn_catalog_relid(false);
	(void)fn_registry_lock();
	cfg = fn_load_task_config_by_name(flow_name, false);
	check_owner(cfg);
	check_no_conflicting_locks(cfg);
	if (cfg->created_here)
		PG_RETURN_INT64(0); /* create_flow filled the sink; its worker starts at commit */

	/* writers that committed before this call but have not yet published */
	fn_inflight_wait_all();

	slot = fn_acquire_slot(MyDatabaseId, catalog, cfg->flow_id, true);
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	my_request = ++slot->flush_requested;
	if (slot->worker_latch)
		SetLatch(slot->worker_latch);
	LWLockRelease(fn_slot_lock(slot));

	wait_start = GetCurrentTimestamp();
	ConditionVariablePrepareToSleep(&slot->flush_cv);
	for (;;) {
		bool done, attached, waiting, gone;

		LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
		gone = !slot->in_use || slot->flow_id != cfg->flow_id || slot->dropped;
		done = slot->flush_completed >= my_request;
		attached = slot->worker_pid != 0;
		waiting = slot->state == FLOW_WAITING_FOR_WORKER;
		if (done) {
			windows = slot->flush_windows;
			failed = slot->flush_failed;
			strlcpy(error, slot->last_error, sizeof(error));
		}
		LWLockRelease(fn_slot_lock(slot));
		if (done)
			break;
		if (gone) {
			ConditionVariableCancelSleep();
			ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			                errmsg("flow \"%s\" was dropped while flushing", flow_name)));
		}
		if (!attached) {
			bool registered;

			LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
			registered = slot->worker_registered_at != 0;
			LWLockRelease(fn_slot_lock(slot));
			if (waiting || (!registered && started)) {
				ConditionVariableCancelSleep();
				ereport(ERROR, (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				                errmsg("flow \"%s\" has no running worker to flush it", flow_name),
				                errhint("No background worker slot is free: raise max_worker_processes.")));
			}
			if (GetCurrentTimestamp() - wait_start > 15 * USECS_PER_SEC) {
				ConditionVariableCancelSleep();
				ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				                errmsg("flow \"%s\" has no running worker to flush it", flow_name),
				                errdetail("Its worker did not start within 15 seconds."),
				                errhint("See the server log for why the flow's background worker exited.")));
			}
			if (!registered && !started) {
				started = true;
				(void)fn_start_flow_worker(MyDatabaseId, catalog, cfg->flow_id, cfg->owner,
				                           fn_role_can_login(cfg->owner));
			}
		}
		ConditionVariableTimedSleep(&slot->flush_cv, 1000, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	if (failed)
		ereport(ERROR, (errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
		                errmsg("flush of flow \"%s\" failed: %s", flow_name, error),
		                errhint("The dirty windows are kept; see flownode.flows.last_error.")));
	PG_RETURN_INT64(windows);
}

Datum flownode_flow_status(PG_FUNCTION_ARGS) {
	ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;
	Oid catalog = fn_catalog_relid(false);
	List *flows;
	ListCell *lc;

	InitMaterializedSRF(fcinfo, 0);
	if (fn_slot_count() == 0)
		PG_RETURN_VOID();
	flows = fn_load_all_flows();
	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		FlowSlot *slot;
		FlowSlot copy;
		FnTimeRange *ranges;
		Datum values[12];
		bool nulls[12] = {0};
		int64 dirty = 0;
		const char *state;

		if (!has_privs_of_role(GetUserId(), cfg->owner))
			continue; /* each role sees the state of its own flows only */
		LWLockAcquire(fn_registry_lock(), LW_SHARED);
		slot = fn_find_slot(MyDatabaseId, catalog, cfg->flow_id);
		if (slot == NULL) {
			LWLockRelease(fn_registry_lock());
			continue;
		}
		LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
		memcpy(&copy, slot, offsetof(FlowSlot, dirty));
		ranges = palloc(sizeof(FnTimeRange) * Max(1, slot->ndirty));
		memcpy(ranges, slot->dirty, sizeof(FnTimeRange) * slot->ndirty);
		LWLockRelease(fn_slot_lock(slot));
		LWLockRelease(fn_registry_lock());

		if (cfg->window.kind == FN_WINDOW_NONE)
			dirty = copy.ndirty > 0 ? 1 : 0;
		else if (copy.ndirty > 0) {
			FnWindow *w = fn_window_create(&cfg->window);

			/* calendar windows are walked one by one: past WALK_CAP in one range the
			 * count is estimated from the unit's usual width (documented) */
			for (uint32 i = 0; i < copy.ndirty; i++) {
				uint64 n = fn_window_count(w, ranges[i],
				                           cfg->window.kind == FN_WINDOW_DATE_BIN ? PG_UINT64_MAX : WALK_CAP);

				if (n >= WALK_CAP && cfg->window.kind != FN_WINDOW_DATE_BIN)
					n = Max(n, (uint64)((ranges[i].end - ranges[i].start) / fn_window_nominal_usec(w)));
				dirty += (int64)n;
			}
		}
		if (copy.worker_pid == 0)
			state = "waiting_for_worker";
		else if (copy.consecutive_failures > 0)
			state = "failing";
		else
			state = "active";
		values[0] = Int64GetDatum(cfg->flow_id);
		values[1] = CStringGetTextDatum(state);
		values[2] = Int64GetDatum(dirty);
		values[3] = TimestampTzGetDatum(copy.last_run_at);
		nulls[3] = copy.last_run_at == 0;
		{
			Interval *iv = palloc0(sizeof(Interval));

			iv->time = copy.last_run_usec;
			values[4] = IntervalPGetDatum(iv);
			nulls[4] = copy.last_run_at == 0;
		}
		values[5] = CStringGetTextDatum(copy.last_error);
		nulls[5] = copy.last_error[0] == '\0';
		values[6] = Int64GetDatum(copy.runs);
		values[7] = Int64GetDatum(copy.failures);
		values[8] = Int64GetDatum(copy.rows_written);
		values[9] = Int32GetDatum(copy.worker_pid);
		nulls[9] = copy.worker_pid == 0;
		values[10] = TimestampTzGetDatum(copy.last_error_at);
		nulls[10] = copy.last_error_at == 0;
		values[11] = Int32GetDatum(copy.consecutive_failures);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}
