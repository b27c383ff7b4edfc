/*
 * key_record.c: flownode.pending_keys, the key marks that wait for their refresh
 * (docs/internals.md §3 and §4, *Key marks*).
 *
 * Unlike the windows of flownode.pending, a key mark lives only here: a writer
 * inserts its rows in its own transaction (PRE_COMMIT), and the refresh reads them
 * in its snapshot, recomputes their groups and deletes exactly the rows it read, in
 * that same snapshot. A writer that commits after that snapshot keeps both its rows
 * out of the refresh and its key marks in the table; one that committed before has
 * both seen. So nothing about key marks can be lost to a crash or a race, and shared
 * memory only tells the worker to look (shmem/slot_keys.c).
 */
#include "flownode.h"

#include "record/key_record.h"

#include "pgutil/pg_util.h"
#include "registry/flow_registry.h"

#include "access/heapam.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

/* Whether the catalog has the table (a library newer than the catalog: none). */
static bool have_key_record(void) {
	return OidIsValid(get_relname_relid("pending_keys", get_namespace_oid(FLOWNODE_SCHEMA, false)));
}

static Oid key_record_relid(void) {
	Oid relid = get_relname_relid("pending_keys", get_namespace_oid(FLOWNODE_SCHEMA, false));

	if (!OidIsValid(relid))
		elog(ERROR, "flownode: table flownode.pending_keys is missing");
	return relid;
}

/* Whether the table ever held a row (a table that never did has no block): the
 * flows view asks for every flow, and on most servers no flow's marks carry keys,
 * so the common answer costs no query. */
static bool key_record_has_blocks(void) {
	Relation rel = table_open(key_record_relid(), AccessShareLock);
	BlockNumber n = RelationGetNumberOfBlocks(rel);

	table_close(rel, AccessShareLock);
	return n > 0;
}

/* A heap and index insert per mark, without the executor (as fn_pending_write). Its
 * committed_at is PRE_COMMIT's clock, as flownode.pending's: the flows view's lag. */
void fn_key_record_write(int64 flow_id, const FnKeyMark *marks, uint32 n) {
	Relation rel = table_open(key_record_relid(), RowExclusiveLock);
	CatalogIndexState indexes = CatalogOpenIndexes(rel);
	bool nulls[5] = {false, false, false, false, false};
	TimestampTz committed_at = GetCurrentTimestamp();

	if (RelationGetDescr(rel)->natts != 5)
		elog(ERROR, "flownode: flownode.pending_keys has other columns than this library writes");
	for (uint32 i = 0; i < n; i++) {
		Datum values[5] = {Int64GetDatum(flow_id), Int64GetDatum(marks[i].window.start),
		                   Int64GetDatum(marks[i].window.end), Int64GetDatum((int64)marks[i].hash),
		                   TimestampTzGetDatum(committed_at)};
		HeapTuple tup = heap_form_tuple(RelationGetDescr(rel), values, nulls);

		CatalogTupleInsertWithInfo(rel, tup, indexes);
		heap_freetuple(tup);
	}
	CatalogCloseIndexes(indexes);
	table_close(rel, NoLock);
}

static void run_as_owner(const char *sql, int nargs, Oid *types, Datum *values, Snapshot snap, int expect) {
	if (SPI_execute_snapshot(SPI_prepare(sql, nargs, types), values, NULL, snap, InvalidSnapshot,
	                         expect == SPI_OK_SELECT, false, 0) != expect)
		elog(ERROR, "flownode: updating flownode.pending_keys failed");
}

FnKeyMark *fn_key_record_read(int64 flow_id, Snapshot snap, int64 expired_before, uint32 *n, Datum *ctids) {
	SpiAs scope;
	Oid types[2] = {INT8OID, INT8OID};
	Datum values[2] = {Int64GetDatum(flow_id), Int64GetDatum(expired_before)};
	FnKeyMark *marks;
	Datum *tids;
	MemoryContext caller = CurrentMemoryContext;

	if (!have_key_record()) {
		*n = 0;
		*ctids = (Datum)0;
		return NULL;
	}
	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	if (expired_before != 0) /* frozen windows: never refreshed, their marks go */
		run_as_owner("DELETE FROM flownode.pending_keys WHERE flow_id = $1 AND window_start < $2", 2, types,
		             values, snap, SPI_OK_DELETE);
	/* the DELETE's effects are not visible in `snap` (taken before it): the frozen
	 * windows are left out of the read too */
	run_as_owner(
	    "SELECT ctid, window_start, window_end, key_hash FROM flownode.pending_keys WHERE flow_id = $1"
	    " AND ($2 = 0 OR window_start >= $2) ORDER BY window_start LIMIT " CppAsString2(
	        FN_KEY_RECORD_READ_MAX),
	    2, types, values, snap, SPI_OK_SELECT);
	marks = MemoryContextAlloc(caller, sizeof(FnKeyMark) * Max(SPI_processed, 1));
	tids = MemoryContextAlloc(caller, sizeof(Datum) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++) {
		HeapTuple t = SPI_tuptable->vals[i];
		TupleDesc d = SPI_tuptable->tupdesc;
		bool isnull;
		ItemPointer tid = MemoryContextAlloc(caller, sizeof(ItemPointerData));

		*tid = *(ItemPointer)DatumGetPointer(SPI_getbinval(t, d, 1, &isnull));
		tids[i] = PointerGetDatum(tid);
		marks[i].window.start = DatumGetInt64(SPI_getbinval(t, d, 2, &isnull));
		marks[i].window.end = DatumGetInt64(SPI_getbinval(t, d, 3, &isnull));
		marks[i].hash = (uint64)DatumGetInt64(SPI_getbinval(t, d, 4, &isnull));
	}
	*n = (uint32)SPI_processed;
	fn_spi_end(&scope);
	*ctids = PointerGetDatum(
	    construct_array(tids, (int)*n, TIDOID, sizeof(ItemPointerData), false, TYPALIGN_SHORT));
	return marks;
}

