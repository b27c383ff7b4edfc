/*
 * fold_shape.h: whether a flow's new rows can be folded into its sink rows, and how
 * each output column combines: the decision behind the folded refresh of the open
 * window (refresh/fold_state.h, docs/internals.md §6).
 *
 * A window that only gained rows since its last refresh can be refreshed from two
 * parts: what its older rows aggregated to (kept by the worker), and the query over
 * the newer rows alone, combined group by group. That is exact only when every
 * output is a group key or an aggregate whose value over a union is a function of
 * its values over the parts, computed without rounding: count, sum over integers,
 * numeric, interval or money, min, max, bool_and, bool_or, every; and avg over
 * integers or numeric, which the parts keep as a hidden sum and count (PostgreSQL's
 * avg of those is their sum divided by their count, as numerics). A sum of floats
 * depends on the order of its additions.
 */
#ifndef FLOWNODE_FOLD_SHAPE_H
#define FLOWNODE_FOLD_SHAPE_H

#include "postgres.h"

#include "query/flow_query.h"

/* How one output column of two parts' rows of a group becomes the group's. */
typedef enum FnFoldKind {
	FN_FOLD_KEY,        /* a group key: the same in both */
	FN_FOLD_SUM_BIGINT, /* count, or sum over int2/int4: the sum of the parts, a bigint */
	FN_FOLD_SUM,        /* sum over int8, numeric, interval, money: the sum of the parts */
	FN_FOLD_MIN,
	FN_FOLD_MAX,
	FN_FOLD_AND, /* bool_and, every */
	FN_FOLD_OR,  /* bool_or */
} FnFoldKind;

/*
 * The parts' columns: the query's outputs, avg's replaced by their sum, then one
 * count per avg. `tail` is the query that gives them (the flow's query with those
 * aggregates replaced and added), restricted like the flow's own by the refresh.
 */
typedef struct FnFoldShape {
	int ncolumns;      /* the query's outputs */
	int nparts;        /* the parts' columns: ncolumns + one per avg */
	FnFoldKind *kinds; /* per part column: how two parts' values combine */
	Oid *types;        /* per part column */
	int32 *typmods;
	Oid *collations;
	char **names;
	int *count_of; /* per output column: an avg's count column (its sum is the column itself), else -1 */
	Query *tail;
} FnFoldShape;

/* The query's fold, or NULL with *why set to the reason it has none. */
extern FnFoldShape *fn_fold_shape(const FlowQuery *fq, const char **why);

#endif
