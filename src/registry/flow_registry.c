/*
 * flow_registry.c: the flow catalog, flownode.flow. TaskConfig is a flow's
 * configuration as its row holds it. Reads and writes run as the catalog's owner
 * so that any caller (a writer's trigger, a worker, flush_flow) can resolve the
 * flows it touches, while users cannot write the catalog directly.
 */
#include "flownode.h"

#include "registry/flow_registry.h"

#include "pgutil/pg_util.h"

#include "miscadmin.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/syscache.h"
#include "utils/datum.h"
#include "utils/inval.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "utils/array.h"

#define CONFIG_COLUMNS                                                                                       \
	"flow_id, flow_name, owner, source_table, sink_table, time_attnum, window_kind, window_stride, "         \
	"window_origin, window_unit, window_zone, with_time_zone, query, timezone, eval_interval, "              \
	"expire_after, xmin::text, user_query, dialect, options::text, comment, sink_name, search_path, "        \
	"created_at, "
/* the columns pause_flow and background backfills added in 0.2; a catalog still at
 * 0.1 (ALTER EXTENSION flownode UPDATE not run yet) reads as never paused, nothing
 * to fill */
#define STEERING_COLUMNS "paused, backfill_from, backfill_next, backfill_to"
#define STEERING_COLUMNS_01 "false, NULL::bigint, NULL::bigint, NULL::bigint"

/*
 * The catalog's OID, looked up by name once per backend rather than at every
 * commit of a writer: a relcache invalidation of it (DROP EXTENSION drops it) or a
 * cache reset forgets it. Only a found OID is kept, so CREATE EXTENSION is seen at
 * once.
 */
static Oid catalog_relid_cache = InvalidOid;
static bool config_plans_stale = false; /* the catalog changed: prepare the queries again */

static void forget_catalog_relid(Datum arg pg_attribute_unused(), Oid relid) {
	if (!OidIsValid(relid) || relid == catalog_relid_cache) {
		catalog_relid_cache = InvalidOid;
		config_plans_stale = true;
	}
}

void fn_registry_init(void) {
	CacheRegisterRelcacheCallback(forget_catalog_relid, (Datum)0);
}

Oid fn_catalog_relid(bool missing_ok) {
	Oid nsp;
	Oid relid;

	if (OidIsValid(catalog_relid_cache))
		return catalog_relid_cache;
	nsp = get_namespace_oid(FLOWNODE_SCHEMA, true);
	relid = OidIsValid(nsp) ? get_relname_relid(FLOWNODE_CATALOG, nsp) : InvalidOid;
	catalog_relid_cache = relid;
	if (!OidIsValid(relid) && !missing_ok)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("extension \"flownode\" is not installed in this database"),
		                errhint("Run CREATE EXTENSION flownode.")));
	return relid;
}

