/*
 * flow_query.h: a flow's query, analysed and validated once (FlowQuery): its source,
 * output columns, group keys and time window.
 */
#ifndef FLOWNODE_FLOW_QUERY_H
#define FLOWNODE_FLOW_QUERY_H

#include "postgres.h"

#include "access/attnum.h"

#include "nodes/parsenodes.h"
#include "nodes/params.h"
#include "nodes/primnodes.h"

#include "bridge/core_bridge.h"
#include "query/time_input.h"

/* What a flow keeps in its sink, one row per ... */
typedef enum FlowShape {
	FLOW_SHAPE_GROUPED, /* ... group of a GROUP BY (or of the SELECT DISTINCT it means) */
	FLOW_SHAPE_COPY,    /* ... source row: no aggregation, keyed by the source's primary key */
	FLOW_SHAPE_SINGLE,  /* aggregates without GROUP BY: one row (none when HAVING says so), no key */
} FlowShape;

/* A comparison of the time column with the clock: `column <strategy> threshold`, the
 * threshold an expression of now() and constants (docs/reference.md, "now(): the evaluation's clock"). */
typedef struct NowPredicate {
	int strategy;    /* BTLessStrategyNumber ... BTGreaterStrategyNumber, column on the left */
	Expr *threshold; /* analysed; now() in it is the evaluation's scheduled time */
} NowPredicate;

typedef struct FlowQuery {
	Query *query;      /* analysed, hidden keys as outputs; the refresh rewrites a copy (query_rewrite.h) */
	Query *as_written; /* the query as written (query itself when it has no hidden keys):
	                    * what is stored and shown as the flow's query */
	FlowShape shape;
	Oid source_relid;
	int source_rtindex;
	List *out_names;      /* char *, output column names (non-junk): the visible, then the hidden */
	int nvisible;         /* how many of them the query's result shows (query/hidden_keys.h) */
	List *out_types;      /* Oid */
	List *out_typmods;    /* int32 */
	List *out_collations; /* Oid */
	List *key_positions;  /* int, 0-based output positions of the sink's key, window first */
	List *key_notnull;    /* bool as int: key is known NOT NULL */
	List *key_eqops;      /* Oid: the equality the query tells the keys apart with */
	int window_position;  /* 0-based output position of the window column, -1 if none */
	bool window_in_key;   /* no window, but a group key computed from one (its ::date) */
	FnWindowSpec window;
	AttrNumber time_attnum;
	char *time_column;
	FnTimeInput input; /* how the time column becomes the window's timestamp */
	char *window_text; /* deparsed window expression for the flows view */
	List *now_preds;   /* NowPredicate *: the time column compared with now(); NIL if none */
	List *dimensions;  /* FlowDimension * (flow_joins.h): the tables joined to the source, NIL if none */
} FlowQuery;

/* The dialect a flow's query text was written in, as the flow records it: as
 * PostgreSQL reads it (create_flow), or as GreptimeDB writes it (flownode.execute;
 * greptime/gt_dialect.h reads it). */
typedef enum FlowDialect { FLOW_DIALECT_POSTGRES, FLOW_DIALECT_GREPTIME } FlowDialect;

/* How a dialect other than PostgreSQL's is read, given by the module that knows it
 * (the analysis calls back, so that it need not know the dialects): a rewrite of the
 * raw SELECT before analysis (NULL: none), then the analysis with `setup` as its
 * parser setup, called with a copy of the raw target list. */
typedef struct FlowQueryReading {
	void (*rewrite)(SelectStmt *sel);
	ParserSetupHook setup;
} FlowQueryReading;

/* Where a flow query's text sits, for errors to point at: inside `statement`, from
 * byte `offset` (a CREATE FLOW statement given to flownode.execute). */
typedef struct FlowQueryOrigin {
	const char *statement;
	int offset;
} FlowQueryOrigin;

/* Parses and analyses `sql` under the current search_path; validates; ERROR on bad
 * input. date_trunc on a timestamptz without a zone is in `timezone`. */
extern FlowQuery *fn_analyze_flow_query(const char *sql, const char *timezone);
/* The same for a query read through `reading` (NULL: as PostgreSQL reads it); errors
 * point into origin's statement when not NULL (else into `sql`). */
extern FlowQuery *fn_analyze_flow_query_read(const char *sql, const char *timezone,
                                             const FlowQueryReading *reading, const FlowQueryOrigin *origin);

/* The table a flow query reads, from its raw parse tree alone (it may not exist);
 * NULL when the text is not one SELECT from one table (analysis says why). */
extern RangeVar *fn_flow_query_source(const char *sql, const FlowQueryOrigin *origin);

/* Windows of a flow without aggregation: seconds of its time column. */
#define FN_COPY_WINDOW_USEC USECS_PER_SEC

#endif
