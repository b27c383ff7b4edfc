/*
 * flow_status.c: the function behind the flows view: each flow's state from its
 * shared-memory slot and its catalog row (paused, a background backfill's
 * progress), for the roles that are members of its owner. On a hot standby no
 * worker runs and shared memory knows nothing: every flow is 'standby', with its
 * dirty windows and lag taken from the replicated durable record.
 */
#include "flownode.h"

#include "access/xlog.h"
#include "bridge/core_bridge.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "marking/source_triggers.h"
#include "record/durable_record.h"
#include "record/key_record.h"
#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"
#include "pgtime.h"
#include "utils/acl.h"
#include "utils/datetime.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(flownode_flow_status);
PG_FUNCTION_INFO_V1(flownode_flow_status_0_4);

/* Every column a flow_status of some version shows (pg_stat_statements' way: one
 * function per layout of OUT columns, the library serving the objects of each
 * version it reads until ALTER EXTENSION flownode UPDATE). The first ones, up to
 * COL_FOLDS, are the OUT columns of 0.2 and 0.3, in their order. */
enum {
	COL_FLOW_ID,
	COL_STATE,
	COL_DIRTY_WINDOWS,
	COL_LAST_RUN_AT,
	COL_LAST_RUN_DURATION,
	COL_LAST_ERROR,
	COL_RUNS,
	COL_FAILURES,
	COL_ROWS_WRITTEN,
	COL_WORKER_PID,
	COL_LAST_ERROR_AT,
	COL_CONSECUTIVE_FAILURES,
	COL_LAST_FAILURE,
	COL_LAST_FAILURE_AT,
	COL_DIRTY_RANGES,
	COL_LAG,
	COL_OLDEST_DIRTY_WINDOW,
	COL_LAST_SUCCESS_AT,
	COL_BACKFILL_DONE,
	COL_BACKFILL_TOTAL,
	COL_FOLDS,
	COL_LAST_ERROR_SQLSTATE,
	COL_LAST_START_DELAY,
	COL_MARKING_ENABLED,
	NUM_COLS
};

/* ... and from 0.4 on: one error (the current one, with its SQLSTATE; past ones are
 * in flownode.run_history), how late the last evaluation started, and whether the
 * source's writes are marked */
static const int layout_0_4[] = {COL_FLOW_ID,
                                 COL_STATE,
                                 COL_DIRTY_WINDOWS,
                                 COL_DIRTY_RANGES,
                                 COL_OLDEST_DIRTY_WINDOW,
                                 COL_LAG,
                                 COL_LAST_RUN_AT,
                                 COL_LAST_RUN_DURATION,
                                 COL_LAST_SUCCESS_AT,
                                 COL_LAST_ERROR,
                                 COL_LAST_ERROR_SQLSTATE,
                                 COL_LAST_ERROR_AT,
                                 COL_CONSECUTIVE_FAILURES,
                                 COL_RUNS,
                                 COL_FAILURES,
                                 COL_ROWS_WRITTEN,
                                 COL_FOLDS,
                                 COL_WORKER_PID,
                                 COL_LAST_START_DELAY,
                                 COL_BACKFILL_DONE,
                                 COL_BACKFILL_TOTAL,
                                 COL_MARKING_ENABLED};

typedef struct StatusLayout {
	const int *cols; /* NULL: the enum's first ncols, in its order (0.2's and 0.3's) */
	int ncols;
	bool marking; /* it shows marking_enabled (a catalog scan per flow) */
} StatusLayout;

/* What a flow's row is made of: its slot's copy, or what stands for it. */
typedef struct FlowView {
	const char *state;
	FnTimeRange *ranges; /* the dirty set, sorted */
	uint32 nranges;
	TimestampTz since; /* the oldest change that may not be in the sink; 0: none */
} FlowView;

/* The windows of the flow's sorted, disjoint dirty ranges (a range merged from
 * neighbours counts the clean windows between them too). */
