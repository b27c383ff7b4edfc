#include "core/task_state.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

using flownode::Cadence;
using flownode::next_eval_at;
using flownode::next_sleep_usec;
using flownode::plan_take_rows;
using flownode::TakePlan;
using flownode::TimeWindowExpr;
using flownode::WindowCalendar;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

namespace {

constexpr int64_t kSec = 1000000;

Pairs pairs_of(const TakePlan &p) {
	Pairs out;
	for (const FnTimeRange &r : p.ranges)
		out.emplace_back(r.start, r.end);
	return out;
}

// Windows of 10 from 0.
class TensCalendar : public WindowCalendar {
  public:
	int64_t truncate(int64_t ts) override { return ts - ((ts % 10) + 10) % 10; }
	int64_t step(int64_t lower) override { return lower + 10; }
};

// Windows that double in width: [0,1) [1,2) [2,4) [4,8) [8,16) ..., as a stand-in
// for calendar units of unequal length.
class DoublingCalendar : public WindowCalendar {
  public:
	int64_t truncate(int64_t ts) override {
		int64_t b = 1;
		while (b <= ts / 2)
			b *= 2;
		return ts < 1 ? 0 : b;
	}
	// past the largest timestamp it fails, as PostgreSQL does
	int64_t step(int64_t lower) override {
		int64_t next;
		if (lower == 0)
			return 1;
		if (__builtin_mul_overflow(lower, 2, &next) || __builtin_add_overflow(next, lower / 2, &next) ||
		    next >= FN_TS_END)
			throw flownode::WindowRangeError("timestamp out of range");
		return next;
	}
};

// Rows at the given times (sorted), as the time column's index would show them; counts
// its probes.
class FakeRows : public flownode::RowProbe {
  public:
	explicit FakeRows(std::vector<int64_t> t) : times(std::move(t)) {}
	uint64_t rows(FnTimeRange r, uint64_t limit, int64_t *last) override {
		probes++;
		uint64_t n = 0;
		for (int64_t t : times)
			if (t >= r.start && t < r.end && n < limit) {
				n++;
				*last = t;
			}
		return n;
	}
	std::vector<int64_t> times;
	int probes = 0;
};

class PlanTakeRows : public testing::Test {
  protected:
	TensCalendar tens;
	TimeWindowExpr windows = TimeWindowExpr::fixed(10, &tens);
	// 5 + 2 + 10 windows; rows: 3 in the first range, 1 in the second, 4 in the third
	std::vector<FnTimeRange> dirty = {{0, 50}, {100, 120}, {200, 300}};
	FakeRows rows{{1, 2, 45, 105, 210, 211, 212, 290}};

	TakePlan take(uint64_t budget) {
		return plan_take_rows(dirty.data(), static_cast<uint32_t>(dirty.size()), budget, rows, windows);
	}
};

TEST_F(PlanTakeRows, EverythingFitsWhenTheRowsDo) {
	TakePlan p = take(8);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 50}, {100, 120}, {200, 300}}));
	EXPECT_EQ(p.windows, 17u);
	EXPECT_EQ(p.rows, 8u); // counted
	EXPECT_FALSE(p.backlog_remains);
}

TEST_F(PlanTakeRows, CutAtTheWindowOfTheFirstRowPastTheBudget) {
	TakePlan p = take(5); // 3 + 1 + the first row of the third range; the 6th (211) is in [210, 220)
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 50}, {100, 120}, {200, 210}}));
	EXPECT_EQ(p.windows, 8u);
	EXPECT_EQ(p.rows, 5u); // 4 counted, and at most the budget's last one before the cut
	EXPECT_TRUE(p.backlog_remains);
}

TEST_F(PlanTakeRows, AWindowHoldingMoreRowsThanTheBudgetIsTakenWhole) {
	TakePlan p = take(1); // rows 1 and 2 share [0, 10): that window, whole
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 10}}));
	EXPECT_EQ(p.windows, 1u);
	EXPECT_EQ(p.rows, UINT64_MAX); // more than the budget: not known how many
	EXPECT_TRUE(p.backlog_remains);
}

TEST_F(PlanTakeRows, BudgetEndingOnARangeLeavesTheRest) {
	TakePlan p = take(4);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 50}, {100, 120}}));
	EXPECT_TRUE(p.backlog_remains);
}

