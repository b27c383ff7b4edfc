#include "core/time_window_expr.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

using flownode::TimeWindowExpr;
using flownode::Window;
using flownode::WindowCalendar;
using flownode::WindowRangeError;

namespace {

constexpr int64_t kSec = 1000000;
constexpr int64_t kMin = 60 * kSec;
constexpr int64_t kHour = 60 * kMin;
constexpr int64_t kDay = 24 * kHour;
// PostgreSQL counts from 2000-01-01 00:00:00 UTC.
constexpr int64_t kPgEpochUnix = 946684800;

int64_t floor_div(int64_t a, int64_t b) {
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

__int128 floor_div128(__int128 a, int64_t b) {
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

void use_zone(const std::string &zone) {
	static std::string current;
	if (zone == current)
		return;
	setenv("TZ", zone.c_str(), 1);
	tzset();
	current = zone;
}

// Unix seconds plus a sub-second part to PostgreSQL's timestamp, failing the way the
// server does ("timestamp out of range": before 4714-11-24 BC or from 294277 on).
int64_t to_pg(int64_t unix_sec, int64_t usec) {
	int64_t out;
	if (__builtin_mul_overflow(unix_sec - kPgEpochUnix, kSec, &out) ||
	    __builtin_add_overflow(out, usec, &out) || out < FN_TS_MIN || out >= FN_TS_END)
		throw WindowRangeError("timestamp out of range");
	return out;
}

int64_t utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
	struct tm tm = {};
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	return to_pg(timegm(&tm), 0);
}

long gmtoff_at(time_t t) {
	struct tm tm;
	localtime_r(&t, &tm);
	return tm.tm_gmtoff;
}

// Local wall-clock fields (possibly out of range) to Unix seconds in the current zone,
// as PostgreSQL's DetermineTimeZoneOffset does: a time skipped by a spring-forward
// takes the offset from before the change, a repeated time the one after it.
time_t resolve_local(struct tm tm) {
	time_t wall = timegm(&tm);
	long before = gmtoff_at(wall - 2 * 86400), after = gmtoff_at(wall + 2 * 86400);
	bool before_ok = gmtoff_at(wall - before) == before, after_ok = gmtoff_at(wall - after) == after;
	if (before_ok && !after_ok)
		return wall - before;
	if (after_ok)
		return wall - after;
	return wall - before;
}

int64_t local(const char *zone, int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
	use_zone(zone);
	struct tm tm = {};
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	return to_pg(resolve_local(tm), 0);
}

enum class Unit { Second, Minute, Hour, Day, Week, Month, Quarter, Year, Decade };

// PostgreSQL's date_trunc(unit, timestamptz, zone) and "+ interval '1 unit'" in that
// zone, built on libc. As in PostgreSQL, units below a day keep the timestamp's UTC
// offset (an ambiguous hour stays in its own offset) and larger units resolve the
// truncated local time again.
class TruncCalendar : public WindowCalendar {
  public:
	TruncCalendar(Unit unit, std::string zone) : unit_(unit), zone_(std::move(zone)) {}

	int64_t truncate(int64_t ts) override {
		truncates++;
		use_zone(zone_);
		time_t t = floor_div(ts, kSec) + kPgEpochUnix;
		if (unit_ == Unit::Second)
			return to_pg(t, 0);
		struct tm tm;
		localtime_r(&t, &tm);
		long offset = tm.tm_gmtoff;
		tm.tm_sec = 0;
		if (unit_ == Unit::Minute)
			return to_pg(timegm(&tm) - offset, 0);
		tm.tm_min = 0;
		if (unit_ == Unit::Hour)
			return to_pg(timegm(&tm) - offset, 0);
		tm.tm_hour = 0;
		switch (unit_) {
		case Unit::Week:
			tm.tm_mday -= (tm.tm_wday + 6) % 7; // back to Monday
			break;
		case Unit::Month:
			tm.tm_mday = 1;
			break;
		case Unit::Quarter:
			tm.tm_mon -= tm.tm_mon % 3;
			tm.tm_mday = 1;
			break;
		case Unit::Year:
			tm.tm_mon = 0;
			tm.tm_mday = 1;
			break;
		case Unit::Decade:
			tm.tm_year = (tm.tm_year + 1900) / 10 * 10 - 1900;
			tm.tm_mon = 0;
			tm.tm_mday = 1;
			break;
		default:
			break;
		}
		return to_pg(resolve_local(tm), 0);
	}

	int64_t step(int64_t lower) override {
		steps++;
		switch (unit_) {
		case Unit::Second:
			return checked_add(lower, kSec);
		case Unit::Minute:
			return checked_add(lower, kMin);
		case Unit::Hour:
			return checked_add(lower, kHour);
		default:
			break;
		}
		use_zone(zone_);
		int64_t sec = floor_div(lower, kSec);
		time_t t = sec + kPgEpochUnix;
		struct tm tm;
		localtime_r(&t, &tm);
		switch (unit_) {
		case Unit::Day:
			tm.tm_mday += 1;
			break;
		case Unit::Week:
			tm.tm_mday += 7;
			break;
		case Unit::Month:
			tm.tm_mon += 1;
			break;
		case Unit::Quarter:
			tm.tm_mon += 3;
			break;
		case Unit::Year:
			tm.tm_year += 1;
			break;
		default:
			tm.tm_year += 10;
			break;
		}
		return to_pg(resolve_local(tm), lower - sec * kSec);
	}

	static int64_t checked_add(int64_t a, int64_t b) {
		int64_t out;
		if (__builtin_add_overflow(a, b, &out) || out >= FN_TS_END)
			throw WindowRangeError("timestamp out of range");
		return out;
	}

	int truncates = 0;
	int steps = 0;

  private:
	Unit unit_;
	std::string zone_;
};

// PostgreSQL's date_bin(stride, ts, origin): bins counted from origin, rounded down
// (towards -infinity) for timestamps before it; failing as the server does when ts is
// too far from the origin for int64 or the bin starts before the smallest timestamp.
class BinCalendar : public WindowCalendar {
  public:
	BinCalendar(int64_t stride, int64_t origin) : stride_(stride), origin_(origin) {}

	int64_t truncate(int64_t ts) override {
		truncates++;
		int64_t diff64;
		if (__builtin_sub_overflow(ts, origin_, &diff64))
			throw WindowRangeError("interval out of range");
		__int128 diff = diff64;
		__int128 delta = diff - diff % stride_;
		if (diff < 0 && delta != diff)
			delta -= stride_;
		__int128 out = origin_ + delta;
		if (out < FN_TS_MIN || out > INT64_MAX)
			throw WindowRangeError("timestamp out of range");
		return static_cast<int64_t>(out);
	}

	int64_t step(int64_t lower) override {
		steps++;
		return TruncCalendar::checked_add(lower, stride_);
	}

	int truncates = 0;
	int steps = 0;

  private:
	int64_t stride_;
	int64_t origin_;
};

Window window_in(Unit unit, const char *zone, int64_t ts) {
	TruncCalendar cal(unit, zone);
	TimeWindowExpr expr = TimeWindowExpr::calendar(kDay, &cal);
	return expr.window_of(ts);
}

// --- Calendar windows ---------------------------------------------------------

TEST(TimeWindowExpr, DayAcrossSpringForwardNewYork) {
	Window w = window_in(Unit::Day, "America/New_York", utc(2024, 3, 10, 16));
	EXPECT_EQ(w.lower, utc(2024, 3, 10, 5)); // midnight EST
	EXPECT_EQ(w.upper, utc(2024, 3, 11, 4)); // midnight EDT
	EXPECT_EQ(w.upper - w.lower, 23 * kHour);
	EXPECT_EQ(w.lower, local("America/New_York", 2024, 3, 10));
	EXPECT_EQ(w.upper, local("America/New_York", 2024, 3, 11));
}

TEST(TimeWindowExpr, DayAcrossFallBackNewYork) {
	Window w = window_in(Unit::Day, "America/New_York", utc(2024, 11, 3, 6, 30)); // 01:30 EST
	EXPECT_EQ(w.lower, utc(2024, 11, 3, 4));
	EXPECT_EQ(w.upper, utc(2024, 11, 4, 5));
	EXPECT_EQ(w.upper - w.lower, 25 * kHour);
}

TEST(TimeWindowExpr, DayAcrossDstBerlin) {
	Window spring = window_in(Unit::Day, "Europe/Berlin", utc(2024, 3, 31, 12));
	EXPECT_EQ(spring.lower, utc(2024, 3, 30, 23));
	EXPECT_EQ(spring.upper, utc(2024, 3, 31, 22));
	EXPECT_EQ(spring.upper - spring.lower, 23 * kHour);
	Window fall = window_in(Unit::Day, "Europe/Berlin", utc(2024, 10, 27, 0, 30)); // 02:30 CEST
	EXPECT_EQ(fall.lower, utc(2024, 10, 26, 22));
	EXPECT_EQ(fall.upper, utc(2024, 10, 27, 23));
	EXPECT_EQ(fall.upper - fall.lower, 25 * kHour);
	EXPECT_EQ(fall.lower, local("Europe/Berlin", 2024, 10, 27));
	EXPECT_EQ(fall.upper, local("Europe/Berlin", 2024, 10, 28));
}

TEST(TimeWindowExpr, HoursThroughTheRepeatedHour) {
	// 01:00-02:00 happens twice on 2024-11-03 in New York: two distinct one-hour windows.
	TruncCalendar cal(Unit::Hour, "America/New_York");
	TimeWindowExpr expr = TimeWindowExpr::calendar(kHour, &cal);
	Window edt = expr.window_of(utc(2024, 11, 3, 5, 30));
	Window est = expr.window_of(utc(2024, 11, 3, 6, 30));
	EXPECT_EQ(edt.lower, utc(2024, 11, 3, 5));
	EXPECT_EQ(edt.upper, utc(2024, 11, 3, 6));
	EXPECT_EQ(est.lower, utc(2024, 11, 3, 6));
	EXPECT_EQ(est.upper, utc(2024, 11, 3, 7));
	uint64_t n = 0;
	EXPECT_EQ(expr.advance({utc(2024, 11, 3, 4), utc(2024, 11, 3, 9)}, 100, &n), utc(2024, 11, 3, 9));
	EXPECT_EQ(n, 5u);
}

TEST(TimeWindowExpr, HourInHalfHourZone) {
	Window w = window_in(Unit::Hour, "Asia/Kolkata", utc(2024, 1, 1, 10));
	EXPECT_EQ(w.lower, utc(2024, 1, 1, 9, 30));
	EXPECT_EQ(w.upper, utc(2024, 1, 1, 10, 30));
}

TEST(TimeWindowExpr, MonthLengths) {
	struct Case {
		int y, m;
		int64_t days;
	} cases[] = {{2023, 2, 28}, {2024, 2, 29}, {2024, 4, 30}, {2024, 1, 31}, {2100, 2, 28}, {2000, 2, 29}};
	for (const Case &c : cases) {
		Window w = window_in(Unit::Month, "UTC", utc(c.y, c.m, 15, 12));
		EXPECT_EQ(w.lower, utc(c.y, c.m, 1)) << c.y << "-" << c.m;
		EXPECT_EQ(w.upper - w.lower, c.days * kDay) << c.y << "-" << c.m;
	}
}

TEST(TimeWindowExpr, MonthInZoneWithDstChange) {
	Window w = window_in(Unit::Month, "Europe/Berlin", utc(2024, 3, 15));
	EXPECT_EQ(w.lower, utc(2024, 2, 29, 23));
	EXPECT_EQ(w.upper, utc(2024, 3, 31, 22));
}

TEST(TimeWindowExpr, YearEndsAndLeapYears) {
	Window dec = window_in(Unit::Month, "UTC", utc(2024, 1, 1) - 1);
	EXPECT_EQ(dec.lower, utc(2023, 12, 1));
	EXPECT_EQ(dec.upper, utc(2024, 1, 1));
	Window jan = window_in(Unit::Day, "UTC", utc(2024, 1, 1));
	EXPECT_EQ(jan.lower, utc(2024, 1, 1));
	EXPECT_EQ(jan.upper, utc(2024, 1, 2));
	EXPECT_EQ(window_in(Unit::Year, "UTC", utc(2024, 6, 1)).upper, utc(2025, 1, 1));
	struct Case {
		int y;
		int64_t days;
	} cases[] = {{2023, 365}, {2024, 366}, {2000, 366}, {1900, 365}, {1904, 366}};
	for (const Case &c : cases) {
		Window w = window_in(Unit::Year, "UTC", utc(c.y, 7, 1));
		EXPECT_EQ(w.lower, utc(c.y, 1, 1)) << c.y;
		EXPECT_EQ(w.upper - w.lower, c.days * kDay) << c.y;
	}
}

TEST(TimeWindowExpr, QuarterWeekDecade) {
	Window q1 = window_in(Unit::Quarter, "UTC", utc(2024, 3, 31, 23));
	EXPECT_EQ(q1.lower, utc(2024, 1, 1));
	EXPECT_EQ(q1.upper, utc(2024, 4, 1));
	EXPECT_EQ(q1.upper - q1.lower, 91 * kDay);
	EXPECT_EQ(window_in(Unit::Quarter, "UTC", utc(2023, 2, 1)).upper - utc(2023, 1, 1), 90 * kDay);
	EXPECT_EQ(window_in(Unit::Quarter, "UTC", utc(2023, 11, 1)).lower, utc(2023, 10, 1));

	Window wed = window_in(Unit::Week, "UTC", utc(2024, 1, 3, 12)); // a Wednesday
	EXPECT_EQ(wed.lower, utc(2024, 1, 1));                          // Monday
	EXPECT_EQ(wed.upper, utc(2024, 1, 8));
	Window sun = window_in(Unit::Week, "UTC", utc(2023, 1, 1, 12)); // a Sunday: ISO week of 2022
	EXPECT_EQ(sun.lower, utc(2022, 12, 26));
	EXPECT_EQ(sun.upper, utc(2023, 1, 2));
	Window spring = window_in(Unit::Week, "America/New_York", utc(2024, 3, 8));
	EXPECT_EQ(spring.lower, utc(2024, 3, 4, 5));
	EXPECT_EQ(spring.upper, utc(2024, 3, 11, 4)); // one hour short

	Window d = window_in(Unit::Decade, "UTC", utc(1995, 6, 1));
	EXPECT_EQ(d.lower, utc(1990, 1, 1));
	EXPECT_EQ(d.upper, 0); // 2000-01-01
	EXPECT_EQ(window_in(Unit::Decade, "UTC", 0).upper, utc(2010, 1, 1));
}

TEST(TimeWindowExpr, NegativeTimes) {
	Window before2000 = window_in(Unit::Day, "UTC", -12 * kHour);
	EXPECT_EQ(before2000.lower, -kDay);
	EXPECT_EQ(before2000.upper, 0);
	Window moon = window_in(Unit::Day, "UTC", utc(1969, 7, 20, 20, 17, 40));
	EXPECT_EQ(moon.lower, utc(1969, 7, 20));
	EXPECT_EQ(moon.upper, utc(1969, 7, 21));
	EXPECT_LT(moon.lower, utc(1970, 1, 1));
	Window berlin = window_in(Unit::Month, "Europe/Berlin", utc(1960, 2, 10));
	EXPECT_EQ(berlin.lower, utc(1960, 1, 31, 23));
	EXPECT_EQ(berlin.upper, utc(1960, 2, 29, 23));
	Window sec = window_in(Unit::Second, "UTC", -1); // floor, not towards zero
	EXPECT_EQ(sec.lower, -kSec);
	EXPECT_EQ(sec.upper, 0);
	Window min = window_in(Unit::Minute, "UTC", utc(1969, 12, 31, 23, 59, 59) + 1);
	EXPECT_EQ(min.lower, utc(1969, 12, 31, 23, 59));
	EXPECT_EQ(min.upper, utc(1970, 1, 1));
}

// --- Fixed strides (date_bin) -------------------------------------------------

TEST(TimeWindowExpr, DateBinFloorsBeforeOrigin) {
	BinCalendar cal(kHour, 0);
	TimeWindowExpr expr = TimeWindowExpr::fixed(kHour, &cal);
	EXPECT_TRUE(expr.is_fixed());
	EXPECT_EQ(expr.nominal_size(), kHour);
	Window w = expr.window_of(-1);
	EXPECT_EQ(w.lower, -kHour);
	EXPECT_EQ(w.upper, 0);
	w = expr.window_of(utc(1969, 7, 20, 20, 17, 40));
	EXPECT_EQ(w.lower, utc(1969, 7, 20, 20));
	EXPECT_EQ(w.upper, utc(1969, 7, 20, 21));
}

TEST(TimeWindowExpr, SubSecondStrides) {
	BinCalendar quarter(250000, 0);
	TimeWindowExpr q = TimeWindowExpr::fixed(250000, &quarter);
	EXPECT_EQ(q.window_of(1234567).lower, 1000000);
	EXPECT_EQ(q.window_of(1234567).upper, 1250000);
	EXPECT_EQ(q.window_of(-1).lower, -250000);
	EXPECT_EQ(q.window_of(-250000).upper, 0);
	uint64_t n = 0;
	EXPECT_EQ(q.advance({0, kSec}, 100, &n), kSec);
	EXPECT_EQ(n, 4u);

	BinCalendar micro(1, 0);
	TimeWindowExpr u = TimeWindowExpr::fixed(1, &micro);
	for (int64_t ts : {FN_TS_MIN, int64_t{-7}, int64_t{0}, int64_t{42}, FN_TS_END - 2}) {
		Window w = u.window_of(ts);
		EXPECT_EQ(w.lower, ts);
		EXPECT_EQ(w.upper, ts + 1);
	}
	EXPECT_EQ(u.window_of(FN_TS_END - 1).lower, FN_TS_END - 1); // the last window
	EXPECT_EQ(u.window_of(FN_TS_END - 1).upper, FN_TS_NOEND);
	EXPECT_EQ(u.advance({10, 20}, 3, &n), 13);
	EXPECT_EQ(n, 3u);
}

TEST(TimeWindowExpr, DateBinWithUnalignedOrigin) {
	int64_t origin = utc(2001, 1, 1, 0, 7, 30);
	BinCalendar cal(15 * kMin, origin);
	TimeWindowExpr expr = TimeWindowExpr::fixed(15 * kMin, &cal);
	Window w = expr.window_of(utc(2024, 5, 5, 12));
	EXPECT_EQ(w.lower, utc(2024, 5, 5, 11, 52, 30));
	EXPECT_EQ(w.upper, utc(2024, 5, 5, 12, 7, 30));
	w = expr.window_of(origin - 1);
	EXPECT_EQ(w.lower, origin - 15 * kMin);
	EXPECT_EQ(w.upper, origin);
	w = expr.window_of(utc(1990, 1, 1)); // well before the origin
	EXPECT_EQ(w.lower, utc(1989, 12, 31, 23, 52, 30));
}

// --- Cache ----------------------------------------------------------------------

TEST(TimeWindowExpr, CacheSkipsCalendarCalls) {
	BinCalendar bin(kHour, 0);
	TimeWindowExpr fixed = TimeWindowExpr::fixed(kHour, &bin);
	Window w;
	EXPECT_FALSE(fixed.cached(10, &w));
	fixed.window_of(10);
	EXPECT_EQ(bin.truncates, 1);
	EXPECT_EQ(fixed.window_of(kHour - 1).lower, 0);
	EXPECT_EQ(bin.truncates, 1);
	EXPECT_TRUE(fixed.cached(0, &w));
	EXPECT_EQ(w.upper, kHour);
	EXPECT_FALSE(fixed.cached(kHour, &w));
	EXPECT_FALSE(fixed.cached(-1, &w));
	// the next window follows from the first one the calendar gave: no call
	EXPECT_EQ(fixed.window_of(kHour).lower, kHour);
	EXPECT_EQ(bin.truncates, 1);
	fixed.forget();
	EXPECT_FALSE(fixed.cached(kHour, &w));
	EXPECT_EQ(fixed.window_of(-kHour).lower, -kHour);
	EXPECT_EQ(bin.truncates, 1);
	EXPECT_EQ(bin.steps, 0); // a fixed stride never steps

	TruncCalendar month(Unit::Month, "UTC");
	TimeWindowExpr cal = TimeWindowExpr::calendar(30 * kDay, &month);
	EXPECT_FALSE(cal.is_fixed());
	EXPECT_EQ(cal.nominal_size(), 30 * kDay);
	cal.window_of(utc(2024, 2, 3));
	EXPECT_EQ(month.truncates, 2);
	EXPECT_EQ(month.steps, 1);
	EXPECT_EQ(cal.window_of(utc(2024, 2, 29, 23)).lower, utc(2024, 2, 1));
	EXPECT_EQ(month.truncates, 2);
	EXPECT_EQ(month.steps, 1);
}

TEST(TimeWindowExpr, MemoRemembersCalendarWindows) {
	TruncCalendar day(Unit::Day, "Europe/Berlin");
	std::vector<Window> memo(TimeWindowExpr::memo_slots_for(kDay));
	TimeWindowExpr cal = TimeWindowExpr::calendar(kDay, &day, memo.data(), memo.size());
	std::vector<Window> first;
	for (int d = 0; d < 60; d++) // two months of days, DST change included
		first.push_back(cal.window_of(utc(2024, 3, 1) + d * kDay + 7 * kHour));
	int truncates = day.truncates, steps = day.steps;
	for (int d = 59; d >= 0; d -= 3) { // again, out of order and at other hours
		Window w = cal.window_of(utc(2024, 3, 1) + d * kDay + 15 * kHour);
		EXPECT_EQ(w.lower, first[d].lower) << "day " << d;
		EXPECT_EQ(w.upper, first[d].upper) << "day " << d;
	}
	EXPECT_EQ(day.truncates, truncates);
	EXPECT_EQ(day.steps, steps);
}

TEST(TimeWindowExpr, MemoSizeFollowsTheUnit) {
	EXPECT_EQ(TimeWindowExpr::memo_slots_for(kMin), TimeWindowExpr::kMaxMemoSlots);
	EXPECT_EQ(TimeWindowExpr::memo_slots_for(kHour), TimeWindowExpr::kMaxMemoSlots);
	EXPECT_EQ(TimeWindowExpr::memo_slots_for(kDay), 1024u);
	EXPECT_EQ(TimeWindowExpr::memo_slots_for(30 * kDay), 64u);
	EXPECT_EQ(TimeWindowExpr::memo_slots_for(365 * kDay), 64u);
	EXPECT_EQ(TimeWindowExpr::memo_slots_for(0), 64u);
}

TEST(TimeWindowExpr, MemoHoldsAYearOfHours) {
	// Rows scattered over a year of hour windows: once every hour has been met, no
	// row calls the calendar again (consecutive hours take consecutive slots).
	TruncCalendar hour(Unit::Hour, "America/New_York");
	std::vector<Window> memo(TimeWindowExpr::memo_slots_for(kHour));
	TimeWindowExpr expr = TimeWindowExpr::calendar(kHour, &hour, memo.data(), memo.size());
	const int64_t lo = utc(2024, 1, 1), hours = 366 * 24;
	for (int64_t h = 0; h < hours; h++)
		expr.window_of(lo + h * kHour + 30 * kMin);
	int calls = hour.truncates + hour.steps;
	std::mt19937_64 rng(2024);
	std::uniform_int_distribution<int64_t> pick(lo, lo + hours * kHour - 1);
	TruncCalendar check(Unit::Hour, "America/New_York");
	TimeWindowExpr plain = TimeWindowExpr::calendar(kHour, &check);
	for (int i = 0; i < 20000; i++) {
		int64_t ts = pick(rng);
		Window w = expr.window_of(ts), want = plain.window_of(ts);
		ASSERT_EQ(w.lower, want.lower) << ts;
		ASSERT_EQ(w.upper, want.upper) << ts;
	}
	EXPECT_EQ(hour.truncates + hour.steps, calls);
}

TEST(TimeWindowExpr, FixedStrideAsksTheCalendarOnce) {
	const int64_t origin = utc(2001, 1, 1, 0, 7, 30) + 123;
	BinCalendar cal(15 * kMin, origin), check(15 * kMin, origin);
	TimeWindowExpr expr = TimeWindowExpr::fixed(15 * kMin, &cal);
	std::mt19937_64 rng(15);
	std::uniform_int_distribution<int64_t> pick(utc(1901, 1, 1), utc(2100, 1, 1));
	for (int i = 0; i < 20000; i++) {
		int64_t ts = pick(rng);
		Window w = expr.window_of(ts);
		ASSERT_EQ(w.lower, check.truncate(ts)) << ts;
		ASSERT_EQ(w.upper, w.lower + 15 * kMin) << ts;
	}
	EXPECT_EQ(cal.truncates, 1);
	EXPECT_EQ(cal.steps, 0);
}

TEST(TimeWindowExpr, FixedStrideFarFromTheAnchorIsArithmetic) {
	BinCalendar cal(kMin, 0);
	TimeWindowExpr expr = TimeWindowExpr::fixed(kMin, &cal);
	EXPECT_EQ(expr.window_of(90 * kSec).lower, kMin);
	EXPECT_EQ(cal.truncates, 1);
	// 2^61 microseconds (about 73,000 years) away, and the ends of the range: exact,
	// from the anchor, without the calendar
	int64_t far = (int64_t(1) << 61) + 5;
	EXPECT_EQ(expr.window_of(far).lower, far - far % kMin);
	EXPECT_EQ(expr.window_of(-far / 16).lower, -far / 16 - (kMin + (-far / 16) % kMin));
	EXPECT_EQ(expr.window_of(FN_TS_END - 1).lower, FN_TS_END - kMin);
	EXPECT_EQ(expr.window_of(FN_TS_MIN).lower, FN_TS_MIN);
	EXPECT_EQ(expr.window_of(FN_TS_MIN).upper, FN_TS_MIN + kMin);
	EXPECT_EQ(cal.truncates, 1);
}

TEST(TimeWindowExpr, NoAnchorFromACalendarWiderThanTheStride) {
	// date_bin bins of 100 but a stride of 10 (a broken calendar): every window is
	// asked for, none is inferred from another.
	BinCalendar cal(100, 0);
	TimeWindowExpr expr = TimeWindowExpr::fixed(10, &cal);
	EXPECT_EQ(expr.window_of(55).lower, 0);
	EXPECT_EQ(expr.window_of(255).lower, 200);
	EXPECT_EQ(cal.truncates, 2);
}

// --- advance --------------------------------------------------------------------

TEST(TimeWindowExpr, AdvanceFixed) {
	BinCalendar cal(10, 0);
	TimeWindowExpr expr = TimeWindowExpr::fixed(10, &cal);
	uint64_t n = 99;
	EXPECT_EQ(expr.advance({0, 100}, 3, &n), 30);
	EXPECT_EQ(n, 3u);
	EXPECT_EQ(expr.advance({0, 100}, 10, &n), 100);
	EXPECT_EQ(n, 10u);
	EXPECT_EQ(expr.advance({0, 100}, 20, &n), 100);
	EXPECT_EQ(n, 10u);
	EXPECT_EQ(expr.advance({0, 95}, 100, &n), 95); // the last window is cut at r.end
	EXPECT_EQ(n, 10u);
	EXPECT_EQ(expr.advance({0, 95}, 9, &n), 90);
	EXPECT_EQ(n, 9u);
	EXPECT_EQ(expr.advance({-50, -20}, 2, &n), -30);
	EXPECT_EQ(n, 2u);
	EXPECT_EQ(expr.advance({0, 100}, 0, &n), 0);
	EXPECT_EQ(n, 0u);
	EXPECT_EQ(expr.advance({40, 40}, 5, &n), 40);
	EXPECT_EQ(n, 0u);
	EXPECT_EQ(cal.truncates + cal.steps, 0); // pure arithmetic
}

TEST(TimeWindowExpr, AdvanceFixedWithoutOverflow) {
	// Every timestamp: [FN_TS_MIN, FN_TS_NOEND) spans 2^63 + 2.1e17 microseconds, more
	// than an int64 difference holds.
	const FnTimeRange all{FN_TS_MIN, FN_TS_NOEND};
	const uint64_t span = static_cast<uint64_t>(FN_TS_END) - static_cast<uint64_t>(FN_TS_MIN);
	BinCalendar one(1, 0);
	TimeWindowExpr unit = TimeWindowExpr::fixed(1, &one);
	uint64_t n = 0;
	EXPECT_EQ(unit.advance(all, UINT64_MAX, &n), FN_TS_NOEND);
	EXPECT_EQ(n, span); // one window per timestamp
	EXPECT_EQ(unit.advance(all, 5, &n), FN_TS_MIN + 5);
	EXPECT_EQ(n, 5u);

	BinCalendar seven(7, 0);
	TimeWindowExpr wide = TimeWindowExpr::fixed(7, &seven);
	EXPECT_EQ(wide.advance(all, UINT64_MAX, &n), FN_TS_NOEND);
	// from the window of FN_TS_MIN (starting before it: 0 is the grid) to that of the
	// largest timestamp
	EXPECT_EQ(n, static_cast<uint64_t>(floor_div(FN_TS_END - 1, 7) - floor_div(FN_TS_MIN, 7) + 1));
	EXPECT_EQ(wide.advance({FN_TS_END - 20, FN_TS_NOEND}, UINT64_MAX, &n), FN_TS_NOEND);
	EXPECT_EQ(n, static_cast<uint64_t>(floor_div(FN_TS_END - 1, 7) - floor_div(FN_TS_END - 20, 7) + 1));

	BinCalendar huge(INT64_MAX / 2, 0);
	TimeWindowExpr big = TimeWindowExpr::fixed(INT64_MAX / 2, &huge);
	// [MIN, 0), [0, INT64_MAX / 2), [INT64_MAX / 2, NOEND): its upper bound would be
	// past the largest timestamp
	EXPECT_EQ(big.advance(all, 2, &n), INT64_MAX / 2);
	EXPECT_EQ(n, 2u);
	EXPECT_EQ(big.advance(all, 100, &n), FN_TS_NOEND);
	EXPECT_EQ(n, 3u);
}

TEST(TimeWindowExpr, AdvanceCalendar) {
	TruncCalendar cal(Unit::Month, "UTC");
	TimeWindowExpr expr = TimeWindowExpr::calendar(30 * kDay, &cal);
	FnTimeRange half{utc(2024, 1, 1), utc(2024, 7, 1)};
	uint64_t n = 0;
	EXPECT_EQ(expr.advance(half, 4, &n), utc(2024, 5, 1));
	EXPECT_EQ(n, 4u);
	EXPECT_EQ(expr.advance(half, 6, &n), utc(2024, 7, 1));
	EXPECT_EQ(n, 6u);
	EXPECT_EQ(expr.advance(half, 100, &n), utc(2024, 7, 1));
	EXPECT_EQ(n, 6u);
	FnTimeRange ragged{utc(2024, 1, 1), utc(2024, 6, 15)};
	EXPECT_EQ(expr.advance(ragged, 100, &n), utc(2024, 6, 15));
	EXPECT_EQ(n, 6u);
	EXPECT_EQ(expr.advance(ragged, 5, &n), utc(2024, 6, 1));
	EXPECT_EQ(n, 5u);
	int calls = cal.truncates + cal.steps;
	EXPECT_EQ(expr.advance(half, 0, &n), half.start);
	EXPECT_EQ(n, 0u);
	EXPECT_EQ(cal.truncates + cal.steps, calls);

	TruncCalendar day(Unit::Day, "America/New_York");
	TimeWindowExpr days = TimeWindowExpr::calendar(kDay, &day);
	FnTimeRange dst{utc(2024, 3, 9, 5), utc(2024, 3, 12, 4)};
	EXPECT_EQ(days.advance(dst, 1, &n), utc(2024, 3, 10, 5));
	EXPECT_EQ(days.advance(dst, 2, &n), utc(2024, 3, 11, 4)); // after a 23-hour day
	EXPECT_EQ(days.advance(dst, 9, &n), dst.end);
	EXPECT_EQ(n, 3u);
}

// --- Range errors and odd calendars ------------------------------------------------

TEST(TimeWindowExpr, FixedNearInt64MaxDoesNotThrow) {
	BinCalendar cal(1000, 0);
	TimeWindowExpr expr = TimeWindowExpr::fixed(1000, &cal);
	Window w = expr.window_of(INT64_MAX - 1); // past the largest timestamp: the last window
	EXPECT_EQ(w.lower, FN_TS_END - 1000);
	EXPECT_EQ(w.upper, FN_TS_NOEND);
	EXPECT_EQ(expr.upper_of(FN_TS_END - 1000), FN_TS_NOEND);
	EXPECT_EQ(expr.upper_of(FN_TS_END - 2000), FN_TS_END - 1000);
	EXPECT_EQ(expr.window_of(1500).lower, 1000);

	TruncCalendar year(Unit::Year, "UTC");
	TimeWindowExpr years = TimeWindowExpr::calendar(365 * kDay, &year);
	EXPECT_EQ(years.window_of(INT64_MAX - 1).lower, utc(294276, 1, 1));
	EXPECT_EQ(years.window_of(INT64_MAX - 1).upper, FN_TS_NOEND);
}

// Days of fixed length whose step lands only a quarter of a day ahead.
class ShortStepCalendar : public WindowCalendar {
  public:
	int64_t truncate(int64_t ts) override { return ts - ((ts % kDay) + kDay) % kDay; }
	int64_t step(int64_t lower) override {
		steps++;
		return lower + stride;
	}
	int64_t stride = kDay / 4;
	int steps = 0;
};

TEST(TimeWindowExpr, CalendarStepInsideWindowStepsAgain) {
	ShortStepCalendar cal;
	TimeWindowExpr expr = TimeWindowExpr::calendar(kDay, &cal);
	EXPECT_EQ(expr.upper_of(0), kDay);
	EXPECT_EQ(cal.steps, 4);
	Window w = expr.window_of(-1);
	EXPECT_EQ(w.lower, -kDay);
	EXPECT_EQ(w.upper, 0);
}

TEST(TimeWindowExpr, CalendarThatNeverStepsThrows) {
	ShortStepCalendar cal;
	cal.stride = 0;
	TimeWindowExpr expr = TimeWindowExpr::calendar(kDay, &cal);
	EXPECT_THROW(expr.upper_of(0), WindowRangeError);
	EXPECT_THROW(expr.window_of(5), WindowRangeError);
}

// A calendar whose window starts after the timestamp it was asked about.
class AheadCalendar : public WindowCalendar {
  public:
	int64_t truncate(int64_t ts) override { return ts + 1; }
	int64_t step(int64_t lower) override { return lower + 10; }
};

TEST(TimeWindowExpr, TruncatePastTimestampThrows) {
	AheadCalendar cal;
	TimeWindowExpr expr = TimeWindowExpr::fixed(10, &cal);
	EXPECT_THROW(expr.window_of(5), WindowRangeError);
	Window w;
	EXPECT_FALSE(expr.cached(5, &w));
}

TEST(TimeWindowExpr, StrideNarrowerThanCalendarWidensWindow) {
	// date_bin bins of 100 but a stride of 10: the window grows until it holds ts.
	BinCalendar cal(100, 0);
	TimeWindowExpr expr = TimeWindowExpr::fixed(10, &cal);
	Window w = expr.window_of(55);
	EXPECT_EQ(w.lower, 0);
	EXPECT_EQ(w.upper, 60);
}

// --- The ends of the timestamp range ------------------------------------------------
// Windows tile [FN_TS_MIN, FN_TS_END): the last ends at FN_TS_NOEND, the first starts at
// FN_TS_MIN; PostgreSQL's own bound there is no timestamp ("timestamp out of range").
// The bounds expected below are PostgreSQL's (sql/time_limits.sql).

int64_t nominal(Unit unit) {
	switch (unit) {
	case Unit::Second:
		return kSec;
	case Unit::Minute:
		return kMin;
	case Unit::Hour:
		return kHour;
	case Unit::Day:
		return kDay;
	case Unit::Week:
		return 7 * kDay;
	case Unit::Month:
		return 31 * kDay;
	case Unit::Quarter:
		return 92 * kDay;
	case Unit::Year:
		return 366 * kDay;
	default:
		return 3660 * kDay;
	}
}

TEST(TimeWindowExprEnds, TheRangeIsPostgresOwn) {
	EXPECT_EQ(utc(-4713, 11, 24), FN_TS_MIN);                     // 4714-11-24 00:00 BC
	EXPECT_EQ(utc(294276, 12, 31, 23, 59, 59) + kSec, FN_TS_END); // 294277-01-01
	EXPECT_THROW(utc(294277, 1, 1), WindowRangeError);
	EXPECT_THROW(to_pg(-210866803200 - 1, 0), WindowRangeError);
	EXPECT_EQ(FN_TS_NOEND, INT64_MAX);
}

TEST(TimeWindowExprEnds, LastCalendarWindowEndsAtInfinity) {
	struct Case {
		Unit unit;
		const char *zone;
		int64_t lower; // of the window holding the largest timestamp
	} cases[] = {
	    {Unit::Second, "UTC", utc(294276, 12, 31, 23, 59, 59)},
	    {Unit::Hour, "UTC", utc(294276, 12, 31, 23)},
	    {Unit::Day, "UTC", utc(294276, 12, 31)},
	    {Unit::Week, "UTC", utc(294276, 12, 25)},
	    {Unit::Month, "UTC", utc(294276, 12, 1)},
	    {Unit::Quarter, "UTC", utc(294276, 10, 1)},
	    {Unit::Year, "UTC", utc(294276, 1, 1)},
	    {Unit::Decade, "UTC", utc(294270, 1, 1)},
	    {Unit::Day, "America/New_York", utc(294276, 12, 31, 5)},
	    {Unit::Year, "America/New_York", utc(294276, 1, 1, 5)},
	    // east of UTC the last local day and year begin before the largest timestamp
	    {Unit::Hour, "Asia/Tokyo", utc(294276, 12, 31, 23)},
	    {Unit::Day, "Asia/Tokyo", utc(294276, 12, 31, 15)},
	    {Unit::Year, "Asia/Tokyo", utc(294276, 12, 31, 15)},
	    {Unit::Month, "Asia/Kathmandu", utc(294276, 12, 31, 18, 15)},
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(testing::Message() << c.zone << " unit " << static_cast<int>(c.unit));
		TruncCalendar cal(c.unit, c.zone);
		TimeWindowExpr expr = TimeWindowExpr::calendar(nominal(c.unit), &cal);
		Window w = expr.window_of(FN_TS_END - 1);
		EXPECT_EQ(w.lower, c.lower);
		EXPECT_EQ(w.upper, FN_TS_NOEND);
		EXPECT_EQ(expr.upper_of(c.lower), FN_TS_NOEND);
		expr.forget();
		EXPECT_EQ(expr.window_of(c.lower).upper, FN_TS_NOEND);
		Window before = expr.window_of(c.lower - 1); // ends where the last one starts
		EXPECT_EQ(before.upper, c.lower);
		EXPECT_LT(before.lower, before.upper);
	}
}

TEST(TimeWindowExprEnds, FirstCalendarWindowStartsAtTheSmallestTimestamp) {
	struct Case {
		Unit unit;
		const char *zone;
		int64_t upper; // of the window holding the smallest timestamp
	} cases[] = {
	    // the smallest timestamp is a Monday midnight: PostgreSQL's own windows
	    {Unit::Hour, "UTC", utc(-4713, 11, 24, 1)},
	    {Unit::Day, "UTC", utc(-4713, 11, 25)},
	    {Unit::Week, "UTC", utc(-4713, 12, 1)},
	    // those whose lower bound would be before it
	    {Unit::Month, "UTC", utc(-4713, 12, 1)},
	    {Unit::Quarter, "UTC", utc(-4712, 1, 1)},
	    {Unit::Year, "UTC", utc(-4712, 1, 1)},
	    {Unit::Hour, "America/New_York", utc(-4713, 11, 24, 0, 56, 2)}, // local mean time, -4:56:02
	    {Unit::Day, "America/New_York", utc(-4713, 11, 24, 4, 56, 2)},
	    {Unit::Week, "America/New_York", utc(-4713, 11, 24, 4, 56, 2)},
	    {Unit::Week, "Asia/Tokyo", utc(-4713, 11, 30, 14, 41, 1)},
	    {Unit::Month, "Europe/Berlin", utc(-4713, 11, 30, 23, 6, 32)},
	    {Unit::Year, "Asia/Kathmandu", utc(-4713, 12, 31, 18, 18, 44)},
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(testing::Message() << c.zone << " unit " << static_cast<int>(c.unit));
		TruncCalendar cal(c.unit, c.zone);
		TimeWindowExpr expr = TimeWindowExpr::calendar(nominal(c.unit), &cal);
		Window w = expr.window_of(FN_TS_MIN);
		EXPECT_EQ(w.lower, FN_TS_MIN);
		EXPECT_EQ(w.upper, c.upper);
		EXPECT_EQ(expr.upper_of(FN_TS_MIN), c.upper);
		expr.forget();
		EXPECT_EQ(expr.window_of(c.upper - 1).lower, FN_TS_MIN); // the same window from its end
		EXPECT_EQ(expr.window_of(c.upper).lower, c.upper);       // and the next one after it
		EXPECT_EQ(expr.window_of(INT64_MIN).lower, FN_TS_MIN);   // before the range: the first
	}
}

TEST(TimeWindowExprEnds, CalendarWindowsTileTheEnds) {
	const Unit units[] = {Unit::Second, Unit::Minute, Unit::Hour,    Unit::Day,
	                      Unit::Week,   Unit::Month,  Unit::Quarter, Unit::Year};
	for (const char *zone : {"UTC", "America/New_York", "Asia/Tokyo", "Asia/Kathmandu"}) {
		for (Unit unit : units) {
			SCOPED_TRACE(testing::Message() << zone << " unit " << static_cast<int>(unit));
			TruncCalendar cal(unit, zone);
			TimeWindowExpr expr = TimeWindowExpr::calendar(nominal(unit), &cal);
			// from the first window on, and up to the last: each window starts where
			// the one before ended, and holds its own bounds
			for (int64_t from : {FN_TS_MIN, FN_TS_END - 40 * nominal(unit)}) {
				Window w = expr.window_of(from);
				int i = 0;
				for (; i < 60 && w.upper != FN_TS_NOEND; i++) {
					Window next = expr.window_of(w.upper);
					ASSERT_EQ(next.lower, w.upper);
					ASSERT_EQ(expr.window_of(w.upper - 1).lower, w.lower);
					ASSERT_EQ(expr.upper_of(w.lower), w.upper);
					w = next;
				}
				if (from != FN_TS_MIN) {
					ASSERT_EQ(w.upper, FN_TS_NOEND);
					ASSERT_EQ(expr.window_of(FN_TS_END - 1).lower, w.lower);
				}
			}
		}
	}
}

TEST(TimeWindowExprEnds, FixedStrideWindowsAtTheEnds) {
	// date_bin('7 days', ts, '2000-01-02'): weeks from Sunday; the smallest timestamp
	// is a Monday, so its bin would start the day before it
	const int64_t origin = utc(2000, 1, 2);
	BinCalendar cal(7 * kDay, origin);
	EXPECT_THROW(cal.truncate(FN_TS_MIN), WindowRangeError);
	const int64_t last_lower = cal.truncate(FN_TS_END - 1);
	for (TimeWindowExpr expr :
	     {TimeWindowExpr::fixed(7 * kDay, &cal), TimeWindowExpr::fixed_at(7 * kDay, origin, &cal)}) {
		Window first = expr.window_of(FN_TS_MIN);
		EXPECT_EQ(first.lower, FN_TS_MIN);
		EXPECT_EQ(first.upper, FN_TS_MIN + 6 * kDay);
		EXPECT_EQ(expr.upper_of(FN_TS_MIN), first.upper);
		EXPECT_EQ(expr.window_of(first.upper).lower, first.upper);
		Window last = expr.window_of(FN_TS_END - 1);
		EXPECT_EQ(last.lower, last_lower);
		EXPECT_EQ(last.upper, FN_TS_NOEND);
		EXPECT_EQ(expr.upper_of(last_lower), FN_TS_NOEND);
		EXPECT_EQ(expr.window_of(last_lower - 1).upper, last_lower);
	}
	// A grid learnt from the first window asked for, or, when that is out of range,
	// from 2000-01-01's window.
	BinCalendar fresh(7 * kDay, origin);
	TimeWindowExpr learnt = TimeWindowExpr::fixed(7 * kDay, &fresh);
	EXPECT_EQ(learnt.window_of(FN_TS_MIN).upper, FN_TS_MIN + 6 * kDay);
	EXPECT_EQ(fresh.truncates, 2);
	int64_t anchor = 0, stride = 0;
	ASSERT_TRUE(learnt.stride_anchor(&anchor, &stride));
	EXPECT_EQ(anchor, utc(1999, 12, 26));
	EXPECT_EQ(learnt.window_of(utc(2024, 1, 1)).lower, utc(2023, 12, 31));
	EXPECT_EQ(fresh.truncates, 2);
}

TEST(TimeWindowExprEnds, DateBinFarFromItsOrigin) {
	// date_bin('1 day', ts, '294276-12-31 12:00'): PostgreSQL's date_bin fails for rows
	// more than 2^63 microseconds (292,277 years) from the origin ("interval out of
	// range"); their windows are still known, on the origin's grid
	const int64_t origin = utc(294276, 12, 31, 12);
	BinCalendar cal(kDay, origin);
	TimeWindowExpr expr = TimeWindowExpr::fixed_at(kDay, origin, &cal);
	EXPECT_THROW(cal.truncate(utc(1, 6, 1)), WindowRangeError);
	Window w = expr.window_of(utc(1, 6, 1, 13));
	EXPECT_EQ(w.lower, utc(1, 6, 1, 12));
	EXPECT_EQ(w.upper, utc(1, 6, 2, 12));
	w = expr.window_of(FN_TS_MIN);
	EXPECT_EQ(w.lower, FN_TS_MIN);
	EXPECT_EQ(w.upper, FN_TS_MIN + 12 * kHour);
	w = expr.window_of(FN_TS_END - 1);
	EXPECT_EQ(w.lower, origin);
	EXPECT_EQ(w.upper, FN_TS_NOEND);
	uint64_t n = 0;
	EXPECT_EQ(expr.advance({FN_TS_MIN, FN_TS_NOEND}, 2, &n), FN_TS_MIN + 36 * kHour);
	EXPECT_EQ(n, 2u);
	EXPECT_EQ(cal.truncates, 1); // only the EXPECT_THROW above: the grid needs no calendar
}

TEST(TimeWindowExprEnds, AdvanceAtTheEnds) {
	uint64_t n = 0;
	TruncCalendar month(Unit::Month, "UTC");
	TimeWindowExpr months = TimeWindowExpr::calendar(30 * kDay, &month);
	const FnTimeRange last{utc(294276, 10, 1), FN_TS_NOEND}; // October to December
	EXPECT_EQ(months.advance(last, 100, &n), FN_TS_NOEND);
	EXPECT_EQ(n, 3u);
	EXPECT_EQ(months.advance(last, 2, &n), utc(294276, 12, 1));
	EXPECT_EQ(n, 2u);
	const FnTimeRange first{FN_TS_MIN, utc(-4712, 2, 1)}; // November (from the 24th) to January
	EXPECT_EQ(months.advance(first, 100, &n), first.end);
	EXPECT_EQ(n, 3u);
	EXPECT_EQ(months.advance(first, 1, &n), utc(-4713, 12, 1));
	EXPECT_EQ(n, 1u);
	EXPECT_EQ(months.advance({FN_TS_MIN, FN_TS_NOEND}, 10, &n), utc(-4712, 9, 1));
	EXPECT_EQ(n, 10u);
	// a range lying wholly past the largest timestamp (only a range's end can be
	// there): one window, taken whole
	EXPECT_EQ(months.advance({FN_TS_END, FN_TS_NOEND}, 5, &n), FN_TS_NOEND);
	EXPECT_EQ(n, 1u);
	EXPECT_EQ(months.advance({FN_TS_END + 10, FN_TS_END + 20}, 5, &n), FN_TS_END + 20);
	EXPECT_EQ(n, 1u);

	BinCalendar days(kDay, 0);
	TimeWindowExpr fixed = TimeWindowExpr::fixed(kDay, &days);
	EXPECT_EQ(fixed.advance({FN_TS_END - 3 * kDay, FN_TS_NOEND}, 100, &n), FN_TS_NOEND);
	EXPECT_EQ(n, 3u);
	EXPECT_EQ(fixed.advance({FN_TS_END - 3 * kDay, FN_TS_NOEND}, 1, &n), FN_TS_END - 2 * kDay);
	EXPECT_EQ(n, 1u);
	EXPECT_EQ(fixed.advance({FN_TS_END, FN_TS_NOEND}, 100, &n), FN_TS_NOEND);
	EXPECT_EQ(n, 1u);
	EXPECT_EQ(fixed.advance({FN_TS_MIN, FN_TS_MIN + 3 * kDay}, 2, &n), FN_TS_MIN + 2 * kDay);
	EXPECT_EQ(n, 2u);
	// weeks from a Sunday: the first window is six days, cut on the grid after it
	BinCalendar sundays(7 * kDay, utc(2000, 1, 2));
	TimeWindowExpr weeks = TimeWindowExpr::fixed(7 * kDay, &sundays);
	EXPECT_EQ(weeks.advance({FN_TS_MIN, FN_TS_NOEND}, 2, &n), FN_TS_MIN + 13 * kDay);
	EXPECT_EQ(n, 2u);
	EXPECT_EQ(weeks.advance({FN_TS_MIN, FN_TS_MIN + 20 * kDay}, 100, &n), FN_TS_MIN + 20 * kDay);
	EXPECT_EQ(n, 3u);
}

// The trigger's inline path (fn_stride_window) is exact for any anchor and timestamp,
// near each other or at opposite ends of the range, and clamps at the ends.
TEST(StrideWindowProperty, ExactAndClampedEverywhere) {
	std::mt19937_64 rng(294276);
	std::uniform_int_distribution<int64_t> any_ts(FN_TS_MIN, FN_TS_END - 1);
	std::uniform_int_distribution<int64_t> near(0, 40 * kDay);
	const int64_t strides[] = {1, 7, 250000, kMin, kDay, 7 * kDay, 1000 * 366 * kDay, int64_t(1) << 62};
	for (int i = 0; i < 50000; i++) {
		int64_t anchor = any_ts(rng), stride = strides[i % 8];
		int64_t ts = i % 3 == 0   ? FN_TS_MIN + near(rng)
		             : i % 3 == 1 ? FN_TS_END - 1 - near(rng)
		                          : any_ts(rng);
		SCOPED_TRACE(testing::Message() << "anchor " << anchor << " stride " << stride << " ts " << ts);
		__int128 lo = anchor + floor_div128(static_cast<__int128>(ts) - anchor, stride) * stride;
		__int128 hi = lo + stride;
		FnTimeRange w = fn_stride_window(anchor, stride, ts);
		ASSERT_EQ(w.start, lo < FN_TS_MIN ? FN_TS_MIN : static_cast<int64_t>(lo));
		ASSERT_EQ(w.end, hi >= FN_TS_END ? FN_TS_NOEND : static_cast<int64_t>(hi));
		ASSERT_LE(w.start, ts);
		ASSERT_LT(ts, w.end);
	}
	// times outside the range: the nearest end's window
	EXPECT_EQ(fn_stride_window(0, kDay, INT64_MAX - 1).start, FN_TS_END - kDay);
	EXPECT_EQ(fn_stride_window(0, kDay, INT64_MAX - 1).end, FN_TS_NOEND);
	EXPECT_EQ(fn_stride_window(0, kDay, INT64_MIN).start, FN_TS_MIN);
	EXPECT_EQ(fn_stride_window(0, kDay, INT64_MIN).end, FN_TS_MIN + kDay);
}

// --- Property ---------------------------------------------------------------------

void check_windows(WindowCalendar &cal, TimeWindowExpr expr, std::mt19937_64 &rng, int64_t lo, int64_t hi,
                   int samples) {
	std::uniform_int_distribution<int64_t> pick(lo, hi);
	TimeWindowExpr again = expr;
	for (int i = 0; i < samples; i++) {
		int64_t ts = pick(rng);
		SCOPED_TRACE(testing::Message() << "ts " << ts);
		Window w = expr.window_of(ts);
		ASSERT_LE(w.lower, ts);
		ASSERT_LT(ts, w.upper);
		// a bound at an end of the range is no timestamp PostgreSQL would give
		if (w.upper != FN_TS_NOEND) {
			ASSERT_EQ(cal.truncate(w.upper), w.upper);
		}
		if (w.lower != FN_TS_MIN) {
			ASSERT_EQ(cal.truncate(w.lower), w.lower);
		}
		again.forget();
		ASSERT_EQ(again.window_of(w.upper - 1).lower, w.lower);
		ASSERT_EQ(again.window_of(w.upper - 1).upper, w.upper);
	}
}

TEST(TimeWindowExprProperty, CalendarWindowsContainTheirTimestamps) {
	std::mt19937_64 rng(20240310);
	const int64_t lo = utc(1901, 1, 1), hi = utc(2100, 1, 1);
	const std::vector<std::string> zones = {"UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata",
	                                        "Australia/Lord_Howe"};
	const Unit units[] = {Unit::Second, Unit::Minute,  Unit::Hour, Unit::Day,   Unit::Week,
	                      Unit::Month,  Unit::Quarter, Unit::Year, Unit::Decade};
	for (const std::string &zone : zones) {
		for (Unit unit : units) {
			// date_trunc('hour') keeps the offset, so a half-hour DST shift makes
			// overlapping hours that no window scheme can tile.
			if (zone == "Australia/Lord_Howe" && unit <= Unit::Hour)
				continue;
			SCOPED_TRACE(testing::Message() << zone << " unit " << static_cast<int>(unit));
			TruncCalendar cal(unit, zone);
			ASSERT_NO_FATAL_FAILURE(
			    check_windows(cal, TimeWindowExpr::calendar(kDay, &cal), rng, lo, hi, 200));
		}
	}
}

TEST(TimeWindowExprProperty, FixedWindowsContainTheirTimestamps) {
	std::mt19937_64 rng(7);
	const int64_t odd_origin = utc(2001, 1, 1, 0, 7, 30) + 123;
	struct Case {
		int64_t stride, origin;
	} cases[] = {{1, 0}, {250000, 0}, {15 * kMin, odd_origin}, {7 * kDay, utc(2024, 1, 1)}, {3 * kHour, -5}};
	for (const Case &c : cases) {
		SCOPED_TRACE(testing::Message() << "stride " << c.stride << " origin " << c.origin);
		BinCalendar cal(c.stride, c.origin);
		ASSERT_NO_FATAL_FAILURE(
		    check_windows(cal, TimeWindowExpr::fixed(c.stride, &cal), rng, FN_TS_MIN, FN_TS_END - 1, 500));
		ASSERT_NO_FATAL_FAILURE(
		    check_windows(cal, TimeWindowExpr::fixed(c.stride, &cal), rng, -100 * kDay, 100 * kDay, 500));
	}
}

} // namespace
