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
#include "access/genam.h"
#include "access/xlog.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/array.h"

/* A flow's row, as row_to_config reads it; `bound` is appended by query_configs */
#define CONFIG_COLUMNS                                                                                       \
	"f.flow_id, f.flow_name, f.owner, f.source_table, f.sink_table, f.time_attnum, f.window_kind, "          \
	"f.window_stride, f.window_origin, f.window_unit, f.window_zone, f.with_time_zone, f.query, "            \
	"f.timezone, f.eval_interval, f.expire_after, f.xmin::text, f.user_query, %s"

/* Columns 19 to 29, which the old layout (a catalog still at 0.1: ALTER EXTENSION
 * flownode UPDATE not run yet) lacks: GreptimeDB compatibility, then pause_flow,
 * background backfills and date or epoch time columns. There every flow is one of
 * create_flow's, running, never paused, with nothing to fill, over a timestamp. */
#define CONFIG_COLUMNS_CURRENT                                                                               \
	"f.dialect, f.options::text, f.comment, f.sink_name, f.search_path, f.created_at, f.paused, "            \
	"f.backfill_from, f.backfill_next, f.backfill_to, f.time_input"
#define CONFIG_COLUMNS_OLD                                                                                   \
	"'postgres'::text, '{}'::text, f.comment, NULL::text, NULL::text, f.created_at, false, NULL::bigint, "   \
	"NULL::bigint, NULL::bigint, NULL::text"
/* whether the flow is bound, and whether it was bound in the cluster pg_upgrade
 * copied this one from, after the columns above */
#define CONFIG_BOUND_COLUMN 30
#define CONFIG_UPGRADED_COLUMN 31

/* The layout of the catalog the database holds, by its extension version. */
typedef enum CatalogLayout { LAYOUT_CURRENT, LAYOUT_OLD } CatalogLayout;

/*
 * The catalog's OID, looked up by name once per backend rather than at every
 * commit of a writer: a relcache invalidation of it (DROP EXTENSION drops it, an
 * update script alters it) or a cache reset forgets it. Only a found OID is kept,
 * so CREATE EXTENSION is seen at once; so is its layout, checked when it is kept.
 */
static Oid catalog_relid_cache = InvalidOid;
static CatalogLayout catalog_layout = LAYOUT_CURRENT;
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

/* pg_extension.extversion of flownode in this database, NULL without it. */
static char *installed_version(void) {
	Relation rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple tup;
	char *version = NULL;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
	            CStringGetDatum(FLOWNODE_SCHEMA));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup)) {
		bool isnull;
		Datum d = heap_getattr(tup, Anum_pg_extension_extversion, RelationGetDescr(rel), &isnull);

		if (!isnull)
			version = text_to_cstring(DatumGetTextPP(d));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

Oid fn_catalog_relid_unchecked(void) {
	Oid nsp = get_namespace_oid(FLOWNODE_SCHEMA, true);

	return OidIsValid(nsp) ? get_relname_relid(FLOWNODE_CATALOG, nsp) : InvalidOid;
}

/*
 * A library of another version than the database's objects must not read them as
 * its own (the flows view's function got new OUT columns, the catalog new columns
 * and a new table). The old version's catalog differs only where query_configs
 * and the binding know it, so marking and DDL go on while the database waits for
 * ALTER EXTENSION flownode UPDATE: no write is refused or lost meanwhile.
 */
Oid fn_catalog_relid(bool missing_ok) {
	Oid relid;
	char *version;

	if (OidIsValid(catalog_relid_cache))
		return catalog_relid_cache;
	relid = fn_catalog_relid_unchecked();
	if (!OidIsValid(relid)) {
		if (!missing_ok)
			ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			                errmsg("extension \"flownode\" is not installed in this database"),
			                errhint("Run CREATE EXTENSION flownode.")));
		return InvalidOid;
	}
	version = installed_version();
	if (version != NULL &&
	    (strcmp(version, FLOWNODE_VERSION) == 0 || strcmp(version, FLOWNODE_PREVIOUS_VERSION) == 0 ||
	     strcmp(version, FLOWNODE_PREVIOUS2_VERSION) == 0))
		catalog_layout = LAYOUT_CURRENT;
	else if (version != NULL && strcmp(version, FLOWNODE_OLD_VERSION) == 0)
		catalog_layout = LAYOUT_OLD;
	else
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("the flownode library loaded (version %s) cannot use the flownode objects of "
		                "database \"%s\" (version %s)",
		                FLOWNODE_VERSION, get_database_name(MyDatabaseId), version ? version : "unknown"),
		         errhint("Install the flownode library of version %s and restart the server, or update the "
		                 "extension to version %s.",
		                 version ? version : "unknown", FLOWNODE_VERSION)));
	catalog_relid_cache = relid;
	return relid;
}

