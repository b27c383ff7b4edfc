/*
 * flow_query.h: a flow's query, analysed and validated once (FlowQuery): its source,
 * output columns, group keys and time window.
 */
#ifndef FLOWNODE_FLOW_QUERY_H
#define FLOWNODE_FLOW_QUERY_H

#include "postgres.h"

#include "access/attnum.h"

#include "nodes/parsenodes.h"

#include "bridge/core_bridge.h"

typedef struct FlowQuery {
	Query *query; /* analysed; the refresh rewrites a copy (query_rewrite.h) */
	Oid source_relid;
	int source_rtindex;
	List *out_names;      /* char *, output column names (non-junk) */
	List *out_types;      /* Oid */
	List *out_typmods;    /* int32 */
	List *out_collations; /* Oid */
	List *key_positions;  /* int, 0-based output positions of GROUP BY keys, window first */
	List *key_notnull;    /* bool as int: key is known NOT NULL */
	int window_position;  /* 0-based output position of the window column, -1 if none */
	FnWindowSpec window;
	AttrNumber time_attnum;
	char *time_column;
	char *window_text; /* deparsed window expression for the flows view */
	List *dimensions;  /* FlowDimension * (flow_joins.h): the tables joined to the source, NIL if none */
} FlowQuery;

/* Parses and analyses `sql` under the current search_path; validates; ERROR on bad
 * input. date_trunc on a timestamptz without a zone is in `timezone`. */
extern FlowQuery *fn_analyze_flow_query(const char *sql, const char *timezone);

#endif
