/*
 * sink_table.h: a flow's sink, created from the query's output columns or checked
 * against them.
 */
#ifndef FLOWNODE_SINK_TABLE_H
#define FLOWNODE_SINK_TABLE_H

#include "postgres.h"

#include "query/flow_query.h"

/* Returns the sink's OID, creating it when absent (*created tells which). ERROR, with
 * what differs, when an existing table does not fit the query. */
extern Oid fn_prepare_sink(const char *sink_name, FlowQuery *fq, Oid source_relid, bool *created);

#endif
