/*
 * upgrade_binding.h: flows that pg_upgrade brought over, bound again without a
 * recompute before any write can reach their tables unmarked (docs/internals.md §9).
 */
#ifndef FLOWNODE_UPGRADE_BINDING_H
#define FLOWNODE_UPGRADE_BINDING_H

#include "postgres.h"

#include "nodes/plannodes.h"

/*
 * At a server start (the database's starter, outside a transaction): every flow
 * pg_upgrade brought over is bound, each in a transaction of its own, its worker
 * starting at that commit; a flow whose tables writers hold is tried again (they
 * may bind it meanwhile). A flow that cannot be bound is a WARNING and stays
 * 'restored'.
 */
extern void fn_bind_upgraded_flows(void);

/*
 * Before a statement writes to relid (INSERT, UPDATE, DELETE, MERGE, COPY FROM,
 * TRUNCATE): the flows pg_upgrade brought over that read it (as their source, a
 * partition of it or a table above it, or a dimension) are bound now, if their locks
 * are free; ERROR (55P03) if one is not, so that no write goes unmarked. A flow whose
 * binding fails is unbound for good, with a WARNING: it says 'restored', and
 * refresh_flow recomputes it. One catalog read per backend once no such flow is left
 * (none can appear before the next start).
 */
extern void fn_guard_upgraded_write(Oid relid);
/* The same for every table a statement's plan writes to. */
extern void fn_guard_upgraded_plan(PlannedStmt *plan);

#endif