Oid fn_catalog_owner(void) {
	HeapTuple tup = SearchSysCache1(RELOID, ObjectIdGetDatum(fn_catalog_relid(false)));
	Oid owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "flownode: catalog relation vanished");
	owner = ((Form_pg_class)GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

static char *get_text(HeapTuple tup, TupleDesc desc, int col) {
	bool isnull;
	Datum d = SPI_getbinval(tup, desc, col, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

static TaskConfig *row_to_config(HeapTuple tup, TupleDesc desc) {
	TaskConfig *cfg = palloc0(sizeof(TaskConfig));
	bool isnull;
	char *kind;
	Datum d;

	cfg->flow_id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	cfg->flow_name = get_text(tup, desc, 2);
	cfg->owner = DatumGetObjectId(SPI_getbinval(tup, desc, 3, &isnull));
	d = SPI_getbinval(tup, desc, 4, &isnull);
	cfg->source_relid = isnull ? InvalidOid : DatumGetObjectId(d);
	d = SPI_getbinval(tup, desc, 5, &isnull);
	cfg->sink_relid = isnull ? InvalidOid : DatumGetObjectId(d);
	d = SPI_getbinval(tup, desc, 6, &isnull);
	cfg->time_attnum = isnull ? 0 : DatumGetInt16(d);
	kind = get_text(tup, desc, 7);
	memset(&cfg->window, 0, sizeof(cfg->window));
	if (kind == NULL)
		cfg->window.kind = FN_WINDOW_NONE;
	else if (strcmp(kind, "date_bin") == 0) {
		Interval *stride = DatumGetIntervalP(SPI_getbinval(tup, desc, 8, &isnull));

		cfg->window.kind = FN_WINDOW_DATE_BIN;
		cfg->window.stride_time = stride->time;
		cfg->window.stride_day = stride->day;
		cfg->window.origin = DatumGetInt64(SPI_getbinval(tup, desc, 9, &isnull));
	} else {
		char *unit = get_text(tup, desc, 10);
		char *zone = get_text(tup, desc, 11);

		cfg->window.kind = FN_WINDOW_DATE_TRUNC;
		strlcpy(cfg->window.unit, unit ? unit : "", FN_UNIT_LEN);
		strlcpy(cfg->window.zone, zone ? zone : "", FN_ZONE_LEN);
	}
	d = SPI_getbinval(tup, desc, 12, &isnull);
	cfg->window.with_time_zone = isnull ? false : DatumGetBool(d);
	cfg->query = get_text(tup, desc, 13);
	cfg->timezone = get_text(tup, desc, 14);
	d = SPI_getbinval(tup, desc, 15, &isnull);
	cfg->eval_interval = isnull ? NULL : DatumGetIntervalP(datumCopy(d, false, sizeof(Interval)));
	d = SPI_getbinval(tup, desc, 16, &isnull);
	cfg->expire_after = isnull ? NULL : DatumGetIntervalP(datumCopy(d, false, sizeof(Interval)));
	{
		char *xmin = get_text(tup, desc, 17);
		TransactionId x = xmin ? (TransactionId)strtoul(xmin, NULL, 10) : InvalidTransactionId;

		cfg->created_here = TransactionIdIsValid(x) && TransactionIdIsCurrentTransactionId(x);
	}
	cfg->waiting = !OidIsValid(cfg->source_relid);
	cfg->user_query = get_text(tup, desc, 18);
	{
		char *dialect = get_text(tup, desc, 19);

		cfg->dialect =
		    dialect && strcmp(dialect, "greptimedb") == 0 ? FLOW_DIALECT_GREPTIME : FLOW_DIALECT_POSTGRES;
	}
	cfg->options = get_text(tup, desc, 20);
	cfg->comment = get_text(tup, desc, 21);
	cfg->sink_name = get_text(tup, desc, 22);
	cfg->search_path = get_text(tup, desc, 23);
	d = SPI_getbinval(tup, desc, 24, &isnull);
	cfg->created_at = isnull ? 0 : DatumGetTimestampTz(d);
	d = SPI_getbinval(tup, desc, 25, &isnull);
	cfg->paused = !isnull && DatumGetBool(d);
	d = SPI_getbinval(tup, desc, 28, &isnull);
	cfg->backfilling = !isnull;
	if (cfg->backfilling) {
		cfg->backfill_to = DatumGetInt64(d);
		cfg->backfill_from = DatumGetInt64(SPI_getbinval(tup, desc, 26, &isnull));
		cfg->backfill_next = DatumGetInt64(SPI_getbinval(tup, desc, 27, &isnull));
	}
	return cfg;
}

/* The catalog queries, each prepared once per backend (flush_flow looks its flow up
 * on every call; parsing and planning it each time cost more than the lookup). The
 * plan cache re-plans them after DDL on the catalog, DROP/CREATE EXTENSION included. */
typedef enum ConfigQuery {
	BY_ID,
	BY_NAME,
	BY_SOURCE,
	BY_SOURCES,
	BY_RELATION,
	ALL_FLOWS,
	WAITING_FLOWS,
	N_CONFIG_QUERIES
} ConfigQuery;

static const char *const config_where[N_CONFIG_QUERIES] = {
    [BY_ID] = "WHERE flow_id = $1",
    [BY_NAME] = "WHERE flow_name = $1",
    [BY_SOURCE] = "WHERE source_table = $1 ORDER BY flow_id",
    [BY_SOURCES] = "WHERE source_table OPERATOR(pg_catalog.=) ANY ($1) ORDER BY flow_id",
    [BY_RELATION] = "WHERE source_table = $1 OR sink_table = $1 ORDER BY flow_id",
    [ALL_FLOWS] = "WHERE source_table IS NOT NULL ORDER BY flow_id",
    [WAITING_FLOWS] = "WHERE source_table IS NULL ORDER BY flow_id",
};

static SPIPlanPtr config_plans[N_CONFIG_QUERIES];

/* Runs a catalog query as the catalog's owner and returns its rows as TaskConfigs
 * allocated in the caller's memory context. */
static List *query_configs(ConfigQuery which, Oid argtype, Datum arg) {
	MemoryContext caller = CurrentMemoryContext;
	List *result = NIL;
	SpiAs scope;
	int rc;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	if (config_plans_stale) {
		/* after ALTER EXTENSION UPDATE the steering columns exist: read them */
		for (int i = 0; i < N_CONFIG_QUERIES; i++)
			if (config_plans[i] != NULL) {
				SPI_freeplan(config_plans[i]);
				config_plans[i] = NULL;
			}
		config_plans_stale = false;
	}
	if (config_plans[which] == NULL) {
		bool steering = get_attnum(fn_catalog_relid(false), "paused") != InvalidAttrNumber;
		char *sql = psprintf("SELECT " CONFIG_COLUMNS "%s FROM " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " %s",
		                     steering ? STEERING_COLUMNS : STEERING_COLUMNS_01, config_where[which]);
		SPIPlanPtr plan = SPI_prepare(sql, argtype == InvalidOid ? 0 : 1, &argtype);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "flownode: preparing a catalog query failed: %s", SPI_result_code_string(SPI_result));
		config_plans[which] = plan;
	}
	/* The catalog as it is now, not as the caller's snapshot saw it: a writer in a
	 * REPEATABLE READ or SERIALIZABLE transaction that began before a flow was
	 * created must still find that flow when its rows fire the new triggers, or
	 * its rows would be marked for no one. */
	rc = SPI_execute_snapshot(config_plans[which], &arg, NULL, GetLatestSnapshot(), InvalidSnapshot, true,
	                          false, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading the flow catalog failed: %s", SPI_result_code_string(rc));
	for (uint64 i = 0; i < SPI_processed; i++) {
		MemoryContext spi = MemoryContextSwitchTo(caller);

		result = lappend(result, row_to_config(SPI_tuptable->vals[i], SPI_tuptable->tupdesc));
		MemoryContextSwitchTo(spi);
	}
	fn_spi_end(&scope);
	return result;
}

TaskConfig *fn_load_task_config(int64 flow_id, bool missing_ok) {
	List *l = query_configs(BY_ID, INT8OID, Int64GetDatum(flow_id));

	if (l == NIL && !missing_ok)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
		                errmsg("flow with id " INT64_FORMAT " does not exist", flow_id)));
	return l ? linitial(l) : NULL;
}

TaskConfig *fn_load_task_config_by_name(const char *flow_name, bool missing_ok) {
	List *l = query_configs(BY_NAME, TEXTOID, CStringGetTextDatum(flow_name));

	if (l == NIL && !missing_ok)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("flow \"%s\" does not exist", flow_name)));
	return l ? linitial(l) : NULL;
}

