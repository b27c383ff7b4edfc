#include "core/task_state.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

using flownode::Cadence;
using flownode::next_eval_at;
using flownode::next_sleep_usec;
using flownode::plan_take;
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

class PlanTake : public testing::Test {
  protected:
	TensCalendar tens;
	TimeWindowExpr windows = TimeWindowExpr::fixed(10, &tens);
	std::vector<FnTimeRange> dirty = {{0, 50}, {100, 120}, {200, 300}}; // 5 + 2 + 10 windows

	TakePlan take(uint64_t budget) {
		return plan_take(dirty.data(), static_cast<uint32_t>(dirty.size()), budget, windows);
	}
};

TEST_F(PlanTake, BudgetSmallerThanFirstRange) {
	TakePlan p = take(3);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 30}}));
	EXPECT_EQ(p.windows, 3u);
	EXPECT_TRUE(p.backlog_remains);
}

TEST_F(PlanTake, OneWindow) {
	TakePlan p = take(1);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 10}}));
	EXPECT_EQ(p.windows, 1u);
	EXPECT_TRUE(p.backlog_remains);
}

TEST_F(PlanTake, FirstRangeFitsExactly) {
	TakePlan p = take(5);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 50}}));
	EXPECT_EQ(p.windows, 5u);
	EXPECT_TRUE(p.backlog_remains); // the other ranges wait
}

TEST_F(PlanTake, SeveralRangesThenACut) {
	TakePlan p = take(10);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 50}, {100, 120}, {200, 230}}));
	EXPECT_EQ(p.windows, 10u);
	EXPECT_TRUE(p.backlog_remains);
}

TEST_F(PlanTake, BudgetEndsOnARangeBoundary) {
	TakePlan p = take(7);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 50}, {100, 120}}));
	EXPECT_EQ(p.windows, 7u);
	EXPECT_TRUE(p.backlog_remains);
}

TEST_F(PlanTake, EverythingFitsExactly) {
	TakePlan p = take(17);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 50}, {100, 120}, {200, 300}}));
	EXPECT_EQ(p.windows, 17u);
	EXPECT_FALSE(p.backlog_remains);
}

TEST_F(PlanTake, EverythingFitsWithRoomToSpare) {
	TakePlan p = take(UINT64_MAX);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 50}, {100, 120}, {200, 300}}));
	EXPECT_EQ(p.windows, 17u);
	EXPECT_FALSE(p.backlog_remains);
}

TEST_F(PlanTake, RaggedRangeEndCountsAsAWindow) {
	dirty = {{0, 25}}; // after a coalesce or expiry the end may fall inside a window
	TakePlan p = take(3);
	EXPECT_EQ(pairs_of(p), (Pairs{{0, 25}}));
	EXPECT_EQ(p.windows, 3u);
	EXPECT_FALSE(p.backlog_remains);
}

TEST_F(PlanTake, NothingDirty) {
	TakePlan p = plan_take(nullptr, 0, 10, windows);
	EXPECT_TRUE(p.ranges.empty());
	EXPECT_EQ(p.windows, 0u);
	EXPECT_FALSE(p.backlog_remains);
}

TEST(PlanTakeCalendar, CutsAtCalendarBoundaries) {
	DoublingCalendar cal;
	TimeWindowExpr windows = TimeWindowExpr::calendar(8, &cal);
	std::vector<FnTimeRange> dirty = {{2, 16}, {32, 128}}; // windows 2,4,8 | 32,64
	auto take = [&](uint64_t budget) { return plan_take(dirty.data(), 2, budget, windows); };

	TakePlan p = take(2);
	EXPECT_EQ(pairs_of(p), (Pairs{{2, 8}}));
	EXPECT_EQ(p.windows, 2u);
	EXPECT_TRUE(p.backlog_remains);

	p = take(4);
	EXPECT_EQ(pairs_of(p), (Pairs{{2, 16}, {32, 64}}));
	EXPECT_EQ(p.windows, 4u);
	EXPECT_TRUE(p.backlog_remains);

	p = take(5);
	EXPECT_EQ(pairs_of(p), (Pairs{{2, 16}, {32, 128}}));
	EXPECT_EQ(p.windows, 5u);
	EXPECT_FALSE(p.backlog_remains);
}