static int64 count_windows(TaskConfig *cfg, FnWindow *w, const FnTimeRange *ranges, uint32 n) {
	int64 dirty = 0;

	if (cfg->window.kind == FN_WINDOW_NONE)
		return n > 0 ? 1 : 0;
	for (uint32 i = 0; i < n; i++)
		dirty += fn_flow_windows(cfg, w, ranges[i]);
	return dirty;
}

/*
 * A window start as a timestamptz: a timestamp column holds the flow's local time
 * (as refresh_flow reads its bounds), converted in the flow's zone. The first window
 * of the timestamp range may have no UTC instant there: it shows as -infinity.
 */
static TimestampTz window_start(TaskConfig *cfg, int64 start) {
	struct pg_tm tm;
	fsec_t fsec;
	int tz;
	TimestampTz t;
	pg_tz *zone;

	if (cfg->window.with_time_zone)
		return start;
	zone = pg_tzset(cfg->timezone);
	if (zone == NULL || timestamp2tm(start, NULL, &tm, &fsec, NULL, NULL) != 0)
		return DT_NOBEGIN;
	tz = DetermineTimeZoneOffset(&tm, zone);
	if (tm2timestamp(&tm, fsec, &tz, &t) != 0 || !IS_VALID_TIMESTAMP(t))
		return DT_NOBEGIN;
	return t;
}

/* A flow as its slot shows it; false when it has no slot. */
static bool slot_view(TaskConfig *cfg, Oid catalog, Datum *values, bool *nulls, FlowView *v) {
	FlowSlotView view;
	Interval *duration = palloc0(sizeof(Interval));

	if (!fn_slot_view(MyDatabaseId, catalog, cfg->flow_id, &view))
		return false;
	v->ranges = view.ranges;
	v->nranges = view.nranges;
	v->since = view.since;
	if (view.worker_pid == 0)
		v->state = "waiting_for_worker";
	else if (view.consecutive_failures > 0)
		v->state = "failing";
	else
		v->state = "active";
	values[COL_LAST_RUN_AT] = TimestampTzGetDatum(view.last_run_at);
	nulls[COL_LAST_RUN_AT] = view.last_run_at == 0;
	duration->time = view.last_run_usec;
	values[COL_LAST_RUN_DURATION] = IntervalPGetDatum(duration);
	nulls[COL_LAST_RUN_DURATION] = view.last_run_at == 0;
	values[COL_LAST_SUCCESS_AT] = TimestampTzGetDatum(view.last_success_at);
	nulls[COL_LAST_SUCCESS_AT] = view.last_success_at == 0;
	/* the current error, only while failing; the last failure stays in its own columns */
	values[COL_LAST_ERROR] = CStringGetTextDatum(view.last_failure);
	nulls[COL_LAST_ERROR] = view.consecutive_failures == 0 || view.last_failure[0] == '\0';
	values[COL_LAST_ERROR_AT] = TimestampTzGetDatum(view.last_failure_at);
	nulls[COL_LAST_ERROR_AT] = nulls[COL_LAST_ERROR];
	values[COL_RUNS] = Int64GetDatum(view.runs);
	values[COL_FAILURES] = Int64GetDatum(view.failures);
	values[COL_ROWS_WRITTEN] = Int64GetDatum(view.rows_written);
	values[COL_FOLDS] = Int64GetDatum(view.folds);
	values[COL_WORKER_PID] = Int32GetDatum(view.worker_pid);
	nulls[COL_WORKER_PID] = view.worker_pid == 0;
	values[COL_CONSECUTIVE_FAILURES] = Int32GetDatum(view.consecutive_failures);
	values[COL_LAST_FAILURE] = CStringGetTextDatum(view.last_failure);
	nulls[COL_LAST_FAILURE] = view.last_failure[0] == '\0';
	values[COL_LAST_FAILURE_AT] = TimestampTzGetDatum(view.last_failure_at);
	nulls[COL_LAST_FAILURE_AT] = view.last_failure_at == 0;
	values[COL_LAST_ERROR_SQLSTATE] = CStringGetTextDatum(unpack_sql_state(view.last_failure_sqlstate));
	nulls[COL_LAST_ERROR_SQLSTATE] = nulls[COL_LAST_ERROR] || view.last_failure_sqlstate == 0;
	nulls[COL_LAST_START_DELAY] = view.last_due_at == 0;
	if (view.last_due_at != 0) {
		Interval *delay = palloc0(sizeof(Interval));

		delay->time = Max(0, view.last_started_at - view.last_due_at); /* never started early */
		values[COL_LAST_START_DELAY] = IntervalPGetDatum(delay);
	}
	return true;
}

