#include "core/dirty_time_windows.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using flownode::DirtyTimeWindows;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

namespace {

const FnTimeRange kGuard{0x5eed, 0x5eed};

// Storage for a set with one guard entry past its capacity, to catch writes beyond it.
struct Storage {
	explicit Storage(uint32_t capacity) : ranges(capacity + 1), set(ranges.data(), &count, capacity) {
		ranges[capacity] = kGuard;
	}
	Pairs contents() const {
		Pairs out;
		for (uint32_t i = 0; i < set.size(); i++)
			out.emplace_back(set[i].start, set[i].end);
		return out;
	}
	bool guard_intact() const {
		const FnTimeRange &g = ranges[set.capacity()];
		return g.start == kGuard.start && g.end == kGuard.end;
	}
	std::vector<FnTimeRange> ranges;
	uint32_t count = 0;
	DirtyTimeWindows set;
};

FnTimeRange R(int64_t s, int64_t e) {
	return FnTimeRange{s, e};
}

TEST(DirtyTimeWindows, StartsEmpty) {
	Storage s(4);
	EXPECT_TRUE(s.set.empty());
	EXPECT_EQ(s.set.capacity(), 4u);
	EXPECT_FALSE(s.set.covers(R(0, 1)));
	EXPECT_TRUE(s.set.covers(R(5, 5))); // nothing to cover
}

TEST(DirtyTimeWindows, IgnoresEmptyAndInverted) {
	Storage s(4);
	s.set.add(R(10, 10));
	s.set.add(R(20, 10));
	EXPECT_TRUE(s.set.empty());
}

TEST(DirtyTimeWindows, KeepsSortedAndApart) {
	Storage s(4);
	s.set.add(R(50, 60));
	s.set.add(R(10, 20));
	s.set.add(R(30, 40));
	EXPECT_EQ(s.contents(), (Pairs{{10, 20}, {30, 40}, {50, 60}}));
}

TEST(DirtyTimeWindows, MergesOverlap) {
	Storage s(4);
	s.set.add(R(10, 30));
	s.set.add(R(20, 40));
	EXPECT_EQ(s.contents(), (Pairs{{10, 40}}));
	s.set.add(R(0, 15));
	EXPECT_EQ(s.contents(), (Pairs{{0, 40}}));
	s.set.add(R(5, 35)); // inside
	EXPECT_EQ(s.contents(), (Pairs{{0, 40}}));
}

TEST(DirtyTimeWindows, MergesAdjacent) {
	Storage s(4);
	s.set.add(R(10, 20));
	s.set.add(R(20, 30));
	s.set.add(R(0, 10));
	EXPECT_EQ(s.contents(), (Pairs{{0, 30}}));
}

TEST(DirtyTimeWindows, MergesSeveralAtOnce) {
	Storage s(8);
	s.set.add_all(std::vector<FnTimeRange>{R(0, 10), R(20, 30), R(40, 50), R(60, 70), R(80, 90)}.data(), 5);
	s.set.add(R(10, 60)); // touches the first, bridges three, touches the fourth
	EXPECT_EQ(s.contents(), (Pairs{{0, 70}, {80, 90}}));
}

TEST(DirtyTimeWindows, SubtractTrimsAndRemoves) {
	Storage s(4);
	s.set.add(R(0, 10));
	s.set.add(R(20, 30));
	s.set.add(R(40, 50));
	s.set.subtract(R(5, 45));
	EXPECT_EQ(s.contents(), (Pairs{{0, 5}, {45, 50}}));
	s.set.subtract(R(0, 5));
	EXPECT_EQ(s.contents(), (Pairs{{45, 50}}));
	s.set.subtract(R(100, 200)); // nothing there
	s.set.subtract(R(48, 48));   // empty
	EXPECT_EQ(s.contents(), (Pairs{{45, 50}}));
	s.set.subtract(R(0, 100));
	EXPECT_TRUE(s.set.empty());
}

TEST(DirtyTimeWindows, SubtractSplits) {
	Storage s(4);
	s.set.add(R(0, 100));
	s.set.add(R(200, 300));
	s.set.subtract(R(40, 60));
	EXPECT_EQ(s.contents(), (Pairs{{0, 40}, {60, 100}, {200, 300}}));
	EXPECT_TRUE(s.guard_intact());
}

TEST(DirtyTimeWindows, SubtractWhenFullKeepsRangeWhole) {
	Storage s(2);
	s.set.add(R(0, 100));
	s.set.add(R(200, 300));
	s.set.subtract(R(40, 60));
	EXPECT_EQ(s.contents(), (Pairs{{0, 100}, {200, 300}}));
	// Trimming needs no slot, so it still happens when full.
	s.set.subtract(R(250, 400));
	EXPECT_EQ(s.contents(), (Pairs{{0, 100}, {200, 250}}));
	EXPECT_TRUE(s.guard_intact());
}

TEST(DirtyTimeWindows, CutBelow) {
	Storage s(4);
	s.set.add(R(0, 10));
	s.set.add(R(20, 30));
	s.set.add(R(40, 50));
	EXPECT_FALSE(s.set.cut_below(0));
	EXPECT_TRUE(s.set.cut_below(5)); // straddles: cut, not kept whole
	EXPECT_EQ(s.contents(), (Pairs{{5, 10}, {20, 30}, {40, 50}}));
	EXPECT_TRUE(s.set.cut_below(30)); // end == t goes
	EXPECT_EQ(s.contents(), (Pairs{{40, 50}}));
	EXPECT_FALSE(s.set.cut_below(35)); // in a gap: nothing to cut
	EXPECT_TRUE(s.set.cut_below(45));
	EXPECT_EQ(s.contents(), (Pairs{{45, 50}}));
	EXPECT_TRUE(s.set.cut_below(INT64_MAX));
	EXPECT_TRUE(s.set.empty());
	EXPECT_FALSE(s.set.cut_below(INT64_MAX));
	EXPECT_TRUE(s.guard_intact());
}

TEST(DirtyTimeWindows, Covers) {
	Storage s(4);
	s.set.add(R(0, 10));
	s.set.add(R(20, 30));
	EXPECT_TRUE(s.set.covers(R(0, 10)));
	EXPECT_TRUE(s.set.covers(R(22, 28)));
	EXPECT_FALSE(s.set.covers(R(5, 25)));  // spans the gap
	EXPECT_FALSE(s.set.covers(R(15, 18))); // in the gap
	EXPECT_FALSE(s.set.covers(R(25, 31)));
	EXPECT_FALSE(s.set.covers(R(-1, 5)));
}

TEST(DirtyTimeWindows, ContainingPointAndRange) {
	Storage s(4);
	EXPECT_EQ(s.set.containing(int64_t{0}), nullptr);
	s.set.add(R(0, 10));
	s.set.add(R(20, 30));
	ASSERT_NE(s.set.containing(int64_t{0}), nullptr);
	EXPECT_EQ(s.set.containing(int64_t{9})->end, 10);
	EXPECT_EQ(s.set.containing(int64_t{10}), nullptr); // ends are exclusive
	EXPECT_EQ(s.set.containing(int64_t{15}), nullptr);
	EXPECT_EQ(s.set.containing(int64_t{20})->start, 20);
	EXPECT_EQ(s.set.containing(int64_t{-1}), nullptr);
	EXPECT_EQ(s.set.containing(int64_t{30}), nullptr);
	ASSERT_NE(s.set.containing(R(22, 28)), nullptr);
	EXPECT_EQ(s.set.containing(R(22, 28))->start, 20);
	EXPECT_EQ(s.set.containing(R(5, 25)), nullptr);
	EXPECT_EQ(s.set.containing(R(5, 5)), nullptr); // empty: held by no range
}

TEST(DirtyTimeWindows, AddExactNeverCoalesces) {
	Storage s(2);
	EXPECT_TRUE(s.set.add_exact(R(0, 10)));
	EXPECT_TRUE(s.set.add_exact(R(20, 30)));
	EXPECT_FALSE(s.set.add_exact(R(40, 50))); // full, touches nothing
	EXPECT_FALSE(s.set.add_exact(R(12, 18))); // would need the gap closed
	EXPECT_TRUE(s.set.add_exact(R(5, 15)));   // merges with [0, 10)
	EXPECT_TRUE(s.set.add_exact(R(30, 35)));  // touches [20, 30)
	EXPECT_EQ(s.contents(), (Pairs{{0, 15}, {20, 35}}));
	EXPECT_TRUE(s.set.add_exact(R(15, 20))); // touches both: they merge
	EXPECT_EQ(s.contents(), (Pairs{{0, 35}}));
	EXPECT_TRUE(s.guard_intact());
}

TEST(DirtyTimeWindows, CoalesceBatchClosesTheSmallestGaps) {
	Storage s(8);
	for (FnTimeRange r : {R(0, 10), R(15, 20), R(21, 30), R(33, 40), R(41, 50), R(52, 60)})
		s.set.add(r);
	// gaps 5, 1, 3, 1, 2: the three smallest are 1, 1 and 2
	s.set.coalesce_batch(3);
	EXPECT_EQ(s.contents(), (Pairs{{0, 10}, {15, 30}, {33, 60}}));
	EXPECT_TRUE(s.guard_intact());
}

TEST(DirtyTimeWindows, CoalesceBatchTiesCloseTheFirstGaps) {
	Storage s(8);
	for (FnTimeRange r : {R(0, 1), R(2, 3), R(4, 5), R(6, 7), R(8, 9)})
		s.set.add(r);
	s.set.coalesce_batch(2);
	EXPECT_EQ(s.contents(), (Pairs{{0, 5}, {6, 7}, {8, 9}}));
}

TEST(DirtyTimeWindows, LargeFullSetMakesRoomForAnEighth) {
	Storage s(64);
	for (int64_t i = 0; i < 64; i++)
		s.set.add(R(i * 10, i * 10 + 5)); // 64 ranges, every gap 5
	ASSERT_EQ(s.set.size(), 64u);
	s.set.add(R(1000, 1005)); // full: 8 gaps close, then it goes in on its own
	EXPECT_EQ(s.set.size(), 64u - 8u + 1u);
	EXPECT_TRUE(s.set.covers(R(1000, 1005)));
	EXPECT_TRUE(s.set.covers(R(0, 5)));
	EXPECT_TRUE(s.guard_intact());
}

TEST(DirtyTimeWindows, ClearEmpties) {
	Storage s(2);
	s.set.add(R(0, 10));
	s.set.clear();
	EXPECT_TRUE(s.set.empty());
	EXPECT_EQ(s.count, 0u);
}

TEST(DirtyTimeWindows, CoalesceWhenFullPicksSmallestGap) {
	Storage s(3);
	s.set.add(R(0, 10));
	s.set.add(R(100, 110));
	s.set.add(R(115, 120)); // gap 5 to the previous one: the smallest
	s.set.add(R(300, 310)); // 180 away from its neighbour
	EXPECT_EQ(s.contents(), (Pairs{{0, 10}, {100, 120}, {300, 310}}));
	EXPECT_TRUE(s.guard_intact());
}

TEST(DirtyTimeWindows, CoalesceWhenFullMergesNewRangeIntoNearestNeighbour) {
	Storage s(3);
	s.set.add(R(0, 10));
	s.set.add(R(100, 110));
	s.set.add(R(300, 310));
	s.set.add(R(112, 120)); // 2 after [100,110): smaller than any existing gap
	EXPECT_EQ(s.contents(), (Pairs{{0, 10}, {100, 120}, {300, 310}}));
	s.set.add(R(290, 295)); // 5 before [300,310), 170 after [100,120)
	EXPECT_EQ(s.contents(), (Pairs{{0, 10}, {100, 120}, {290, 310}}));
	s.set.add(R(-20, -15)); // new first range, 15 before [0,10)
	EXPECT_EQ(s.contents(), (Pairs{{-20, 10}, {100, 120}, {290, 310}}));
	s.set.add(R(395, 500)); // new last range, 85 after [290,310): the smallest gap
	EXPECT_EQ(s.contents(), (Pairs{{-20, 10}, {100, 120}, {290, 500}}));
	EXPECT_TRUE(s.guard_intact());
}

TEST(DirtyTimeWindows, CoalesceTieClosesTheFirstGap) {
	Storage s(2);
	s.set.add(R(0, 10));
	s.set.add(R(100, 110));
	s.set.add(R(200, 210)); // gap 90 either way
	EXPECT_EQ(s.contents(), (Pairs{{0, 110}, {200, 210}}));
	s.set.add(R(-100, -90)); // gap 90 to [0,110), as [110,200) is
	EXPECT_EQ(s.contents(), (Pairs{{-100, 110}, {200, 210}}));
}

TEST(DirtyTimeWindows, CoalesceWhenFullStillMergesTouchingRanges) {
	Storage s(2);
	s.set.add(R(0, 10));
	s.set.add(R(100, 110));
	s.set.add(R(10, 100)); // touches both: merges without coalescing
	EXPECT_EQ(s.contents(), (Pairs{{0, 110}}));
}

TEST(DirtyTimeWindows, CapacityOne) {
	Storage s(1);
	s.set.add(R(10, 20));
	s.set.add(R(50, 60));
	EXPECT_EQ(s.contents(), (Pairs{{10, 60}}));
	s.set.add(R(0, 5));
	EXPECT_EQ(s.contents(), (Pairs{{0, 60}}));
	s.set.subtract(R(20, 30)); // would split: kept whole
	EXPECT_EQ(s.contents(), (Pairs{{0, 60}}));
	s.set.subtract(R(0, 20));
	EXPECT_EQ(s.contents(), (Pairs{{20, 60}}));
	EXPECT_TRUE(s.set.cut_below(60));
	EXPECT_TRUE(s.set.empty());
	EXPECT_TRUE(s.guard_intact());
}

TEST(DirtyTimeWindows, GapsNearInt64LimitsDoNotOverflow) {
	Storage s(2);
	s.set.add(R(INT64_MIN, INT64_MIN + 1));
	s.set.add(R(INT64_MAX - 3, INT64_MAX - 2));
	// The existing gap is nearly 2^64; as an int64 it would wrap negative and win.
	s.set.add(R(INT64_MAX - 1, INT64_MAX));
	EXPECT_EQ(s.contents(), (Pairs{{INT64_MIN, INT64_MIN + 1}, {INT64_MAX - 3, INT64_MAX}}));
	s.set.add(R(INT64_MIN + 2, INT64_MIN + 3));
	EXPECT_EQ(s.contents(), (Pairs{{INT64_MIN, INT64_MIN + 3}, {INT64_MAX - 3, INT64_MAX}}));
	EXPECT_TRUE(s.set.covers(R(INT64_MAX - 2, INT64_MAX)));
}

// --- Randomized property test -------------------------------------------------

constexpr int64_t kWidth = 10;
constexpr int64_t kWindows = 200; // positions 0..2000

// The documented behaviour spelled out the slow way: insert, merge, and when over
// capacity close the first smallest gap; a split that needs a slot when full is skipped.
struct Reference {
	explicit Reference(uint32_t cap) : capacity(cap) {}

