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

/* How a dimension reaches the flow's query. */
typedef enum FlowDimensionKind {
	FN_DIM_TABLE,      /* a table of the query's FROM clause */
	FN_DIM_VIEW,       /* a view: it gets no trigger, the tables it reads do */
	FN_DIM_VIEW_TABLE, /* a table a view reads (at any depth) */
	FN_DIM_SUB_TABLE,  /* a table a subquery of the FROM clause reads */
} FlowDimensionKind;

/* A relation the query reads besides the fact table: a dimension table, a view, or a
 * table under a view or a subquery. */
typedef struct FlowDimension {
	Oid relid;
	int rtindex; /* the query's range table entry that brings it in (table, view or subquery) */
	FlowDimensionKind kind;
	List *keys;       /* FlowJoinKey *: the equalities with the fact table, NIL if none */
	bool every_write; /* any write to it marks every window that is not frozen */
	Bitmapset *under; /* the query's entries of the views and subqueries that read it */
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
 * The dimensions of the query (NIL when it reads one table): each table it joins,
 * with the equalities that join it to the fact table (none: any write to it marks
 * every window), each view it joins and the tables under it, and the tables its
 * subqueries in FROM read (any write to those marks every window). Refuses what a
 * write flownode can see cannot mark: a foreign table or a materialized view (also
 * under a view), a partitioned or temporary dimension, a table read twice or a view
 * or subquery that reads the fact table, a view whose contents are not a
 * deterministic function of its tables, a table joined on the fact table's time
 * column by an equality (time_attnum; 0: no window).
 */
extern List *fn_join_dimensions(Query *q, int fact_rtindex, AttrNumber time_attnum);

/* A NOTICE (create_flow's) for each table, view and subquery of the query any write
 * to which marks every window that is not frozen, with a hint to make it cheaper. */
extern void fn_notice_every_write(Query *q, int fact_rtindex, List *dimensions);

/* The dimensions' OIDs, views too (FlowDimension list to Oid list). */
extern List *fn_dimension_relids(List *dimensions);

#endif
