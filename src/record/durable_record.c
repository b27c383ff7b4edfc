/*
 * durable_record.c: the durable record of pending work, flownode.pending
 * (docs/internals.md §4; §2, invariant 4).
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
 * known to be recorded (the slot's durable set). A commit that records several
 * flows opens the table and its index once.
 */
#include "flownode.h"

#include "record/durable_record.h"

#include "pgutil/pg_util.h"
#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"

#include "access/heapam.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/multirangetypes.h"
#include "utils/rangetypes.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

/*
 * The record's OID, looked up by name once per backend rather than at every commit
 * of a writer; a relcache invalidation of it (DROP EXTENSION) or a cache reset
 * forgets it.
 */
static Oid pending_relid_cache = InvalidOid;

static void forget_pending_relid(Datum arg pg_attribute_unused(), Oid relid) {
	if (!OidIsValid(relid) || relid == pending_relid_cache)
		pending_relid_cache = InvalidOid;
}

void fn_record_init(void) {
	CacheRegisterRelcacheCallback(forget_pending_relid, (Datum)0);
}

static Oid pending_relid(void) {
	if (!OidIsValid(pending_relid_cache)) {
		Oid nsp = get_namespace_oid(FLOWNODE_SCHEMA, false);

		pending_relid_cache = get_relname_relid("pending", nsp);
		if (!OidIsValid(pending_relid_cache))
			elog(ERROR, "flownode: table flownode.pending is missing");
	}
	return pending_relid_cache;
}

/* The generic way: PostgreSQL's own constructors (they sort and merge again). */
static Datum ranges_datum_generic(const FnTimeRange *ranges, uint32 n) {
	TypeCacheEntry *rangetyp = lookup_type_cache(INT8RANGEOID, TYPECACHE_RANGE_INFO);
	RangeType **rs = palloc(sizeof(RangeType *) * Max(n, 1));

	for (uint32 i = 0; i < n; i++) {
		RangeBound lo = {Int64GetDatum(ranges[i].start), false, true, true}; /* [start */
		RangeBound hi = {Int64GetDatum(ranges[i].end), false, false, false}; /* end) */

		/* [start, end) is already int8range's canonical form: serialize it without
		 * make_range's call of int8range_canonical (which deserializes and
		 * serializes it again) */
		rs[i] = fn_range_serialize(rangetyp, &lo, &hi, false);
	}
	return MultirangeTypePGetDatum(make_multirange(INT8MULTIRANGEOID, rangetyp, (int32)n, rs));
}

/*
 * The stored form of an int8multirange written directly, for ranges that are
 * already what make_multirange would make of them (sorted, non-empty, neither
 * overlapping nor adjacent): the 12-byte header; one 32-bit item per range after the
 * first, every fourth the offset of its bounds with the high bit set, the others the
 * length of the previous range's bounds; one flags byte per range; then the bounds,
 * double-aligned. That is PostgreSQL's on-disk format of multiranges (kept stable for
 * pg_upgrade), but not an API, so each backend checks it once against
 * make_multirange's bytes before using it.
 */
#define MR_ITEM_OFFSET_BIT 0x80000000u
#define MR_ITEM_OFFSET_STRIDE 4

static Datum ranges_datum_direct(const FnTimeRange *ranges, uint32 n) {
	Size head = TYPEALIGN(ALIGNOF_DOUBLE, sizeof(MultirangeType) + (n - 1) * sizeof(uint32) + n);
	Size bound_size = 2 * sizeof(int64);
	Size size = head + n * bound_size;
	MultirangeType *mr = palloc0(size); /* padding zeroed, as make_multirange does */
	uint32 *items = (uint32 *)((char *)mr + sizeof(MultirangeType));
	uint8 *flags = (uint8 *)(items + (n - 1));
	int64 *bounds = (int64 *)((char *)mr + head);

	SET_VARSIZE(mr, size);
	mr->multirangetypid = INT8MULTIRANGEOID;
	mr->rangeCount = n;
	for (uint32 i = 0; i < n; i++) {
		if (i > 0)
			items[i - 1] = (i % MR_ITEM_OFFSET_STRIDE == 0) ? ((uint32)(i * bound_size) | MR_ITEM_OFFSET_BIT)
			                                                : (uint32)bound_size;
		flags[i] = RANGE_LB_INC; /* [start, end) */
		bounds[2 * i] = ranges[i].start;
		bounds[2 * i + 1] = ranges[i].end;
	}
	return MultirangeTypePGetDatum(mr);
}

static bool canonical_ranges(const FnTimeRange *ranges, uint32 n) {
	for (uint32 i = 0; i < n; i++)
		if (ranges[i].start >= ranges[i].end || (i > 0 && ranges[i - 1].end >= ranges[i].start))
			return false;
	return n > 0;
}

/*
 * Whether this build writes multiranges as make_multirange does: checked once per
 * backend on a probe of its own, with items of both kinds (offsets and lengths), so
 * that a backend's first record (often its only one: a COPY) is built once, not
 * twice to compare.
 */