bool fn_catalog_is_current(void) {
	(void)fn_catalog_relid(false);
	return catalog_layout == LAYOUT_CURRENT;
}

void fn_check_catalog_version(void) {
	(void)fn_catalog_relid(false);
	if (catalog_layout != LAYOUT_CURRENT)
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("the flownode objects of database \"%s\" are version %s, but the library loaded is "
		                "version %s",
		                get_database_name(MyDatabaseId), FLOWNODE_OLD_VERSION, FLOWNODE_VERSION),
		         errdetail("Writes to the sources of flows are still marked, but flows are not refreshed, "
		                   "created, dropped or shown until the update."),
		         errhint("Run ALTER EXTENSION flownode UPDATE in this database.")));
}

Oid fn_current_catalog_relid(void) {
	fn_check_catalog_version();
	return fn_catalog_relid(false);
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
/* A time_bucket window: its width (months too), origin, zone and offset, which
 * window_unit holds (a date_trunc unit's column, unused by it). */
static void read_time_bucket(FnWindowSpec *w, HeapTuple tup, TupleDesc desc) {
	bool isnull;
	Interval *stride = DatumGetIntervalP(SPI_getbinval(tup, desc, 8, &isnull));
	char *offset = get_text(tup, desc, 10);
	char *zone = get_text(tup, desc, 11);

	w->kind = FN_WINDOW_TIME_BUCKET;
	w->stride_time = stride->time;
	w->stride_day = stride->day;
	w->stride_month = stride->month;
	w->origin = DatumGetInt64(SPI_getbinval(tup, desc, 9, &isnull));
	if (offset == NULL ||
	    sscanf(offset, "%d %d " INT64_FORMAT, &w->offset_month, &w->offset_day, &w->offset_time) != 3)
		elog(ERROR, "flownode: the time_bucket offset of a flow is not valid: \"%s\"", offset ? offset : "");
	strlcpy(w->zone, zone ? zone : "", FN_ZONE_LEN);
}

/* The flow's window from its catalog row (columns 7-12). */
static void read_window(FnWindowSpec *w, HeapTuple tup, TupleDesc desc) {
	bool isnull;
	char *kind;
	Datum d;

	kind = get_text(tup, desc, 7);
	memset(w, 0, sizeof(*w));
	if (kind == NULL)
		w->kind = FN_WINDOW_NONE;
	else if (strcmp(kind, "date_bin") == 0) {
		Interval *stride = DatumGetIntervalP(SPI_getbinval(tup, desc, 8, &isnull));

		w->kind = FN_WINDOW_DATE_BIN;
		w->stride_time = stride->time;
		w->stride_day = stride->day;
		w->origin = DatumGetInt64(SPI_getbinval(tup, desc, 9, &isnull));
	} else if (strcmp(kind, "time_bucket") == 0)
		read_time_bucket(w, tup, desc);
	else {
		char *unit = get_text(tup, desc, 10);
		char *zone = get_text(tup, desc, 11);

		w->kind = FN_WINDOW_DATE_TRUNC;
		strlcpy(w->unit, unit ? unit : "", FN_UNIT_LEN);
		strlcpy(w->zone, zone ? zone : "", FN_ZONE_LEN);
	}
	d = SPI_getbinval(tup, desc, 12, &isnull);
	w->with_time_zone = isnull ? false : DatumGetBool(d);
}

static TaskConfig *row_to_config(HeapTuple tup, TupleDesc desc) {
	TaskConfig *cfg = palloc0(sizeof(TaskConfig));
	bool isnull;
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
	read_window(&cfg->window, tup, desc);
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
	/* a date or an integer epoch column (NULL: the column is the window's timestamp) */
	fn_time_input_parse(get_text(tup, desc, 29), cfg->window.with_time_zone, cfg->timezone, &cfg->input);
	d = SPI_getbinval(tup, desc, CONFIG_BOUND_COLUMN, &isnull);
	cfg->bound = !isnull && DatumGetBool(d);
	d = SPI_getbinval(tup, desc, CONFIG_UPGRADED_COLUMN, &isnull);
	cfg->upgraded = !isnull && DatumGetBool(d);
	return cfg;
}

/* The catalog queries, each prepared once per backend (flush_flow looks its flow up
 * on every call; parsing and planning it each time cost more than the lookup). The
 * plan cache re-plans them after DDL on the catalog, DROP/CREATE EXTENSION included;
 * an update to another layout prepares them again (query_configs). */
typedef enum ConfigQuery {
	BY_ID,
	BY_NAME,
	BY_SOURCE,
	BY_SOURCES,
	BY_RELATION,
	ALL_FLOWS,
	WAITING_FLOWS,
	BOUND_FLOWS,
	UNBOUND_OF_TABLE,
	UPGRADED_FLOWS,
	N_CONFIG_QUERIES
} ConfigQuery;

/* Whether the flow is bound (f: its flownode.flow row), here: in this cluster
 * (pg_upgrade makes a new one, without the triggers; %s is its system identifier).
 * The old layout has no flownode.flow_binding: each of its flows was created in
 * this database. A waiting flow (no source yet) is never bound. */
#define BOUND_CURRENT                                                                                        \
	"EXISTS (SELECT FROM " FLOWNODE_SCHEMA "." FLOWNODE_BINDING " b WHERE b.flow_id OPERATOR(pg_catalog.=) " \
	"f.flow_id AND b.system_identifier OPERATOR(pg_catalog.=) %s::pg_catalog.int8)"
#define BOUND_OLD "true"
/* Whether the flow was bound in another cluster: pg_upgrade copied its binding (and
 * the tables' files, OIDs and attribute numbers) but not its triggers. */
#define UPGRADED_CURRENT                                                                                     \
	"EXISTS (SELECT FROM " FLOWNODE_SCHEMA "." FLOWNODE_BINDING " b WHERE b.flow_id OPERATOR(pg_catalog.=) " \
	"f.flow_id AND b.system_identifier OPERATOR(pg_catalog.<>) %s::pg_catalog.int8)"

/* A table's flows are also those that join it as a dimension (flow_dimensions.h);
 * 0.1's layout has no dimension tables. */
#define BY_DIMENSION                                                                                         \
	" OR f.flow_id OPERATOR(pg_catalog.=) ANY (SELECT d.flow_id FROM " FLOWNODE_SCHEMA                       \
	".flow_dimension d WHERE d.dimension OPERATOR(pg_catalog.=) $1)"

/* The query's WHERE and ORDER BY; %s stands for the bound test, in those that test it.
 * Only bound flows mark (the flows of sources). */
static const char *config_where(ConfigQuery which) {
	switch (which) {
	case BY_ID:
		return "WHERE f.flow_id OPERATOR(pg_catalog.=) $1";
	case BY_NAME:
		return "WHERE f.flow_name OPERATOR(pg_catalog.=) $1";
	case BY_SOURCE:
		return "WHERE f.source_table OPERATOR(pg_catalog.=) $1 AND %s ORDER BY f.flow_id";
	case BY_SOURCES:
		return "WHERE f.source_table OPERATOR(pg_catalog.=) ANY ($1) AND %s ORDER BY f.flow_id";
	case BY_RELATION: /* %s: the flows joining $1 as a dimension */
		return "WHERE f.source_table OPERATOR(pg_catalog.=) $1 OR f.sink_table OPERATOR(pg_catalog.=) $1%s"
		       " ORDER BY f.flow_id";
	case ALL_FLOWS:
		return "WHERE f.source_table IS NOT NULL ORDER BY f.flow_id";
	case WAITING_FLOWS:
		return "WHERE f.source_table IS NULL ORDER BY f.flow_id";
	case BOUND_FLOWS:
		return "WHERE f.source_table IS NOT NULL AND %s ORDER BY f.flow_id";
	case UNBOUND_OF_TABLE:
		return "WHERE (f.sink_table OPERATOR(pg_catalog.=) $1 OR f.source_table OPERATOR(pg_catalog.=) $1) "
		       "AND NOT %s ORDER BY f.flow_id";
	case UPGRADED_FLOWS: /* %s: the upgraded test */
		return "WHERE f.source_table IS NOT NULL AND %s ORDER BY f.flow_id";
	case N_CONFIG_QUERIES:
		break;
	}
	pg_unreachable();
}

static SPIPlanPtr config_plans[N_CONFIG_QUERIES];
static CatalogLayout config_plans_layout = LAYOUT_CURRENT;

/* The bound test of the catalog's layout, for this cluster (whose system identifier
 * is read as a bigint, as pg_control_system() shows it). */
static char *bound_test(void) {
	if (catalog_layout != LAYOUT_CURRENT)
		return BOUND_OLD;
	return psprintf(BOUND_CURRENT, psprintf(INT64_FORMAT, (int64)GetSystemIdentifier()));
}

/* The upgraded test (the old layout has no bindings: none). */
static char *upgraded_test(void) {
	if (catalog_layout != LAYOUT_CURRENT)
		return "false";
	return psprintf(UPGRADED_CURRENT, psprintf(INT64_FORMAT, (int64)GetSystemIdentifier()));
}

static SPIPlanPtr config_plan(ConfigQuery which, Oid argtype) {

	/* after ALTER EXTENSION UPDATE (another layout) or any change to the catalog */
	if (config_plans_layout != catalog_layout || config_plans_stale) {
		for (int i = 0; i < N_CONFIG_QUERIES; i++)
			if (config_plans[i] != NULL) {
				SPI_freeplan(config_plans[i]);
				config_plans[i] = NULL;
			}
		config_plans_layout = catalog_layout;
		config_plans_stale = false;
	}
	if (config_plans[which] == NULL) {
		char *bound = bound_test();
		char *upgraded = upgraded_test();
		const char *dimension = catalog_layout == LAYOUT_CURRENT ? BY_DIMENSION : "";
		char *where = psprintf(config_where(which), which == BY_RELATION      ? dimension
		                                            : which == UPGRADED_FLOWS ? upgraded
		                                                                      : bound);
		const char *layout_columns =
		    catalog_layout == LAYOUT_CURRENT ? CONFIG_COLUMNS_CURRENT : CONFIG_COLUMNS_OLD;
		char *sql =
		    psprintf("SELECT " CONFIG_COLUMNS ", %s, %s FROM " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " f %s",
		             layout_columns, bound, upgraded, where);
		SPIPlanPtr plan = SPI_prepare(sql, argtype == InvalidOid ? 0 : 1, &argtype);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "flownode: preparing a catalog query failed: %s", SPI_result_code_string(SPI_result));
		config_plans[which] = plan;
	}
	return config_plans[which];
}

