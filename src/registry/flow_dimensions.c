/*
 * flow_dimensions.c: the catalog flownode.flow_dimension (flow_dimensions.h). Its
 * rows name tables and columns by OID and number, so renames need nothing here; a
 * flow's rows go with the flow (lifecycle/flow_removal.c).
 */
#include "flownode.h"

#include "registry/flow_dimensions.h"

#include "registry/flow_registry.h"

#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "pgutil/pg_util.h"
#include "query/flow_joins.h"
#include "utils/snapmgr.h"

#define DIMENSION_TABLE FLOWNODE_SCHEMA ".flow_dimension"

/* Runs one statement on the catalog, inside the caller's SPI scope as the catalog's
 * owner; reads see the catalog as it is now, not as the caller's snapshot saw it. */
static void dimension_exec(const char *sql, int nargs, Oid *types, Datum *values, bool read) {
	int rc;

	if (read) {
		SPIPlanPtr plan = SPI_prepare(sql, nargs, types);

		if (plan == NULL)
			elog(ERROR, "flownode: preparing a catalog query failed: %s", SPI_result_code_string(SPI_result));
		rc = SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(), InvalidSnapshot, true, false, 0);
	} else
		rc = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);
	if (rc < 0)
		elog(ERROR, "flownode: reading or writing flownode.flow_dimension failed: %s",
		     SPI_result_code_string(rc));
}

static void insert_key(Oid *types, int64 flow_id, Oid relid, AttrNumber dim_attnum, AttrNumber fact_attnum,
                       Oid opno) {
	Datum v[5] = {Int64GetDatum(flow_id), ObjectIdGetDatum(relid), Int16GetDatum(dim_attnum),
	              Int16GetDatum(fact_attnum), ObjectIdGetDatum(opno)};

	dimension_exec("INSERT INTO " DIMENSION_TABLE " (flow_id, dimension, dim_attnum, fact_attnum,"
	               " operator) VALUES ($1, $2, $3, $4, $5)",
	               5, types, v, false);
}

void fn_registry_insert_dimensions(int64 flow_id, List *dimensions) {
	Oid types[5] = {INT8OID, OIDOID, INT2OID, INT2OID, OIDOID};
	ListCell *lc, *lc2;
	SpiAs scope;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	foreach (lc, dimensions) {
		FlowDimension *d = lfirst(lc);

		foreach (lc2, d->keys) {
			FlowJoinKey *k = lfirst(lc2);

			insert_key(types, flow_id, d->relid, k->dim_attnum, k->fact_attnum, k->opno);
		}
		/* every write marks every window; a view's row names it for DROP VIEW and renames */
		if (d->every_write || d->keys == NIL)
			insert_key(types, flow_id, d->relid, 0, 0, InvalidOid);
	}
	fn_spi_end(&scope);
}

void fn_registry_delete_dimensions(int64 flow_id) {
	Oid types[1] = {INT8OID};
	Datum v[1] = {Int64GetDatum(flow_id)};
	SpiAs scope;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	dimension_exec("DELETE FROM " DIMENSION_TABLE " WHERE flow_id = $1", 1, types, v, false);
	fn_spi_end(&scope);
}

List *fn_load_flow_dimensions(int64 flow_id) {
	Oid types[1] = {INT8OID};
	Datum v[1] = {Int64GetDatum(flow_id)};
	MemoryContext caller = CurrentMemoryContext;
	List *out = NIL;
	SpiAs scope;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	dimension_exec("SELECT DISTINCT dimension FROM " DIMENSION_TABLE " WHERE flow_id = $1 ORDER BY 1", 1,
	               types, v, true);
	for (uint64 i = 0; i < SPI_processed; i++) {
		bool isnull;
		Oid relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		MemoryContext spi = MemoryContextSwitchTo(caller);

		out = lappend_oid(out, relid);
		MemoryContextSwitchTo(spi);
	}
	fn_spi_end(&scope);
	return out;
}

List *fn_flow_read_tables(const TaskConfig *cfg) {
	List *tables = list_concat(get_partition_ancestors(cfg->source_relid),
	                           find_all_inheritors(cfg->source_relid, NoLock, NULL));

	return list_concat(tables, fn_load_flow_dimensions(cfg->flow_id));
}

List *fn_load_dimension_keys(Oid dimension) {
	Oid types[1] = {OIDOID};
	Datum v[1] = {ObjectIdGetDatum(dimension)};
	MemoryContext caller = CurrentMemoryContext;
	List *out = NIL;
	SpiAs scope;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	dimension_exec(
	    "SELECT d.flow_id, f.source_table, d.dim_attnum, d.fact_attnum, d.operator"
	    " FROM " DIMENSION_TABLE " d JOIN " FLOWNODE_SCHEMA "." FLOWNODE_CATALOG
	    " f USING (flow_id) WHERE d.dimension = $1 ORDER BY d.flow_id, d.fact_attnum, d.dim_attnum",
	    1, types, v, true);
	for (uint64 i = 0; i < SPI_processed; i++) {
		HeapTuple tup = SPI_tuptable->vals[i];
		TupleDesc desc = SPI_tuptable->tupdesc;
		bool isnull;
		MemoryContext spi = MemoryContextSwitchTo(caller);
		DimensionKey *k = palloc(sizeof(DimensionKey));

		k->flow_id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		k->source_relid = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
		k->dimension = dimension;
		k->dim_attnum = DatumGetInt16(SPI_getbinval(tup, desc, 3, &isnull));
		k->fact_attnum = DatumGetInt16(SPI_getbinval(tup, desc, 4, &isnull));
		k->opno = DatumGetObjectId(SPI_getbinval(tup, desc, 5, &isnull));
		out = lappend(out, k);
		MemoryContextSwitchTo(spi);
	}
	fn_spi_end(&scope);
	return out;
}

bool fn_is_dimension(Oid relid) {
	Oid types[1] = {OIDOID};
	Datum v[1] = {ObjectIdGetDatum(relid)};
	bool found;
	SpiAs scope;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	dimension_exec("SELECT 1 FROM " DIMENSION_TABLE " WHERE dimension = $1 LIMIT 1", 1, types, v, true);
	found = SPI_processed > 0;
	fn_spi_end(&scope);
	return found;
}
