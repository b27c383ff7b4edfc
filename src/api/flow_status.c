/*
 * flow_status.c: the function behind the flows view: each flow's state from its
 * shared-memory slot, for the roles that are members of its owner. On a hot
 * standby no worker runs and shared memory knows nothing: every flow is 'standby',
 * with its dirty windows counted from the replicated durable record.
 */
#include "flownode.h"

#include "access/xlog.h"
#include "bridge/core_bridge.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "record/durable_record.h"
#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(flownode_flow_status);

/* Calendar windows are walked one by one: past this many in one range the count is
 * estimated from the unit's usual width (documented). */
#define WALK_CAP 100000

/* The timestamps a range spans: the last window ends at infinity, and that part of
 * it past the largest timestamp holds no window (nor fits an int64 difference). */
static uint64 span_usec(FnTimeRange r) {
	int64 lo = Max(r.start, FN_TS_MIN), hi = Min(r.end, FN_TS_END);

	return hi > lo ? (uint64)hi - (uint64)lo : 0;
}

/* flow_status's OUT columns, in their order */
enum {
	COL_FLOW_ID,
	COL_STATE,
	COL_DIRTY_WINDOWS,
	COL_LAST_RUN_AT,
	COL_LAST_RUN_DURATION,
	COL_LAST_ERROR,
	COL_RUNS,
	COL_FAILURES,
	COL_ROWS_WRITTEN,
	COL_WORKER_PID,
	COL_LAST_ERROR_AT,
	COL_CONSECUTIVE_FAILURES,
	COL_LAST_FAILURE,
	COL_LAST_FAILURE_AT,
	COL_DIRTY_RANGES,
	NUM_COLS
};

/* The windows of the flow's sorted, disjoint dirty ranges (a range merged from
 * neighbours counts the clean windows between them too). */
static int64 count_windows(TaskConfig *cfg, const FnTimeRange *ranges, uint32 n) {
	FnWindow *w;
	int64 dirty = 0;

	if (cfg->window.kind == FN_WINDOW_NONE)
		return n > 0 ? 1 : 0;
	if (n == 0)
		return 0;
	w = fn_window_create(&cfg->window);
	for (uint32 i = 0; i < n; i++) {
		uint64 c =
		    fn_window_count(w, ranges[i], cfg->window.kind == FN_WINDOW_DATE_BIN ? PG_UINT64_MAX : WALK_CAP);

		if (c >= WALK_CAP && cfg->window.kind != FN_WINDOW_DATE_BIN)
			c = Max(c, span_usec(ranges[i]) / (uint64)fn_window_nominal_usec(w));
		dirty += (int64)c;
	}
	return dirty;
}

/* A flow as its slot shows it; false when it has no slot (the view shows it as
 * waiting_for_worker). */