/* Runs a catalog query as the catalog's owner and returns its rows as TaskConfigs
 * allocated in the caller's memory context. */
static List *query_configs(ConfigQuery which, Oid argtype, Datum arg) {
	MemoryContext caller = CurrentMemoryContext;
	List *result = NIL;
	SpiAs scope;
	int rc;

	(void)fn_catalog_relid(false); /* the layout */
	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	/* The catalog as it is now, not as the caller's snapshot saw it: a writer in a
	 * REPEATABLE READ or SERIALIZABLE transaction that began before a flow was
	 * created must still find that flow when its rows fire the new triggers, or
	 * its rows would be marked for no one. */
	rc = SPI_execute_snapshot(config_plan(which, argtype), &arg, NULL, GetLatestSnapshot(), InvalidSnapshot,
	                          true, false, 0);
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

bool fn_flows_contain(List *flows, int64 flow_id) {
	ListCell *lc;

	foreach (lc, flows)
		if (((TaskConfig *)lfirst(lc))->flow_id == flow_id)
			return true;
	return false;
}

List *fn_load_all_flows(void) {
	return query_configs(ALL_FLOWS, InvalidOid, (Datum)0);
}

List *fn_load_bound_flows(void) {
	return query_configs(BOUND_FLOWS, InvalidOid, (Datum)0);
}

List *fn_load_unbound_flows_of_table(Oid relid) {
	if (!fn_catalog_is_current())
		return NIL; /* the old layout knows no restored flows */
	return query_configs(UNBOUND_OF_TABLE, OIDOID, ObjectIdGetDatum(relid));
}

List *fn_load_upgraded_flows(void) {
	return query_configs(UPGRADED_FLOWS, InvalidOid, (Datum)0);
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

bool fn_try_lock_flow(int64 flow_id, LOCKMODE mode) {
	return ConditionalLockDatabaseObject(fn_catalog_relid(false), (Oid)(flow_id & 0xFFFFFFFF),
	                                     (uint16)((uint64)flow_id >> 32), mode);
}

void fn_registry_count_flows(Oid owner, int64 *in_database, int64 *of_owner) {
	Oid type = OIDOID;
	Datum arg = ObjectIdGetDatum(owner);
	SpiAs scope;
	bool isnull;
	int rc;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	/* as it is now (see query_configs): the flows committed while the caller waited
	 * for the cap's lock count */
	rc = SPI_execute_snapshot(
	    SPI_prepare("SELECT count(*), count(*) FILTER (WHERE owner OPERATOR(pg_catalog.=) "
	                "$1::pg_catalog.regrole) FROM " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG,
	                1, &type),
	    &arg, NULL, GetLatestSnapshot(), InvalidSnapshot, true, false, 1);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "flownode: counting the flows failed: %s", SPI_result_code_string(rc));
	*in_database = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	*of_owner = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	fn_spi_end(&scope);
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

bool fn_registry_flow_visible(int64 flow_id, int64 *unfilled_from, int64 *unfilled_to) {
	Oid types[1] = {INT8OID};
	Datum values[1] = {Int64GetDatum(flow_id)};
	SpiAs scope;
	bool visible, null_next, null_to;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	/* read-only: in the active snapshot, not a new one */
	if (SPI_execute_with_args("SELECT backfill_next, backfill_to FROM " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	                          " WHERE flow_id = $1",
	                          1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading the flow catalog failed");
	visible = SPI_processed > 0;
	*unfilled_from = *unfilled_to = 0;
	if (visible) {
		Datum next = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &null_next);
		Datum to = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &null_to);

		if (!null_next && !null_to) {
			*unfilled_from = DatumGetInt64(next);
			*unfilled_to = DatumGetInt64(to);
		}
	}
	fn_spi_end(&scope);
	return visible;
}

/* The flow's clock (flownode.flow_clock), read-only in the active snapshot or as of
 * now; false when it has none. */
static bool clock_read(int64 flow_id, TimestampTz *at, bool read_only) {
	Oid types[1] = {INT8OID};
	Datum values[1] = {Int64GetDatum(flow_id)};
	SpiAs scope;
	bool found, isnull;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	if (SPI_execute_with_args("SELECT evaluated_at FROM " FLOWNODE_SCHEMA ".flow_clock WHERE flow_id = $1", 1,
	                          types, values, NULL, read_only, 1) != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading flownode.flow_clock failed");
	found = SPI_processed == 1;
	if (found)
		*at = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	fn_spi_end(&scope);
	return found;
}

bool fn_registry_clock_visible(int64 flow_id, TimestampTz *at) {
	/* read-only: in the active snapshot, with the sink and the record it goes with */
	return clock_read(flow_id, at, true);
}

bool fn_registry_clock_get(int64 flow_id, TimestampTz *at) {
	return clock_read(flow_id, at, false);
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

/* The flow is bound to this database's tables (its triggers are created here), in
 * this cluster; a binding from another cluster (pg_upgrade's) is replaced. */
static void insert_binding(int64 flow_id) {
	Oid types[2] = {INT8OID, INT8OID};
	Datum values[2] = {Int64GetDatum(flow_id), Int64GetDatum((int64)GetSystemIdentifier())};

	catalog_exec(
	    "INSERT INTO " FLOWNODE_SCHEMA "." FLOWNODE_BINDING " (flow_id, system_identifier)"
	    " VALUES ($1, $2) ON CONFLICT (flow_id) DO UPDATE SET system_identifier = EXCLUDED.system_identifier",
	    2, types, values, NULL);
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

/* time_bucket's offset as window_unit keeps it (read_time_bucket): its months,
 * days and microseconds, a text no setting (IntervalStyle) changes. */
static char *bucket_offset_text(const FnWindowSpec *w) {
	return psprintf("%d %d " INT64_FORMAT, w->offset_month, w->offset_day, w->offset_time);
}

int64 fn_registry_insert_flow(const FlowDefinition *def) {
	FlowQuery *fq = def->fq;
	int64 flow_id;
	Oid types[24] = {TEXTOID, REGROLEOID, REGCLASSOID, REGCLASSOID, NAMEOID,        INT2OID,
	                 TEXTOID, TEXTOID,    INTERVALOID, INT8OID,     TEXTOID,        TEXTOID,
	                 BOOLOID, TEXTOID,    TEXTOID,     TEXTOID,     INTERVALOID,    INTERVALOID,
	                 TEXTOID, TEXTOID,    TEXTOID,     INT8OID,     TIMESTAMPTZOID, TEXTOID};
	Datum v[24];
	char n[25];
	char *input = fn_time_input_text(&fq->input);
	bool win = fq->window.kind != FN_WINDOW_NONE;
	bool bin = fq->window.kind == FN_WINDOW_DATE_BIN;
	bool bucket = fq->window.kind == FN_WINDOW_TIME_BUCKET;
	Interval *stride = palloc0(sizeof(Interval));

	memset(n, ' ', sizeof(n));
	n[24] = '\0';
	stride->time = fq->window.stride_time;
	stride->day = fq->window.stride_day;
	stride->month = fq->window.stride_month;
	v[0] = CStringGetTextDatum(def->settings.flow_name);
	v[1] = ObjectIdGetDatum(def->settings.owner);
	v[2] = ObjectIdGetDatum(fq->source_relid);
	v[3] = ObjectIdGetDatum(def->sink_relid);
	v[4] = win ? DirectFunctionCall1(namein, CStringGetDatum(fq->time_column)) : (n[4] = 'n', 0);
	v[5] = win ? Int16GetDatum(fq->time_attnum) : (n[5] = 'n', 0);
	v[6] = win ? CStringGetTextDatum(def->window_text) : (n[6] = 'n', 0);
	v[7] = win ? CStringGetTextDatum(bin      ? "date_bin"
	                                 : bucket ? "time_bucket"
	                                          : "date_trunc")
	           : (n[7] = 'n', 0);
	v[8] = bin || bucket ? IntervalPGetDatum(stride) : (n[8] = 'n', 0);
	v[9] = bin || bucket ? Int64GetDatum(fq->window.origin) : (n[9] = 'n', 0);
	v[10] = bucket          ? CStringGetTextDatum(bucket_offset_text(&fq->window))
	        : (win && !bin) ? CStringGetTextDatum(fq->window.unit)
	                        : (n[10] = 'n', 0);
	v[11] = (win && !bin && fq->window.zone[0]) ? CStringGetTextDatum(fq->window.zone) : (n[11] = 'n', 0);
	v[12] = win ? BoolGetDatum(fq->window.with_time_zone) : (n[12] = 'n', 0);
	v[13] = CStringGetTextDatum(def->stored_query);
	v[14] = CStringGetTextDatum(def->settings.user_query);
	v[15] = CStringGetTextDatum(def->settings.timezone);
	v[16] = def->settings.eval_interval ? IntervalPGetDatum(def->settings.eval_interval) : (n[16] = 'n', 0);
	v[17] = def->settings.expire_after ? IntervalPGetDatum(def->settings.expire_after) : (n[17] = 'n', 0);
	v[18] = def->settings.comment ? CStringGetTextDatum(def->settings.comment) : (n[18] = 'n', 0);
	v[19] = CStringGetTextDatum(dialect_name(def->settings.dialect));
	v[20] = CStringGetTextDatum(def->settings.options ? def->settings.options : "{}");
	v[21] = Int64GetDatum(def->flow_id);
	v[22] = def->settings.created_at != 0 ? TimestampTzGetDatum(def->settings.created_at) : (n[22] = 'n', 0);
	v[23] = win && input ? CStringGetTextDatum(input) : (n[23] = 'n', 0);
	/* a waiting flow that starts keeps its id (OVERRIDING SYSTEM VALUE), and a flow that
	 * replaces or starts another keeps its creation time */
	flow_id = catalog_exec(
	    def->flow_id > 0
	        ? "INSERT INTO " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	          " (flow_name, owner, source_table, sink_table, time_column, time_attnum, window_expr,"
	          " window_kind, window_stride, window_origin, window_unit, window_zone, with_time_zone,"
	          " query, user_query, timezone, eval_interval, expire_after, comment, dialect, options, flow_id,"
	          " created_at, time_input) OVERRIDING SYSTEM VALUE"
	          " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
	          " $18, $19, $20, $21::jsonb, $22, COALESCE($23, pg_catalog.now()), $24) RETURNING flow_id"
	        : "INSERT INTO " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	          " (flow_name, owner, source_table, sink_table, time_column, time_attnum, window_expr,"
	          " window_kind, window_stride, window_origin, window_unit, window_zone, with_time_zone,"
	          " query, user_query, timezone, eval_interval, expire_after, comment, dialect, options,"
	          " created_at, time_input)"
	          " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
	          " $18, $19, $20, $21::jsonb, COALESCE($23, pg_catalog.now()), $24) RETURNING flow_id",
	    24, types, v, n);
	insert_binding(flow_id);
	return flow_id;
}

void fn_registry_bind(int64 flow_id, AttrNumber time_attnum, const char *time_column) {
	Oid types[3] = {INT8OID, INT2OID, NAMEOID};
	Datum values[3];
	char nulls[4] = "   ";

	values[0] = Int64GetDatum(flow_id);
	values[1] = time_attnum > 0 ? Int16GetDatum(time_attnum) : (nulls[1] = 'n', 0);
	values[2] = time_column ? DirectFunctionCall1(namein, CStringGetDatum(time_column)) : (nulls[2] = 'n', 0);
	catalog_exec("UPDATE " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG " SET time_attnum = $2, time_column = $3"
	             " WHERE flow_id OPERATOR(pg_catalog.=) $1",
	             3, types, values, nulls);
	insert_binding(flow_id);
}

void fn_registry_unbind(int64 flow_id) {
	Oid types[1] = {INT8OID};
	Datum values[1] = {Int64GetDatum(flow_id)};

	catalog_exec("DELETE FROM " FLOWNODE_SCHEMA "." FLOWNODE_BINDING
	             " WHERE flow_id OPERATOR(pg_catalog.=) $1",
	             1, types, values, NULL);
}

int64 fn_registry_insert_waiting_flow(const WaitingFlowDefinition *def) {
	Oid types[12] = {TEXTOID,     REGROLEOID,  TEXTOID, TEXTOID, TEXTOID, TEXTOID,
	                 INTERVALOID, INTERVALOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID};
	Datum v[12];
	char n[13];

	memset(n, ' ', sizeof(n));
	n[12] = '\0';
	v[0] = CStringGetTextDatum(def->settings.flow_name);
	v[1] = ObjectIdGetDatum(def->settings.owner);
	v[2] = CStringGetTextDatum(def->settings.user_query);
	v[3] = CStringGetTextDatum(def->sink_name);
	v[4] = CStringGetTextDatum(def->settings.timezone);
	v[5] = CStringGetTextDatum(def->search_path);
	v[6] = def->settings.eval_interval ? IntervalPGetDatum(def->settings.eval_interval) : (n[6] = 'n', 0);
	v[7] = def->settings.expire_after ? IntervalPGetDatum(def->settings.expire_after) : (n[7] = 'n', 0);
	v[8] = def->settings.comment ? CStringGetTextDatum(def->settings.comment) : (n[8] = 'n', 0);
	v[9] = CStringGetTextDatum(dialect_name(def->settings.dialect));
	v[10] = CStringGetTextDatum(def->settings.options ? def->settings.options : "{}");
	v[11] = def->settings.created_at != 0 ? TimestampTzGetDatum(def->settings.created_at) : (n[11] = 'n', 0);
	return catalog_exec("INSERT INTO " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	                    " (flow_name, owner, user_query, sink_name, timezone, search_path, eval_interval,"
	                    " expire_after, comment, dialect, options, created_at)"
	                    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb,"
	                    " COALESCE($12, pg_catalog.now())) RETURNING flow_id",
	                    12, types, v, n);
}
