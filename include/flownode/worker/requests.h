/*
 * requests.h: flush_flow's and refresh_flow's requests to a flow's worker, posted in
 * its shared-memory slot and waited for.
 */
#ifndef FLOWNODE_REQUESTS_H
#define FLOWNODE_REQUESTS_H

#include "postgres.h"

#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"

/* Asks the flow's worker to serve a request of `kind` (a flush, or a refresh of
 * `range`) and waits for it: returns the windows it refreshed, or raises the
 * refresh's error again, with the worker's SQLSTATE, detail and hint. ERROR when the flow is paused or
 * dropped meanwhile, or no worker adopted it within 15 seconds. */
extern int64 fn_request_flow_work(TaskConfig *cfg, Oid catalog, FlowSlotRequest kind, FnTimeRange range);
/* The ERROR of a flush or refresh (`kind`) of a paused flow. */
pg_noreturn extern void fn_request_paused_error(TaskConfig *cfg, FlowSlotRequest kind);

#endif
