/*
 * flow_chain.h: chains of flows, a flow whose source is another flow's sink (a
 * minute -> hour -> day rollup): which flows a flow reads from (upstream) and
 * refusing a flow that would close a cycle.
 */
#ifndef FLOWNODE_FLOW_CHAIN_H
#define FLOWNODE_FLOW_CHAIN_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include "registry/flow_registry.h"

/* The flows whose sink is the flow's source, or a partition under it (their
 * refreshes write the rows it reads); List of TaskConfig *, by flow id. */
extern List *fn_upstream_flows(const TaskConfig *cfg);

/* Every flow the flow reads from, directly or through others, in the order a
 * cascading flush runs them: each after every flow it reads from, the flow itself
 * last. A cycle in the catalog (refused at creation) is walked once. */
extern List *fn_flows_to_flush(TaskConfig *cfg);

/* ERROR when a new flow from source_relid into sink_relid would read, through other
 * flows, the rows it writes itself. Locks the sink against a concurrent creation
 * that would close the same cycle. */
extern void fn_check_no_cycle(const char *flow_name, Oid source_relid, Oid sink_relid);

#endif
