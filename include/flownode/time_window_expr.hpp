// TimeWindowExpr: maps a timestamp to the window [lower, upper) that the flow's
// GROUP BY puts it in, and walks window boundaries. The same object marks dirty
// windows (trigger) and cuts the refresh filter (worker), so both always agree.
//
// The lower bound always comes from the WindowCalendar, which the PostgreSQL shim
// implements with PostgreSQL's own date_bin/date_trunc: the bounds match the
// user's query exactly. Only fixed strides (date_bin, whose stride has no months)
// are computed as lower + stride; calendar units (month, year, a day across a DST
// change) are found by truncating a point past the window, never assumed fixed.
#pragma once
#include "flownode/cpp_only.hpp"

#include <cstdint>
#include <stdexcept>

#include "flownode/time_range.h"

namespace flownode {

// Thrown when a window bound leaves the representable timestamp range.
struct WindowRangeError : std::range_error {
	using std::range_error::range_error;
};

class WindowCalendar {
  public:
	virtual ~WindowCalendar() = default;
	// The lower bound of the window containing ts (PostgreSQL's date_bin/date_trunc).
	virtual int64_t truncate(int64_t ts) = 0;
	// A timestamp inside the window after the one starting at `lower`: `lower` plus
	// one calendar unit in the flow's local time. Only used for calendar windows.
	virtual int64_t step(int64_t lower) = 0;
};

struct Window {
	int64_t lower;
	int64_t upper;
	FnTimeRange range() const noexcept { return FnTimeRange{lower, upper}; }
};

class TimeWindowExpr {
  public:
	// date_bin: every window is `stride_usec` wide (> 0).
	static TimeWindowExpr fixed(int64_t stride_usec, WindowCalendar *calendar) noexcept;
	// date_trunc: windows of variable width; `nominal_usec` is the unit's usual width
	// (a month counts as 30 days), used only for scheduling, never for bounds.
	static TimeWindowExpr calendar(int64_t nominal_usec, WindowCalendar *calendar) noexcept;

	bool is_fixed() const noexcept { return fixed_; }
	// The window's size for scheduling (the adaptive sleep).
	int64_t nominal_size() const noexcept { return size_; }

	// The window containing ts. Remembers the last window: consecutive rows usually
	// share one, and then no calendar call is made. Calendar windows (each one costs
	// several calls into PostgreSQL's date functions) are also remembered in a small
	// direct-mapped memo, so rows scattered over time reuse the windows they met.
	Window window_of(int64_t ts);
	// True (and sets *w) when ts falls in the remembered window.
	bool cached(int64_t ts, Window *w) const noexcept;
	void forget() noexcept { have_last_ = false; }

	// The upper bound of the window starting at the boundary `lower`.
	int64_t upper_of(int64_t lower);

	// Walks from the boundary r.start: the boundary after min(max_windows, the
	// number of windows in r) windows, never past r.end. *counted receives how many
	// windows were walked. r.start must be a window boundary.
	int64_t advance(FnTimeRange r, uint64_t max_windows, uint64_t *counted);

  private:
	TimeWindowExpr(bool fixed, int64_t size, WindowCalendar *calendar) noexcept
	    : fixed_(fixed), size_(size), calendar_(calendar) {}

	// Calendar windows met so far, by ts / nominal size; lower == upper: empty.
	static constexpr uint32_t kMemoSlots = 512;
	Window *memo_slot(int64_t ts) noexcept { return &memo_[static_cast<uint64_t>(ts / size_) % kMemoSlots]; }

	bool fixed_;
	int64_t size_;
	WindowCalendar *calendar_;
	bool have_last_ = false;
	Window last_{0, 0};
	Window memo_[kMemoSlots] = {};
};

} // namespace flownode
