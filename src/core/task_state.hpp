// TaskState decisions of a flow's worker that need no server: what to refresh next
// (oldest dirty windows first, within a per-cycle window budget) and how long to
// sleep (the seed's adaptive cadence, and backoff after failures).
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
	uint64_t windows = 0;            // windows covered
	bool backlog_remains = false;    // dirty windows were left for a later cycle
};

// `ranges` is a sorted, non-overlapping copy of the dirty set. Takes at most
// `max_windows` (>= 1) windows, oldest first.
TakePlan plan_take(const FnTimeRange *ranges, uint32_t n, uint64_t max_windows, TimeWindowExpr &windows);

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
// A fixed cadence is a schedule, not a pause (the seed: "sleeps until the next
// scheduled time"): evaluations start every eval_interval, however long each took,
// so a refresh that grows with its window does not stretch the period and add its
// duration to every row's wait; one that overran its slot is followed at once,
// never by a burst of the slots it missed. Every other case is finished +
// next_sleep_usec().
int64_t next_eval_at(const Cadence &c, int64_t started, int64_t finished, bool backlog_remains,
                     uint32_t consecutive_failures) noexcept;

// How many windows the next refresh may take. A flow that keeps up refreshes a few
// windows per cycle; a backlog (late data, a new flow's history) is worked off in
// refreshes whose size adapts to how long they take: the budget starts at
// kStartWindows (GreptimeDB's 20), doubles after a refresh faster than kFastUsec,
// halves after one slower than kSlowUsec, never exceeds `cap` (the GUC bound) and
// drops to 1 after a failure (then ramps up again).
constexpr uint64_t kStartWindows = 20;
constexpr int64_t kFastUsec = 250 * 1000;
constexpr int64_t kSlowUsec = 1000 * 1000;
uint64_t next_window_budget(uint64_t budget, uint64_t cap, int64_t last_run_usec, bool failed) noexcept;

} // namespace flownode
