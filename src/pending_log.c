/*
 * pending_log.c: the durable record of pending work (DESIGN invariant 4).
 *
 * Shared memory is lost at every restart and crash, so a committing writer also
 * records its windows in flownode.pending, in its own transaction (PRE_COMMIT): a
 * committed change always has a committed record. A refresh removes the windows it
 * covered from the record in its own transaction and with its own snapshot, so the
 * sink and the record move together. A worker rebuilds its flow's shared-memory
 * state from the record when it starts.
 *
 * The record is written with a plain heap and index insert (no SPI, no executor): it is one
 * small row per (transaction, flow), and only when the windows are not already
 * known to be recorded (the slot's durable set).
 */
#include "flownode/flownode.h"

#include "access/heapam.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/multirangetypes.h"
#include "utils/rangetypes.h"
#include "utils/typcache.h"

/* An int8multirange datum of the given sorted, disjoint ranges. */
Datum fn_ranges_datum(const FnTimeRange *ranges, uint32 n) {
	TypeCacheEntry *rangetyp = lookup_type_cache(INT8RANGEOID, TYPECACHE_RANGE_INFO);
	RangeType **rs = palloc(sizeof(RangeType *) * Max(n, 1));

	for (uint32 i = 0; i < n; i++) {
		RangeBound lo = {Int64GetDatum(ranges[i].start), false, true, true}; /* [start */
		RangeBound hi = {Int64GetDatum(ranges[i].end), false, false, false}; /* end) */

		/* [start, end) is already int8range's canonical form: serialize it without
		 * make_range's call of int8range_canonical (which deserializes and
		 * serializes it again), the bulk of the cost of a large record */
		rs[i] = range_serialize(rangetyp, &lo, &hi, false);
	}
	return MultirangeTypePGetDatum(make_multirange(INT8MULTIRANGEOID, rangetyp, (int32)n, rs));
}

/* Called at PRE_COMMIT of a writer: one row for this flow's windows. */
void fn_record_pending(int64 flow_id, const FnTimeRange *ranges, uint32 n) {
	Relation rel = table_open(fn_pending_relid(), RowExclusiveLock);
	Datum values[2];
	bool nulls[2] = {false, false};
	HeapTuple tup;

	values[0] = Int64GetDatum(flow_id);
	values[1] = fn_ranges_datum(ranges, n);
	tup = heap_form_tuple(RelationGetDescr(rel), values, nulls);
	CatalogTupleInsert(rel, tup); /* heap insert plus its index, without the executor */
	heap_freetuple(tup);
	table_close(rel, NoLock);
}

/*
 * Adds the flow's recorded windows to its slot (dirty and durable sets). Called by
 * the flow's worker at start, inside a transaction. Adding is idempotent, so
 * windows already in shared memory are harmless.
 */
void fn_reload_pending(int64 flow_id, FlowSlot *slot) {
	SpiAs scope;
	Oid argtypes[1] = {INT8OID};
	Datum args[1] = {Int64GetDatum(flow_id)};

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	/* merged first: a backlog of many small transactions becomes few ranges */
	if (SPI_execute_with_args(
	        "SELECT pg_catalog.lower(r), pg_catalog.upper(r) FROM pg_catalog.unnest("
	        "(SELECT pg_catalog.range_agg(x) FROM flownode.pending p, pg_catalog.unnest(p.ranges) x"
	        " WHERE p.flow_id = $1)) r",
	        1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading flownode.pending failed");
	LWLockAcquire(fn_slot_lock(slot), LW_EXCLUSIVE);
	for (uint64 i = 0; i < SPI_processed; i++) {
		bool n1, n2;
		FnTimeRange r;

		r.start = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &n1));
		r.end = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &n2));
		if (n1 || n2)
			continue;
		fn_dirty_add(fn_slot_dirty_set(slot), r);
		fn_durable_add(fn_slot_durable_set(slot), r);
		slot->removals = true; /* what wrote it is unknown now */
	}
	LWLockRelease(fn_slot_lock(slot));
	fn_spi_end(&scope);
}
