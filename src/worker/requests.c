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

void fn_request_paused_error(TaskConfig *cfg, FlowSlotRequest kind) {
	if (kind == FN_REQUEST_FLUSH)
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("cannot flush flow \"%s\" because it is paused", cfg->flow_name),
		         errdetail("A paused flow refreshes nothing; its writes are recorded."),
		         errhint("Resume it with flownode.resume_flow(%s).", quote_literal_cstr(cfg->flow_name))));
	ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
	                errmsg("cannot refresh flow \"%s\" because it is paused", cfg->flow_name),
	                errdetail("A paused flow refreshes nothing; its writes are recorded."),
	                errhint("Resume it with flownode.resume_flow(%s).", quote_literal_cstr(cfg->flow_name))));
}

pg_noreturn static void dropped_error(TaskConfig *cfg, FlowSlotRequest kind);
static void dropped_error(TaskConfig *cfg, FlowSlotRequest kind) {
	ConditionVariableCancelSleep();
	if (kind == FN_REQUEST_FLUSH)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("flow \"%s\" was dropped while it was being flushed", cfg->flow_name)));
	ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
	                errmsg("flow \"%s\" was dropped while it was being refreshed", cfg->flow_name)));
}

/* No pool worker adopted the flow in time: why, as far as the slot tells. */
pg_noreturn static void no_worker_error(TaskConfig *cfg, FlowSlotRequest kind, bool waiting_for_worker);
static void no_worker_error(TaskConfig *cfg, FlowSlotRequest kind, bool waiting_for_worker) {
	ConditionVariableCancelSleep();
	ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
	                kind == FN_REQUEST_FLUSH
	                    ? errmsg("flow \"%s\" has no running worker to flush it", cfg->flow_name)
	                    : errmsg("flow \"%s\" has no running worker to refresh it", cfg->flow_name),
	                errdetail("No pool worker adopted it within 15 seconds."),
	                waiting_for_worker
	                    ? errhint("No background worker slot is free, or flownode.max_workers workers "
	                              "serve other databases: raise max_worker_processes or "
	                              "flownode.max_workers.")
	                    : errhint("See the server log for why the flow's background worker exited.")));
}

/*
 * The refresh that served the request failed: its error raised here as the worker
 * raised it (SQLSTATE, message, detail and hint), as PostgreSQL raises a parallel
 * worker's error in the leader, with a context line naming the flow. Without a hint
 * of its own, the hint says where the failure stays.
 */
pg_noreturn static void worker_error(TaskConfig *cfg, FlowSlotRequest kind, const FnSlotError *e);
static void worker_error(TaskConfig *cfg, FlowSlotRequest kind, const FnSlotError *e) {
	ErrorData edata;
	const char *message = fn_slot_error_message(e);
	const char *detail = fn_slot_error_detail(e);
	const char *hint = fn_slot_error_hint(e);

	memset(&edata, 0, sizeof(edata));
	edata.elevel = ERROR;
	edata.sqlerrcode = e->sqlerrcode != 0 ? e->sqlerrcode : ERRCODE_EXTERNAL_ROUTINE_EXCEPTION;
	edata.message = pstrdup(message[0] != '\0' ? message : _("unknown error"));
	edata.detail = detail[0] != '\0' ? pstrdup(detail) : NULL;
	edata.hint =
	    hint[0] != '\0' ? pstrdup(hint) : _("The dirty windows are kept; see flownode.flows.last_error.");
	edata.context =
	    kind == FN_REQUEST_FLUSH
	        ? psprintf(_("refresh of flow \"%s\" by its worker, serving flush_flow"), cfg->flow_name)
	        : psprintf(_("refresh of flow \"%s\" by its worker, serving refresh_flow"), cfg->flow_name);
	/* no source location: the worker's is not kept, and this one is not where it failed */
	ThrowErrorData(&edata);
	pg_unreachable();
}

/*
 * Waits until the flow's worker has served request `mine`; returns the windows it
 * refreshed, or raises the refresh's error. ERROR when the flow is dropped meanwhile,
 * or no worker adopted it within 15 seconds (asking the pool for one whenever no
 * start is pending).
 */
static int64 await_request(TaskConfig *cfg, Oid catalog, FlowSlot *slot, FlowSlotRequest kind, uint64 mine) {
	FlowSlotAnswer a;
	TimestampTz wait_start = GetCurrentTimestamp();

	fn_slot_wait_prepare(slot);
	for (;;) {
		fn_slot_poll_request(slot, cfg->flow_id, kind, mine, &a);
		if (a.done)
			break;
		if (a.paused) { /* paused after the call looked: the worker will not serve it */
			ConditionVariableCancelSleep();
			fn_request_paused_error(cfg, kind);
		}
		if (a.gone)
			dropped_error(cfg, kind);
		if (!a.attached) {
			/* a pool worker adopts it: asked again while no start is pending (the
			 * flow may be between two workers, or the pool full a moment) */
			if (GetCurrentTimestamp() - wait_start > 15 * USECS_PER_SEC)
				no_worker_error(cfg, kind, a.waiting);
			if (!a.registered)
				(void)fn_start_flow_worker(MyDatabaseId, catalog, cfg->flow_id);
		}
		fn_slot_wait(slot, 1000);
	}
	ConditionVariableCancelSleep();
	if (a.failed)
		worker_error(cfg, kind, &a.error);
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
