/*
 * flow_binding.h: flows a restore brought back, bound to this database's tables
 * (docs/internals.md §9): their time column found again, their triggers created,
 * their worker started at commit.
 */
#ifndef FLOWNODE_FLOW_BINDING_H
#define FLOWNODE_FLOW_BINDING_H

#include "postgres.h"

#include "registry/flow_registry.h"

/*
 * Binds a restored flow in the current transaction: ERROR, naming the problem,
 * when its query no longer reads its source or its sink does not fit it (checked
 * with the current user's privileges). The source is locked against writes to the
 * end of the transaction; the worker starts at commit and reloads the flow's
 * pending windows. Nothing is recomputed: a restore's sink and record are those of
 * one snapshot, in which every window not in the record was exact.
 */
extern void fn_bind_flow(TaskConfig *cfg);

/*
 * After DDL that built an index on relid (the post-data of a restore: the sink's
 * unique key comes after every table's rows): binds the unbound flows that read or
 * write it and whose sink fits now. Never fails the command: a sink that does not
 * fit yet is left for a later index, anything else is a WARNING and the flow stays
 * 'restored' until refresh_flow binds it.
 */
extern void fn_bind_restored_flows_of(Oid relid);

/* After ALTER EXTENSION flownode UPDATE: the bound flows without a worker get one at
 * commit (a library newer than the database's objects started none). */
extern void fn_start_workers_after_update(void);

#endif