	void add(FnTimeRange r) {
		if (r.start >= r.end)
			return;
		std::vector<FnTimeRange> all = ranges;
		all.push_back(r);
		std::sort(all.begin(), all.end(), [](auto a, auto b) { return a.start < b.start; });
		ranges.clear();
		for (const FnTimeRange &x : all) {
			if (!ranges.empty() && x.start <= ranges.back().end)
				ranges.back().end = std::max(ranges.back().end, x.end);
			else
				ranges.push_back(x);
		}
		if (ranges.size() > capacity) {
			size_t best = 1;
			for (size_t i = 2; i < ranges.size(); i++)
				if ((__int128)ranges[i].start - ranges[i - 1].end <
				    (__int128)ranges[best].start - ranges[best - 1].end)
					best = i;
			ranges[best - 1].end = ranges[best].end;
			ranges.erase(ranges.begin() + best);
		}
	}

	void subtract(FnTimeRange r) {
		if (r.start >= r.end)
			return;
		bool full = ranges.size() == capacity;
		std::vector<FnTimeRange> out;
		for (const FnTimeRange &x : ranges) {
			bool left = x.start<r.start, right = x.end> r.end;
			if (x.end <= r.start || x.start >= r.end || (left && right && full)) {
				out.push_back(x);
				continue;
			}
			if (left)
				out.push_back(R(x.start, r.start));
			if (right)
				out.push_back(R(r.end, x.end));
		}
		ranges = out;
	}