List *fn_load_flows_of_source(Oid source_relid) {
	return query_configs(BY_SOURCE, OIDOID, ObjectIdGetDatum(source_relid));
}

List *fn_load_flows_of_sources(List *relids) {
	Datum *elems = palloc(sizeof(Datum) * Max(1, list_length(relids)));
	int n = 0;
	ListCell *lc;

	if (relids == NIL)
		return NIL;
	foreach (lc, relids)
		elems[n++] = ObjectIdGetDatum(lfirst_oid(lc));
	return query_configs(BY_SOURCES, OIDARRAYOID,
	                     PointerGetDatum(construct_array(elems, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT)));
}

/* A partition's rows are its ancestors' rows too: the flows of each of them read it. */
List *fn_load_flows_over(Oid relid) {
	List *above = get_rel_relispartition(relid) ? get_partition_ancestors(relid) : NIL;

	return fn_load_flows_of_sources(lcons_oid(relid, above));
}

List *fn_load_flows_of_relation(Oid relid) {
	return query_configs(BY_RELATION, OIDOID, ObjectIdGetDatum(relid));
}

List *fn_load_all_flows(void) {
	return query_configs(ALL_FLOWS, InvalidOid, (Datum)0);
}

List *fn_load_waiting_flows(void) {
	return query_configs(WAITING_FLOWS, InvalidOid, (Datum)0);
}

int64 fn_expiry_start(const Interval *expire_after, bool with_time_zone, const char *timezone, FnWindow *w,
                      TimestampTz now) {
	TimestampTz cutoff;

	if (expire_after == NULL || w == NULL)
		return 0;
	cutoff = now - fn_interval_usec(expire_after);
	if (!with_time_zone) /* a timestamp column holds the flow's local time */
		cutoff = DatumGetTimestamp(DirectFunctionCall2(timestamptz_zone, CStringGetTextDatum(timezone),
		                                               TimestampTzGetDatum(cutoff)));
	return fn_window_of(w, cutoff).start;
}

