#include "core/key_marks.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <utility>
#include <vector>

using flownode::KeyMarks;
using flownode::plan_key_refresh;

namespace {

FnTimeRange day(int64_t d) {
	return FnTimeRange{d * 100, d * 100 + 100};
}

TEST(KeyMarks, KeepsDistinctKeysPerWindow) {
	FnKeyMark storage[8];
	uint32_t n = 0;
	KeyMarks km(storage, &n, 8, 3);
	EXPECT_TRUE(km.add(day(2), 7));
	EXPECT_TRUE(km.add(day(1), 9));
	EXPECT_TRUE(km.add(day(2), 7)); // again: no new entry
	EXPECT_TRUE(km.add(day(2), 3));
	EXPECT_EQ(km.size(), 3u);
	EXPECT_EQ(km.keys_in(day(2).start), 2u);
	EXPECT_EQ(km.keys_in(day(1).start), 1u);
	EXPECT_EQ(km.keys_in(day(3).start), 0u);
	EXPECT_TRUE(km.contains(day(2), 3));
	EXPECT_FALSE(km.contains(day(1), 3));
	// sorted by (start, hash)
	EXPECT_EQ(km[0].window.start, 100);
	EXPECT_EQ(km[1].hash, 3u);
	EXPECT_EQ(km[2].hash, 7u);
}

TEST(KeyMarks, PastTheBudgetTheWindowGoesWhole) {
	FnKeyMark storage[8];
	uint32_t n = 0;
	KeyMarks km(storage, &n, 8, 2);
	EXPECT_TRUE(km.add(day(1), 1));
	EXPECT_TRUE(km.add(day(1), 2));
	EXPECT_TRUE(km.add(day(2), 1));
	EXPECT_FALSE(km.add(day(1), 3)); // third key of day 1
	EXPECT_EQ(km.keys_in(day(1).start), 0u);
	EXPECT_TRUE(km.contains(day(2), 1)); // other windows keep theirs
	EXPECT_EQ(km.size(), 1u);
}

TEST(KeyMarks, ZeroBudgetMarksEveryWindowWhole) {
	FnKeyMark storage[4];
	uint32_t n = 0;
	KeyMarks km(storage, &n, 4, 0);
	EXPECT_FALSE(km.add(day(1), 1));
	EXPECT_EQ(km.size(), 0u);
}

TEST(KeyMarks, FullStorageMarksTheWindowWholeAndFreesItsKeys) {
	FnKeyMark storage[3];
	uint32_t n = 0;
	KeyMarks km(storage, &n, 3, 10);
	EXPECT_TRUE(km.add(day(1), 1));
	EXPECT_TRUE(km.add(day(1), 2));
	EXPECT_TRUE(km.add(day(2), 1));
	EXPECT_TRUE(km.add(day(1), 2)); // present: fits
	EXPECT_FALSE(km.add(day(1), 5));
	EXPECT_EQ(km.size(), 1u);
	EXPECT_TRUE(km.add(day(3), 5)); // room again
}

TEST(KeyMarks, DropWithinRemovesWindowsStartingInside) {
	FnKeyMark storage[8];
	uint32_t n = 0;
	KeyMarks km(storage, &n, 8, 4);
	for (int64_t d = 1; d <= 4; d++)
		EXPECT_TRUE(km.add(day(d), static_cast<uint64_t>(d)));
	km.drop_within(FnTimeRange{day(2).start, day(3).end});
	EXPECT_EQ(km.size(), 2u);
	EXPECT_TRUE(km.contains(day(1), 1));
	EXPECT_TRUE(km.contains(day(4), 4));
}

// Every mark added is either still a key mark or its window was handed back whole.
TEST(KeyMarksProperty, NothingAddedIsLost) {
	std::mt19937_64 rng(42);
	for (int round = 0; round < 200; round++) {
		uint32_t cap = 1 + rng() % 16, budget = rng() % 5;
		std::vector<FnKeyMark> storage(cap);
		uint32_t n = 0;
		KeyMarks km(storage.data(), &n, cap, budget);
		std::set<std::pair<int64_t, uint64_t>> added;
		std::set<int64_t> whole;
		for (int i = 0; i < 60; i++) {
			FnTimeRange w = day(static_cast<int64_t>(rng() % 6));
			uint64_t h = rng() % 8;
			added.insert({w.start, h});
			if (!km.add(w, h))
				whole.insert(w.start);
			ASSERT_LE(km.size(), cap);
			for (uint32_t k = 0; k < km.size(); k++)
				ASSERT_LE(km.keys_in(km[k].window.start), budget);
		}
		for (const auto &m : added)
			EXPECT_TRUE(whole.count(m.first) || km.contains(FnTimeRange{m.first, m.first + 100}, m.second));
	}
}

TEST(PlanKeyRefresh, DedupesDropsCoveredAndSendsCrowdedWindowsWhole) {
	std::vector<FnKeyMark> marks = {{day(3), 5}, {day(1), 2}, {day(3), 5}, {day(2), 1},
	                                {day(1), 1}, {day(4), 1}, {day(4), 2}, {day(4), 3}};
	FnTimeRange whole[] = {day(2)};
	FnTimeRange to_whole[8];
	uint32_t n_whole = 99;
	uint32_t m =
	    plan_key_refresh(marks.data(), static_cast<uint32_t>(marks.size()), whole, 1, 2, to_whole, &n_whole);
	ASSERT_EQ(m, 3u);
	EXPECT_EQ(marks[0].window.start, day(1).start);
	EXPECT_EQ(marks[0].hash, 1u);
	EXPECT_EQ(marks[1].hash, 2u);
	EXPECT_EQ(marks[2].window.start, day(3).start);
	ASSERT_EQ(n_whole, 1u);
	EXPECT_EQ(to_whole[0].start, day(4).start);
}

} // namespace
