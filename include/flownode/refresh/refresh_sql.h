/*
 * refresh_sql.h: the SQL of a refresh, built from the analysed flow query (a copy of
 * its tree restricted to the windows, deparsed by PostgreSQL) and the sink's name.
 * The windows are the ranges [$1[i], $2[i]) of two arrays of the time column's type,
 * any number of them in one statement of one shape (FnRefreshShape), or the whole
 * query.
 * A query that compares its time column with now() takes the evaluation's scheduled
 * time as one more parameter, a timestamptz: $3 after the ranges, $1 without them.
 * A date or an integer epoch time column (query/time_input.h) adds two ranges of its
 * own values, $3 and $4, for the source's side: the clock is then $5.
 */
#ifndef FLOWNODE_REFRESH_SQL_H
#define FLOWNODE_REFRESH_SQL_H

#include "postgres.h"

#include "query/flow_query.h"
#include "query/fold_shape.h"
#include "query/query_rewrite.h"

/* How a refresh statement keeps to its windows on each side (see FnRangeFilter):
 * JOIN where an index leads with the time column, CONTAINS where none does. */
typedef struct FnRefreshShape {
	FnRangeFilter source; /* FN_FILTER_ALL_FINITE: the whole query, no arguments */
	FnRangeFilter sink;
} FnRefreshShape;

/* The upsert of every fresh group (a sink row rewritten only when a value differs)
 * and, unless upsert_only, the DELETE of the windows' groups that vanished; it
 * returns one row: the number of sink rows written. */
extern char *fn_refresh_sql(const FlowQuery *fq, const char *sink, FnRefreshShape shape, bool upsert_only);
/* The same statement with the DELETE, for key marks (refresh/key_refresh.h): only
 * the groups whose keys hash to one of a bigint[] are read and deleted (a keyed
 * flow, query/key_columns.h): $3 after the ranges, $5 after a date's or an epoch's
 * values. */
extern char *fn_refresh_keys_sql(const FlowQuery *fq, const char *sink, FnRefreshShape shape);
/* A plain INSERT of the query into a sink that holds nothing of these windows. */
extern char *fn_plain_insert_sql(const FlowQuery *fq, const char *sink, FnRangeFilter source);
/* Whether the sink holds any row in the windows. */
extern char *fn_sink_probe_sql(const FlowQuery *fq, const char *sink, FnRangeFilter filter);
/* Whether windows that only gained rows may skip the DELETE (no group can vanish). */
extern bool fn_refresh_can_skip_vanished(const FlowQuery *fq);

/* read_flow: the query restricted to the dirty windows $1/$2 (or every finite time),
 * and the sink's rows in [$3, $4) outside them (window-less: the whole sink). */
extern char *fn_read_query_sql(const FlowQuery *fq, FnRangeFilter source);
extern char *fn_read_sink_sql(const FlowQuery *fq, const char *sink);

/* The folded refresh (refresh/fold_state.h), over the prefix the worker keeps as the
 * ephemeral named relation FN_FOLD_PREFIX (the query's output columns) and the query
 * over the ranges $1/$2: the prefix's groups with the ranges' rows folded in, and
 * the upsert of those into the sink. */
#define FN_FOLD_PREFIX "flownode_fold_prefix"
extern char *fn_fold_prefix_sql(const FlowQuery *fq, const FnFoldShape *fs, FnRangeFilter source);
extern char *fn_fold_upsert_sql(const FlowQuery *fq, const FnFoldShape *fs, const char *sink,
                                FnRangeFilter source);
/* How many rows of the sink's window [$1[1], $2[1]) and of the query over $1/$2 differ
 * (flownode.verify_folds). */
extern char *fn_fold_verify_sql(const FlowQuery *fq, const char *sink, FnRangeFilter source);

#endif