// Windows at the ends of the timestamp range: the last ends at infinity, the first
// starts at the smallest timestamp. Each counts as one window, and the take never
// leaves a piece of a window behind (a worker would take it forever).
TEST(PlanTakeEnds, FirstAndLastWindows) {
	TensCalendar tens;
	TimeWindowExpr windows = TimeWindowExpr::fixed(10, &tens);
	std::vector<FnTimeRange> dirty = {{FN_TS_MIN, FN_TS_MIN + 20}, {FN_TS_END - 30, FN_TS_NOEND}};
	auto take = [&](uint64_t budget) { return plan_take(dirty.data(), 2, budget, windows); };

	TakePlan p = take(1);
	EXPECT_EQ(pairs_of(p), (Pairs{{FN_TS_MIN, FN_TS_MIN + 10}}));
	EXPECT_TRUE(p.backlog_remains);
	p = take(4);
	EXPECT_EQ(pairs_of(p), (Pairs{{FN_TS_MIN, FN_TS_MIN + 20}, {FN_TS_END - 30, FN_TS_END - 10}}));
	EXPECT_EQ(p.windows, 4u);
	EXPECT_TRUE(p.backlog_remains);
	p = take(5);
	EXPECT_EQ(pairs_of(p), (Pairs{{FN_TS_MIN, FN_TS_MIN + 20}, {FN_TS_END - 30, FN_TS_NOEND}}));
	EXPECT_EQ(p.windows, 5u);
	EXPECT_FALSE(p.backlog_remains);

	dirty = {{FN_TS_END - 10, FN_TS_NOEND}, {FN_TS_NOEND - 5, FN_TS_NOEND - 1}};
	p = take(1); // the last window, whole
	EXPECT_EQ(pairs_of(p), (Pairs{{FN_TS_END - 10, FN_TS_NOEND}}));
	EXPECT_EQ(p.windows, 1u);
	p = take(2); // a range past every timestamp (no rows) is taken whole too
	EXPECT_EQ(pairs_of(p), (Pairs{{FN_TS_END - 10, FN_TS_NOEND}, {FN_TS_NOEND - 5, FN_TS_NOEND - 1}}));
	EXPECT_EQ(p.windows, 2u);
	EXPECT_FALSE(p.backlog_remains);
}

TEST(PlanTakeEnds, CalendarLastWindow) {
	DoublingCalendar cal; // [2^k, 2^(k+1)): past 2^62 the next bound is past the largest timestamp
	TimeWindowExpr windows = TimeWindowExpr::calendar(8, &cal);
	const int64_t last = int64_t(1) << 62;
	std::vector<FnTimeRange> dirty = {{last / 2, FN_TS_NOEND}};
	TakePlan p = plan_take(dirty.data(), 1, 100, windows);
	EXPECT_EQ(pairs_of(p), (Pairs{{last / 2, FN_TS_NOEND}}));
	EXPECT_EQ(p.windows, 2u);
	EXPECT_FALSE(p.backlog_remains);
	p = plan_take(dirty.data(), 1, 1, windows);
	EXPECT_EQ(pairs_of(p), (Pairs{{last / 2, last}}));
	EXPECT_TRUE(p.backlog_remains);
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

TEST(NextWindowBudget, StartsAtTwentyWithinTheCap) {
	EXPECT_EQ(flownode::next_window_budget(0, 1000, 0, false), 20u);
	EXPECT_EQ(flownode::next_window_budget(0, 5, 0, false), 5u);
	EXPECT_EQ(flownode::next_window_budget(0, 0, 0, false), 1u);
}

TEST(NextWindowBudget, DoublesWhileFastUpToTheCap) {
	uint64_t b = 20;
	b = flownode::next_window_budget(b, 100, 1000, false);
	EXPECT_EQ(b, 40u);
	b = flownode::next_window_budget(b, 100, 1000, false);
	EXPECT_EQ(b, 80u);
	b = flownode::next_window_budget(b, 100, 1000, false);
	EXPECT_EQ(b, 100u);
	b = flownode::next_window_budget(b, 100, 1000, false);
	EXPECT_EQ(b, 100u);
	// never overflows
	EXPECT_EQ(flownode::next_window_budget(UINT64_MAX / 2 + 1, UINT64_MAX, 0, false), UINT64_MAX);
}

TEST(NextWindowBudget, KeepsBetweenFastAndSlowHalvesWhenSlow) {
	EXPECT_EQ(flownode::next_window_budget(40, 100, flownode::kFastUsec, false), 40u);
	EXPECT_EQ(flownode::next_window_budget(40, 100, flownode::kSlowUsec, false), 40u);
	EXPECT_EQ(flownode::next_window_budget(40, 100, flownode::kSlowUsec + 1, false), 20u);
	EXPECT_EQ(flownode::next_window_budget(1, 100, flownode::kSlowUsec + 1, false), 1u);
	// a lowered cap applies at once
	EXPECT_EQ(flownode::next_window_budget(80, 10, flownode::kFastUsec, false), 10u);
}

TEST(NextWindowBudget, OneWindowAfterAFailureThenRampsUp) {
	uint64_t b = flownode::next_window_budget(80, 100, 0, true);
	EXPECT_EQ(b, 1u);
	EXPECT_EQ(flownode::next_window_budget(b, 100, 1000, false), 2u);
}