TEST_F(PlanTakeRows, EmptyWindowsCostNothing) {
	// a billion empty windows, then a window with a row: one probe each, both whole
	dirty = {{0, 10000000000}, {20000000000, 20000000010}};
	rows.times = {20000000005};
	TakePlan p = take(1);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 10000000000}, {20000000000, 20000000010}}));
	EXPECT_EQ(p.windows, 1000000001u);
	EXPECT_EQ(p.rows, 1u);
	EXPECT_FALSE(p.backlog_remains);
	EXPECT_EQ(rows.probes, 2);
}

TEST_F(PlanTakeRows, SparseRowsOverMillionsOfWindowsInOneTake) {
	dirty = {{0, 100000000}};
	rows.times = {5, 50000005, 99999995};
	TakePlan p = take(3);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 100000000}}));
	EXPECT_FALSE(p.backlog_remains);
	p = take(2); // the third row's window starts the rest
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 99999990}}));
	EXPECT_TRUE(p.backlog_remains);
}

TEST_F(PlanTakeRows, NothingDirty) {
	TakePlan p = plan_take_rows(nullptr, 0, 10, rows, windows);
	EXPECT_TRUE(p.ranges.empty());
	EXPECT_EQ(p.windows, 0u);
	EXPECT_FALSE(p.backlog_remains);
}

TEST(PlanTakeAll, EverythingAtOnce) {
	TensCalendar tens;
	TimeWindowExpr windows = TimeWindowExpr::fixed(10, &tens);
	std::vector<FnTimeRange> dirty = {{0, 50}, {60, 60}, {100, 120}};
	TakePlan p = flownode::plan_take_all(dirty.data(), 3, &windows);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 50}, {100, 120}}));
	EXPECT_EQ(p.windows, 7u);
	EXPECT_EQ(p.rows, UINT64_MAX); // nothing probed
	EXPECT_FALSE(p.backlog_remains);
	p = flownode::plan_take_all(dirty.data(), 3, nullptr); // window-less
	EXPECT_EQ(p.ranges.size(), 2u);
}

TEST(PlanTakeRowsCalendar, CutsAtCalendarBoundaries) {
	DoublingCalendar cal;
	TimeWindowExpr windows = TimeWindowExpr::calendar(8, &cal);
	std::vector<FnTimeRange> dirty = {{2, 16}, {32, 128}}; // windows 2,4,8 | 32,64
	FakeRows rows{{3, 5, 9, 40, 70}};
	auto take = [&](uint64_t budget) { return plan_take_rows(dirty.data(), 2, budget, rows, windows); };

	TakePlan p = take(2); // the third row (9) is in [8, 16)
	EXPECT_EQ(pairs_of(p), (Pairs{{2, 8}}));
	EXPECT_EQ(p.windows, 2u);
	EXPECT_TRUE(p.backlog_remains);
	p = take(4); // the fifth (70) is in [64, 128)
	EXPECT_EQ(pairs_of(p), (Pairs{{2, 16}, {32, 64}}));
	EXPECT_EQ(p.windows, 4u);
	EXPECT_TRUE(p.backlog_remains);
	p = take(5);
	EXPECT_EQ(pairs_of(p), (Pairs{{2, 16}, {32, 128}}));
	EXPECT_EQ(p.windows, 5u);
	EXPECT_FALSE(p.backlog_remains);
}

// Windows at the ends of the timestamp range: the last ends at infinity, the first
// starts at the smallest timestamp; the take never leaves a piece of a window behind.
TEST(PlanTakeRowsEnds, FirstAndLastWindows) {
	TensCalendar tens;
	TimeWindowExpr windows = TimeWindowExpr::fixed(10, &tens);
	std::vector<FnTimeRange> dirty = {{FN_TS_MIN, FN_TS_MIN + 20}, {FN_TS_END - 30, FN_TS_NOEND}};
	FakeRows rows{{FN_TS_MIN + 1, FN_TS_MIN + 11, FN_TS_END - 25, FN_TS_END - 1}};
	auto take = [&](uint64_t budget) { return plan_take_rows(dirty.data(), 2, budget, rows, windows); };

	TakePlan p = take(1);
	EXPECT_EQ(pairs_of(p), (Pairs{{FN_TS_MIN, FN_TS_MIN + 10}}));
	EXPECT_TRUE(p.backlog_remains);
	p = take(3);
	EXPECT_EQ(pairs_of(p), (Pairs{{FN_TS_MIN, FN_TS_MIN + 20}, {FN_TS_END - 30, FN_TS_END - 10}}));
	EXPECT_TRUE(p.backlog_remains);
	p = take(4);
	EXPECT_EQ(pairs_of(p), (Pairs{{FN_TS_MIN, FN_TS_MIN + 20}, {FN_TS_END - 30, FN_TS_NOEND}}));
	EXPECT_EQ(p.windows, 5u);
	EXPECT_FALSE(p.backlog_remains);
}

