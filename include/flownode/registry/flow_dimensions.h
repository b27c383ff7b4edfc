/*
 * flow_dimensions.h: the catalog flownode.flow_dimension, the dimension tables each
 * flow joins and the equalities that join them to its source (the fact table).
 * Read and written as the catalog's owner, like flownode.flow.
 */
#ifndef FLOWNODE_FLOW_DIMENSIONS_H
#define FLOWNODE_FLOW_DIMENSIONS_H

#include "postgres.h"

#include "access/attnum.h"
#include "nodes/pg_list.h"

#include "registry/flow_registry.h"

/* One row: an equality `source.fact_attnum opno dimension.dim_attnum` of a flow; or,
 * with dim_attnum, fact_attnum and opno all 0, a relation any write to which marks
 * every window of the flow (a table joined by no equality, or under a view or a
 * subquery), or a view the flow reads (it has no trigger). */
typedef struct DimensionKey {
	int64 flow_id;
	Oid source_relid; /* the flow's source (fact table) */
	Oid dimension;
	AttrNumber dim_attnum;
	AttrNumber fact_attnum;
	Oid opno;
} DimensionKey;

/* A new flow's dimensions (FlowDimension list, query/flow_joins.h). */
extern void fn_registry_insert_dimensions(int64 flow_id, List *dimensions);
extern void fn_registry_delete_dimensions(int64 flow_id);
/* The flow's dimension tables (Oid list), as the catalog holds them now. */
extern List *fn_load_flow_dimensions(int64 flow_id);
/* Every key of every flow that joins the table (DimensionKey list), as the catalog
 * holds them now (not in the caller's snapshot: a writer whose snapshot predates a
 * flow must still mark for it). */
extern List *fn_load_dimension_keys(Oid dimension);
/* Whether some flow joins the table as a dimension. */
extern bool fn_is_dimension(Oid relid);
/* The tables whose rows the flow reads (Oid list), as the catalog holds them now: its
 * source (in a chain, the sink of the flow below), the tables above it and every
 * partition under it (a write to any of them may write the source's rows), and its
 * dimensions. */
extern List *fn_flow_read_tables(const TaskConfig *cfg);

#endif
