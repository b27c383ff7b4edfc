/*
 * flownode.h: declarations shared by the C shims at the PostgreSQL boundary.
 *
 * Component map (seed name -> file):
 *   BatchingEngine   -> source_marks.c    (triggers, per-backend flow cache, marks, publish)
 *                       + batching_engine.c (transaction callbacks, worker start/stop)
 *   BatchingTask     -> batching_task.c   (one background worker per flow, launcher)
 *   TaskConfig       -> task_config.c     (a flow's catalog row, loaded once)
 *   TaskState        -> task_state_shmem.c (per-flow slot in shared memory)
 *   DirtyTimeWindows -> core/dirty_time_windows.cpp
 *   TimeWindowExpr   -> core/time_window_expr.cpp + window_calendar in core_bridge.cpp
 *   gen_insert_plan  -> gen_insert_plan.c
 */
#ifndef FLOWNODE_H
#define FLOWNODE_H

#include "postgres.h"

#include "access/xact.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "nodes/parsenodes.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"

#include "flownode/core_bridge.h"
#include "flownode/time_range.h"

/* ---- GUCs (flownode.c) ---- */
extern int fn_max_flows;
extern int fn_dirty_ranges_per_flow;
extern int fn_local_ranges_per_flow;
extern int fn_max_windows_per_refresh;
extern int fn_min_refresh_interval_ms;
extern int fn_max_backoff_ms;
extern int fn_statement_timeout_ms;
extern bool fn_launcher_enabled;

#define FLOWNODE_SCHEMA "flownode"
#define FLOWNODE_CATALOG "flow"
#define FLOWNODE_INSERT_TRIGGER_NAME "flownode_mark_insert"
#define FLOWNODE_UPDATE_TRIGGER_NAME "flownode_mark_update"
#define FLOWNODE_DELETE_TRIGGER_NAME "flownode_mark_delete"
#define FLOWNODE_TRUNCATE_TRIGGER_NAME "flownode_mark_truncate"

/* ---- TaskConfig: a flow's immutable configuration (task_config.c) ---- */
typedef struct TaskConfig {
	int64 flow_id;
	char *flow_name;
	Oid owner;
	Oid source_relid;
	Oid sink_relid;
	char *query;             /* deparsed, every name schema-qualified */
	char *timezone;          /* TimeZone the query is evaluated in */
	Interval *eval_interval; /* NULL: adaptive */
	Interval *expire_after;  /* NULL: never expire */
	FnWindowSpec window;     /* kind FN_WINDOW_NONE for window-less flows */
	AttrNumber time_attnum;  /* source column of the window, 0 if none */
	bool created_here;       /* the flow was created by the current transaction */
} TaskConfig;

extern TaskConfig *fn_load_task_config(int64 flow_id, bool missing_ok);
extern TaskConfig *fn_load_task_config_by_name(const char *flow_name, bool missing_ok);
extern List *fn_load_flows_of_source(Oid source_relid); /* List of TaskConfig * */
extern List *fn_load_flows_of_relation(Oid relid);      /* flows reading or writing it */
extern void fn_drop_flows_of_relation(Oid relid);
/* source_triggers.c: the marking triggers of a source, per time column (0: none) */
extern void fn_install_source_triggers(Oid source_relid, AttrNumber time_attnum);
/* mark_when_cache.c: their WHEN clauses, parsed once per backend */
extern void fn_when_cache_init(void);
extern void fn_forget_when_clauses(Oid relid);
extern void fn_remove_triggers_if_unused(Oid source_relid);
extern List *fn_load_all_flows(void); /* List of TaskConfig * */
extern Oid fn_catalog_relid(bool missing_ok);
/* relcache callback's part: forgets the cached OIDs when either relation changes */
extern void fn_forget_catalog_relids(Oid relid);
extern Oid fn_catalog_owner(void);

/* SPI as another role (the catalog's owner, or a flow's owner). An ERROR in between
 * needs no cleanup: the (sub)transaction abort restores the user and SPI. */
