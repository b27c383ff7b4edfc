/*
 * run_history.c: the rows of flownode.run_history (run_history.h). Two statements,
 * each prepared once per process: the insert, and the prune of one flow's rows
 * beyond the setting, which walks the index on (flow_id, started_at) from the
 * newest row down. A flow's rows go with it (a foreign key to flownode.flow, ON
 * DELETE CASCADE): the key check's share lock on the flow's catalog row cannot wait
 * for a drop_flow, which takes the flow's lock before deleting the row and so waits
 * for the refresh in flight; a failure written after a drop committed is refused by
 * the key, and its writer gives up on it (flow_worker.c).
 */
#include "flownode.h"

#include "record/run_history.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "registry/flow_registry.h"
#include "pgutil/pg_util.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#define HISTORY_TABLE "run_history"

static const char *const kind_names[] = {"refresh", "flush", "repair", "backfill", "fill"};

/* The table exists: the database's objects are 0.4's or later. */
static bool history_exists(void) {
	Oid nsp = get_namespace_oid(FLOWNODE_SCHEMA, true);

	return OidIsValid(nsp) && OidIsValid(get_relname_relid(HISTORY_TABLE, nsp));
}

/* The statements run in the active snapshot, or in one of their own (the end of a
 * refresh's transaction has none). */
static bool push_snapshot(void) {
	if (ActiveSnapshotSet())
		return false;
	PushActiveSnapshot(GetTransactionSnapshot());
	return true;
}

static Datum interval_between(TimestampTz from, TimestampTz to) {
	Interval *i = palloc0(sizeof(Interval));

	i->time = Max(0, to - from);
	return IntervalPGetDatum(i);
}

void fn_history_write(const FnRunRecord *r) {
	static SPIPlanPtr plan = NULL;
	Oid types[10] = {INT8OID, TEXTOID, TIMESTAMPTZOID, INTERVALOID, INT8OID,
	                 INT8OID, INT8OID, BOOLOID,        TEXTOID,     TEXTOID};
	Datum values[10];
	char nulls[11] = "          "; /* 10 columns, and the NUL of the literal */
	SpiAs scope;
	bool pushed;

	if (fn_run_history_per_flow == 0 || !history_exists())
		return;
	values[0] = Int64GetDatum(r->flow_id);
	values[1] = CStringGetTextDatum(kind_names[r->kind]);
	values[2] = TimestampTzGetDatum(r->start);
	values[3] = interval_between(r->start, r->end);
	values[4] = Int64GetDatum(r->windows);
	nulls[4] = r->windows < 0 ? 'n' : ' ';
	values[5] = Int64GetDatum(r->rows_read);
	nulls[5] = r->rows_read < 0 ? 'n' : ' ';
	values[6] = Int64GetDatum(r->rows_written);
	values[7] = BoolGetDatum(r->folded);
	values[8] = CStringGetTextDatum(r->sqlstate != 0 ? unpack_sql_state(r->sqlstate) : "");
	values[9] = CStringGetTextDatum(r->error != NULL ? r->error : "");
	nulls[8] = nulls[9] = r->sqlstate == 0 ? 'n' : ' ';
	pushed = push_snapshot();
	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	if (plan == NULL)
		plan =
		    fn_spi_prepare_kept("INSERT INTO " FLOWNODE_SCHEMA "." HISTORY_TABLE
		                        " (flow_id, kind, started_at, duration, windows, rows_read, rows_written,"
		                        " folded, sqlstate, error) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
		                        10, types, 0);
	if (SPI_execute_plan(plan, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "flownode: writing the run history failed");
	fn_spi_end(&scope);
	if (pushed)
		PopActiveSnapshot();
}

bool fn_history_prune_due(uint64 writes) {
	uint64 every = Max(1, fn_run_history_per_flow / 10);

	return fn_run_history_per_flow > 0 && writes % every == 0;
}

void fn_history_prune(int64 flow_id) {
	static SPIPlanPtr plan = NULL;
	Oid types[2] = {INT8OID, INT4OID};
	Datum values[2] = {Int64GetDatum(flow_id), Int32GetDatum(fn_run_history_per_flow)};
	SpiAs scope;
	bool pushed;

	if (fn_run_history_per_flow == 0 || !history_exists())
		return;
	pushed = push_snapshot();
	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	if (plan == NULL)
		plan = fn_spi_prepare_kept(
		    "DELETE FROM " FLOWNODE_SCHEMA "." HISTORY_TABLE " WHERE flow_id OPERATOR(pg_catalog.=) $1"
		    " AND started_at OPERATOR(pg_catalog.<) (SELECT h.started_at FROM " FLOWNODE_SCHEMA
		    "." HISTORY_TABLE " h WHERE h.flow_id OPERATOR(pg_catalog.=) $1"
		    " ORDER BY h.started_at DESC OFFSET $2 - 1 LIMIT 1)",
		    2, types, 0);
	if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "flownode: pruning the run history failed");
	fn_spi_end(&scope);
	if (pushed)
		PopActiveSnapshot();
}
