#include "core/task_state.hpp"

#include <algorithm>

namespace flownode {

namespace {

constexpr int64_t kSecondUsec = 1000000;
// 2^62 already saturates any base of at least 1 s; a larger shift would be UB.
constexpr uint32_t kMaxBackoffShift = 62;

} // namespace

namespace {

// The windows of r, counted (every fixed stride; calendar units up to
// kCountedWindows) or estimated from the unit's usual width past that.
uint64_t windows_of(FnTimeRange r, TimeWindowExpr &windows) {
	uint64_t counted = 0;
	uint64_t cap = windows.is_fixed() ? UINT64_MAX : kCountedWindows;
	(void)windows.advance(r, cap, &counted);
	if (counted >= cap && windows.nominal_size() > 0) {
		uint64_t span = static_cast<uint64_t>(r.end) - static_cast<uint64_t>(r.start);
		counted = std::max<uint64_t>(counted, span / static_cast<uint64_t>(windows.nominal_size()));
	}
	return counted;
}

} // namespace

TakePlan plan_take_rows(const FnTimeRange *ranges, uint32_t n, uint64_t max_rows, RowProbe &probe,
                        TimeWindowExpr &windows) {
	TakePlan plan;
	uint64_t budget = std::max<uint64_t>(max_rows, 1);
	plan.rows = 0;
	for (uint32_t i = 0; i < n; i++) {
		FnTimeRange r = ranges[i];
		if (r.start >= r.end)
			continue;
		if (budget == 0) {
			plan.backlog_remains = true;
			break;
		}
		int64_t last = r.start;
		uint64_t rows = probe.rows(r, budget + 1, &last);
		if (rows > budget) {
			// the row past the budget (the last counted) starts the rest; its window
			// goes with the rest unless it is the range's first, which is taken whole
			Window w = windows.window_of(last);
			int64_t cut = w.lower > r.start ? w.lower : w.upper;
			if (cut < r.end) {
				r.end = cut;
				plan.backlog_remains = true;
			}
			// before the row past the budget: at most the budget; a first window
			// taken whole holds more, how many is not known
			plan.rows = w.lower > r.start ? plan.rows + budget : UINT64_MAX;
			budget = 0;
		} else {
			budget -= rows;
			plan.rows += rows;
		}
		plan.ranges.push_back(r);
		plan.windows += windows_of(r, windows);
		if (plan.backlog_remains)
			break;
	}
	return plan;
}

TakePlan plan_take_all(const FnTimeRange *ranges, uint32_t n, TimeWindowExpr *windows) {
	TakePlan plan;
	for (uint32_t i = 0; i < n; i++) {
		if (ranges[i].start >= ranges[i].end)
			continue;
		plan.ranges.push_back(ranges[i]);
		plan.windows += windows ? windows_of(ranges[i], *windows) : 1;
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

int64_t next_eval_after_upstream(const Cadence &c, int64_t now, int64_t next_eval,
                                 uint32_t consecutive_failures) noexcept {
	int64_t soon;
	if (c.eval_interval_usec > 0 || consecutive_failures > 0)
		return next_eval;
	if (__builtin_add_overflow(now, std::max<int64_t>(c.min_refresh_usec, 0), &soon))
		soon = INT64_MAX;
	return std::min(next_eval, soon);
}

uint64_t next_row_budget(uint64_t budget, uint64_t cap, int64_t last_run_usec, bool failed) noexcept {
	cap = std::max<uint64_t>(cap, kFloorRows);
	if (failed)
		return kFloorRows;
	if (budget == 0)
		budget = std::min(kStartRows, cap);
	else if (last_run_usec < kFastUsec)
		budget = budget > cap / 2 ? cap : budget * 2;
	else if (last_run_usec > kSlowUsec)
		budget = std::max<uint64_t>(budget / 2, kFloorRows);
	return std::min(budget, cap);
}

bool fold_holds(int64_t line, int64_t reported) noexcept {
	return reported >= line;
}

int64_t fold_next_line(int64_t line, int64_t reported, int64_t slack, int64_t window_end) noexcept {
	if (reported == INT64_MAX)
		return line;
	// reported >= line (fold_holds) and both are timestamps: no overflow below
	int64_t next = reported - std::max(slack, kFoldMinSlackUsec);
	return std::min(std::max(line, next), window_end);
}

int64_t fold_slack_after_late_row(int64_t slack, int64_t window_width) noexcept {
	int64_t cap = std::max(window_width / 4, kFoldMinSlackUsec);
	slack = std::max(slack, kFoldMinSlackUsec);
	return slack > cap / 2 ? cap : slack * 2;
}

int64_t fold_slack_after_fold(int64_t slack) noexcept {
	return std::max(slack - slack / 32, kFoldMinSlackUsec);
}

} // namespace flownode
