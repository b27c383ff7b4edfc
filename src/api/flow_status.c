/*
 * flow_status.c: the function behind the flows view: each flow's state from its
 * shared-memory slot, for the roles that are members of its owner.
 */
#include "flownode.h"

#include "bridge/core_bridge.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
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

Datum flownode_flow_status(PG_FUNCTION_ARGS) {
	ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;
	Oid catalog = fn_catalog_relid(false);
	List *flows;
	ListCell *lc;

	InitMaterializedSRF(fcinfo, 0);
	if (fn_slot_count() == 0)
		PG_RETURN_VOID();
	flows = fn_load_all_flows();
	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		FlowSlot *slot;
		FlowSlot copy;
		FnTimeRange *ranges;
		Datum values[14];
		bool nulls[14] = {0};
		int64 dirty = 0;
		const char *state;

		if (!has_privs_of_role(GetUserId(), cfg->owner))
			continue; /* each role sees the state of its own flows only */
		LWLockAcquire(fn_registry_lock(), LW_SHARED);
		slot = fn_find_slot(MyDatabaseId, catalog, cfg->flow_id);
		if (slot == NULL) {
			LWLockRelease(fn_registry_lock());
			continue;
		}
		LWLockAcquire(fn_slot_lock(slot), LW_SHARED);
		memcpy(&copy, slot, offsetof(FlowSlot, dirty));
		ranges = palloc(sizeof(FnTimeRange) * Max(1, slot->ndirty));
		memcpy(ranges, slot->dirty, sizeof(FnTimeRange) * slot->ndirty);
		LWLockRelease(fn_slot_lock(slot));
		LWLockRelease(fn_registry_lock());

		if (cfg->window.kind == FN_WINDOW_NONE)
			dirty = copy.ndirty > 0 ? 1 : 0;
		else if (copy.ndirty > 0) {
			FnWindow *w = fn_window_create(&cfg->window);

			for (uint32 i = 0; i < copy.ndirty; i++) {
				uint64 n = fn_window_count(w, ranges[i],
				                           cfg->window.kind == FN_WINDOW_DATE_BIN ? PG_UINT64_MAX : WALK_CAP);

				if (n >= WALK_CAP && cfg->window.kind != FN_WINDOW_DATE_BIN)
					n = Max(n, (uint64)((ranges[i].end - ranges[i].start) / fn_window_nominal_usec(w)));
				dirty += (int64)n;
			}
		}
		if (copy.worker_pid == 0)
			state = "waiting_for_worker";
		else if (copy.consecutive_failures > 0)
			state = "failing";
		else
			state = "active";
		values[0] = Int64GetDatum(cfg->flow_id);
		values[1] = CStringGetTextDatum(state);
		values[2] = Int64GetDatum(dirty);
		values[3] = TimestampTzGetDatum(copy.last_run_at);
		nulls[3] = copy.last_run_at == 0;
		{
			Interval *iv = palloc0(sizeof(Interval));

			iv->time = copy.last_run_usec;
			values[4] = IntervalPGetDatum(iv);
			nulls[4] = copy.last_run_at == 0;
		}
		/* the current error, only while failing; the last failure stays in 12 and 13 */
		values[5] = CStringGetTextDatum(copy.last_failure);
		nulls[5] = strcmp(state, "failing") != 0 || copy.last_failure[0] == '\0';
		values[6] = Int64GetDatum(copy.runs);
		values[7] = Int64GetDatum(copy.failures);
		values[8] = Int64GetDatum(copy.rows_written);
		values[9] = Int32GetDatum(copy.worker_pid);
		nulls[9] = copy.worker_pid == 0;
		values[10] = TimestampTzGetDatum(copy.last_failure_at);
		nulls[10] = nulls[5];
		values[11] = Int32GetDatum(copy.consecutive_failures);
		values[12] = CStringGetTextDatum(copy.last_failure);
		nulls[12] = copy.last_failure[0] == '\0';
		values[13] = TimestampTzGetDatum(copy.last_failure_at);
		nulls[13] = copy.last_failure_at == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}
