/*
 * flow_registry.h: the flow catalog, flownode.flow (GreptimeDB's BatchingEngine map):
 * each flow's configuration (TaskConfig), read and written as the catalog's owner,
 * so that any caller (a writer's trigger, a worker, flush_flow) can resolve the
 * flows it touches while users cannot write the catalog directly.
 *
 * The catalog names its tables and owner by regclass and regrole, which pg_dump
 * writes as names and a restore reads back as the new database's OIDs; whether a
 * flow is bound to this database's tables (its triggers exist here) is kept apart,
 * in flownode.flow_binding, which is not dumped (docs/internals.md §9).
 */
#ifndef FLOWNODE_FLOW_REGISTRY_H
#define FLOWNODE_FLOW_REGISTRY_H

#include "postgres.h"

#include "access/attnum.h"

#include "datatype/timestamp.h"
#include "nodes/pg_list.h"
#include "storage/lockdefs.h"

#include "bridge/core_bridge.h"
#include "query/flow_query.h"

/* A flow's configuration as its catalog row holds it. */
typedef struct TaskConfig {
	/* pointers and 8-byte values first, the narrow ones last (no padding between) */
	int64 flow_id;
	char *flow_name;
	char *query;             /* deparsed, every name schema-qualified */
	char *timezone;          /* TimeZone the query is evaluated in */
	Interval *eval_interval; /* NULL: adaptive */
	Interval *expire_after;  /* NULL: never expire */
	char *user_query;        /* as the user wrote it, in `dialect` */
	char *options;           /* the WITH options, as jsonb text */
	char *comment;
	char *sink_name;   /* waiting: the sink as written */
	char *search_path; /* waiting: the creator's search_path */
	TimestampTz created_at;
	/* backfill => 'background': [backfill_from, backfill_to) is filled by the worker,
	 * oldest first, and done up to backfill_next (window bounds, or [0, 1) for a
	 * window-less flow); all three 0 when there is nothing left to fill */
	int64 backfill_from;
	int64 backfill_next;
	int64 backfill_to;
	FnTimeInput input;   /* how the time column becomes the window's timestamp */
	FnWindowSpec window; /* kind FN_WINDOW_NONE for window-less flows */
	Oid owner;
	Oid source_relid;
	Oid sink_relid;
	FlowDialect dialect;    /* FLOW_DIALECT_GREPTIME: created by flownode.execute */
	AttrNumber time_attnum; /* source column of the window, 0 if none */
	bool created_here;      /* the flow was created by the current transaction */
	/* waiting for its source (defer_on_missing_source): no source, sink or stored
	 * query yet; sink_name and search_path say how to read the names once it exists */
	bool waiting;
	bool paused;      /* pause_flow: marks are recorded, nothing is refreshed */
	bool backfilling; /* the backfill above is under way */
	bool bound;       /* bound to this database's tables: false for a flow a restore
	                   * brought back that was not bound yet (lifecycle/flow_binding.c) */
	bool upgraded;    /* not bound, but bound in the cluster pg_upgrade copied this one
	                   * from (lifecycle/upgrade_binding.c) */
} TaskConfig;

/* What alter_flow changes: each set_* names an attribute, whose new value may be
 * NULL (none: adaptive, never expire, no comment). */
typedef struct FlowChanges {
	bool set_eval_interval;
	Interval *eval_interval;
	bool set_expire_after;
	Interval *expire_after;
	bool set_comment;
	const char *comment;
	const char *new_name; /* NULL: keep the name */
} FlowChanges;

/* What the creator gave a flow, the same for a flow and for one that waits for its
 * source: create_flow's arguments, copied once (api/flow_api.c). */
typedef struct FlowSettings {
	const char *flow_name;
	Oid owner;
	const char *user_query; /* as the user wrote it */
	const char *timezone;
	Interval *eval_interval;
	Interval *expire_after;
	const char *comment;
	FlowDialect dialect;    /* of user_query */
	const char *options;    /* jsonb text of the WITH options; NULL: none */
	TimestampTz created_at; /* 0: now; else kept from the flow it replaces or starts */
} FlowSettings;

/* A new flow's row, as create_flow validated it. */
typedef struct FlowDefinition {
	FlowSettings settings;
	Oid sink_relid;
	const char *stored_query; /* deparsed, every name schema-qualified */
	const char *window_text;  /* the window as the user's session deparses it */
	FlowQuery *fq;            /* stored_query analysed */
	int64 flow_id;            /* > 0: the id of the waiting flow this one starts */
} FlowDefinition;

/* A flow that waits for its source table (defer_on_missing_source). */
typedef struct WaitingFlowDefinition {
	FlowSettings settings;
	const char *sink_name;
	const char *search_path;
} WaitingFlowDefinition;

extern void fn_registry_init(void);

/*
 * expire_after's line at time `now`: the start of the first window that has not
 * ended before now - expire_after, in the flow's windows (w). Marks below it are
 * never refreshed (the windows are frozen). 0 when the flow has no expire_after.
 */
extern int64 fn_expiry_start(const Interval *expire_after, bool with_time_zone, const char *timezone,
                             FnWindow *w, TimestampTz now);

/* The windows of the flow (w: its window, NULL for a window-less flow: 1) in r: a
 * calendar range of more than 100,000 windows is counted from the unit's usual
 * width. */
extern int64 fn_flow_windows(const TaskConfig *cfg, FnWindow *w, FnTimeRange r);

