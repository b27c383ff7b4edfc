/*
 * gt_execute.h: flownode.execute(statement), GreptimeDB's flow statements run on the
 * SQL API (api/flow_api.h), and the CREATE FLOW text of a flow (SHOW CREATE FLOW,
 * flownode.flow_definition, flownode.flow_info). Flows that wait for their source
 * (defer_on_missing_source) start from gt_waiting.c.
 */
#ifndef FLOWNODE_GT_EXECUTE_H
#define FLOWNODE_GT_EXECUTE_H

#include "postgres.h"

#include "registry/flow_registry.h"

/* The CREATE FLOW statement that recreates the flow, in GreptimeDB's form. */
extern char *fn_gt_flow_definition(TaskConfig *cfg);

#endif
