#include "core/zoned_buckets.hpp"

#include <gtest/gtest.h>

#include <vector>

using flownode::BucketRule;
using flownode::TimeWindowExpr;
using flownode::Window;
using flownode::ZonedBucketCalendar;

namespace {

int64_t floor_div(int64_t a, int64_t b) {
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

struct Change {
	int64_t at;     // instant of the change
	int64_t before; // offset before it
	int64_t after;  // offset after it
};

// A zone in integer time: local = t + offset(t); a local time that occurs twice is
// converted to the later instant, one that does not occur with the offset before the
// change (PostgreSQL's rules for AT TIME ZONE). Buckets of `width` local units from 0.
class FakeZone final : public BucketRule {
  public:
	FakeZone(std::vector<Change> changes, int64_t width) : changes_(std::move(changes)), width_(width) {}

	int64_t offset(int64_t t) const {
		int64_t off = changes_.front().before;
		for (const Change &c : changes_)
			if (t >= c.at)
				off = c.after;
		return off;
	}
	int64_t local(int64_t t) const { return t + offset(t); }
	int64_t to_utc(int64_t l) const {
		// the later instant with that local time, else the offset before a gap
		int64_t found = 0;
		bool any = false;
		std::vector<int64_t> offsets{changes_.front().before};
		for (const Change &c : changes_)
			offsets.push_back(c.after);
		for (int64_t off : offsets)
			if (offset(l - off) == off && (!any || l - off > found)) {
				found = l - off;
				any = true;
			}
		if (any)
			return found;
		for (const Change &c : changes_)
			if (l >= c.at + c.before && l < c.at + c.after)
				return l - c.before;
		ADD_FAILURE() << "no instant for local " << l;
		return l;
	}
	int64_t bucket_local(int64_t t) const { return floor_div(local(t), width_) * width_; }
	int64_t bucket_of(int64_t t) override { return to_utc(bucket_local(t)); }
	int64_t next_bucket(int64_t t) override { return to_utc(bucket_local(t) + width_); }
	bool change_near(int64_t t, int64_t *at, int64_t *shift) override {
		for (const Change &c : changes_) {
			int64_t s = c.after > c.before ? c.after - c.before : c.before - c.after;
			if (t > c.at - s && t < c.at + s) {
				*at = c.at;
				*shift = s;
				return true;
			}
		}
		return false;
	}

  private:
	std::vector<Change> changes_;
	int64_t width_;
};

// Every instant of [from, to): its window holds it and its bucket's value, every
// instant of a window has that window, and away from the changes the windows are
// the buckets.
void check_windows(FakeZone &zone, int64_t from, int64_t to, int64_t width, int64_t quiet_from,
                   int64_t quiet_to) {
	ZonedBucketCalendar calendar(&zone);
	auto expr = TimeWindowExpr::calendar(width, &calendar);
	for (int64_t t = from; t < to; t++) {
		Window w = expr.window_of(t);
		ASSERT_LE(w.lower, t) << "t=" << t;
		ASSERT_GT(w.upper, t) << "t=" << t;
		int64_t value = zone.bucket_of(t);
		ASSERT_GE(value, w.lower) << "t=" << t << " window [" << w.lower << ", " << w.upper << ")";
		ASSERT_LT(value, w.upper) << "t=" << t << " window [" << w.lower << ", " << w.upper << ")";
		ZonedBucketCalendar fresh_calendar(&zone);
		auto fresh = TimeWindowExpr::calendar(width, &fresh_calendar);
		Window again = fresh.window_of(w.lower);
		ASSERT_EQ(again.lower, w.lower) << "t=" << t;
		ASSERT_EQ(again.upper, w.upper) << "t=" << t;
		if (t >= quiet_from && t < quiet_to) {
			ASSERT_EQ(w.lower, value) << "t=" << t;
			ASSERT_EQ(w.upper - w.lower, width) << "t=" << t;
		}
	}
}

} // namespace

// A repeated hour (fall back by 100 at 1000) and a skipped one (spring forward by
// 100 at 5000), with buckets narrower than, as wide as and wider than the shift, and
// not dividing it.
TEST(ZonedBuckets, WindowsHoldTheirRowsAndValuesAcrossChanges) {
	for (int64_t width : {15, 25, 50, 100, 150, 300, 1000}) {
		SCOPED_TRACE(width);
		FakeZone zone({{1000, 0, -100}, {5000, -100, 0}}, width);
		check_windows(zone, -500, 7000, width, 2000, 4000);
	}
}

// The offset's change may also be by more than a bucket in both directions at once,
// and follow closely (two changes 150 apart).
TEST(ZonedBuckets, ClosePairsOfChanges) {
	for (int64_t width : {20, 60, 200}) {
		SCOPED_TRACE(width);
		FakeZone zone({{1000, 0, 100}, {1150, 100, -50}}, width);
		check_windows(zone, 0, 3000, width, 2000, 2400);
	}
}

// Buckets thousands of times shorter than the shift (250 ms in an hour): the walk
// across the merged stretch must not take a step per bucket.
TEST(ZonedBuckets, TinyBucketsAcrossALargeShift) {
	FakeZone zone({{4000, 0, -3000}, {20000, -3000, 0}}, 2);
	check_windows(zone, 0, 25000, 2, 8000, 9000);
}

// Without changes the windows are exactly the buckets.
TEST(ZonedBuckets, NoChangeIsTheBuckets) {
	FakeZone zone({{1000000, 0, 0}}, 60);
	check_windows(zone, -300, 300, 60, -300, 300);
}