extern TaskConfig *fn_load_task_config(int64 flow_id, bool missing_ok);
extern TaskConfig *fn_load_task_config_by_name(const char *flow_name, bool missing_ok);
extern List *fn_load_flows_of_source(Oid source_relid); /* bound flows only: they mark */
/* The bound flows whose source is one of relids. */
extern List *fn_load_flows_of_sources(List *relids);
/* The bound flows that read the table's rows: its own and those of its partition
 * ancestors (a partition's rows are rows of every table above it). */
extern List *fn_load_flows_over(Oid relid);
extern List *fn_load_flows_of_relation(Oid relid); /* flows reading (also as a dimension) or writing it */
/* Whether the list of TaskConfig * holds the flow. */
extern bool fn_flows_contain(List *flows, int64 flow_id);
extern List *fn_load_all_flows(void);     /* List of TaskConfig *, waiting ones aside */
extern List *fn_load_waiting_flows(void); /* List of TaskConfig *, the waiting ones */
extern List *fn_load_bound_flows(void);   /* the flows that run */
/* flows writing into relid or reading it as their source that a restore brought back
 * and no one bound yet */
extern List *fn_load_unbound_flows_of_table(Oid relid);
/* The flows bound in the cluster pg_upgrade copied this one from, not bound here yet. */
extern List *fn_load_upgraded_flows(void);

/* Writes: a new flow's row (returns its id), its removal, whether a table is a sink. */
extern int64 fn_registry_insert_flow(const FlowDefinition *def);
extern int64 fn_registry_insert_waiting_flow(const WaitingFlowDefinition *def);
extern void fn_registry_delete_flow(int64 flow_id);
/* The stored query (and the names shown for its time column and window) after a
 * rename: see lifecycle/utility_hook.c. */
extern void fn_registry_update_query(int64 flow_id, const char *query, const char *time_column,
                                     const char *window_text);
extern bool fn_registry_is_sink(Oid relid);
/* The flows of this database (waiting ones included), and those of them the role owns,
 * as the catalog is now. */
extern void fn_registry_count_flows(Oid owner, int64 *in_database, int64 *of_owner);
/* A restored flow bound to this database: its time column's attnum here (a restore
 * may have renumbered the source's columns), and its flow_binding row. */
extern void fn_registry_bind(int64 flow_id, AttrNumber time_attnum, const char *time_column);
/* The flow's binding forgotten: it says 'restored', and only refresh_flow binds it
 * again, recomputing its sink (a write reached its source unmarked). */
extern void fn_registry_unbind(int64 flow_id);
/* Whether the flow's row is visible in the active snapshot (the catalog is otherwise
 * read as it is now): read_flow's snapshot may predate the flow; and the windows a
 * background backfill has not filled yet in that snapshot, [from, to) (0, 0: none). */
extern bool fn_registry_flow_visible(int64 flow_id, int64 *unfilled_from, int64 *unfilled_to);
/* alter_flow, pause_flow/resume_flow: the named attributes of the flow's row. */
extern void fn_registry_alter_flow(int64 flow_id, const FlowChanges *changes);
extern void fn_registry_set_paused(int64 flow_id, bool paused);
/* A background backfill's progress (next >= to: done, the columns cleared), written
 * in the transaction that filled up to `next`; false, without waiting, when another
 * transaction holds the flow's row (the progress stays behind: harmless, a chunk
 * filled again rewrites nothing). */
extern bool fn_registry_set_backfill(int64 flow_id, int64 from, int64 next, int64 to);

/* flownode.flow_clock: for a flow that compares its time column with now(), the
 * scheduled time its sink follows (every window whose rows' answer changed since
 * then is marked); the row exists only for such flows. */
extern bool fn_registry_clock_get(int64 flow_id, TimestampTz *at);
/* The same, read in the active snapshot (read_flow: the clock its sink follows there). */
extern bool fn_registry_clock_visible(int64 flow_id, TimestampTz *at);
extern void fn_registry_clock_set(int64 flow_id, TimestampTz at);

/*
 * A flow's own lock (a lock on its catalog row's id, held to the end of the
 * transaction). A refresh takes it shared before anything else; removing the flow
 * takes it exclusive before anything else. So a drop waits for the refresh in
 * flight and a refresh never starts on a flow being dropped (it finds the flow gone
 * once it has the lock), and the two take no other lock in opposite orders.
 */
extern void fn_lock_flow(int64 flow_id, LOCKMODE mode);
/* fn_lock_flow if the lock is free now: false, and no lock, if it is not. */
extern bool fn_try_lock_flow(int64 flow_id, LOCKMODE mode);

/*
 * flownode.flow's OID (cached per backend until a relcache invalidation of it, which
 * every update script causes). Checks once, when it fills the cache, that the
 * extension's objects in this database are a version this library can read: this
 * library's (FLOWNODE_VERSION, or FLOWNODE_PREVIOUS_VERSION and
 * FLOWNODE_PREVIOUS2_VERSION, whose catalog is the same), or FLOWNODE_OLD_VERSION, whose catalog it reads for
 * marking and for the DDL that flows follow; any other version is an ERROR.
 */
extern Oid fn_catalog_relid(bool missing_ok);
/* ERROR (asking for ALTER EXTENSION flownode UPDATE) unless the extension's objects
 * in this database are this library's version: the check of every entry point but
 * marking and DDL. */
extern void fn_check_catalog_version(void);
/* The catalog's relid, after that check. */
extern Oid fn_current_catalog_relid(void);
/* Whether the objects are this library's version (after fn_catalog_relid). */
extern bool fn_catalog_is_current(void);
/* flownode.flow's OID without any check, InvalidOid when absent: DROP EXTENSION
 * must work whatever the version. */
extern Oid fn_catalog_relid_unchecked(void);
extern Oid fn_catalog_owner(void);

#endif