static bool direct_layout_matches(void) {
	FnTimeRange probe[3 * MR_ITEM_OFFSET_STRIDE + 1];
	uint32 n = lengthof(probe);
	Datum generic, mine;
	bool same;

	for (uint32 i = 0; i < n; i++)
		probe[i] = (FnTimeRange){(int64)i * 1000 - 5000, (int64)i * 1000 - 4990 + i};
	generic = ranges_datum_generic(probe, n);
	mine = ranges_datum_direct(probe, n);
	same = VARSIZE(DatumGetPointer(mine)) == VARSIZE(DatumGetPointer(generic)) &&
	       memcmp(DatumGetPointer(mine), DatumGetPointer(generic), VARSIZE(DatumGetPointer(mine))) == 0;
	pfree(DatumGetPointer(mine));
	pfree(DatumGetPointer(generic));
	if (!same)
		elog(DEBUG1, "flownode: multirange layout differs from this build's; using make_multirange");
	return same;
}

/*
 * An int8multirange datum of the given ranges. A writer scattered over time records
 * a few hundred at once, and make_multirange, which deserializes each range again
 * for every comparison of its sort and merge, was the larger part of that commit.
 */
static Datum ranges_datum(const FnTimeRange *ranges, uint32 n) {
	static int direct = 0; /* this backend's check: 0 not yet, 1 same bytes, -1 differ */

	if (!canonical_ranges(ranges, n))
		return ranges_datum_generic(ranges, n);
	if (direct == 0)
		direct = direct_layout_matches() ? 1 : -1;
	return direct > 0 ? ranges_datum_direct(ranges, n) : ranges_datum_generic(ranges, n);
}

/* The record's table and its index, opened once for every flow a commit records. */
struct PendingWriter {
	Relation rel;
	CatalogIndexState indexes;
};

PendingWriter *fn_pending_open(void) {
	PendingWriter *w = palloc(sizeof(PendingWriter));

	w->rel = table_open(pending_relid(), RowExclusiveLock);
	w->indexes = CatalogOpenIndexes(w->rel);
	return w;
}

/* Called at PRE_COMMIT of a writer: one row for this flow's windows. A record of
 * 0.1 (before ALTER EXTENSION flownode UPDATE) has no committed_at: the tuple is
 * formed for the table's own columns. */
void fn_pending_write(PendingWriter *w, int64 flow_id, const FnTimeRange *ranges, uint32 n,
                      TimestampTz committed_at) {
	Datum values[3];
	bool nulls[3] = {false, false, false};
	HeapTuple tup;

	if (RelationGetDescr(w->rel)->natts > 3)
		elog(ERROR, "flownode: flownode.pending has more columns than this library writes");
	values[0] = Int64GetDatum(flow_id);
	values[1] = ranges_datum(ranges, n);
	values[2] = TimestampTzGetDatum(committed_at);
	tup = heap_form_tuple(RelationGetDescr(w->rel), values, nulls);
	/* heap insert plus its index, without the executor */
	CatalogTupleInsertWithInfo(w->rel, tup, w->indexes);
	heap_freetuple(tup);
}

void fn_pending_close(PendingWriter *w) {
	CatalogCloseIndexes(w->indexes);
	table_close(w->rel, NoLock);
	pfree(w);
}

/*
 * The flow's recorded windows, merged and sorted (a backlog of many small
 * transactions becomes few ranges), allocated in the caller's memory context.
 * Read as the catalog's owner: the caller may be a role that cannot read the
 * table (the flows view on a standby). Needs a transaction and a snapshot.
 */
FnTimeRange *fn_record_read(int64 flow_id, uint32 *n, TimestampTz *oldest) {
	SpiAs scope;
	Oid argtypes[1] = {INT8OID};
	Datum args[1] = {Int64GetDatum(flow_id)};
	FnTimeRange *ranges;

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	if (SPI_execute_with_args(
	        "SELECT pg_catalog.lower(r), pg_catalog.upper(r) FROM pg_catalog.unnest("
	        "(SELECT pg_catalog.range_agg(x) FROM flownode.pending p, pg_catalog.unnest(p.ranges) x"
	        " WHERE p.flow_id = $1)) r",
	        1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading flownode.pending failed");
	ranges = SPI_palloc(sizeof(FnTimeRange) * Max(SPI_processed, 1));
	*n = 0;
	for (uint64 i = 0; i < SPI_processed; i++) {
		bool n1, n2;
		FnTimeRange r;

		r.start = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &n1));
		r.end = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &n2));
		if (!n1 && !n2)
			ranges[(*n)++] = r;
	}
	*oldest = 0;
	if (*n > 0 && get_attnum(pending_relid(), "committed_at") != InvalidAttrNumber) {
		if (SPI_execute_with_args(
		        "SELECT pg_catalog.min(committed_at) FROM flownode.pending WHERE flow_id = $1", 1, argtypes,
		        args, NULL, true, 0) != SPI_OK_SELECT ||
		    SPI_processed != 1)
			elog(ERROR, "flownode: reading flownode.pending failed");
		else {
			bool isnull;
			Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

			*oldest = isnull ? 0 : DatumGetTimestampTz(d);
		}
	}
	fn_spi_end(&scope);
	return ranges;
}

