/*
 * requests.c: the protocol between a backend's flush_flow or refresh_flow and the
 * flow's worker: the request posted in the flow's shared-memory slot
 * (shmem/slot_clients.c), then the wait for the worker's answer, asking the pool
 * for a worker while none serves the flow.
 */
#include "flownode.h"

#include "worker/requests.h"
#include "shmem/inflight.h"
#include "worker/launcher.h"

#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

void fn_request_paused_error(TaskConfig *cfg, const char *call) {
	ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
	                errmsg("cannot %s flow \"%s\": it is paused", call, cfg->flow_name),
	                errdetail("A paused flow refreshes nothing; its writes are recorded."),
	                errhint("Resume it with flownode.resume_flow(%s).", quote_literal_cstr(cfg->flow_name))));
}

/*
 * Waits until the flow's worker has served request `mine`; returns the windows it
 * refreshed, or raises the refresh's error. ERROR when the flow is dropped meanwhile,
 * or no worker adopted it within 15 seconds (asking the pool for one whenever no
 * start is pending).
 */
static int64 await_request(TaskConfig *cfg, Oid catalog, FlowSlot *slot, FlowSlotRequest kind, uint64 mine) {
	const char *what = kind == FN_REQUEST_FLUSH ? "flush" : "refresh";
	const char *doing = kind == FN_REQUEST_FLUSH ? "flushing" : "refreshing";
	FlowSlotAnswer a;
	TimestampTz wait_start = GetCurrentTimestamp();

	fn_slot_wait_prepare(slot);
	for (;;) {
		fn_slot_poll_request(slot, cfg->flow_id, kind, mine, &a);
		if (a.done)
			break;
		if (a.paused) { /* paused after the call looked: the worker will not serve it */
			ConditionVariableCancelSleep();
			fn_request_paused_error(cfg, kind == FN_REQUEST_FLUSH ? "flush" : "refresh");
		}
		if (a.gone) {
			ConditionVariableCancelSleep();
			ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			                errmsg("flow \"%s\" was dropped while %s", cfg->flow_name, doing)));
		}
		if (!a.attached) {
			/* a pool worker adopts it: asked again while no start is pending (the
			 * flow may be between two workers, or the pool full a moment) */
			if (GetCurrentTimestamp() - wait_start > 15 * USECS_PER_SEC) {
				ConditionVariableCancelSleep();
				ereport(ERROR,
				        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				         errmsg("flow \"%s\" has no running worker to %s it", cfg->flow_name, what),
				         errdetail("No pool worker adopted it within 15 seconds."),
				         a.waiting
				             ? errhint("No background worker slot is free, or flownode.max_workers workers "
				                       "serve other databases: raise max_worker_processes or "
				                       "flownode.max_workers.")
				             : errhint("See the server log for why the flow's background worker exited.")));
			}
			if (!a.registered)
				(void)fn_start_flow_worker(MyDatabaseId, catalog, cfg->flow_id);
		}
		fn_slot_wait(slot, 1000);
	}
	ConditionVariableCancelSleep();
	if (a.failed)
		ereport(ERROR, (errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
		                errmsg("%s of flow \"%s\" failed: %s", what, cfg->flow_name, a.error),
		                errhint("The dirty windows are kept; see flownode.flows.last_error.")));
	return a.windows;
}

int64 fn_request_flow_work(TaskConfig *cfg, Oid catalog, FlowSlotRequest kind, FnTimeRange range) {
	FlowSlot *slot;

	/* writers that committed before this call but have not yet published (for a flow
	 * downstream of another, that flow's refresh that has just written its source) */
	fn_inflight_wait_all();
	slot = fn_acquire_slot(MyDatabaseId, catalog, cfg->flow_id, true);
	return await_request(cfg, catalog, slot, kind, fn_slot_post_request(slot, kind, range));
}
