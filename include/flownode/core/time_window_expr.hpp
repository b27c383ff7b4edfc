// TimeWindowExpr: maps a timestamp to the window [lower, upper) that the flow's
// GROUP BY puts it in, and walks window boundaries. The same object marks dirty
// windows (trigger) and cuts the refresh filter (worker), so both always agree.
//
// Bounds come from the WindowCalendar, which the PostgreSQL shim implements with
// PostgreSQL's own date_bin/date_trunc: they match the user's query exactly. Fixed
// strides (date_bin, whose stride has no months) lie on the grid of one such bound
// (or of date_bin's origin), so they are computed by arithmetic; calendar units
// (month, year, a day across a DST change) are found by truncating a point past the
// window, never assumed fixed.
//
// Timestamps are PostgreSQL's, FN_TS_MIN <= ts < FN_TS_END (a time outside is taken as
// the nearest end), and windows tile that range (fn_window_clamp): the last one ends at
// FN_TS_NOEND, the first starts at FN_TS_MIN. PostgreSQL cannot name either bound
// ("timestamp out of range"), so a calendar's range error there is an answer, not a
// failure: no timestamp's window fails.
#pragma once
#include "core/cpp_only.hpp"

#include <cstdint>
#include <stdexcept>

#include "core/time_range.h"

namespace flownode {

// Thrown by a calendar when the bound it was asked for is no timestamp
// (PostgreSQL's "timestamp out of range"); by the expression only for a calendar that
// contradicts itself.
struct WindowRangeError : std::range_error {
	using std::range_error::range_error;
};

class WindowCalendar {
  public:
	virtual ~WindowCalendar() = default;
	// The lower bound of the window containing ts (PostgreSQL's date_bin/date_trunc);
	// WindowRangeError when that bound is before the smallest timestamp.
	virtual int64_t truncate(int64_t ts) = 0;
	// A timestamp inside the window after the one starting at `lower`: `lower` plus
	// one calendar unit in the flow's local time; WindowRangeError when that is past
	// the largest timestamp. Only used for calendar windows.
	virtual int64_t step(int64_t lower) = 0;
};

struct Window {
	int64_t lower;
	int64_t upper;
	FnTimeRange range() const noexcept { return FnTimeRange{lower, upper}; }
};

class TimeWindowExpr {
  public:
	// date_bin: every window is `stride_usec` wide (> 0). The grid is learnt from the
	// calendar's first window.
	static TimeWindowExpr fixed(int64_t stride_usec, WindowCalendar *calendar) noexcept;
	// The same on a known grid: `anchor` is a window boundary (date_bin's origin), so
	// no window ever needs the calendar.
	static TimeWindowExpr fixed_at(int64_t stride_usec, int64_t anchor, WindowCalendar *calendar) noexcept;
	// date_trunc: windows of variable width; `nominal_usec` is the unit's usual width
	// (a month counts as 30 days), used only for scheduling, never for bounds.
	// `memo` (caller-owned, `memo_slots` zeroed entries, or none) remembers the
	// windows met; memo_slots_for() says how many are worth having.
	static TimeWindowExpr calendar(int64_t nominal_usec, WindowCalendar *calendar, Window *memo = nullptr,
	                               uint32_t memo_slots = 0) noexcept;
	// Memo entries for a calendar unit: enough for two years of its windows (so rows
	// scattered over a year of hours never evict each other: consecutive windows take
	// consecutive slots), at least 64, at most kMaxMemoSlots.
	static uint32_t memo_slots_for(int64_t nominal_usec) noexcept;
	static constexpr uint32_t kMaxMemoSlots = 16384;

	bool is_fixed() const noexcept { return fixed_; }
	// A fixed stride's anchor, once the calendar gave one (see fn_stride_window).
	bool stride_anchor(int64_t *anchor, int64_t *stride) const noexcept {
		if (!fixed_ || !have_anchor_)
			return false;
		*anchor = anchor_;
		*stride = size_;
		return true;
	}
	// The window's size for scheduling (the adaptive sleep).
	int64_t nominal_size() const noexcept { return size_; }

	// The window containing ts. Remembers the last window: consecutive rows usually
	// share one, and then no calendar call is made. A fixed stride asks the calendar
	// once: every other window lies a whole number of strides from that one (date_bin's
	// own definition), so it is found by integer arithmetic, which is exact. Calendar
	// windows (each one costs several calls into PostgreSQL's date functions) are
	// remembered in the direct-mapped memo, so rows scattered over time reuse the
	// windows they met.
	Window window_of(int64_t ts);
	// True (and sets *w) when ts falls in the remembered window.
	bool cached(int64_t ts, Window *w) const noexcept;
	void forget() noexcept { have_last_ = false; }

	// The upper bound of the window starting at the boundary `lower` (FN_TS_NOEND for
	// the last window): for a calendar, the first boundary after `lower`.
	int64_t upper_of(int64_t lower);

	// Walks from the boundary r.start: the boundary after min(max_windows, the
	// number of windows in r) windows, never past r.end. *counted receives how many
	// windows were walked. r.start must be a window boundary (or FN_TS_MIN). Only
	// windows holding timestamps count: a range reaching past the largest one (to
	// FN_TS_NOEND) ends with the last window, and a non-empty range lying wholly
	// outside the timestamp range counts as one window.
	int64_t advance(FnTimeRange r, uint64_t max_windows, uint64_t *counted);

  private:
	TimeWindowExpr(bool fixed, int64_t size, WindowCalendar *calendar, Window *memo, uint32_t slots) noexcept
	    : fixed_(fixed), size_(size), calendar_(calendar), memo_(memo), memo_slots_(memo ? slots : 0) {}

	// Calendar windows met so far, by ts / nominal size; lower == upper: empty.
	Window *memo_slot(int64_t ts) noexcept {
		return memo_slots_ == 0 ? nullptr : &memo_[static_cast<uint64_t>(ts / size_) % memo_slots_];
	}
	Window fixed_window(int64_t ts);
	Window calendar_window(int64_t ts);
	// Learns a fixed stride's grid from the calendar's window of ts, or of 2000-01-01
	// when that one is out of range (the first window: its lower bound is no timestamp).
	void learn_anchor(int64_t ts);
	// The calendar's truncate and step; false when the bound is out of range.
	bool truncate(int64_t ts, int64_t *lower);
	bool step(int64_t from, int64_t *point);
	// The first calendar boundary after `from` (any timestamp), FN_TS_NOEND past the last.
	int64_t boundary_after(int64_t from);

	bool fixed_;
	int64_t size_;
	WindowCalendar *calendar_;
	Window *memo_;
	uint32_t memo_slots_;
	bool have_last_ = false;
	Window last_{0, 0};
	bool have_anchor_ = false; // fixed strides: a lower bound the calendar gave
	int64_t anchor_ = 0;
};

} // namespace flownode
