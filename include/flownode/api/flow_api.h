/*
 * flow_api.h: the SQL API's work as C functions (create, drop, flush), for the SQL
 * functions of flow_api.c and for flownode.execute (greptime/), which takes
 * GreptimeDB's statements to them.
 */
#ifndef FLOWNODE_FLOW_API_H
#define FLOWNODE_FLOW_API_H

#include "postgres.h"

#include "datatype/timestamp.h"

#include "query/flow_query.h"
#include "registry/flow_registry.h"

#define MIN_EVAL_INTERVAL_USEC 100000

typedef struct CreateFlowArgs {
	const char *flow_name;
	const char *sink_name; /* a table name, optionally schema-qualified, as SQL writes it */
	const char *query;
	Interval *eval_interval; /* NULL: adaptive */
	Interval *expire_after;  /* NULL: never */
	const char *comment;
	bool if_not_exists;
	bool or_replace;
	FlowDialect dialect;             /* the dialect `query` is written in, as the flow records it */
	const FlowQueryReading *reading; /* how `query` is read (NULL: as PostgreSQL reads it) */
	const char *options;             /* the WITH options as jsonb text; NULL: none */
	bool defer_on_missing_source;    /* a source that does not exist yet makes the flow wait for it */
	const char *timezone;            /* NULL: the session's */
	int64 start_waiting_flow_id;     /* > 0: starts that waiting flow (keeping its id and creation time) */
	FlowQueryOrigin origin;          /* where errors in `query` point (statement NULL: into the query) */
	bool clauses;                    /* messages name CREATE FLOW's clauses (EVAL INTERVAL), not arguments */
	bool background;                 /* backfill => 'background': the worker fills the sink */
	bool no_fill;                    /* the sink starts empty (a new sink only): WITH NO DATA of
	                                  * TimescaleDB's CREATE MATERIALIZED VIEW; refresh_flow fills it */
} CreateFlowArgs;

/* create_flow (docs/reference.md, Functions): returns the flow's id; *waiting tells that the
 * flow waits for its source (defer_on_missing_source). */
extern int64 fn_create_flow(const CreateFlowArgs *args, bool *waiting);
extern void fn_drop_flow(const char *flow_name, bool if_exists);
extern int64 fn_flush_flow(const char *flow_name);
/* flush_flow(flow_name, cascade => true): the flows it reads from first, bottom up. */
extern int64 fn_flush_flow_cascade(const char *flow_name);
/* The flow flush_flow would flush, checked as it checks it (ERROR if it cannot). */
extern TaskConfig *fn_flow_to_flush(const char *flow_name);
/* Whether fn_create_flow is running (the DDL it runs, such as its sink's CREATE
 * TABLE, is its own). */
extern bool fn_creating_flow(void);

/* ERROR unless `iv` is positive and at least min_usec long, naming it `name`. */
extern void fn_check_flow_interval(const Interval *iv, const char *name, int64 min_usec);

#endif
