// TaskState decisions of a flow's worker that need no server: what to refresh next
// (oldest dirty windows first, within a per-cycle budget of source rows) and how long
// to sleep (GreptimeDB's adaptive cadence, and backoff after failures).
#pragma once
#include "core/cpp_only.hpp"

#include <cstdint>
#include <vector>

#include "core/time_range.h"
#include "core/time_window_expr.hpp"

namespace flownode {

// One refresh cycle's share of the dirty set: whole leading ranges, plus the head
// of the first range that does not fit, cut at a window boundary.
struct TakePlan {
	std::vector<FnTimeRange> ranges; // sorted, as in the dirty set
	uint64_t windows = 0;            // windows covered (counted, or estimated past kCountedWindows)
	uint64_t rows = UINT64_MAX;      // at most this many source rows there (UINT64_MAX: not known)
	bool backlog_remains = false;    // dirty windows were left for a later cycle
};

// What the source holds in a time range, as the refresh will read it (through the
// time column's index): its first rows in time order, counted up to a limit, in one
// pass that also gives the time of the last row counted (so the row past a budget
// costs no second read of the rows before it).
class RowProbe {
  public:
	virtual ~RowProbe() = default;
	// Rows in r, counting at most `limit` (>= 1) in time order; when any, *last is
	// the time of the last one counted, inside r.
	virtual uint64_t rows(FnTimeRange r, uint64_t limit, int64_t *last) = 0;
};

// `ranges` is a sorted, non-overlapping copy of the dirty set. Takes the oldest
// ranges whose source rows fit `max_rows` (>= 1): whole ranges while they fit, then
// the first that does not, cut at the start of the window holding its first row past
// the budget; at least one whole window however many rows it holds. Its `rows` bound
// the source rows the refresh will read. The cost follows
// the rows, not the windows: a range of a billion empty windows is one probe, and a
// sparse range of years is taken whole when its rows fit.
TakePlan plan_take_rows(const FnTimeRange *ranges, uint32_t n, uint64_t max_rows, RowProbe &probe,
                        TimeWindowExpr &windows);
// Everything (a window-less flow, or a source without an index on its time column,
// which one statement reads once rather than once per chunk).
TakePlan plan_take_all(const FnTimeRange *ranges, uint32_t n, TimeWindowExpr *windows);

// Windows counted one by one for calendar units up to this many per range; past it
// they are estimated from the unit's usual width (the count only informs: the plan
// kind and flush_flow's answer).
constexpr uint64_t kCountedWindows = 10000;

struct Cadence {
	int64_t eval_interval_usec; // > 0: fixed cadence; 0: adaptive
	int64_t window_size_usec;   // TimeWindowExpr::nominal_size(); 0 when no window
	int64_t min_refresh_usec;   // adaptive floor (GUC)
	int64_t max_backoff_usec;   // cap of the failure backoff
};

// Microseconds to sleep before the next evaluation.
//  - after `consecutive_failures` > 0 failures: backoff = min(max_backoff,
//    max(1 s, eval or min_refresh) * 2^(failures-1));
//  - when a backlog remains after a successful run: 0 (run again at once);
//  - fixed cadence: eval_interval;
//  - adaptive: max(min_refresh, window size, last run's duration), as GreptimeDB.
int64_t next_sleep_usec(const Cadence &c, int64_t last_run_usec, bool backlog_remains,
                        uint32_t consecutive_failures) noexcept;

// When the next evaluation is due, given when the last one started and finished.
// A fixed cadence is a schedule, not a pause (GreptimeDB's rule: "sleeps until the next
// scheduled time"): evaluations start every eval_interval, however long each took,
// so a refresh that grows with its window does not stretch the period and add its
// duration to every row's wait; one that overran its slot is followed at once,
// never by a burst of the slots it missed. Every other case is finished +
// next_sleep_usec().
int64_t next_eval_at(const Cadence &c, int64_t started, int64_t finished, bool backlog_remains,
                     uint32_t consecutive_failures) noexcept;

// When a downstream flow evaluates after an upstream flow's refresh wrote rows into
// its source (a chain of flows: minute -> hour -> day). An adaptive flow follows its
// upstream: it evaluates min_refresh after the write (never later than it would
// have), instead of one window's usual size later, which for an hourly or daily
// level would leave it an hour or a day behind the level below. A flow with an
// eval_interval keeps its own schedule, and a failing flow its backoff: `next_eval`
// is returned unchanged.
int64_t next_eval_after_upstream(const Cadence &c, int64_t now, int64_t next_eval,
                                 uint32_t consecutive_failures) noexcept;

// How many source rows the next refresh may take. A flow that keeps up refreshes a
// few windows per cycle; a backlog (late data, a new flow's history) is worked off in
// refreshes whose size adapts to how long they take: the budget starts at
// kStartRows, doubles after a refresh faster than kFastUsec, halves after one slower
// than kSlowUsec, never exceeds `cap` (the GUC bound) nor falls under kFloorRows, and
// drops to kFloorRows after a failure (a single window then: plan_take_rows takes one
// at least), then ramps up again.
constexpr uint64_t kStartRows = 50000;
constexpr uint64_t kFloorRows = 1000;
constexpr int64_t kFastUsec = 250 * 1000;
constexpr int64_t kSlowUsec = 1000 * 1000;
uint64_t next_row_budget(uint64_t budget, uint64_t cap, int64_t last_run_usec, bool failed) noexcept;

// The folded refresh of the open window (include/flownode/refresh/fold_refresh.h): the
// worker keeps what the window's rows below a line aggregate to. `reported`: the
// earliest time of the rows commits added to the window since the last refresh
// (INT64_MAX: none).
//
// fold_holds: the kept prefix is still all of the rows below the line: no reported
// row fell below it.
bool fold_holds(int64_t line, int64_t reported) noexcept;
// The next line: the earliest reported row less the slack, never below the line nor
// past the window's end; unchanged when nothing was reported. (A slack under
// kFoldMinSlackUsec counts as that.)
int64_t fold_next_line(int64_t line, int64_t reported, int64_t slack, int64_t window_end) noexcept;
// The slack follows the lateness seen: a late row of the window that fell below the
// line doubles it, up to a quarter of the window (never under kFoldMinSlackUsec); each
// fold wears it down by a 32nd, to kFoldMinSlackUsec.
constexpr int64_t kFoldMinSlackUsec = 1000 * 1000;
int64_t fold_slack_after_late_row(int64_t slack, int64_t window_width) noexcept;
int64_t fold_slack_after_fold(int64_t slack) noexcept;

} // namespace flownode
