/*
 * key_refresh.c: the refresh of key marks (docs/internals.md §6, *Refreshing key
 * marks*). The marks are rows of flownode.pending_keys that committed writers left
 * (record/key_record.h); the refresh reads those its snapshot sees, recomputes their
 * groups with the refresh statement restricted to the marks' windows and to the
 * rows whose keys hash to a marked hash ($3), and deletes the marks it read, all in
 * one snapshot: a writer it does not see keeps its rows out of the recompute and
 * its marks in the table. The statement upserts the groups it reads and deletes the
 * sink's groups of those windows and hashes that it did not read (they vanished: a
 * key's last row deleted, or moved to another key). A hash marked in one window is
 * read in every window of the refresh (one array for all): a few more groups
 * recomputed, exactly, for a statement of one shape.
 */
#include "flownode.h"

#include "refresh/key_refresh.h"

#include "bridge/core_bridge.h"
#include "pgutil/pg_util.h"
#include "record/key_record.h"
#include "shmem/flow_slots.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"

static int hash_order(const void *a, const void *b) {
	uint64 x = *(const uint64 *)a, y = *(const uint64 *)b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* The marks' distinct windows ($1, $2) and hashes ($3); marks sorted by window. The
 * windows counted: all of them, and those outside count->done. */
static void mark_arrays(FnKeyMark *marks, uint32 n, Datum *values, FnKeyCount *count) {
	Datum *lo = palloc(sizeof(Datum) * n), *hi = palloc(sizeof(Datum) * n), *h = palloc(sizeof(Datum) * n);
	uint64 *hashes = palloc(sizeof(uint64) * n);
	int nw = 0, nh = 0;

	for (uint32 i = 0; i < n; i++) {
		if (nw == 0 || DatumGetInt64(lo[nw - 1]) != marks[i].window.start) {
			lo[nw] = Int64GetDatum(marks[i].window.start);
			hi[nw++] = Int64GetDatum(marks[i].window.end);
			if (count->done == NULL ||
			    !fn_dirty_covers((FnDirtySet){(FnTimeRange *)count->done, &count->ndone, count->ndone},
			                     marks[i].window))
				count->fresh++;
		}
		hashes[i] = marks[i].hash;
	}
	qsort(hashes, n, sizeof(uint64), hash_order);
	for (uint32 i = 0; i < n; i++)
		if (i == 0 || hashes[i] != hashes[i - 1])
			h[nh++] = Int64GetDatum((int64)hashes[i]);
	values[0] = PointerGetDatum(construct_array(lo, nw, TIMESTAMPTZOID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[1] = PointerGetDatum(construct_array(hi, nw, TIMESTAMPTZOID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[2] = PointerGetDatum(construct_array(h, nh, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	count->read = nw;
}

int64 fn_key_refresh(TaskConfig *cfg, FlowQuery *fq, const char *sink, FnRefreshShape shape, Snapshot snap,
                     int64 expired_before, FnKeyCount *count) {
	Oid types[3] = {TIMESTAMPTZARRAYOID, TIMESTAMPTZARRAYOID, INT8ARRAYOID};
	Datum values[3];
	Datum ctids;
	uint32 n, nwhole;
	FnKeyMark *marks = fn_key_record_read(cfg->flow_id, snap, expired_before, &n, &ctids);
	uint32 nread = n;
	SPIPlanPtr plan;
	int64 rows;

	count->read = count->fresh = 0;
	if (n == 0)
		return 0;
	/* distinct, sorted by window; none sent whole (per_window: no limit) */
	n = fn_key_marks_plan(marks, n, NULL, 0, PG_UINT32_MAX, NULL, &nwhole);
	mark_arrays(marks, n, values, count);
	plan = SPI_prepare(fn_refresh_keys_sql(fq, sink, shape), 3, types);
	if (plan == NULL)
		elog(ERROR, "flownode: preparing the refresh of key marks failed: %s",
		     SPI_result_code_string(SPI_result));
	rows = fn_spi_run_plan(plan, values, snap, SPI_OK_SELECT);
	SPI_freeplan(plan);
	fn_key_record_trim(ctids, snap);
	/* a backlog larger than one read: the next evaluation goes on with the rest */
	if (nread == FN_KEY_RECORD_READ_MAX) {
		FlowSlot *slot = fn_acquire_slot(MyDatabaseId, fn_catalog_relid(false), cfg->flow_id, false);

		if (slot != NULL)
			fn_slot_note_keys(slot, (FnTimeRange){0, 0});
	}
	return rows;
}