typedef struct SpiAs {
	Oid save_userid;
	int save_sec;
} SpiAs;
extern void fn_spi_begin_as(SpiAs *scope, Oid role, int sec_flags);
extern void fn_spi_end(SpiAs *scope);
extern Oid fn_pending_relid(void);
extern Datum fn_ranges_datum(const FnTimeRange *ranges, uint32 n);
typedef struct PendingWriter PendingWriter;
extern PendingWriter *fn_pending_open(void);
extern void fn_pending_write(PendingWriter *w, int64 flow_id, const FnTimeRange *ranges, uint32 n);
extern void fn_pending_close(PendingWriter *w);
struct FlowSlot;
extern void fn_reload_pending(int64 flow_id, struct FlowSlot *slot);
extern int64 fn_interval_usec(const Interval *iv);

/* ---- TaskState in shared memory (task_state_shmem.c) ---- */
typedef enum FlowRunState {
	FLOW_STARTING = 0,
	FLOW_ACTIVE,
	FLOW_FAILING,
	FLOW_WAITING_FOR_WORKER
} FlowRunState;

#define FN_ERROR_LEN 512

typedef struct FlowSlot {
	bool in_use;
	bool dropped; /* flow dropped: worker exits and frees the slot */
	Oid dboid;
	Oid catalog_relid; /* flownode.flow of that database: a new extension is a new key */
	int64 flow_id;
	int lock_index; /* into the flownode LWLock tranche */

	pid_t worker_pid; /* 0: no worker attached */
	Latch *worker_latch;
	TimestampTz worker_registered_at; /* a start was requested at; 0 when none pending */
	TimestampTz hold_until;           /* no restart before (DROP DATABASE in progress) */
	pid_t reserved_by;                /* an uncommitted create_flow holds it: neither start nor free it */
	uint64 acquired_seq;              /* bumped whenever someone claims the slot: garbage collection
	                                   * frees a slot only if nobody claimed it meanwhile */
	FlowRunState state;
	/* some dirty window may have lost rows (an UPDATE or DELETE marked it, or it
	 * came back from the durable record): the next refresh that takes the rest of
	 * the set must also delete the sink groups that vanished */
	bool removals;

	/* flush_flow handshake: callers bump requested, the worker serves and bumps completed */
	uint64 flush_requested;
	uint64 flush_completed;
	int64 flush_windows;
	bool flush_failed;
	ConditionVariable flush_cv;

	/* status for the flows view */
	TimestampTz last_run_at;
	int64 last_run_usec;
	int64 runs;
	int64 failures;
	int32 consecutive_failures;
	int64 rows_written;
	TimestampTz last_error_at;
	char last_error[FN_ERROR_LEN];

	/* DirtyTimeWindows: sorted, non-overlapping [start, end) ranges; then, in the
	 * same array, the durable set (ranges known to be in flownode.pending) */
	uint32 ndirty;
	uint32 ndurable;
	FnTimeRange dirty[FLEXIBLE_ARRAY_MEMBER]; /* dirty[0..cap), durable[cap..2cap) */
} FlowSlot;

extern void fn_shmem_request(void);
extern void fn_shmem_startup(void);
extern LWLock *fn_registry_lock(void);
extern LWLock *fn_slot_lock(FlowSlot *slot);
extern FlowSlot *fn_find_slot(Oid dboid, Oid catalog_relid, int64 flow_id); /* registry lock held by caller */
extern FlowSlot *fn_acquire_slot(Oid dboid, Oid catalog_relid, int64 flow_id, bool missing_error);
extern void fn_free_slot(FlowSlot *slot);
extern bool fn_free_slot_if_unclaimed(FlowSlot *slot, uint64 seen_seq);
extern int fn_slot_count(void);
extern FlowSlot *fn_slot_at(int i);
extern FnDirtySet fn_slot_dirty_set(FlowSlot *slot);
extern FnDirtySet fn_slot_durable_set(FlowSlot *slot);