	void cut_below(int64_t t) {
		ranges.erase(std::remove_if(ranges.begin(), ranges.end(), [&](auto x) { return x.end <= t; }),
		             ranges.end());
		for (FnTimeRange &x : ranges)
			x.start = std::max(x.start, t);
	}

	Pairs contents() const {
		Pairs out;
		for (const FnTimeRange &x : ranges)
			out.emplace_back(x.start, x.end);
		return out;
	}

	uint32_t capacity;
	std::vector<FnTimeRange> ranges;
};

Pairs pairs_of(const std::set<int64_t> &windows) {
	Pairs out;
	for (int64_t w : windows) {
		if (!out.empty() && out.back().second == w * kWidth)
			out.back().second += kWidth;
		else
			out.emplace_back(w * kWidth, (w + 1) * kWidth);
	}
	return out;
}

// The first broken invariant, or "" when all hold.
std::string violation(const Storage &s, const std::set<int64_t> &marked) {
	if (s.set.size() > s.set.capacity())
		return "over capacity";
	if (!s.guard_intact())
		return "wrote past capacity";
	for (uint32_t i = 0; i < s.set.size(); i++) {
		if (s.set[i].start >= s.set[i].end)
			return "empty range " + std::to_string(i);
		if (s.set[i].start % kWidth != 0 || s.set[i].end % kWidth != 0)
			return "range " + std::to_string(i) + " is not a union of whole windows";
		if (i > 0 && s.set[i - 1].end >= s.set[i].start)
			return "range " + std::to_string(i) + " overlaps or touches the previous one";
	}
	for (int64_t w : marked)
		if (!s.set.covers(R(w * kWidth, (w + 1) * kWidth)))
			return "lost window " + std::to_string(w);
	return "";
}

void run_random(uint32_t seed) {
	std::mt19937 rng(seed);
	auto uniform = [&](int64_t lo, int64_t hi) {
		return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
	};
	for (int round = 0; round < 60; round++) {
		uint32_t capacity = static_cast<uint32_t>(uniform(1, 16));
		Storage s(capacity);
		Reference ref(capacity);
		std::set<int64_t> marked; // windows that must stay marked
		bool exact = true;        // no coalescing or skipped split since the set was last empty
		SCOPED_TRACE(testing::Message() << "seed " << seed << " round " << round << " capacity " << capacity);
		for (int step = 0; step < 300; step++) {
			int64_t a = uniform(0, kWindows - 1), b = std::min(kWindows, a + uniform(1, 25));
			FnTimeRange r = R(a * kWidth, b * kWidth);
			int op = static_cast<int>(uniform(0, 99));
			if (op < 55) {
				if (s.set.size() == capacity)
					exact = false;
				s.set.add(r);
				ref.add(r);
				for (int64_t w = a; w < b; w++)
					marked.insert(w);
			} else if (op < 90) {
				if (s.set.size() == capacity)
					exact = false;
				s.set.subtract(r);
				ref.subtract(r);
				for (int64_t w = a; w < b; w++)
					marked.erase(w);
			} else if (op < 98) {
				int64_t t = uniform(0, kWindows) * kWidth;
				bool expect_change = false;
				for (uint32_t i = 0; i < s.set.size(); i++)
					expect_change |= s.set[i].start < t;
				for (int64_t w = 0; w < t / kWidth; w++)
					marked.erase(w);
				ASSERT_EQ(s.set.cut_below(t), expect_change) << "step " << step;
				ref.cut_below(t);
			} else {
				s.set.clear();
				ref.ranges.clear();
				marked.clear();
			}
			if (s.set.empty())
				exact = true;
			ASSERT_EQ(violation(s, marked), "") << "step " << step;
			ASSERT_EQ(s.contents(), ref.contents()) << "step " << step;
			for (int probe = 0; probe < 4; probe++) {
				int64_t p = uniform(-1, kWindows * kWidth);
				bool inside = false;
				for (const auto &x : s.contents())
					inside |= x.first <= p && p < x.second;
				const FnTimeRange *hit = s.set.containing(p);
				ASSERT_EQ(hit != nullptr, inside) << "step " << step << " point " << p;
				if (hit != nullptr) {
					ASSERT_LE(hit->start, p) << "step " << step;
					ASSERT_GT(hit->end, p) << "step " << step;
				}
			}
			if (exact) {
				ASSERT_EQ(s.contents(), pairs_of(marked)) << "step " << step;
			}
		}
	}
}

TEST(DirtyTimeWindowsProperty, FixedSeed) {
	ASSERT_NO_FATAL_FAILURE(run_random(12345));
}

TEST(DirtyTimeWindowsProperty, SeveralSeeds) {
	for (uint32_t seed : {1u, 2u, 3u, 42u, 2024u, 99991u})
		ASSERT_NO_FATAL_FAILURE(run_random(seed));
}

// Sets of 64 ranges or more coalesce in batches: no exact model, but every
// invariant must hold and no marked window may be lost, over many coalescings.
void run_random_large(uint32_t seed) {
	std::mt19937 rng(seed);
	auto uniform = [&](int64_t lo, int64_t hi) {
		return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
	};
	const int64_t windows = 5000;
	for (int round = 0; round < 6; round++) {
		uint32_t capacity = static_cast<uint32_t>(uniform(64, 300));
		Storage s(capacity);
		std::set<int64_t> marked;
		uint32_t fills = 0;
		SCOPED_TRACE(testing::Message() << "seed " << seed << " round " << round << " capacity " << capacity);
		for (int step = 0; step < 3000; step++) {
			int64_t a = uniform(0, windows - 1), b = std::min(windows, a + uniform(1, 3));
			FnTimeRange r = R(a * kWidth, b * kWidth);
			if (uniform(0, 9) < 8) {
				fills += s.set.size() == capacity;
				s.set.add(r);
				for (int64_t w = a; w < b; w++)
					marked.insert(w);
			} else {
				s.set.subtract(r);
				for (int64_t w = a; w < b; w++)
					marked.erase(w);
			}
			ASSERT_EQ(violation(s, marked), "") << "step " << step;
		}
		EXPECT_GT(fills, 0u) << "the set never filled: the batch path went untested";
	}
}

TEST(DirtyTimeWindowsProperty, LargeSetsCoalesceInBatches) {
	for (uint32_t seed : {7u, 11u, 2026u})
		ASSERT_NO_FATAL_FAILURE(run_random_large(seed));
}

} // namespace