/* A flow without a slot (no worker has claimed one since the server started, or
 * flownode is not preloaded), or on a hot standby: no counters. On a hot standby
 * no worker can run, and shared memory holds nothing (writes, and so marks, happen
 * on the primary): what will be pending after a promotion is the durable record,
 * which reaches the standby with the WAL. */
static void no_slot_view(TaskConfig *cfg, bool standby, Datum *values, bool *nulls, FlowView *v) {
	v->state = standby ? "standby" : "waiting_for_worker";
	v->nranges = 0;
	v->ranges = NULL;
	v->since = 0;
	if (standby)
		v->ranges = fn_record_read(cfg->flow_id, &v->nranges, &v->since);
	values[COL_RUNS] = Int64GetDatum(0);
	values[COL_FAILURES] = Int64GetDatum(0);
	values[COL_ROWS_WRITTEN] = Int64GetDatum(0);
	values[COL_FOLDS] = Int64GetDatum(0);
	values[COL_CONSECUTIVE_FAILURES] = Int32GetDatum(0);
	nulls[COL_LAST_RUN_AT] = nulls[COL_LAST_RUN_DURATION] = nulls[COL_LAST_SUCCESS_AT] = true;
	nulls[COL_LAST_ERROR] = nulls[COL_LAST_ERROR_AT] = true;
	nulls[COL_WORKER_PID] = true;
	nulls[COL_LAST_FAILURE] = nulls[COL_LAST_FAILURE_AT] = true;
	nulls[COL_LAST_ERROR_SQLSTATE] = nulls[COL_LAST_START_DELAY] = true;
}

/* The key marks waiting in flownode.pending_keys (record/key_record.h) are pending
 * too: their windows merged into the view's dirty ranges, their oldest commit into
 * its lag (on a standby as on the primary: the table comes with the WAL). `keys`:
 * every flow's, read once per read of the view. */
static void add_key_marks(TaskConfig *cfg, const FnKeyRecordFlow *keys, FlowView *v) {
	uint32 n = 0, room;
	FnTimeRange *all;

	if (keys == NULL || cfg->window.kind == FN_WINDOW_NONE || !cfg->bound)
		return;
	room = v->nranges + keys->nwindows;
	all = palloc(sizeof(FnTimeRange) * room);
	fn_dirty_add_all((FnDirtySet){all, &n, room}, v->ranges, v->nranges); /* room: no merge */
	fn_dirty_add_all((FnDirtySet){all, &n, room}, keys->windows, keys->nwindows);
	v->ranges = all;
	v->nranges = n;
	v->since = fn_since_min(v->since, keys->oldest);
}

