/*
 * fold_refresh.h: the folded refresh of the open window (docs/internals.md §6).
 *
 * The window being written now is refreshed every evaluation; recomputing it reads
 * all of its rows each time (6M rows a minute at 100k rows/s). While it only gains
 * rows, the worker keeps what its rows below a time line (the "line") aggregate to,
 * the prefix, per group, in memory, and a refresh reads only the rows at or above
 * the line: prefix and newer rows combine column by column (query/fold_shape.h). As
 * the window fills, the line moves up and the rows it passes are folded into the
 * prefix, so each refresh reads about the rows written since the last one.
 *
 * Exactness rests on one fact: every commit that adds rows to the window reports the
 * earliest time among them (FlowSlot.fold_lo, published after the commit is visible
 * and read by the refresh after its snapshot, once the writers in flight have
 * published). A row below the line that the prefix did not see therefore always
 * shows up as a report below the line, and the refresh then recomputes the window
 * and starts the fold afresh. So does anything that may have removed rows (UPDATE,
 * DELETE, TRUNCATE, a partition detached), anything that marked windows without its
 * rows' times, a failed refresh, a restarted worker, and a change to the source or
 * sink. When in doubt, the window is recomputed.
 */
#ifndef FLOWNODE_FOLD_REFRESH_H
#define FLOWNODE_FOLD_REFRESH_H

#include "postgres.h"

#include "utils/snapshot.h"

#include "core/time_range.h"
#include "query/flow_query.h"

/* One flow's fold: its analysed shape, statements, kept prefix and slack (in
 * TopMemoryContext, until fn_fold_free). */
typedef struct FnFold FnFold;
extern FnFold *fn_fold_new(void);
extern void fn_fold_free(FnFold *f);

/* Where the reports come from: the flow's worker reads and resets its slot's
 * fold_lo (after waiting for the writers in flight). */
typedef struct FnFoldInput {
	int64 (*take_reports)(void *arg);
	void *arg;
} FnFoldInput;

/* What a finished refresh leaves: the window the fold keeps a prefix for (start >=
 * end: none), which commits report against, and whether this refresh folded. */
typedef struct FnFoldSettled {
	FnTimeRange window;
	bool folded;
} FnFoldSettled;

/*
 * Whether this refresh of `ranges` folds a window (*w, one of the ranges' windows),
 * decided in the refresh's snapshot, as the flow's owner: the query folds, its
 * source has an index led by the time column, no report fell below the line, and
 * the fold's window is among the ranges. Reads the reports whenever the query can
 * fold (fold or not).
 */
extern bool fn_fold_begin(FnFold *f, const FlowQuery *fq, bool time_index, const FnTimeRange *ranges,
                          int nranges, const FnFoldInput *in, FnTimeRange *w);
/* The folded refresh of w (after fn_fold_begin said so) in `snap`: returns the sink
 * rows written. */
extern int64 fn_fold_window(FnFold *f, const FlowQuery *fq, const char *sink, FnTimeRange w, Snapshot snap);
/* After a refresh recomputed `ranges` (fn_fold_begin said no): a fold starts at their
 * latest window, with an empty prefix and the line at its start, unless it keeps a
 * later window already. */
extern void fn_fold_after_recompute(FnFold *f, const FlowQuery *fq, const FnTimeRange *ranges, int nranges);
/* Whether the refresh in this transaction folded (before fn_fold_settle): what
 * its run history row says. */
extern bool fn_fold_folding(const FnFold *f);
/* The refresh's transaction ended: what it did becomes the fold's state if it
 * committed; otherwise the fold starts afresh. */
extern FnFoldSettled fn_fold_settle(FnFold *f, bool committed);
/* The flow's query was analysed again: nothing kept holds. */
extern void fn_fold_forget(FnFold *f);
/* Groups of the windows within `hull` were recomputed outside the fold (key marks):
 * forgotten if its window is among them, its prefix may lack their rows; kept if
 * not (late rows of older windows, while the open one folds). */
extern void fn_fold_forget_within(FnFold *f, FnTimeRange hull);

#endif