// --- add_batch ----------------------------------------------------------------------

// A set of `capacity` whose storage has room for `room` more entries (add_batch's
// contract), then a guard entry.
struct BatchStorage {
	BatchStorage(uint32_t capacity, uint32_t room)
	    : ranges(capacity + room + 1), set(ranges.data(), &count, capacity), end(capacity + room) {
		ranges[end] = kGuard;
	}
	bool guard_intact() const { return ranges[end].start == kGuard.start && ranges[end].end == kGuard.end; }
	Pairs contents() const {
		Pairs out;
		for (uint32_t i = 0; i < set.size(); i++)
			out.emplace_back(set[i].start, set[i].end);
		return out;
	}
	std::vector<FnTimeRange> ranges;
	uint32_t count = 0;
	DirtyTimeWindows set;
	uint32_t end;
};

TEST(DirtyTimeWindowsAddBatch, SortsMergesAndSkipsEmpty) {
	BatchStorage b(16, 8);
	b.set.add(R(10, 20));
	b.set.add(R(50, 60));
	std::vector<FnTimeRange> batch = {R(70, 80), R(20, 30), R(5, 5), R(40, 45),
	                                  R(44, 50), R(90, 80), R(0, 3)};
	b.set.add_batch(batch.data(), static_cast<uint32_t>(batch.size()));
	EXPECT_EQ(b.contents(), (Pairs{{0, 3}, {10, 30}, {40, 60}, {70, 80}}));
	EXPECT_TRUE(b.guard_intact());
	b.set.add_batch(batch.data(), 0); // nothing
	EXPECT_EQ(b.set.size(), 4u);
}