/* The flow's row: its state, dirty windows, lag and backfill from the view. */
static void flow_row(TaskConfig *cfg, Oid catalog, bool standby, const FnKeyRecordFlow *keys, Datum *values,
                     bool *nulls) {
	FnWindow *w = cfg->window.kind != FN_WINDOW_NONE ? fn_window_create(&cfg->window) : NULL;
	FlowView v;
	TimestampTz since;

	if (!cfg->bound) {
		/* a restore brought it back and nothing bound it yet (lifecycle/flow_binding.c):
		 * no trigger marks for it and no worker runs it until refresh_flow binds it */
		no_slot_view(cfg, false, values, nulls, &v);
		v.state = "restored";
	} else if (standby || fn_slot_count() == 0 || !slot_view(cfg, catalog, values, nulls, &v))
		no_slot_view(cfg, standby, values, nulls, &v);
	/* a pause is the user's: shown over everything but the standby and a flow not
	 * bound yet (which needs refresh_flow first) */
	add_key_marks(cfg, keys, &v);
	if (!standby && cfg->bound && cfg->paused)
		v.state = "paused";
	else if (strcmp(v.state, "active") == 0 && cfg->backfilling)
		v.state = "backfilling";
	values[COL_STATE] = CStringGetTextDatum(v.state);
	values[COL_DIRTY_WINDOWS] = Int64GetDatum(count_windows(cfg, w, v.ranges, v.nranges));
	values[COL_DIRTY_RANGES] = Int32GetDatum((int32)v.nranges);
	nulls[COL_OLDEST_DIRTY_WINDOW] = v.nranges == 0 || w == NULL;
	if (!nulls[COL_OLDEST_DIRTY_WINDOW])
		values[COL_OLDEST_DIRTY_WINDOW] = TimestampTzGetDatum(window_start(cfg, v.ranges[0].start));

	/* lag: since the oldest change that may not be in the sink; a backfill's rows
	 * count from the flow's creation */
	since = cfg->backfilling ? fn_since_min(v.since, cfg->created_at) : v.since;
	nulls[COL_LAG] = since == 0;
	if (since != 0) {
		TimestampTz now = Max(GetCurrentTimestamp(), since);

		values[COL_LAG] =
		    DirectFunctionCall2(timestamp_mi, TimestampTzGetDatum(now), TimestampTzGetDatum(since));
	}
	nulls[COL_BACKFILL_DONE] = nulls[COL_BACKFILL_TOTAL] = !cfg->backfilling;
	if (cfg->backfilling) {
		values[COL_BACKFILL_DONE] =
		    Int64GetDatum(fn_flow_windows(cfg, w, (FnTimeRange){cfg->backfill_from, cfg->backfill_next}));
		values[COL_BACKFILL_TOTAL] =
		    Int64GetDatum(fn_flow_windows(cfg, w, (FnTimeRange){cfg->backfill_from, cfg->backfill_to}));
	}
}

/* Each flow the caller may see (a member of its owner), as the layout shows it. */
static Datum flow_status(FunctionCallInfo fcinfo, const StatusLayout *layout) {
	ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;
	Oid catalog = fn_current_catalog_relid();
	bool standby = RecoveryInProgress();
	List *flows;
	ListCell *lc;
	FnKeyRecordFlow *keys;
	uint32 nkeys;

	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != layout->ncols)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("flownode.flow_status does not have the columns of its version"),
		                errhint("Run ALTER EXTENSION flownode UPDATE in this database.")));
	flows = fn_load_all_flows();
	keys = fn_key_record_summary(&nkeys);
	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		Datum all[NUM_COLS] = {0};
		bool all_nulls[NUM_COLS] = {0};
		Datum values[NUM_COLS];
		bool nulls[NUM_COLS];

		if (!has_privs_of_role(GetUserId(), cfg->owner))
			continue; /* each role sees the state of its own flows only */
		all[COL_FLOW_ID] = Int64GetDatum(cfg->flow_id);
		flow_row(cfg, catalog, standby, fn_key_record_find(keys, nkeys, cfg->flow_id), all, all_nulls);
		all_nulls[COL_MARKING_ENABLED] = !layout->marking || !OidIsValid(cfg->source_relid);
		if (!all_nulls[COL_MARKING_ENABLED])
			all[COL_MARKING_ENABLED] = BoolGetDatum(fn_marking_enabled(cfg->source_relid));
		for (int i = 0; i < layout->ncols; i++) {
			int c = layout->cols != NULL ? layout->cols[i] : i;

			values[i] = all[c];
			nulls[i] = all_nulls[c];
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/* flow_status of versions 0.2 and 0.3, until the database is updated */
Datum flownode_flow_status(PG_FUNCTION_ARGS) {
	static const StatusLayout layout = {NULL, COL_FOLDS + 1, false};

	return flow_status(fcinfo, &layout);
}

Datum flownode_flow_status_0_4(PG_FUNCTION_ARGS) {
	static const StatusLayout layout = {layout_0_4, lengthof(layout_0_4), true};

	return flow_status(fcinfo, &layout);
}