// --- next_sleep_usec ----------------------------------------------------------------

constexpr Cadence kFixed{5 * kSec, 60 * kSec, 2 * kSec, 300 * kSec};
constexpr Cadence kAdaptive{0, 60 * kSec, 2 * kSec, 300 * kSec};

TEST(NextSleep, FixedCadence) {
	EXPECT_EQ(next_sleep_usec(kFixed, 0, false, 0), 5 * kSec);
	EXPECT_EQ(next_sleep_usec(kFixed, 90 * kSec, false, 0), 5 * kSec); // a slow run changes nothing
}

TEST(NextSleep, AdaptiveTakesTheLargest) {
	EXPECT_EQ(next_sleep_usec(kAdaptive, kSec, false, 0), 60 * kSec);      // window size
	EXPECT_EQ(next_sleep_usec(kAdaptive, 90 * kSec, false, 0), 90 * kSec); // last run
	Cadence no_window = kAdaptive;
	no_window.window_size_usec = 0;
	EXPECT_EQ(next_sleep_usec(no_window, kSec, false, 0), 2 * kSec); // floor
	EXPECT_EQ(next_sleep_usec(no_window, 3 * kSec, false, 0), 3 * kSec);
}

TEST(NextSleep, BacklogRunsAgainAtOnce) {
	EXPECT_EQ(next_sleep_usec(kFixed, kSec, true, 0), 0);
	EXPECT_EQ(next_sleep_usec(kAdaptive, 90 * kSec, true, 0), 0);
}

TEST(NextEval, FixedCadenceIsASchedule) {
	const int64_t t0 = 1000 * kSec;
	// started at t0, took 300 ms: the next one starts at t0 + 5 s, not t0 + 5.3 s
	EXPECT_EQ(next_eval_at(kFixed, t0, t0 + 300000, false, 0), t0 + 5 * kSec);
	EXPECT_EQ(next_eval_at(kFixed, t0, t0, false, 0), t0 + 5 * kSec);
	// a run longer than the period: the next one at once, no burst of missed slots
	EXPECT_EQ(next_eval_at(kFixed, t0, t0 + 12 * kSec, false, 0), t0 + 12 * kSec);
	// a backlog runs again at once; a failure backs off from the end of the run
	EXPECT_EQ(next_eval_at(kFixed, t0, t0 + kSec, true, 0), t0 + kSec);
	EXPECT_EQ(next_eval_at(kFixed, t0, t0 + kSec, false, 2), t0 + kSec + 10 * kSec);
	// a clock that went back (finished before started) is no negative run
	EXPECT_EQ(next_eval_at(kFixed, t0, t0 - kSec, false, 0), t0 + 5 * kSec);
	EXPECT_EQ(next_eval_at(kFixed, INT64_MAX - kSec, INT64_MAX - kSec, false, 0), INT64_MAX);
}

TEST(NextEval, AdaptiveSleepsAfterTheRun) {
	const int64_t t0 = 1000 * kSec;
	EXPECT_EQ(next_eval_at(kAdaptive, t0, t0 + kSec, false, 0), t0 + kSec + 60 * kSec);
	EXPECT_EQ(next_eval_at(kAdaptive, t0, t0 + 90 * kSec, false, 0), t0 + 180 * kSec);
}

TEST(NextSleep, BackoffDoublesFromEvalInterval) {
	EXPECT_EQ(next_sleep_usec(kFixed, 0, false, 1), 5 * kSec);
	EXPECT_EQ(next_sleep_usec(kFixed, 0, false, 2), 10 * kSec);
	EXPECT_EQ(next_sleep_usec(kFixed, 0, false, 3), 20 * kSec);
	EXPECT_EQ(next_sleep_usec(kFixed, 0, false, 6), 160 * kSec);
	EXPECT_EQ(next_sleep_usec(kFixed, 0, false, 7), 300 * kSec); // capped
	EXPECT_EQ(next_sleep_usec(kFixed, 0, true, 2), 10 * kSec);   // failure beats backlog
}

TEST(NextSleep, BackoffFromMinRefreshWhenAdaptive) {
	EXPECT_EQ(next_sleep_usec(kAdaptive, 90 * kSec, false, 1), 2 * kSec); // ignores window and run
	EXPECT_EQ(next_sleep_usec(kAdaptive, 0, false, 4), 16 * kSec);
}

