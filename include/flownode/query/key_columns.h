/*
 * key_columns.h: whether a flow's marks may carry the groups they touched (key
 * marks, docs/internals.md §3, *Key marks*), and by which source columns.
 */
#ifndef FLOWNODE_KEY_COLUMNS_H
#define FLOWNODE_KEY_COLUMNS_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include "query/flow_query.h"

/* The most key columns a key mark hashes. */
#define FN_MAX_KEY_COLUMNS 8

/*
 * The source columns (AttrNumber as int, in the query's key order) a flow's groups
 * are keyed by besides its window, when every key is a plain column of the source
 * with a hash opclass, the flow reads no dimension nor the clock, and the sink's key
 * columns have the columns' types and collations (sink_relid; InvalidOid: not
 * checked); NIL otherwise. Any time input, any source table.
 */
extern List *fn_key_mark_columns(const FlowQuery *fq, Oid sink_relid);

#endif
