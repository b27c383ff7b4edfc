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
/* ERROR, naming the first problem, unless the existing table `sink_relid` can be the
 * sink of `fq` for the current user (the flow's owner): a plain table with SELECT,
 * INSERT, UPDATE and DELETE, the query's columns and types, no other NOT NULL column
 * without a default, and a unique key on exactly the group keys that ON CONFLICT can
 * use as its arbiter for every group, NULL keys included (NULLS NOT DISTINCT, or NOT
 * NULL sink columns for the keys the query may leave NULL), every such key comparing
 * the keys as the query groups them (collation, operator class). create_flow calls it on
 * an existing sink; call it again before building refresh statements when the sink
 * may have changed since. Takes AccessShareLock on the sink. */
extern void fn_check_sink(Oid sink_relid, FlowQuery *fq);
/* After ALTER COLUMN TYPE of a column the query reads: each hidden key column of the
 * sink (query/hidden_keys.h) whose type, typmod or collation is no longer the query's
 * is changed to the query's, its values cast (docs/reference.md, "Group keys that are
 * not output columns"). The user never chose those columns' types, so they follow the
 * query, where a visible column's type stays the user's to change. An ERROR (no cast,
 * say) names the flow. Returns how many columns changed. */
extern int fn_sink_follow_hidden_types(Oid sink_relid, FlowQuery *fq, const char *flow_name);

#endif