TEST(NextSleep, BackoffStartsAtLeastAtOneSecond) {
	Cadence quick{100000, 0, 0, 300 * kSec}; // eval every 100 ms
	EXPECT_EQ(next_sleep_usec(quick, 0, false, 1), kSec);
	EXPECT_EQ(next_sleep_usec(quick, 0, false, 3), 4 * kSec);
	Cadence adaptive{0, 0, 500000, 300 * kSec};
	EXPECT_EQ(next_sleep_usec(adaptive, 0, false, 2), 2 * kSec);
}

TEST(NextSleep, BackoffSaturates) {
	EXPECT_EQ(next_sleep_usec(kFixed, 0, false, 63), 300 * kSec);
	EXPECT_EQ(next_sleep_usec(kFixed, 0, false, 64), 300 * kSec);
	EXPECT_EQ(next_sleep_usec(kFixed, 0, false, UINT32_MAX), 300 * kSec);
	Cadence unbounded{5 * kSec, 0, 0, INT64_MAX};
	EXPECT_EQ(next_sleep_usec(unbounded, 0, false, 40), (5 * kSec) << 39);
	EXPECT_EQ(next_sleep_usec(unbounded, 0, false, 42), INT64_MAX);
	EXPECT_EQ(next_sleep_usec(unbounded, 0, false, 1000), INT64_MAX);
	Cadence huge{INT64_MAX, 0, 0, INT64_MAX};
	EXPECT_EQ(next_sleep_usec(huge, 0, false, 1), INT64_MAX);
	EXPECT_EQ(next_sleep_usec(huge, 0, false, 2), INT64_MAX);
}

} // namespace

TEST(NextRowBudget, StartsWithinTheCap) {
	EXPECT_EQ(flownode::next_row_budget(0, 1000000, 0, false), flownode::kStartRows);
	EXPECT_EQ(flownode::next_row_budget(0, 20000, 0, false), 20000u);
	EXPECT_EQ(flownode::next_row_budget(0, 0, 0, false), flownode::kFloorRows);
}

TEST(NextRowBudget, DoublesWhileFastUpToTheCap) {
	uint64_t b = 50000;
	b = flownode::next_row_budget(b, 300000, 1000, false);
	EXPECT_EQ(b, 100000u);
	b = flownode::next_row_budget(b, 300000, 1000, false);
	EXPECT_EQ(b, 200000u);
	b = flownode::next_row_budget(b, 300000, 1000, false);
	EXPECT_EQ(b, 300000u);
	b = flownode::next_row_budget(b, 300000, 1000, false);
	EXPECT_EQ(b, 300000u);
	// never overflows
	EXPECT_EQ(flownode::next_row_budget(UINT64_MAX / 2 + 1, UINT64_MAX, 0, false), UINT64_MAX);
}

TEST(NextRowBudget, KeepsBetweenFastAndSlowHalvesWhenSlow) {
	EXPECT_EQ(flownode::next_row_budget(40000, 100000, flownode::kFastUsec, false), 40000u);
	EXPECT_EQ(flownode::next_row_budget(40000, 100000, flownode::kSlowUsec, false), 40000u);
	EXPECT_EQ(flownode::next_row_budget(40000, 100000, flownode::kSlowUsec + 1, false), 20000u);
	EXPECT_EQ(flownode::next_row_budget(1000, 100000, flownode::kSlowUsec + 1, false), flownode::kFloorRows);
	// a lowered cap applies at once
	EXPECT_EQ(flownode::next_row_budget(80000, 10000, flownode::kFastUsec, false), 10000u);
}

TEST(NextRowBudget, FloorAfterAFailureThenRampsUp) {
	uint64_t b = flownode::next_row_budget(80000, 100000, 0, true);
	EXPECT_EQ(b, flownode::kFloorRows);
	EXPECT_EQ(flownode::next_row_budget(b, 100000, 1000, false), 2 * flownode::kFloorRows);
}