/* In-flight publications: a committing writer is registered from PRE_COMMIT until
 * it has published its marks, so flush_flow can wait for commits it must see. */
extern void fn_inflight_begin(void);
extern void fn_inflight_end(void);
extern void fn_inflight_wait_all(void);

/* ---- BatchingEngine (batching_engine.c) ---- */
extern void fn_engine_init(void);
extern void fn_on_pre_commit_cleanup_triggers(Oid source_relid);
extern void fn_on_commit_start_worker(int64 flow_id, Oid owner);
extern void fn_on_commit_drop_flow(int64 flow_id);

/* ---- the source's marks (source_marks.c), driven by batching_engine.c's callbacks ---- */
extern void fn_marks_init(void);
extern void fn_marks_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid);
extern void fn_marks_pre_commit(void);
extern void fn_marks_commit(void);
extern void fn_marks_abort(void);
extern bool fn_marks_pending(void);

/* ---- BatchingTask (batching_task.c) ---- */
extern void fn_register_launcher(void);
extern bool fn_start_flow_worker(Oid dboid, Oid catalog_relid, int64 flow_id, Oid owner,
                                 bool owner_can_login);
extern bool fn_role_can_login(Oid roleid);
extern void fn_before_drop_database(const char *dbname);
PGDLLEXPORT void flownode_launcher_main(Datum arg);
PGDLLEXPORT void flownode_db_starter_main(Datum arg);
PGDLLEXPORT void flownode_flow_main(Datum arg);

/* ---- gen_insert_plan.c ---- */
/* One statement that refreshes the given ranges (NULL/0: the whole query). Returns
 * the SQL text built from the analyzed, rewritten query tree. With *insert_only
 * true it asks for the upsert alone (no vanished-groups DELETE), and leaves it
 * true only if the query allows that. */
extern char *fn_gen_insert_plan(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, bool *insert_only);
/* Runs it under the flow owner's identity; returns rows upserted + deleted. */
/* create_flow's fill: the whole query; into an empty sink it just created, a plain INSERT. */
extern int64 fn_execute_fill(TaskConfig *cfg, bool sink_is_new);
/* The same, and in the same snapshot removes the refreshed ranges from the flow's
 * durable record (and the windows that ended before expired_before, if not 0). */
extern int64 fn_execute_refresh(TaskConfig *cfg, const FnTimeRange *ranges, int nranges, int64 expired_before,
                                bool removals, uint64 windows);

/* ---- query_analysis.c ---- */
typedef struct FlowQuery {
	Query *query; /* analyzed */
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
} FlowQuery;

/* Parses and analyzes `sql` under the current search_path; validates; ERROR on bad input. */
extern FlowQuery *fn_analyze_flow_query(const char *sql, const char *timezone);
/* Injects `col >= lo AND col < hi OR ...` (all finite timestamps when nranges = 0). */
extern void fn_inject_time_filter(Query *query, int rtindex, AttrNumber attnum, Oid coltype,
                                  const FnTimeRange *ranges, int nranges);
/* Deparses with every name schema-qualified and a fixed DateStyle. */
extern char *fn_deparse_query(Query *query);
/* Runs the callback with search_path, DateStyle, IntervalStyle and TimeZone pinned. */
extern int fn_pin_deparse_settings(const char *timezone); /* -1: already pinned */
extern void fn_unpin_settings(int nestlevel);
/* A flow's worker pins the same settings for its whole session. */
extern void fn_pin_session_settings(const char *timezone);

/* ---- sink_table.c ---- */
extern Oid fn_prepare_sink(const char *sink_name, FlowQuery *fq, Oid source_relid, bool *created);

/* ---- misc helpers ---- */
extern char *fn_qualified_relname(Oid relid);
extern char *fn_text_arg(FunctionCallInfo fcinfo, int argno, const char *argname);

#endif