TEST(DirtyTimeWindowsAddBatch, OverCapacityClosesTheSmallestGaps) {
	BatchStorage b(3, 4);
	b.set.add(R(0, 10));
	b.set.add(R(100, 110));
	std::vector<FnTimeRange> batch = {R(112, 120), R(200, 210), R(50, 60), R(300, 310)};
	// 6 ranges, gaps 40, 40, 2, 80, 90: the three smallest close
	b.set.add_batch(batch.data(), static_cast<uint32_t>(batch.size()));
	EXPECT_EQ(b.contents(), (Pairs{{0, 120}, {200, 210}, {300, 310}}));
	EXPECT_TRUE(b.guard_intact());
}

// Random batches against add() one range at a time: identical while nothing had to
// coalesce; afterwards every invariant holds and no marked window is lost.
void run_random_batches(uint32_t seed) {
	std::mt19937 rng(seed);
	auto uniform = [&](int64_t lo, int64_t hi) {
		return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
	};
	for (int round = 0; round < 40; round++) {
		uint32_t capacity = static_cast<uint32_t>(round % 2 ? uniform(64, 300) : uniform(1, 16));
		uint32_t room = static_cast<uint32_t>(uniform(1, 64));
		BatchStorage b(capacity, room);
		Storage one(capacity + room);
		std::set<int64_t> marked;
		bool exact = true;
		SCOPED_TRACE(testing::Message() << "seed " << seed << " round " << round << " capacity " << capacity
		                                << " room " << room);
		for (int step = 0; step < 200; step++) {
			std::vector<FnTimeRange> batch(static_cast<size_t>(uniform(0, room)));
			for (FnTimeRange &r : batch) {
				int64_t a = uniform(0, kWindows - 1), w = uniform(0, 3); // some empty
				r = R(a * kWidth, std::min(kWindows, a + w) * kWidth);
				for (int64_t x = a; x < std::min(kWindows, a + w); x++)
					marked.insert(x);
			}
			for (const FnTimeRange &r : batch)
				one.set.add(r);
			b.set.add_batch(batch.data(), static_cast<uint32_t>(batch.size()));
			ASSERT_TRUE(b.guard_intact()) << "step " << step;
			ASSERT_LE(b.set.size(), capacity) << "step " << step;
			for (uint32_t i = 0; i < b.set.size(); i++) {
				ASSERT_LT(b.set[i].start, b.set[i].end);
				ASSERT_EQ(b.set[i].start % kWidth, 0);
				ASSERT_EQ(b.set[i].end % kWidth, 0);
				if (i > 0) {
					ASSERT_LT(b.set[i - 1].end, b.set[i].start) << "step " << step;
				}
			}
			for (int64_t w : marked)
				ASSERT_TRUE(b.set.covers(R(w * kWidth, (w + 1) * kWidth))) << "lost window " << w;
			exact = exact && one.set.size() <= capacity;
			if (exact) {
				ASSERT_EQ(b.contents(), one.contents()) << "step " << step;
			}
		}
	}
}

TEST(DirtyTimeWindowsProperty, AddBatchKeepsEveryWindow) {
	for (uint32_t seed : {5u, 17u, 2026u})
		ASSERT_NO_FATAL_FAILURE(run_random_batches(seed));
}

