/*
 * core_bridge.h: the C face of flownode's C++ core, for the C shims.
 *
 * Every function here is an entry point from PostgreSQL into C++: it catches every
 * C++ exception and turns it into ereport(ERROR) after the C++ frames are gone.
 * The dirty-set functions cannot fail at all (they may run at XACT_EVENT_COMMIT).
 */
#ifndef FLOWNODE_CORE_BRIDGE_H
#define FLOWNODE_CORE_BRIDGE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/key_marks.h"
#include "core/time_range.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum FnWindowKind {
	FN_WINDOW_NONE = 0,   /* window-less flow: recomputed whole */
	FN_WINDOW_DATE_BIN,   /* date_bin(stride, col, origin) */
	FN_WINDOW_DATE_TRUNC, /* date_trunc(unit, col [, zone]) */
	FN_WINDOW_TIME_BUCKET /* time_bucket of months, or in a time zone; date_bin in a zone */
} FnWindowKind;

#define FN_UNIT_LEN 32
#define FN_ZONE_LEN 128

/* Everything needed to compute a flow's windows, plain data (copied into caches). */
typedef struct FnWindowSpec {
	FnWindowKind kind;
	bool with_time_zone;  /* column is timestamptz */
	int64_t stride_time;  /* date_bin/time_bucket width: microseconds part */
	int32_t stride_day;   /* date_bin/time_bucket width: days part */
	int32_t stride_month; /* time_bucket width: months part (date_bin has none) */
	int64_t origin;       /* date_bin origin; time_bucket's, in local time */
	int64_t offset_time;  /* time_bucket's offset: subtracted from the local time, */
	int32_t offset_day;   /* added back to the bucket */
	int32_t offset_month;
	char unit[FN_UNIT_LEN]; /* date_trunc unit, lower case */
	char zone[FN_ZONE_LEN]; /* date_trunc zone for timestamptz (explicit or the flow's);
	                         * time_bucket's local time zone, "" for none */
} FnWindowSpec;

/* A TimeWindowExpr over PostgreSQL's own date_bin/date_trunc, allocated in the
 * current memory context (it holds no C++ resources). */
typedef struct FnWindow FnWindow;

extern FnWindow *fn_window_create(const FnWindowSpec *spec);
/* The window of ts. Remembers the last window, so a repeat is cheap. */
extern FnTimeRange fn_window_of(FnWindow *w, int64_t ts);
/* How many windows [r.start, r.end) spans, counting at most `cap`. */
extern uint64_t fn_window_count(FnWindow *w, FnTimeRange r, uint64_t cap);
extern int64_t fn_window_nominal_usec(FnWindow *w);
/* A fixed stride's anchor and stride, for fn_stride_window to compute its windows
 * without a call: 1 when known (set), 0 for a fixed stride whose anchor is not known
 * yet (ask again after the next window), -1 for calendar windows. */
extern int fn_window_stride(FnWindow *w, int64_t *anchor, int64_t *stride);
/* Validates the spec by computing a window (bad unit, zone or stride -> ERROR). */
extern void fn_window_check(const FnWindowSpec *spec);
/* The canonical name of a date_trunc unit from its DecodeUnits code (DTK_MONTH ...),
 * NULL when date_trunc has no such unit. */
extern const char *fn_trunc_unit_name(int dtk);

/* DirtyTimeWindows over caller-owned storage. Never fail, never allocate. */
typedef struct FnDirtySet {
	FnTimeRange *ranges;
	uint32_t *count;
	uint32_t capacity;
} FnDirtySet;

extern void fn_dirty_add(FnDirtySet s, FnTimeRange r);
/* A transaction's stage merged into its set; returns the new absorb threshold
 * (DirtyTimeWindows::merge_stage). s.ranges has room for capacity + n. */
extern uint64_t fn_dirty_merge_stage(FnDirtySet s, FnTimeRange *stage, uint32_t n, uint32_t stage_capacity,
                                     uint64_t below);
extern void fn_dirty_add_all(FnDirtySet s, const FnTimeRange *rs, uint32_t n);
extern void fn_dirty_subtract(FnDirtySet s, FnTimeRange r);
/* Removes everything before t (a window start); whether anything changed. */
extern bool fn_dirty_cut_below(FnDirtySet s, int64_t t);
extern bool fn_dirty_covers(FnDirtySet s, FnTimeRange r);

/* The durable set: windows known to be recorded in flownode.pending. It may claim
 * less than is recorded, never more: adding skips when full, removing drops whole
 * ranges when a split has no room. */
extern void fn_durable_add_all(FnDirtySet s, const FnTimeRange *rs, uint32_t n);
extern void fn_durable_remove(FnDirtySet s, FnTimeRange r);

/* What the source holds in a time range (task_state.hpp's RowProbe), as C callbacks:
 * they may ereport (the bridge guards them). */
typedef struct FnRowProbe {
	uint64_t (*rows)(void *arg, FnTimeRange r, uint64_t limit, int64_t *last);
	void *arg;
} FnRowProbe;

/* plan_take_rows (probe != NULL) or plan_take_all (probe NULL; w may be NULL): fills
 * out (room for n entries) with the ranges the next refresh takes; returns how many.
 * *rows: at most that many source rows in them (UINT64_MAX: not known). */
extern uint32_t fn_plan_take(FnWindow *w, const FnTimeRange *ranges, uint32_t n, uint64_t max_rows,
                             FnRowProbe *probe, FnTimeRange *out, uint64_t *windows, uint64_t *rows,
                             bool *backlog_remains);

extern uint64_t fn_next_row_budget(uint64_t budget, uint64_t cap, int64_t last_run_usec, bool failed);

/* The folded refresh's line and slack (core/task_state.hpp, refresh/fold_refresh.h). */
extern bool fn_fold_holds(int64_t line, int64_t reported);
extern int64_t fn_fold_next_line(int64_t line, int64_t reported, int64_t slack, int64_t window_end);
extern int64_t fn_fold_slack_after_late_row(int64_t slack, int64_t window_width);
extern int64_t fn_fold_slack_after_fold(int64_t slack);

extern int64_t fn_next_sleep_usec(int64_t eval_interval_usec, int64_t window_size_usec,
                                  int64_t min_refresh_usec, int64_t max_backoff_usec, int64_t last_run_usec,
                                  bool backlog_remains, uint32_t consecutive_failures);
extern int64_t fn_next_eval_at(int64_t eval_interval_usec, int64_t window_size_usec, int64_t min_refresh_usec,
                               int64_t max_backoff_usec, int64_t started, int64_t finished,
                               bool backlog_remains, uint32_t consecutive_failures);

/* next_eval_after_upstream (task_state.hpp): an upstream flow's refresh wrote rows
 * into this flow's source. */
extern int64_t fn_next_eval_after_upstream(int64_t eval_interval_usec, int64_t min_refresh_usec, int64_t now,
                                           int64_t next_eval, uint32_t consecutive_failures);

/* KeyMarks over caller-owned storage (core/key_marks.hpp). Never fail, never
 * allocate. fn_key_marks_add: false when the window must be marked whole. */
extern bool fn_key_marks_add(FnKeyMark *marks, uint32_t *count, uint32_t capacity, uint32_t per_window,
                             FnTimeRange window, uint64_t hash);
/* plan_key_refresh: the distinct marks left first (their number returned). */
extern uint32_t fn_key_marks_plan(FnKeyMark *marks, uint32_t n, const FnTimeRange *whole, uint32_t nwhole,
                                  uint32_t per_window, FnTimeRange *to_whole, uint32_t *n_whole);

#ifdef __cplusplus
}
#endif

#endif