/* Calendar windows are walked one by one: past this many in one range the count is
 * estimated from the unit's usual width (documented for the flows view). */
#define WALK_CAP 100000

int64 fn_flow_windows(const TaskConfig *cfg, FnWindow *w, FnTimeRange r) {
	/* the timestamps r spans: the last window ends at infinity, and the part of it
	 * past the largest timestamp holds no window (nor fits an int64 difference) */
	int64 lo = Max(r.start, FN_TS_MIN), hi = Min(r.end, FN_TS_END);
	uint64 span = hi > lo ? (uint64)hi - (uint64)lo : 0;
	bool fixed = cfg->window.kind == FN_WINDOW_DATE_BIN;
	uint64 c;

	if (r.start >= r.end)
		return 0;
	if (w == NULL)
		return 1;
	c = fn_window_count(w, r, fixed ? PG_UINT64_MAX : WALK_CAP);
	if (c >= WALK_CAP && !fixed)
		c = Max(c, span / (uint64)fn_window_nominal_usec(w));
	return (int64)c;
}

void fn_lock_flow(int64 flow_id, LOCKMODE mode) {
	LockDatabaseObject(fn_catalog_relid(false), (Oid)(flow_id & 0xFFFFFFFF), (uint16)((uint64)flow_id >> 32),
	                   mode);
}

/* Runs catalog DML as the catalog's owner; returns a RETURNING value or the row count. */
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

bool fn_registry_is_sink(Oid relid) {
	Oid types[1] = {OIDOID};
	Datum values[1] = {ObjectIdGetDatum(relid)};

	return catalog_exec("SELECT 1 FROM " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " WHERE sink_table = $1", 1,
	                    types, values, NULL) > 0;
}