// A transaction's set published into a flow's set (add_all of sorted, disjoint
// ranges): merged in one pass, it keeps every window, stays sorted and apart within
// capacity, and equals range-by-range adds while neither set had to coalesce.
void run_random_set_merges(uint32_t seed) {
	std::mt19937_64 rng(seed);
	auto uniform = [&](int64_t lo, int64_t hi) {
		return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
	};
	constexpr int64_t kWidth = 60, kWindows = 5000;
	for (int round = 0; round < 30; round++) {
		uint32_t capacity = static_cast<uint32_t>(uniform(2, 300));
		Storage s(capacity), one(capacity);
		std::set<int64_t> marked;
		SCOPED_TRACE(testing::Message() << "seed " << seed << " round " << round << " capacity " << capacity);
		bool exact = true;
		for (int step = 0; step < 40; step++) {
			Storage local(static_cast<uint32_t>(uniform(1, capacity + 20)));
			for (int64_t i = uniform(0, 400); i > 0; i--) {
				int64_t a = uniform(0, kWindows - 1);
				local.set.add(R(a * kWidth, (a + 1) * kWidth));
			}
			for (uint32_t i = 0; i < local.set.size(); i++)
				for (int64_t w = local.set[i].start / kWidth; w < local.set[i].end / kWidth; w++)
					marked.insert(w);
			exact = exact && one.set.size() + local.set.size() <= capacity;
			for (uint32_t i = 0; i < local.set.size(); i++)
				one.set.add(local.set[i]);
			s.set.add_all(local.ranges.data(), local.set.size());
			ASSERT_TRUE(s.guard_intact()) << "step " << step;
			ASSERT_LE(s.set.size(), capacity);
			for (uint32_t i = 1; i < s.set.size(); i++)
				ASSERT_LT(s.set[i - 1].end, s.set[i].start) << "step " << step;
			for (int64_t w : marked)
				ASSERT_TRUE(s.set.covers(R(w * kWidth, (w + 1) * kWidth))) << "lost window " << w;
			if (exact) {
				ASSERT_EQ(s.contents(), one.contents()) << "step " << step;
			}
		}
	}
}

TEST(DirtyTimeWindowsProperty, AddAllOfASetKeepsEveryWindow) {
	for (uint32_t seed : {3u, 11u, 2026u})
		ASSERT_NO_FATAL_FAILURE(run_random_set_merges(seed));
}

TEST(DirtyTimeWindows, AddAllOfASetMakesRoomFirst) {
	Storage s(4);
	for (FnTimeRange r : {R(0, 1), R(10, 11), R(100, 101), R(1000, 1001)})
		s.set.add(r);
	std::vector<FnTimeRange> in{R(2000, 2001), R(3000, 3001)};
	s.set.add_all(in.data(), 2);
	// two gaps close (the smallest: 0-10 and 10-100), then both ranges go in
	EXPECT_EQ(s.contents(), (Pairs{{0, 101}, {1000, 1001}, {2000, 2001}, {3000, 3001}}));
}

TEST(DirtyTimeWindowsDropOverlapping, RemovesWholeOverlappingRangesOnly) {
	FnTimeRange storage[8];
	uint32_t count = 0;
	flownode::DirtyTimeWindows set(storage, &count, 8);
	set.add({0, 10});
	set.add({20, 30});
	set.add({40, 50});
	set.drop_overlapping({25, 41});
	ASSERT_EQ(set.size(), 1u);
	EXPECT_EQ(set[0].start, 0);
	EXPECT_EQ(set[0].end, 10);
	set.drop_overlapping({10, 20}); // touches [0,10) only at its end: not an overlap
	EXPECT_EQ(set.size(), 1u);
	set.drop_overlapping({9, 9}); // empty
	EXPECT_EQ(set.size(), 1u);
	set.drop_overlapping({9, 10});
	EXPECT_TRUE(set.empty());
}

// --- fn_ranges_search / fn_ranges_absorb (inline C, the trigger's path) --------------

TEST(RangesSearch, FirstRangeEndingAfter) {
	const FnTimeRange rs[] = {R(10, 20), R(30, 40), R(50, 60)};
	EXPECT_EQ(fn_ranges_search(rs, 0, 15), 0u);
	EXPECT_EQ(fn_ranges_search(rs, 3, 5), 0u);
	EXPECT_EQ(fn_ranges_search(rs, 3, 10), 0u);
	EXPECT_EQ(fn_ranges_search(rs, 3, 19), 0u);
	EXPECT_EQ(fn_ranges_search(rs, 3, 20), 1u); // end is exclusive
	EXPECT_EQ(fn_ranges_search(rs, 3, 45), 2u);
	EXPECT_EQ(fn_ranges_search(rs, 3, 60), 3u);
	EXPECT_EQ(fn_ranges_containing(rs, 3, 25), nullptr);
	EXPECT_EQ(fn_ranges_containing(rs, 3, 30), rs + 1);
}

struct Absorb {
	std::vector<FnTimeRange> rs;
	uint32_t count;
	explicit Absorb(std::vector<FnTimeRange> v) : rs(std::move(v)), count(static_cast<uint32_t>(rs.size())) {}
	bool operator()(FnTimeRange w, uint64_t below) {
		return fn_ranges_absorb(rs.data(), &count, fn_ranges_search(rs.data(), count, w.start), w, below);
	}
	Pairs contents() const {
		Pairs out;
		for (uint32_t i = 0; i < count; i++)
			out.emplace_back(rs[i].start, rs[i].end);
		return out;
	}
};

TEST(RangesAbsorb, TouchingJoinsAtBelowOne) {
	Absorb a({R(10, 20), R(40, 50)});
	EXPECT_TRUE(a(R(20, 25), 1)); // touches the first
	EXPECT_TRUE(a(R(35, 40), 1)); // touches the second
	EXPECT_EQ(a.contents(), (Pairs{{10, 25}, {35, 50}}));
	EXPECT_FALSE(a(R(28, 30), 1)); // apart from both: staged instead
	EXPECT_FALSE(a(R(0, 5), 1));
	EXPECT_FALSE(a(R(60, 65), 1));
	EXPECT_FALSE(a(R(28, 30), 0)); // 0: never
	EXPECT_EQ(a.contents(), (Pairs{{10, 25}, {35, 50}}));
}

