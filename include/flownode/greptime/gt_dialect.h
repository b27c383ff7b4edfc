/*
 * gt_dialect.h: how a flow query in GreptimeDB's dialect is read (gt_dialect.c).
 */
#ifndef FLOWNODE_GT_DIALECT_H
#define FLOWNODE_GT_DIALECT_H

#include "postgres.h"

#include "query/flow_query.h"

/* The reading of a query written in `dialect`: NULL for PostgreSQL's own. */
extern const FlowQueryReading *fn_gt_reading(FlowDialect dialect);

#endif
