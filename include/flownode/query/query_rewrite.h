/*
 * query_rewrite.h: an analysed flow query made into SQL: the time filter on its
 * parse tree, the deparse, and the settings both run under.
 */
#ifndef FLOWNODE_QUERY_REWRITE_H
#define FLOWNODE_QUERY_REWRITE_H

#include "postgres.h"

#include "access/attnum.h"

#include "datatype/timestamp.h"
#include "nodes/parsenodes.h"

#include "query/time_input.h"

/*
 * How a statement keeps to the windows of a refresh, ranges passed as the arrays $1
 * (starts) and $2 (ends) of the time column's type; one shape for any number of them.
 */
typedef enum FnRangeFilter {
	FN_FILTER_ALL_FINITE, /* no ranges: every finite time (a fill, a full refresh) */
	FN_FILTER_JOIN,       /* joined with unnest($1, $2): one index scan per range */
	FN_FILTER_CONTAINS,   /* in their multirange: one scan, a binary search per row */
} FnRangeFilter;

/* Restricts the query to the ranges (see FnRangeFilter) or to every finite time. */
extern void fn_inject_time_filter(Query *query, int rtindex, AttrNumber attnum, Oid coltype,
                                  FnRangeFilter filter);
/* The same for a time column that is a date or an integer epoch (query/time_input.h;
 * timetype: the window's timestamp type): the filter is on the column's own values,
 * the arguments $3 and $4 (see fn_inject_input_filter in query_rewrite.c). For a
 * timestamp column, fn_inject_time_filter. */
extern void fn_inject_input_filter(Query *query, int rtindex, AttrNumber attnum, Oid timetype,
                                   const FnTimeInput *input, FnRangeFilter filter);
/* The evaluation's clock (now(), CURRENT_TIMESTAMP, LOCALTIMESTAMP...) bound to the
 * timestamptz parameter $paramid: a new query. LOCALTIMESTAMP becomes the parameter
 * in the (pinned) TimeZone. */
extern Query *fn_bind_clock_param(Query *query, int paramid);
/* The same in an expression, bound to the constant `at`. */
extern Node *fn_bind_clock_const(Node *expr, TimestampTz at);
/* Deparses a copy with every name schema-qualified (call under pinned settings). */
extern char *fn_deparse_query(Query *query);
/* Pins search_path, DateStyle, IntervalStyle, extra_float_digits and (when not NULL)
 * TimeZone for the deparse and the statements run from it; returns the GUC nest
 * level to give fn_unpin_settings, -1 when they already had these values. */
extern int fn_pin_deparse_settings(const char *timezone);
extern void fn_unpin_settings(int nestlevel);
/* A flow's worker pins the same settings for its whole session. */
extern void fn_pin_session_settings(const char *timezone);

#endif
