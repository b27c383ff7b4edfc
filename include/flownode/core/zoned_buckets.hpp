// ZonedBucketCalendar: the windows of a bucketing computed in local time and
// converted back (time_bucket(w, ts, timezone), date_bin(w, ts AT TIME ZONE z, o)
// AT TIME ZONE z), as a WindowCalendar.
//
// Such a function is not a window function near a change of the zone's UTC offset:
// a bucket starting in a repeated local hour is converted to the later of its two
// instants (rows of the first one lie before their bucket's value), one starting in
// a skipped hour to an instant inside the hour after it. The flow's sink holds the
// query's value, and a refresh recomputes the rows of whole windows and replaces the
// sink rows whose value lies in them, so each window must hold the value of every
// row it holds. The windows are therefore the buckets, except that no window boundary
// lies strictly within `shift` of a change by `shift` (T - shift < b < T + shift):
// the buckets there are merged into one window. Proof sketch (docs/internals.md,
// "Zoned windows"): a boundary b kept is the earliest instant whose local time reaches
// its bucket's start B, every row from b on has a bucket >= B and every earlier row
// one < B; a value differs from that earliest instant only for a bucket starting
// within `shift` of a change, whose value then lies in [T, T + shift), before any
// kept boundary after T - shift.
#pragma once
#include "core/cpp_only.hpp"

#include <cstdint>

#include "core/time_window_expr.hpp"

namespace flownode {

// The bucketing in one zone, as the query computes it (WindowRangeError when a
// bound is no timestamp).
class BucketRule {
  public:
	virtual ~BucketRule() = default;
	// The value of ts's bucket: its local start converted back (may lie after ts
	// near a change of the offset).
	virtual int64_t bucket_of(int64_t ts) = 0;
	// The value of the bucket after ts's.
	virtual int64_t next_bucket(int64_t ts) = 0;
	// Whether a change of the zone's UTC offset at *at, by *shift > 0, lies within
	// shift of t (|t - at| < shift).
	virtual bool change_near(int64_t t, int64_t *at, int64_t *shift) = 0;
};

class ZonedBucketCalendar final : public WindowCalendar {
  public:
	explicit ZonedBucketCalendar(BucketRule *rule) noexcept : rule_(rule) {}
	// The last kept boundary at or before ts.
	int64_t truncate(int64_t ts) override;
	// A point after `lower`, never past the window after lower's.
	int64_t step(int64_t lower) override;

  private:
	BucketRule *rule_;
};

} // namespace flownode