void fn_key_record_trim(Datum ctids, Snapshot snap) {
	SpiAs scope;
	Oid types[1] = {TIDARRAYOID};

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	run_as_owner("DELETE FROM flownode.pending_keys WHERE ctid = ANY ($1)", 1, types, &ctids, snap,
	             SPI_OK_DELETE);
	fn_spi_end(&scope);
}

/* One (flow, window, oldest) row of the summary's query: the query sorts by flow, so
 * each flow's windows are a run of `all`, the array of every row's window. */
static void summary_add(FnKeyRecordFlow *flows, uint32 *nflows, FnTimeRange *all, HeapTuple t, TupleDesc d) {
	bool isnull;
	int64 flow_id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
	FnKeyRecordFlow *f = *nflows > 0 ? &flows[*nflows - 1] : NULL;
	TimestampTz at = DatumGetTimestampTz(SPI_getbinval(t, d, 4, &isnull));

	if (f == NULL || f->flow_id != flow_id) {
		f = &flows[(*nflows)++];
		f->flow_id = flow_id;
		f->windows = all;
		f->nwindows = 0;
		f->oldest = at;
	}
	all->start = DatumGetInt64(SPI_getbinval(t, d, 2, &isnull));
	all->end = DatumGetInt64(SPI_getbinval(t, d, 3, &isnull));
	f->nwindows++;
	f->oldest = Min(f->oldest, at);
}

/* The summary of one flow's key marks (flow_id), or of every flow's (0). */
static FnKeyRecordFlow *read_summary(int64 flow_id, uint32 *nflows) {
	SpiAs scope;
	Oid types[1] = {INT8OID};
	Datum values[1] = {Int64GetDatum(flow_id)};
	FnKeyRecordFlow *flows;
	FnTimeRange *all;
	MemoryContext caller = CurrentMemoryContext, spi;

	*nflows = 0;
	if (!have_key_record() || !key_record_has_blocks())
		return NULL;
	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	run_as_owner("SELECT flow_id, window_start, window_end, pg_catalog.min(committed_at)"
	             " FROM flownode.pending_keys WHERE $1 = 0 OR flow_id = $1 GROUP BY 1, 2, 3 ORDER BY 1, 2",
	             1, types, values, NULL, SPI_OK_SELECT);
	spi = MemoryContextSwitchTo(caller);
	flows = palloc(sizeof(FnKeyRecordFlow) * Max(SPI_processed, 1));
	all = palloc(sizeof(FnTimeRange) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
		summary_add(flows, nflows, &all[i], SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
	MemoryContextSwitchTo(spi);
	fn_spi_end(&scope);
	return flows;
}

FnKeyRecordFlow *fn_key_record_summary(uint32 *nflows) {
	return read_summary(0, nflows);
}

FnTimeRange *fn_key_record_windows(int64 flow_id, uint32 *n) {
	uint32 nflows;
	FnKeyRecordFlow *flows = read_summary(flow_id, &nflows);

	*n = nflows > 0 ? flows[0].nwindows : 0;
	return nflows > 0 ? flows[0].windows : NULL;
}

const FnKeyRecordFlow *fn_key_record_find(const FnKeyRecordFlow *flows, uint32 n, int64 flow_id) {
	uint32 lo = 0, hi = n;

	while (lo < hi) { /* sorted by flow_id */
		uint32 mid = lo + (hi - lo) / 2;

		if (flows[mid].flow_id == flow_id)
			return &flows[mid];
		if (flows[mid].flow_id < flow_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void fn_key_record_forget_flow(int64 flow_id) {
	SpiAs scope;
	Oid types[1] = {INT8OID};
	Datum values[1] = {Int64GetDatum(flow_id)};

	if (!have_key_record())
		return;
	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	run_as_owner("DELETE FROM flownode.pending_keys WHERE flow_id = $1", 1, types, values, NULL,
	             SPI_OK_DELETE);
	fn_spi_end(&scope);
}
