/*
 * flow_joins.h: a flow query over one fact table joined with dimension tables
 * (docs/reference.md, "Joins with dimension tables"): which table is the fact table, which are
 * dimensions, and the equalities that join each dimension to the fact table.
 */
#ifndef FLOWNODE_FLOW_JOINS_H
#define FLOWNODE_FLOW_JOINS_H

#include "postgres.h"

#include "access/attnum.h"

#include "nodes/parsenodes.h"

/* One equality `fact.fact_attnum OPERATOR(opno) dimension.dim_attnum` that joins a
 * dimension table to the fact table: every fact row that joins a dimension row has
 * the dimension row's value in fact_attnum (under opno). */
typedef struct FlowJoinKey {
	AttrNumber fact_attnum;
	AttrNumber dim_attnum;
	Oid opno; /* fact type on the left, dimension type on the right */
} FlowJoinKey;

/* A dimension table: every table of the query but the fact table. */
typedef struct FlowDimension {
	Oid relid;
	int rtindex;
	List *keys; /* FlowJoinKey *, at least one */
} FlowDimension;

/*
 * The range-table index of the fact table: the query's only table, or, when it joins
 * tables, the one whose column the time window reads (window_varno, 0 when the query
 * has no window: then the first table of the FROM clause). Refuses a FROM clause of
 * anything but tables joined by INNER and LEFT joins, and a fact table on the
 * nullable side of a LEFT JOIN. ERROR names the problem.
 */
extern int fn_join_fact_rtindex(Query *q, int window_varno);

/*
 * The dimension tables of the query (NIL when it reads one table), each with the
 * equalities that join it to the fact table. Refuses a dimension that is not a plain
 * table, a table read twice or joined with itself, a dimension joined to the fact
 * table by no equality of a column of each, or by its time column (time_attnum; 0:
 * no window).
 */
extern List *fn_join_dimensions(Query *q, int fact_rtindex, AttrNumber time_attnum);

/* The dimension tables' OIDs (FlowDimension list to Oid list). */
extern List *fn_dimension_relids(List *dimensions);

#endif
