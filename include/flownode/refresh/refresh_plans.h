/*
 * refresh_plans.h: what a worker keeps prepared for each flow it refreshes (for
 * the files of src/refresh/ only): the analysed query, its statements and the fold's state,
 * one set per flow, for at most FN_KEPT_FLOWS flows (the least recently refreshed
 * freed first), dropped when a flow leaves the worker, and made stale by a relcache
 * invalidation of a relation they depend on (docs/internals.md §6).
 */
#ifndef FLOWNODE_REFRESH_PLANS_H
#define FLOWNODE_REFRESH_PLANS_H

#include "postgres.h"

#include "executor/spi.h"
#include "nodes/pg_list.h"

#include "query/flow_query.h"
#include "refresh/fold_refresh.h"
#include "refresh/refresh_sql.h"
#include "registry/flow_registry.h"

/* Flows whose statements a worker keeps. A flow's set is its analysed query, about
 * ten cached plans and its fold's prefix (the open window's groups, a tuplestore
 * that spills to disk past work_mem), so the cap bounds a worker's memory for them
 * whatever the number of flows it serves; past it, the flow refreshed least
 * recently prepares its statements again when it next refreshes, as every flow of
 * a shared worker did before they were kept per flow. */
#define FN_KEPT_FLOWS 32

/* The plan variants kept for the refresh and upsert statements. */
typedef enum RefreshPlanKind {
	PLAN_CUSTOM,  /* planned for each refresh's bounds (many windows) */
	PLAN_GENERIC, /* one generic plan (few windows) */
	PLAN_SORTED,  /* one generic plan without hash aggregation (few rows) */
	PLAN_KINDS
} RefreshPlanKind;

typedef struct RefreshPlans {
	int64 flow_id;
	MemoryContext cxt; /* holds fq and sink */
	FlowQuery *fq;     /* the stored query, analysed once */
	char *sink;        /* the sink's qualified name, as the statements were built */
	bool stale;        /* the source or sink changed: analyse again before a new plan */
	Oid source_relid;
	Oid sink_relid;
	SPIPlanPtr refresh[PLAN_KINDS]; /* [RefreshPlanKind] */
	SPIPlanPtr upsert[PLAN_KINDS];  /* the same without the vanished-groups DELETE */
	SPIPlanPtr probe;               /* does the sink hold rows in these windows? */
	SPIPlanPtr fill;                /* plain INSERT, for windows it holds none of */
	SPIPlanPtr count;               /* the take's probe (fn_refresh_take): rows in a range */
	SPIPlanPtr batch;               /* and in each of many ranges, as a cursor */
	SPIPlanPtr keys;                /* the refresh of key marks (key_refresh.c) */
	FnRefreshShape keys_shape;      /* the shape it was built for */
	int time_index;        /* the source has an index led by the time column: 1, none: 0, unknown: -1 */
	int sink_index;        /* the sink has one led by the window column: likewise */
	bool upsert_refused;   /* the query needs the DELETE even after inserts */
	List *dimensions;      /* the tables the flow joins (Oid, TopMemoryContext) */
	bool dimensions_known; /* false again after a relcache invalidation of one */
	FnFold *fold;          /* the folded refresh of its open window */
} RefreshPlans;

/* The flow's set, made the most recently used (a new one, empty, if it had none:
 * the least recently used goes when FN_KEPT_FLOWS are kept). */
extern RefreshPlans *fn_plans_for(TaskConfig *cfg);
/* The flow's set if it has one, else NULL; its use is not counted. */
extern RefreshPlans *fn_plans_find(int64 flow_id);
/* Every statement of the set freed, and the fold's state, before the query is
 * analysed again: built from an analysis that no longer holds, the plan cache would
 * re-analyse their text with the types of now. */
extern void fn_plans_free_statements(RefreshPlans *p);
/* The flow left the worker: its set freed. */
extern void fn_plans_forget(int64 flow_id);
/* The flow's analysed query and sink name (p->fq, p->sink), for statements about to
 * be built: analysed again, and checked against the sink, after a change to the
 * source, sink or a dimension made it stale (every statement of the set dropped
 * then). As the flow's owner, under the pinned settings. */
extern FlowQuery *fn_plans_analysed(TaskConfig *cfg);
/* The tables the flow joins, read from the catalog once per set. */
extern List *fn_plans_dimensions(TaskConfig *cfg);
/* Whether an index of the source leads with its time column (the take's probes and
 * the refresh read through it), and one of the sink with the window column (the
 * DELETE of vanished groups reads through it): looked up once per analysis. */
extern bool fn_plans_time_index(TaskConfig *cfg);
extern bool fn_plans_sink_window_index(TaskConfig *cfg, FlowQuery *fq);
/* How many flows have a set (for tests and measurements). */
extern int fn_plans_kept(void);

#endif