// A chain of flows: an adaptive downstream level evaluates min_refresh after its
// upstream wrote into its source, not a window's usual size (an hour, a day) later.
TEST(NextEvalAfterUpstream, AdaptiveFollowsItsUpstream) {
	Cadence hourly{0, 3600 * kSec, 5 * kSec, 300 * kSec};
	int64_t now = 1000 * kSec;
	EXPECT_EQ(flownode::next_eval_after_upstream(hourly, now, now + 3600 * kSec, 0), now + 5 * kSec);
	// never later than it was due anyway
	EXPECT_EQ(flownode::next_eval_after_upstream(hourly, now, now + 2 * kSec, 0), now + 2 * kSec);
	EXPECT_EQ(flownode::next_eval_after_upstream(hourly, now, now - kSec, 0), now - kSec);
	// saturates instead of overflowing
	EXPECT_EQ(flownode::next_eval_after_upstream(hourly, INT64_MAX - kSec, INT64_MAX, 0), INT64_MAX);
}

TEST(NextEvalAfterUpstream, OwnScheduleAndBackoffStay) {
	Cadence fixed{600 * kSec, 3600 * kSec, 5 * kSec, 300 * kSec};
	Cadence adaptive{0, 3600 * kSec, 5 * kSec, 300 * kSec};
	int64_t now = 1000 * kSec;
	// an eval_interval is the flow's own promise: its schedule is kept
	EXPECT_EQ(flownode::next_eval_after_upstream(fixed, now, now + 600 * kSec, 0), now + 600 * kSec);
	// a failing flow keeps its backoff
	EXPECT_EQ(flownode::next_eval_after_upstream(adaptive, now, now + 40 * kSec, 3), now + 40 * kSec);
}

// The folded refresh of the open window (include/flownode/refresh/fold_refresh.h): the
// line below which the kept prefix holds every row, and the slack it keeps below the
// new rows.

constexpr int64_t kMinute = 60 * kSec;

TEST(Fold, HoldsWhileNoReportFallsBelowTheLine) {
	EXPECT_TRUE(flownode::fold_holds(10 * kSec, 10 * kSec));
	EXPECT_TRUE(flownode::fold_holds(10 * kSec, INT64_MAX)); // nothing reported
	EXPECT_FALSE(flownode::fold_holds(10 * kSec, 10 * kSec - 1));
	EXPECT_FALSE(flownode::fold_holds(10 * kSec, INT64_MIN + 1)); // a removal reports the least time
}

TEST(Fold, NextLineFollowsTheEarliestNewRowLessTheSlack) {
	// rows from 40 s on: the line moves to 39 s with a 1 s slack
	EXPECT_EQ(flownode::fold_next_line(10 * kSec, 40 * kSec, kSec, kMinute), 39 * kSec);
	// never down, never past the window's end, not without a report
	EXPECT_EQ(flownode::fold_next_line(39 * kSec, 39 * kSec + kSec / 2, kSec, kMinute), 39 * kSec);
	EXPECT_EQ(flownode::fold_next_line(10 * kSec, 5 * kMinute, kSec, kMinute), kMinute);
	EXPECT_EQ(flownode::fold_next_line(10 * kSec, INT64_MAX, kSec, kMinute), 10 * kSec);
	// a slack under the least counts as the least
	EXPECT_EQ(flownode::fold_next_line(0, 40 * kSec, 0, kMinute), 39 * kSec);
	EXPECT_EQ(flownode::fold_next_line(0, 40 * kSec, 8 * kSec, kMinute), 32 * kSec);
}

TEST(Fold, SlackFollowsTheLatenessSeen) {
	// doubled by each late row, up to a quarter of the window
	EXPECT_EQ(flownode::fold_slack_after_late_row(0, kMinute), 2 * kSec);
	EXPECT_EQ(flownode::fold_slack_after_late_row(2 * kSec, kMinute), 4 * kSec);
	EXPECT_EQ(flownode::fold_slack_after_late_row(8 * kSec, kMinute), 15 * kSec);
	EXPECT_EQ(flownode::fold_slack_after_late_row(15 * kSec, kMinute), 15 * kSec);
	// a window of a few seconds keeps the least
	EXPECT_EQ(flownode::fold_slack_after_late_row(kSec, 2 * kSec), kSec);
	// worn down by each fold, to the least
	EXPECT_EQ(flownode::fold_slack_after_fold(32 * kSec), 31 * kSec);
	EXPECT_EQ(flownode::fold_slack_after_fold(kSec), kSec);
	EXPECT_EQ(flownode::fold_slack_after_fold(0), kSec);
	int64_t s = 15 * kSec;
	int folds = 0;
	for (; s > kSec; folds++)
		s = flownode::fold_slack_after_fold(s);
	EXPECT_GT(folds, 50); // a burst of lateness is remembered for a while
	EXPECT_LT(folds, 200);
}
