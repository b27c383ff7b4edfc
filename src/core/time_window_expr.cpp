#include "core/time_window_expr.hpp"

#include <algorithm>

namespace flownode {

namespace {

// A calendar that keeps answering inside the same window is broken; give up rather
// than spin.
constexpr int kMaxSteps = 1000;

// floor(a / b) for b > 0.
__int128 floor_div(__int128 a, int64_t b) noexcept {
	return a / b - (a % b < 0);
}

// A time outside PostgreSQL's range is taken as the nearest timestamp: its window is
// the first or the last (a range's end, FN_TS_NOEND, asks for the last window).
int64_t clamp_ts(int64_t ts) noexcept {
	return std::clamp(ts, FN_TS_MIN, FN_TS_END - 1);
}

} // namespace

TimeWindowExpr TimeWindowExpr::fixed(int64_t stride_usec, WindowCalendar *calendar) noexcept {
	return TimeWindowExpr(true, stride_usec, calendar, nullptr, 0);
}

TimeWindowExpr TimeWindowExpr::fixed_at(int64_t stride_usec, int64_t anchor,
                                        WindowCalendar *calendar) noexcept {
	TimeWindowExpr expr(true, stride_usec, calendar, nullptr, 0);
	expr.anchor_ = anchor;
	expr.have_anchor_ = true;
	return expr;
}

TimeWindowExpr TimeWindowExpr::calendar(int64_t nominal_usec, WindowCalendar *calendar, Window *memo,
                                        uint32_t memo_slots) noexcept {
	return TimeWindowExpr(false, nominal_usec, calendar, memo, memo_slots);
}

uint32_t TimeWindowExpr::memo_slots_for(int64_t nominal_usec) noexcept {
	constexpr int64_t kTwoYears = int64_t(2 * 366) * 24 * 3600 * 1000000;
	if (nominal_usec <= 0)
		return 64;
	int64_t want = kTwoYears / nominal_usec;
	uint32_t slots = 64;
	while (slots < kMaxMemoSlots && slots < want)
		slots *= 2;
	return slots;
}

bool TimeWindowExpr::truncate(int64_t ts, int64_t *lower) {
	try {
		*lower = calendar_->truncate(ts);
		return true;
	} catch (const WindowRangeError &) {
		return false;
	}
}

bool TimeWindowExpr::step(int64_t from, int64_t *point) {
	try {
		*point = calendar_->step(from);
		return true;
	} catch (const WindowRangeError &) {
		return false;
	}
}

bool TimeWindowExpr::cached(int64_t ts, Window *w) const noexcept {
	if (!have_last_ || ts < last_.lower || ts >= last_.upper)
		return false;
	*w = last_;
	return true;
}

Window TimeWindowExpr::window_of(int64_t ts) {
	Window w;
	ts = clamp_ts(ts);
	if (cached(ts, &w))
		return w;
	w = fixed_ ? fixed_window(ts) : calendar_window(ts);
	last_ = w;
	have_last_ = true;
	return w;
}

Window TimeWindowExpr::fixed_window(int64_t ts) {
	int64_t lower = FN_TS_MIN;
	if (!have_anchor_) {
		int64_t back;
		if (!truncate(ts, &lower)) {
			// ts is in the first window, whose lower bound is no timestamp: the grid
			// comes from 2000-01-01's window, which always is one
			int64_t mid;
			lower = FN_TS_MIN;
			if (truncate(0, &mid) && mid <= 0 && mid > -size_) {
				anchor_ = mid;
				have_anchor_ = true;
			}
		} else if (lower <= ts && !__builtin_sub_overflow(ts, size_, &back) && lower > back) {
			// A lower bound within one stride of ts, as date_bin gives: the anchor.
			anchor_ = lower;
			have_anchor_ = true;
		}
	}
	if (have_anchor_) {
		FnTimeRange r = fn_stride_window(anchor_, size_, ts);
		return Window{r.start, r.end};
	}
	// A calendar that disagrees with the stride: each window is asked for.
	if (lower > ts)
		throw WindowRangeError("window calendar truncated past the timestamp");
	Window w{lower, upper_of(lower)};
	// A calendar whose truncation disagrees with the stride may leave ts past the
	// first upper bound: widen the window rather than lose ts.
	for (int i = 0; w.upper <= ts; i++) {
		if (i == kMaxSteps)
			throw WindowRangeError("window upper bound does not pass the timestamp");
		w.upper = upper_of(w.upper);
	}
	FnTimeRange r = fn_window_clamp(w.lower, w.upper);
	return Window{r.start, r.end};
}

Window TimeWindowExpr::calendar_window(int64_t ts) {
	Window *memo = memo_slot(ts);
	if (memo != nullptr && ts >= memo->lower && ts < memo->upper)
		return *memo;
	Window w;
	if (!truncate(ts, &w.lower))
		w.lower = FN_TS_MIN; // its lower bound is before the smallest timestamp: the first window
	else if (w.lower > ts)
		throw WindowRangeError("window calendar truncated past the timestamp");
	w.upper = upper_of(w.lower);
	// A calendar whose truncation disagrees with its step may leave ts past the first
	// upper bound: widen the window rather than lose ts.
	for (int i = 0; w.upper <= ts; i++) {
		if (i == kMaxSteps)
			throw WindowRangeError("window upper bound does not pass the timestamp");
		w.upper = upper_of(w.upper);
	}
	FnTimeRange r = fn_window_clamp(w.lower, w.upper);
	w = Window{r.start, r.end};
	if (memo != nullptr)
		*memo = w;
	return w;
}

int64_t TimeWindowExpr::upper_of(int64_t lower) {
	if (!fixed_)
		return boundary_after(lower);
	if (have_anchor_)
		return fn_stride_window(anchor_, size_, lower).end;
	int64_t upper;
	if (__builtin_add_overflow(lower, size_, &upper))
		return FN_TS_NOEND;
	return fn_window_clamp(lower, upper).end;
}

// A point one unit after `from` lies in the window after from's (from is a boundary,
// or FN_TS_MIN inside the first window); a calendar that steps short, or a point
// still inside the first window (its truncation out of range), steps again. A step
// past the largest timestamp: `from` is in the last window.
int64_t TimeWindowExpr::boundary_after(int64_t from) {
	int64_t point = from;
	for (int i = 0; i < kMaxSteps; i++) {
		int64_t upper;
		if (!step(point, &point) || point >= FN_TS_END)
			return FN_TS_NOEND;
		if (truncate(point, &upper) && upper > from)
			return fn_window_clamp(from, upper).end;
	}
	throw WindowRangeError("window calendar does not step past its window");
}

int64_t TimeWindowExpr::advance(FnTimeRange r, uint64_t max_windows, uint64_t *counted) {
	uint64_t n = 0;
	int64_t pos = r.start;
	if (r.start < r.end && max_windows > 0) {
		// Only windows holding timestamps count: [lo, hi) is r within the range (or
		// its nearest timestamp, for a range lying wholly outside it).
		const int64_t lo = clamp_ts(r.start);
		const int64_t hi = std::max(std::min(r.end, FN_TS_END), lo + 1);
		if (fixed_) {
			if (!have_anchor_ && lo == FN_TS_MIN)
				(void)window_of(FN_TS_MIN); // the first window's lower bound is off the grid
			// Every window holding a timestamp of [lo, hi), from lo's to (hi - 1)'s, on
			// the grid (r.start is a boundary of it); __int128: no overflow anywhere.
			const __int128 grid = have_anchor_ ? anchor_ : r.start;
			const __int128 first = floor_div(lo - grid, size_);
			const __int128 total = floor_div(hi - 1 - grid, size_) - first + 1;
			n = total > static_cast<__int128>(max_windows) ? max_windows : static_cast<uint64_t>(total);
			pos = static_cast<__int128>(n) < total ? static_cast<int64_t>(grid + (first + n) * size_) : r.end;
		} else {
			pos = lo;
			while (n < max_windows && pos < hi) {
				pos = upper_of(pos);
				n++;
			}
			if (pos >= hi)
				pos = r.end;
		}
	}
	if (counted)
		*counted = n;
	return pos;
}

} // namespace flownode