static bool slot_row(TaskConfig *cfg, Oid catalog, Datum *values, bool *nulls) {
	FlowSlot *slot;
	FlowSlot copy;
	FnTimeRange *ranges;
	const char *state;
	Interval *duration = palloc0(sizeof(Interval));

	LWLockAcquire(fn_registry_lock(), LW_SHARED);
	slot = fn_find_slot(MyDatabaseId, catalog, cfg->flow_id);
	if (slot == NULL) {
		LWLockRelease(fn_registry_lock());
		return false;
	}
	LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
	memcpy(&copy, slot, offsetof(FlowSlot, dirty));
	ranges = palloc(sizeof(FnTimeRange) * Max(1, slot->ndirty));
	memcpy(ranges, slot->dirty, sizeof(FnTimeRange) * slot->ndirty);
	LWLockRelease(fn_slot_lock(slot));
	LWLockRelease(fn_registry_lock());

	if (copy.worker_pid == 0)
		state = "waiting_for_worker";
	else if (copy.consecutive_failures > 0)
		state = "failing";
	else
		state = "active";
	values[COL_STATE] = CStringGetTextDatum(state);
	values[COL_DIRTY_WINDOWS] = Int64GetDatum(count_windows(cfg, ranges, copy.ndirty));
	values[COL_DIRTY_RANGES] = Int32GetDatum((int32)copy.ndirty);
	values[COL_LAST_RUN_AT] = TimestampTzGetDatum(copy.last_run_at);
	nulls[COL_LAST_RUN_AT] = copy.last_run_at == 0;
	duration->time = copy.last_run_usec;
	values[COL_LAST_RUN_DURATION] = IntervalPGetDatum(duration);
	nulls[COL_LAST_RUN_DURATION] = copy.last_run_at == 0;
	/* the current error, only while failing; the last failure stays in its own columns */
	values[COL_LAST_ERROR] = CStringGetTextDatum(copy.last_failure);
	nulls[COL_LAST_ERROR] = strcmp(state, "failing") != 0 || copy.last_failure[0] == '\0';
	values[COL_LAST_ERROR_AT] = TimestampTzGetDatum(copy.last_failure_at);
	nulls[COL_LAST_ERROR_AT] = nulls[COL_LAST_ERROR];
	values[COL_RUNS] = Int64GetDatum(copy.runs);
	values[COL_FAILURES] = Int64GetDatum(copy.failures);
	values[COL_ROWS_WRITTEN] = Int64GetDatum(copy.rows_written);
	values[COL_WORKER_PID] = Int32GetDatum(copy.worker_pid);
	nulls[COL_WORKER_PID] = copy.worker_pid == 0;
	values[COL_CONSECUTIVE_FAILURES] = Int32GetDatum(copy.consecutive_failures);
	values[COL_LAST_FAILURE] = CStringGetTextDatum(copy.last_failure);
	nulls[COL_LAST_FAILURE] = copy.last_failure[0] == '\0';
	values[COL_LAST_FAILURE_AT] = TimestampTzGetDatum(copy.last_failure_at);
	nulls[COL_LAST_FAILURE_AT] = copy.last_failure_at == 0;
	pfree(ranges);
	return true;
}

/*
 * A flow on a hot standby: no worker can run there, and shared memory holds
 * nothing (writes, and so marks, happen on the primary). What will be pending
 * after a promotion is the durable record, which reaches the standby with the WAL.
 */
static void standby_row(TaskConfig *cfg, Datum *values, bool *nulls) {
	uint32 n;
	FnTimeRange *ranges = fn_record_read(cfg->flow_id, &n);

	values[COL_STATE] = CStringGetTextDatum("standby");
	values[COL_DIRTY_WINDOWS] = Int64GetDatum(count_windows(cfg, ranges, n));
	values[COL_DIRTY_RANGES] = Int32GetDatum((int32)n);
	values[COL_RUNS] = Int64GetDatum(0);
	values[COL_FAILURES] = Int64GetDatum(0);
	values[COL_ROWS_WRITTEN] = Int64GetDatum(0);
	values[COL_CONSECUTIVE_FAILURES] = Int32GetDatum(0);
	nulls[COL_LAST_RUN_AT] = nulls[COL_LAST_RUN_DURATION] = true;
	nulls[COL_LAST_ERROR] = nulls[COL_LAST_ERROR_AT] = true;
	nulls[COL_WORKER_PID] = true;
	nulls[COL_LAST_FAILURE] = nulls[COL_LAST_FAILURE_AT] = true;
	pfree(ranges);
}

Datum flownode_flow_status(PG_FUNCTION_ARGS) {
	ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;
	Oid catalog = fn_catalog_relid(false);
	bool standby = RecoveryInProgress();
	List *flows;
	ListCell *lc;

	InitMaterializedSRF(fcinfo, 0);
	if (!standby && fn_slot_count() == 0)
		PG_RETURN_VOID(); /* not preloaded: the view shows every flow waiting_for_worker */
	flows = fn_load_all_flows();
	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		Datum values[NUM_COLS];
		bool nulls[NUM_COLS] = {0};

		if (!has_privs_of_role(GetUserId(), cfg->owner))
			continue; /* each role sees the state of its own flows only */
		values[COL_FLOW_ID] = Int64GetDatum(cfg->flow_id);
		if (standby)
			standby_row(cfg, values, nulls);
		else if (!slot_row(cfg, catalog, values, nulls))
			continue;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}