/*
 * Adds the flow's recorded windows to its slot (dirty and durable sets). Called by
 * the flow's worker at start, inside a transaction. Adding is idempotent, so
 * windows already in shared memory are harmless.
 */
void fn_reload_pending(int64 flow_id, FlowSlot *slot) {
	uint32 n;
	TimestampTz oldest;
	FnTimeRange *ranges = fn_record_read(flow_id, &n, &oldest);

	fn_slot_load_record(slot, ranges, n, oldest);
	pfree(ranges);
}

/* The flow's rows go with the flow (drop_flow, or its table dropped). */
void fn_record_forget_flow(int64 flow_id) {
	SpiAs scope;
	Oid types[1] = {INT8OID};
	Datum values[1] = {Int64GetDatum(flow_id)};

	fn_spi_begin_as(&scope, fn_catalog_owner(), 0);
	if (SPI_execute_with_args("DELETE FROM flownode.pending WHERE flow_id = $1", 1, types, values, NULL,
	                          false, 0) != SPI_OK_DELETE)
		elog(ERROR, "flownode: updating flownode.pending failed");
	fn_spi_end(&scope);
}

/* The trim's statements, prepared once per backend (a worker trims after every refresh). */
static SPIPlanPtr trim_plan = NULL;
static SPIPlanPtr expire_plan = NULL;
static SPIPlanPtr delete_empty_plan = NULL;

static SPIPlanPtr prepare_once(SPIPlanPtr *plan, const char *sql, int nargs, Oid *argtypes) {
	if (*plan == NULL) {
		SPIPlanPtr p = SPI_prepare(sql, nargs, argtypes);

		if (p == NULL || SPI_keepplan(p) != 0)
			elog(ERROR, "flownode: preparing a statement on flownode.pending failed: %s",
			     SPI_result_code_string(SPI_result));
		*plan = p;
	}
	return *plan;
}

static void run_trim(SPIPlanPtr plan, Datum *args, Snapshot snap, int expect) {
	int rc = SPI_execute_snapshot(plan, args, NULL, snap, InvalidSnapshot, false, true, 0);

	if (rc != expect)
		elog(ERROR, "flownode: trimming flownode.pending failed: %s", SPI_result_code_string(rc));
}

/*
 * Removes the refreshed ranges (and the recorded windows that ended before
 * expired_before, if not 0) from the flow's record, as the catalog's owner, in the
 * refresh's snapshot: a writer that committed after that snapshot keeps both its
 * rows out of the refresh and its record. The caller is connected to SPI.
 */
void fn_record_trim(int64 flow_id, const FnTimeRange *ranges, int nranges, int64 expired_before,
                    Snapshot snap) {
	Oid t[2] = {INT8MULTIRANGEOID, INT8OID};
	Oid e[2] = {INT8OID, INT8OID};
	Oid d[1] = {INT8OID};
	Datum args[2];
	Oid save_userid;
	int save_sec;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(fn_catalog_owner(), save_sec | SECURITY_LOCAL_USERID_CHANGE);
	args[1] = Int64GetDatum(flow_id);
	if (nranges > 0) {
		/* one statement: records wholly refreshed go, the others lose the refreshed
		 * part (the two sets of rows are disjoint, so the DELETE and the UPDATE never
		 * meet) */
		args[0] = ranges_datum(ranges, (uint32)nranges);
		run_trim(prepare_once(&trim_plan,
		                      "WITH fn_done AS (DELETE FROM flownode.pending WHERE flow_id = $2"
		                      " AND ranges OPERATOR(pg_catalog.<@) $1)"
		                      " UPDATE flownode.pending SET ranges = ranges OPERATOR(pg_catalog.-) $1"
		                      " WHERE flow_id = $2 AND ranges OPERATOR(pg_catalog.&&) $1 AND NOT ranges "
		                      "OPERATOR(pg_catalog.<@) $1",
		                      2, t),
		         args, snap, SPI_OK_UPDATE);
	}
	if (expired_before != 0) {
		/* everything before the line goes: it is a window start, so the windows
		 * kept stay whole */
		args[0] = Int64GetDatum(expired_before);
		run_trim(prepare_once(&expire_plan,
		                      "UPDATE flownode.pending SET ranges = ranges OPERATOR(pg_catalog.-)"
		                      " pg_catalog.int8multirange(pg_catalog.int8range(NULL, $1))"
		                      " WHERE flow_id = $2 AND pg_catalog.lower(ranges) OPERATOR(pg_catalog.<) $1",
		                      2, e),
		         args, snap, SPI_OK_UPDATE);
		args[0] = Int64GetDatum(flow_id);
		run_trim(prepare_once(
		             &delete_empty_plan,
		             "DELETE FROM flownode.pending WHERE flow_id = $1 AND pg_catalog.isempty(ranges)", 1, d),
		         args, snap, SPI_OK_DELETE);
	}
	SetUserIdAndSecContext(save_userid, save_sec);
}
