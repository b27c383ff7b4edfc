#include "core/time_window_expr.hpp"

#include <algorithm>

namespace flownode {

namespace {

// A calendar that keeps answering inside the same window is broken; give up rather
// than spin.
constexpr int kMaxSteps = 1000;

} // namespace

TimeWindowExpr TimeWindowExpr::fixed(int64_t stride_usec, WindowCalendar *calendar) noexcept {
	return TimeWindowExpr(true, stride_usec, calendar, nullptr, 0);
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

bool TimeWindowExpr::from_anchor(int64_t ts, Window *w) const noexcept {
	FnTimeRange r;
	if (!have_anchor_ || !fn_stride_window(anchor_, size_, ts, &r))
		return false;
	w->lower = r.start;
	w->upper = r.end;
	return true;
}

bool TimeWindowExpr::cached(int64_t ts, Window *w) const noexcept {
	if (!have_last_ || ts < last_.lower || ts >= last_.upper)
		return false;
	*w = last_;
	return true;
}

Window TimeWindowExpr::window_of(int64_t ts) {
	Window w;
	if (cached(ts, &w))
		return w;
	if (fixed_ && from_anchor(ts, &w)) {
		last_ = w;
		have_last_ = true;
		return w;
	}
	Window *memo = fixed_ ? nullptr : memo_slot(ts);
	if (memo != nullptr && ts >= memo->lower && ts < memo->upper) {
		last_ = *memo;
		have_last_ = true;
		return last_;
	}
	w.lower = calendar_->truncate(ts);
	if (w.lower > ts)
		throw WindowRangeError("window calendar truncated past the timestamp");
	int64_t one_stride_back;
	if (fixed_ && !__builtin_sub_overflow(ts, size_, &one_stride_back) && w.lower > one_stride_back) {
		// A lower bound within one stride of ts, as date_bin gives: the anchor.
		anchor_ = w.lower;
		have_anchor_ = true;
	}
	w.upper = upper_of(w.lower);
	// A calendar whose truncation disagrees with its step (or with the stride) may
	// leave ts past the first upper bound: widen the window rather than lose ts.
	for (int i = 0; w.upper <= ts; i++) {
		if (i == kMaxSteps)
			throw WindowRangeError("window upper bound does not pass the timestamp");
		w.upper = upper_of(w.upper);
	}
	if (memo != nullptr)
		*memo = w;
	last_ = w;
	have_last_ = true;
	return w;
}

int64_t TimeWindowExpr::upper_of(int64_t lower) {
	if (fixed_) {
		int64_t upper;
		if (__builtin_add_overflow(lower, size_, &upper))
			throw WindowRangeError("window upper bound out of range");
		return upper;
	}
	int64_t point = calendar_->step(lower);
	int64_t upper = calendar_->truncate(point);
	for (int i = 0; upper <= lower; i++) {
		if (i == kMaxSteps)
			throw WindowRangeError("window calendar does not step past its window");
		point = calendar_->step(point);
		upper = calendar_->truncate(point);
	}
	return upper;
}

int64_t TimeWindowExpr::advance(FnTimeRange r, uint64_t max_windows, uint64_t *counted) {
	uint64_t n = 0;
	int64_t pos = r.start;
	if (r.start < r.end && max_windows > 0) {
		if (fixed_) {
			// Span and stride are positive, so the unsigned span is exact and the
			// 128-bit product cannot overflow.
			uint64_t span = static_cast<uint64_t>(r.end) - static_cast<uint64_t>(r.start);
			uint64_t stride = static_cast<uint64_t>(size_);
			n = std::min(span / stride + (span % stride != 0), max_windows);
			__int128 cut = static_cast<__int128>(r.start) + static_cast<__int128>(n) * stride;
			pos = cut < r.end ? static_cast<int64_t>(cut) : r.end;
		} else {
			while (n < max_windows && pos < r.end) {
				pos = upper_of(pos);
				n++;
			}
			pos = std::min(pos, r.end);
		}
	}
	if (counted)
		*counted = n;
	return pos;
}

} // namespace flownode