TEST(RangesAbsorb, NearerNeighbourBelowThreshold) {
	Absorb a({R(10, 20), R(100, 110)});
	EXPECT_TRUE(a(R(30, 35), 11));  // 10 from the first, 65 from the second
	EXPECT_TRUE(a(R(90, 95), 6));   // 55 from the first, 5 from the second
	EXPECT_FALSE(a(R(60, 65), 25)); // 25 from both: not below
	EXPECT_EQ(a.contents(), (Pairs{{10, 35}, {90, 110}}));
	EXPECT_TRUE(a(R(60, 65), 26)); // a tie joins the previous range
	EXPECT_EQ(a.contents(), (Pairs{{10, 65}, {90, 110}}));
}

TEST(RangesAbsorb, EdgesOfTheSet) {
	Absorb a({R(10, 20)});
	EXPECT_TRUE(a(R(0, 5), 6)); // before the first: only a next neighbour
	EXPECT_TRUE(a(R(30, 40), 11));
	EXPECT_EQ(a.contents(), (Pairs{{0, 40}}));
	Absorb empty({});
	EXPECT_FALSE(empty(R(0, 5), UINT64_MAX)); // nothing to join, whatever the threshold
	EXPECT_EQ(empty.count, 0u);
}

TEST(RangesAbsorb, FillingTheGapMergesBothNeighbours) {
	Absorb a({R(0, 10), R(20, 30), R(40, 50), R(60, 70)});
	EXPECT_TRUE(a(R(30, 40), 1));
	EXPECT_EQ(a.contents(), (Pairs{{0, 10}, {20, 50}, {60, 70}}));
	EXPECT_TRUE(a(R(12, 18), 3)); // 2 from both: joins the first, stays apart from the next
	EXPECT_EQ(a.contents(), (Pairs{{0, 18}, {20, 50}, {60, 70}}));
	EXPECT_TRUE(a(R(55, 60), 100)); // touches the next: joins it (0 < 5)
	EXPECT_EQ(a.contents(), (Pairs{{0, 18}, {20, 50}, {55, 70}}));
}

TEST(RangesAbsorb, RefusesAWindowOverlappingANeighbour) {
	Absorb a({R(10, 20), R(40, 50)});
	std::vector<FnTimeRange> before = a.rs;
	EXPECT_FALSE(fn_ranges_absorb(a.rs.data(), &a.count, 1, R(15, 25), UINT64_MAX)); // into the first
	EXPECT_FALSE(fn_ranges_absorb(a.rs.data(), &a.count, 1, R(35, 45), UINT64_MAX)); // into the second
	EXPECT_EQ(a.contents(), (Pairs{{10, 20}, {40, 50}}));
}

TEST(RangesAbsorb, GapsNearInt64LimitsDoNotOverflow) {
	Absorb a({R(INT64_MIN, INT64_MIN + 10), R(INT64_MAX - 10, INT64_MAX)});
	// gaps 2^63 - 10 to the first and 2^63 - 21 to the second: the second is nearer
	EXPECT_FALSE(a(R(0, 10), (UINT64_C(1) << 63) - 21));
	EXPECT_TRUE(a(R(0, 10), (UINT64_C(1) << 63) - 20));
	EXPECT_EQ(a.contents(), (Pairs{{INT64_MIN, INT64_MIN + 10}, {0, INT64_MAX}}));
}

TEST(DirtyTimeWindowsAddBatch, ReturnsTheCoalescingThreshold) {
	BatchStorage b(3, 4);
	std::vector<FnTimeRange> first = {R(0, 10), R(100, 110)};
	EXPECT_EQ(b.set.add_batch(first.data(), 2), 0u); // fits: nothing coalesced
	std::vector<FnTimeRange> batch = {R(112, 120), R(200, 210), R(50, 60), R(300, 310)};
	// gaps 40, 40, 2, 80, 90: the three smallest close, every gap below 40
	EXPECT_EQ(b.set.add_batch(batch.data(), static_cast<uint32_t>(batch.size())), 40u);
	EXPECT_EQ(b.contents(), (Pairs{{0, 120}, {200, 210}, {300, 310}}));
}

