#include "core/task_state.hpp"

#include <algorithm>

namespace flownode {

namespace {

constexpr int64_t kSecondUsec = 1000000;
// 2^62 already saturates any base of at least 1 s; a larger shift would be UB.
constexpr uint32_t kMaxBackoffShift = 62;

} // namespace

TakePlan plan_take(const FnTimeRange *ranges, uint32_t n, uint64_t max_windows, TimeWindowExpr &windows) {
	TakePlan plan;
	uint64_t budget = max_windows;
	for (uint32_t i = 0; i < n; i++) {
		const FnTimeRange &r = ranges[i];
		if (r.start >= r.end)
			continue;
		if (budget == 0) {
			plan.backlog_remains = true;
			break;
		}
		uint64_t counted = 0;
		int64_t cut = windows.advance(r, budget, &counted);
		plan.windows += counted;
		budget -= counted;
		plan.ranges.push_back(FnTimeRange{r.start, cut});
		if (cut < r.end) {
			plan.backlog_remains = true;
			break;
		}
	}
	return plan;
}

int64_t next_sleep_usec(const Cadence &c, int64_t last_run_usec, bool backlog_remains,
                        uint32_t consecutive_failures) noexcept {
	int64_t sleep;
	if (consecutive_failures > 0) {
		int64_t base =
		    std::max(kSecondUsec, c.eval_interval_usec > 0 ? c.eval_interval_usec : c.min_refresh_usec);
		uint32_t shift = std::min(consecutive_failures - 1, kMaxBackoffShift);
		int64_t backoff = base > (INT64_MAX >> shift) ? INT64_MAX : base << shift;
		sleep = std::min(c.max_backoff_usec, backoff);
	} else if (backlog_remains) {
		sleep = 0;
	} else if (c.eval_interval_usec > 0) {
		sleep = c.eval_interval_usec;
	} else {
		sleep = std::max({c.min_refresh_usec, c.window_size_usec, last_run_usec});
	}
	// A misconfigured (negative) input must not turn into a negative sleep.
	return std::max<int64_t>(sleep, 0);
}

int64_t next_eval_at(const Cadence &c, int64_t started, int64_t finished, bool backlog_remains,
                     uint32_t consecutive_failures) noexcept {
	int64_t last_run = finished > started ? finished - started : 0;
	int64_t sleep = next_sleep_usec(c, last_run, backlog_remains, consecutive_failures);
	int64_t at;
	if (c.eval_interval_usec > 0 && consecutive_failures == 0 && !backlog_remains) {
		if (__builtin_add_overflow(started, c.eval_interval_usec, &at))
			at = INT64_MAX;
		return std::max(at, finished);
	}
	if (__builtin_add_overflow(finished, sleep, &at))
		at = INT64_MAX;
	return at;
}

uint64_t next_window_budget(uint64_t budget, uint64_t cap, int64_t last_run_usec, bool failed) noexcept {
	cap = std::max<uint64_t>(cap, 1);
	if (failed)
		return 1;
	if (budget == 0)
		budget = std::min(kStartWindows, cap);
	else if (last_run_usec < kFastUsec)
		budget = budget > cap / 2 ? cap : budget * 2;
	else if (last_run_usec > kSlowUsec)
		budget = std::max<uint64_t>(budget / 2, 1);
	return std::min(budget, cap);
}

} // namespace flownode