bool fn_registry_clock_get(int64 flow_id, TimestampTz *at) {
	Oid types[1] = {INT8OID};
	Datum values[1] = {Int64GetDatum(flow_id)};
	SpiAs scope;
	bool found, isnull;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	if (SPI_execute_with_args("SELECT evaluated_at FROM " FLOWNODE_SCHEMA ".flow_clock WHERE flow_id = $1", 1,
	                          types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading flownode.flow_clock failed");
	found = SPI_processed == 1;
	if (found)
		*at = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	fn_spi_end(&scope);
	return found;
}

void fn_registry_clock_set(int64 flow_id, TimestampTz at) {
	Oid types[2] = {INT8OID, TIMESTAMPTZOID};
	Datum values[2] = {Int64GetDatum(flow_id), TimestampTzGetDatum(at)};

	(void)catalog_exec("INSERT INTO " FLOWNODE_SCHEMA ".flow_clock (flow_id, evaluated_at) VALUES ($1, $2)"
	                   " ON CONFLICT (flow_id) DO UPDATE SET evaluated_at = EXCLUDED.evaluated_at",
	                   2, types, values, NULL);
}

void fn_registry_delete_flow(int64 flow_id) {
	Oid types[1] = {INT8OID};
	Datum values[1] = {Int64GetDatum(flow_id)};

	catalog_exec("DELETE FROM " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " WHERE flow_id = $1", 1, types, values,
	             NULL);
}

void fn_registry_update_query(int64 flow_id, const char *query, const char *time_column,
                              const char *window_text) {
	Oid types[4] = {INT8OID, TEXTOID, NAMEOID, TEXTOID};
	Datum values[4];
	char nulls[5] = "    ";

	values[0] = Int64GetDatum(flow_id);
	values[1] = CStringGetTextDatum(query);
	values[2] = time_column ? DirectFunctionCall1(namein, CStringGetDatum(time_column)) : (nulls[2] = 'n', 0);
	values[3] = window_text ? CStringGetTextDatum(window_text) : (nulls[3] = 'n', 0);
	catalog_exec(
	    "UPDATE " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	    " SET query = $2, time_column = COALESCE($3, time_column), window_expr = COALESCE($4, window_expr),"
	    " updated_at = pg_catalog.now() WHERE flow_id = $1",
	    4, types, values, nulls);
}

static const char *dialect_name(FlowDialect dialect) {
	return dialect == FLOW_DIALECT_GREPTIME ? "greptimedb" : "postgres";
}

void fn_registry_alter_flow(int64 flow_id, const FlowChanges *ch) {
	Oid types[8] = {INT8OID, TEXTOID, BOOLOID, INTERVALOID, BOOLOID, INTERVALOID, BOOLOID, TEXTOID};
	Datum v[8];
	char n[9] = "        ";

	v[0] = Int64GetDatum(flow_id);
	v[1] = ch->new_name ? CStringGetTextDatum(ch->new_name) : (n[1] = 'n', 0);
	v[2] = BoolGetDatum(ch->set_eval_interval);
	v[3] = ch->eval_interval ? IntervalPGetDatum(ch->eval_interval) : (n[3] = 'n', 0);
	v[4] = BoolGetDatum(ch->set_expire_after);
	v[5] = ch->expire_after ? IntervalPGetDatum(ch->expire_after) : (n[5] = 'n', 0);
	v[6] = BoolGetDatum(ch->set_comment);
	v[7] = ch->comment ? CStringGetTextDatum(ch->comment) : (n[7] = 'n', 0);
	catalog_exec("UPDATE " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " SET flow_name = COALESCE($2, flow_name),"
	             " eval_interval = CASE WHEN $3 THEN $4 ELSE eval_interval END,"
	             " expire_after = CASE WHEN $5 THEN $6 ELSE expire_after END,"
	             " comment = CASE WHEN $7 THEN $8 ELSE comment END"
	             " WHERE flow_id = $1",
	             8, types, v, n);
}

void fn_registry_set_paused(int64 flow_id, bool paused) {
	Oid types[2] = {INT8OID, BOOLOID};
	Datum v[2] = {Int64GetDatum(flow_id), BoolGetDatum(paused)};

	catalog_exec("UPDATE " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " SET paused = $2 WHERE flow_id = $1", 2,
	             types, v, NULL);
}

bool fn_registry_set_backfill(int64 flow_id, int64 from, int64 next, int64 to) {
	Oid types[4] = {INT8OID, INT8OID, INT8OID, INT8OID};
	Datum v[4] = {Int64GetDatum(flow_id), Int64GetDatum(from), Int64GetDatum(next), Int64GetDatum(to)};
	char n[5] = "    ";

	if (next >= to)
		n[1] = n[2] = n[3] = 'n'; /* done */
	/* never waits for a transaction that holds the row (an alter_flow not committed
	 * yet): the caller tries again with its next chunk */
	return catalog_exec("UPDATE " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	                    " SET backfill_from = $2, backfill_next = $3, backfill_to = $4"
	                    " WHERE flow_id = (SELECT flow_id FROM " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	                    " WHERE flow_id = $1 FOR NO KEY UPDATE SKIP LOCKED)",
	                    4, types, v, n) == 1;
}

int64 fn_registry_insert_flow(const FlowDefinition *def) {
	FlowQuery *fq = def->fq;
	Oid types[23] = {TEXTOID,     OIDOID,      OIDOID,  OIDOID,  NAMEOID, INT2OID, TEXTOID,       TEXTOID,
	                 INTERVALOID, INT8OID,     TEXTOID, TEXTOID, BOOLOID, TEXTOID, TEXTOID,       TEXTOID,
	                 INTERVALOID, INTERVALOID, TEXTOID, TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID};
	Datum v[23];
	char n[24];
	bool win = fq->window.kind != FN_WINDOW_NONE;
	bool bin = fq->window.kind == FN_WINDOW_DATE_BIN;
	Interval *stride = palloc0(sizeof(Interval));

	memset(n, ' ', sizeof(n));
	n[23] = '\0';
	stride->time = fq->window.stride_time;
	stride->day = fq->window.stride_day;
	v[0] = CStringGetTextDatum(def->flow_name);
	v[1] = ObjectIdGetDatum(def->owner);
	v[2] = ObjectIdGetDatum(fq->source_relid);
	v[3] = ObjectIdGetDatum(def->sink_relid);
	v[4] = win ? DirectFunctionCall1(namein, CStringGetDatum(fq->time_column)) : (n[4] = 'n', 0);
	v[5] = win ? Int16GetDatum(fq->time_attnum) : (n[5] = 'n', 0);
	v[6] = win ? CStringGetTextDatum(def->window_text) : (n[6] = 'n', 0);
	v[7] = win ? CStringGetTextDatum(bin ? "date_bin" : "date_trunc") : (n[7] = 'n', 0);
	v[8] = bin ? IntervalPGetDatum(stride) : (n[8] = 'n', 0);
	v[9] = bin ? Int64GetDatum(fq->window.origin) : (n[9] = 'n', 0);
	v[10] = (win && !bin) ? CStringGetTextDatum(fq->window.unit) : (n[10] = 'n', 0);
	v[11] = (win && !bin && fq->window.zone[0]) ? CStringGetTextDatum(fq->window.zone) : (n[11] = 'n', 0);
	v[12] = win ? BoolGetDatum(fq->window.with_time_zone) : (n[12] = 'n', 0);
	v[13] = CStringGetTextDatum(def->stored_query);
	v[14] = CStringGetTextDatum(def->user_query);
	v[15] = CStringGetTextDatum(def->timezone);
	v[16] = def->eval_interval ? IntervalPGetDatum(def->eval_interval) : (n[16] = 'n', 0);
	v[17] = def->expire_after ? IntervalPGetDatum(def->expire_after) : (n[17] = 'n', 0);
	v[18] = def->comment ? CStringGetTextDatum(def->comment) : (n[18] = 'n', 0);
	v[19] = CStringGetTextDatum(dialect_name(def->dialect));
	v[20] = CStringGetTextDatum(def->options ? def->options : "{}");
	v[21] = Int64GetDatum(def->flow_id);
	v[22] = def->created_at != 0 ? TimestampTzGetDatum(def->created_at) : (n[22] = 'n', 0);
	/* a waiting flow that starts keeps its id (OVERRIDING SYSTEM VALUE), and a flow that
	 * replaces or starts another keeps its creation time */
	return catalog_exec(
	    def->flow_id > 0
	        ? "INSERT INTO " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	          " (flow_name, owner, source_table, sink_table, time_column, time_attnum, window_expr,"
	          " window_kind, window_stride, window_origin, window_unit, window_zone, with_time_zone,"
	          " query, user_query, timezone, eval_interval, expire_after, comment, dialect, options, flow_id,"
	          " created_at) OVERRIDING SYSTEM VALUE"
	          " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
	          " $18, $19, $20, $21::jsonb, $22, COALESCE($23, pg_catalog.now())) RETURNING flow_id"
	        : "INSERT INTO " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	          " (flow_name, owner, source_table, sink_table, time_column, time_attnum, window_expr,"
	          " window_kind, window_stride, window_origin, window_unit, window_zone, with_time_zone,"
	          " query, user_query, timezone, eval_interval, expire_after, comment, dialect, options,"
	          " created_at)"
	          " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
	          " $18, $19, $20, $21::jsonb, COALESCE($23, pg_catalog.now())) RETURNING flow_id",
	    23, types, v, n);
}

int64 fn_registry_insert_waiting_flow(const WaitingFlowDefinition *def) {
	Oid types[12] = {TEXTOID,     OIDOID,      TEXTOID, TEXTOID, TEXTOID, TEXTOID,
	                 INTERVALOID, INTERVALOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID};
	Datum v[12];
	char n[13];

	memset(n, ' ', sizeof(n));
	n[12] = '\0';
	v[0] = CStringGetTextDatum(def->flow_name);
	v[1] = ObjectIdGetDatum(def->owner);
	v[2] = CStringGetTextDatum(def->user_query);
	v[3] = CStringGetTextDatum(def->sink_name);
	v[4] = CStringGetTextDatum(def->timezone);
	v[5] = CStringGetTextDatum(def->search_path);
	v[6] = def->eval_interval ? IntervalPGetDatum(def->eval_interval) : (n[6] = 'n', 0);
	v[7] = def->expire_after ? IntervalPGetDatum(def->expire_after) : (n[7] = 'n', 0);
	v[8] = def->comment ? CStringGetTextDatum(def->comment) : (n[8] = 'n', 0);
	v[9] = CStringGetTextDatum(dialect_name(def->dialect));
	v[10] = CStringGetTextDatum(def->options ? def->options : "{}");
	v[11] = def->created_at != 0 ? TimestampTzGetDatum(def->created_at) : (n[11] = 'n', 0);
	return catalog_exec("INSERT INTO " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	                    " (flow_name, owner, user_query, sink_name, timezone, search_path, eval_interval,"
	                    " expire_after, comment, dialect, options, created_at)"
	                    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb,"
	                    " COALESCE($12, pg_catalog.now())) RETURNING flow_id",
	                    12, types, v, n);
}