// The trigger's marking loop over a local set (search, absorb below the threshold,
// stage, merge a full stage with merge_stage), for windows written in random patterns:
// every written window stays in the set, which stays a bounded, sorted union of whole
// windows; and while nothing had to coalesce, the set is exactly the written windows.
void run_marking_loop(uint32_t seed) {
	std::mt19937 rng(seed);
	auto uniform = [&](int64_t lo, int64_t hi) {
		return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
	};
	const int64_t width = 60, windows = 100000;
	for (int round = 0; round < 30; round++) {
		uint32_t capacity = static_cast<uint32_t>(round % 3 ? uniform(4, 300) : uniform(1, 8));
		uint32_t stage_size = static_cast<uint32_t>(uniform(1, 64));
		BatchStorage b(capacity, stage_size);
		std::vector<FnTimeRange> stage;
		std::set<int64_t> written;
		uint64_t below = 1;
		bool coalesced = false;
		int pattern = round % 3; // scattered, in order with jumps, clustered
		int64_t cursor = uniform(0, windows - 1);
		SCOPED_TRACE(testing::Message() << "seed " << seed << " round " << round << " capacity " << capacity);
		for (int step = 0; step < 3000; step++) {
			int64_t win = pattern == 0 ? uniform(0, windows - 1)
			              : pattern == 1
			                  ? (uniform(0, 50) == 0 ? uniform(0, windows - 1) : cursor + uniform(0, 1))
			                  : cursor + uniform(-20, 20) * uniform(0, 1) * 7;
			win = std::clamp<int64_t>(win, 0, windows - 1);
			cursor = win;
			written.insert(win);
			int64_t ts = win * width + uniform(0, width - 1);
			uint32_t pos = fn_ranges_search(b.ranges.data(), b.count, ts);
			if (pos < b.count && b.ranges[pos].start <= ts)
				continue;
			FnTimeRange w = R(win * width, (win + 1) * width);
			if (fn_ranges_absorb(b.ranges.data(), &b.count, pos, w, below))
				continue;
			stage.push_back(w);
			if (stage.size() == stage_size || step == 2999) {
				below =
				    b.set.merge_stage(stage.data(), static_cast<uint32_t>(stage.size()), stage_size, below);
				coalesced = coalesced || below > 1;
				stage.clear();
			}
			ASSERT_TRUE(b.guard_intact());
			ASSERT_LE(b.set.size(), capacity);
		}
		if (!stage.empty())
			below = b.set.merge_stage(stage.data(), static_cast<uint32_t>(stage.size()), stage_size, below);
		coalesced = coalesced || below > 1;
		int64_t covered = 0;
		for (uint32_t i = 0; i < b.set.size(); i++) {
			ASSERT_LT(b.set[i].start, b.set[i].end);
			ASSERT_EQ(b.set[i].start % width, 0);
			ASSERT_EQ(b.set[i].end % width, 0);
			if (i > 0) {
				ASSERT_LT(b.set[i - 1].end, b.set[i].start);
			}
			covered += (b.set[i].end - b.set[i].start) / width;
		}
		for (int64_t w : written)
			ASSERT_TRUE(b.set.covers(R(w * width, (w + 1) * width))) << "lost window " << w;
		if (!coalesced) {
			EXPECT_EQ(covered, static_cast<int64_t>(written.size())) << "claims more than was written";
		}
	}
}

TEST(DirtyTimeWindowsProperty, MarkingLoopWithAbsorbKeepsEveryWindow) {
	for (uint32_t seed : {3u, 29u, 2026u})
		ASSERT_NO_FATAL_FAILURE(run_marking_loop(seed));
}

TEST(DirtyTimeWindows, MakeRoomOnlyWhenFull) {
	Storage s(4);
	s.set.add(R(0, 10));
	s.set.add(R(20, 30));
	s.set.add(R(33, 40));
	EXPECT_EQ(s.set.make_room(), 0u); // room left: nothing closes
	EXPECT_EQ(s.set.size(), 3u);
	s.set.add(R(100, 110));
	EXPECT_EQ(s.set.make_room(), 3u); // full: the smallest gap (3) closes
	EXPECT_EQ(s.contents(), (Pairs{{0, 10}, {20, 40}, {100, 110}}));
	Storage big(64);
	for (int64_t i = 0; i < 64; i++)
		big.set.add(R(i * 100, i * 100 + 10 + (i % 8 == 0 ? 5 : 0)));
	EXPECT_GT(big.set.make_room(), 0u);
	EXPECT_EQ(big.set.size(), 56u); // an eighth of 64 gaps closed
}

TEST(DirtyTimeWindows, MergeStageThreshold) {
	BatchStorage b(8, 8);
	std::vector<FnTimeRange> stage = {R(0, 10), R(20, 30), R(60, 70)};
	EXPECT_EQ(b.set.merge_stage(stage.data(), 3, 8, 1), 1u); // fits: exact
	stage = {R(100, 110), R(130, 140), R(200, 210), R(290, 300), R(400, 410)};
	// 8 ranges, full; gaps 10, 30, 30, 20, 60, 90, 100: make_room closes one (10),
	// then the threshold is the gap a full stage (8 of 8 + 8) would close: the
	// 7 * 8 / 16 = 3rd smallest of 30, 30, 20, 60, 90, 100
	EXPECT_EQ(b.set.merge_stage(stage.data(), 5, 8, 1), 30u);
	EXPECT_EQ(b.contents(),
	          (Pairs{{0, 30}, {60, 70}, {100, 110}, {130, 140}, {200, 210}, {290, 300}, {400, 410}}));
	// never lower than the threshold it had
	stage = {R(500, 510)};
	EXPECT_GE(b.set.merge_stage(stage.data(), 1, 8, 1000), 1000u);
	// a set that never coalesced stays exact
	BatchStorage c(8, 8);
	stage = {R(0, 10)};
	EXPECT_EQ(c.set.merge_stage(stage.data(), 1, 8, 1), 1u);
}

TEST(StrideNests, MultiplesOnOneGrid) {
	const int64_t minute = 60000000, hour = 60 * minute, day = 24 * hour;
	EXPECT_TRUE(fn_stride_nests(0, 5 * minute, 0, minute));
	EXPECT_TRUE(fn_stride_nests(7 * minute, 5 * minute, 0, minute)); // another origin on the grid
	EXPECT_TRUE(fn_stride_nests(-day, day, 0, hour));                // before the fine anchor
	EXPECT_TRUE(fn_stride_nests(0, minute, 0, minute));              // the same windows
	EXPECT_FALSE(fn_stride_nests(30000000, 5 * minute, 0, minute));  // half a minute off the grid
	EXPECT_FALSE(fn_stride_nests(0, 90000000, 0, minute));           // 1.5 minutes: not a multiple
	EXPECT_FALSE(fn_stride_nests(0, minute, 0, 5 * minute));         // finer than the "fine" one
	EXPECT_FALSE(fn_stride_nests(0, minute, 0, 0));
	EXPECT_FALSE(fn_stride_nests(INT64_MAX, minute, INT64_MIN, minute)); // anchors too far apart
}
