/*
 * key_refresh.c: the refresh of key marks (docs/internals.md §6, *Refreshing key
 * marks*). The marks are rows of flownode.pending_keys that committed writers left
 * (record/key_record.h); the refresh reads those its snapshot sees, recomputes their
 * groups with the refresh statement restricted to the marks' windows and to the
 * rows whose keys hash to a marked hash (the argument after the windows'), and
 * deletes the marks it read, all in one snapshot: a writer it does not see keeps its
 * rows out of the recompute and its marks in the table. The statement upserts the
 * groups it reads and deletes the sink's groups of those windows and hashes that it
 * did not read (they vanished: a key's last row deleted, or moved to another key). A
 * hash marked in one window is read in every window of the refresh (one array for
 * all): a few more groups recomputed, exactly, for a statement of one shape.
 */
#include "flownode.h"

#include "refresh/key_refresh.h"

#include "bridge/core_bridge.h"
#include "pgutil/pg_util.h"
#include "query/time_input.h"
#include "record/key_record.h"
#include "refresh/refresh_args.h"
#include "shmem/flow_slots.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

static int hash_order(const void *a, const void *b) {
	uint64 x = *(const uint64 *)a, y = *(const uint64 *)b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* The marks' distinct windows (marks sorted by window) into *windows; their distinct
 * hashes as an int8[]. The windows counted: all of them, and those outside
 * count->done. */
static Datum mark_arrays(FnKeyMark *marks, uint32 n, FnTimeRange *windows, int *nwindows, FnKeyCount *count) {
	Datum *h = palloc(sizeof(Datum) * n);
	uint64 *hashes = palloc(sizeof(uint64) * n);
	int nw = 0, nh = 0;

	for (uint32 i = 0; i < n; i++) {
		if (nw == 0 || windows[nw - 1].start != marks[i].window.start) {
			windows[nw++] = marks[i].window;
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
	*nwindows = nw;
	return PointerGetDatum(construct_array(h, nh, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * The statement's arguments, as the windows' refresh takes them (refresh_args.h):
 * the windows $1/$2 as the window column's type, for a date or an epoch column the
 * column's values of each window $3/$4 (the source filtered on the time as the
 * windows' refresh filters it), then the hashes. Returns their number.
 */
static int key_arguments(TaskConfig *cfg, FnRefreshShape shape, FnKeyMark *marks, uint32 n, Oid *types,
                         Datum *values, FnKeyCount *count) {
	Oid coltype = cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID;
	bool input = cfg->input.kind != FN_INPUT_TIMESTAMP;
	int nargs = input ? 4 : 2;
	FnTimeRange *ranges = palloc(sizeof(FnTimeRange) * n);
	int nw;
	Datum hashes = mark_arrays(marks, n, ranges, &nw, count);

	types[0] = types[1] = get_array_type(coltype);
	fn_refresh_range_arrays(ranges, nw, coltype, values);
	if (input) {
		types[2] = types[3] = get_array_type(fn_time_input_bound_type(&cfg->input, coltype));
		fn_refresh_input_arrays(cfg, ranges, nw, shape.source == FN_FILTER_JOIN, values);
	}
	types[nargs] = INT8ARRAYOID;
	values[nargs++] = hashes;
	count->read = nw;
	count->hull = (FnTimeRange){ranges[0].start, ranges[nw - 1].end}; /* sorted by window */
	return nargs;
}

/* The kept plan of the statement, built for this shape (the types of its arguments
 * follow from the flow, analysed again with a new set of plans). */
static SPIPlanPtr key_plan(FlowQuery *fq, const char *sink, FnRefreshShape shape, int nargs, Oid *types,
                           SPIPlanPtr *kept, FnRefreshShape *kept_shape) {
	SPIPlanPtr plan;

	if (*kept != NULL && kept_shape->source == shape.source && kept_shape->sink == shape.sink)
		return *kept;
	if (*kept != NULL) {
		SPI_freeplan(*kept);
		*kept = NULL;
	}
	plan = SPI_prepare(fn_refresh_keys_sql(fq, sink, shape), nargs, types);
	if (plan == NULL)
		elog(ERROR, "flownode: preparing the refresh of key marks failed: %s",
		     SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "flownode: keeping the plan of the refresh of key marks failed");
	*kept = plan;
	*kept_shape = shape;
	return plan;
}

int64 fn_key_refresh(TaskConfig *cfg, FlowQuery *fq, const char *sink, FnRefreshShape shape, Snapshot snap,
                     int64 expired_before, FnKeyCount *count, SPIPlanPtr *kept, FnRefreshShape *kept_shape) {
	Oid types[5];
	Datum values[5];
	int nargs;
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
	nargs = key_arguments(cfg, shape, marks, n, types, values, count);
	plan = key_plan(fq, sink, shape, nargs, types, kept, kept_shape);
	rows = fn_spi_run_plan(plan, values, snap, SPI_OK_SELECT);
	fn_key_record_trim(ctids, snap);
	/* a backlog larger than one read: the next evaluation goes on with the rest */
	if (nread == FN_KEY_RECORD_READ_MAX) {
		FlowSlot *slot = fn_acquire_slot(MyDatabaseId, fn_catalog_relid(false), cfg->flow_id, false);

		if (slot != NULL)
			fn_slot_note_keys(slot, (FnTimeRange){0, 0});
	}
	return rows;
}
