#include "core/zoned_buckets.hpp"

namespace flownode {

namespace {

// Changes of offset a truncation may have to skip back over: a zone has at most a
// few near one instant.
constexpr int kMaxSkips = 64;

} // namespace

// Takes ts's bucket value; a value near a change is no boundary, so the search goes
// on from before the change (T - shift), or one microsecond earlier when it is
// there already (the bucket starting at the first instant of a repeated hour).
int64_t ZonedBucketCalendar::truncate(int64_t ts) {
	int64_t t = ts;
	for (int i = 0; i < kMaxSkips; i++) {
		int64_t b = rule_->bucket_of(t), at, shift;
		if (!rule_->change_near(b, &at, &shift)) {
			if (b > t)
				throw WindowRangeError("bucket lies after its timestamp away from any change of offset");
			return b;
		}
		int64_t before = at - shift;
		if (before < t)
			t = before;
		else if (t == FN_TS_MIN)
			throw WindowRangeError("no bucket boundary before the first timestamp");
		else
			t = t - 1;
	}
	throw WindowRangeError("too many changes of offset before a bucket boundary");
}

// The next bucket's value is the next boundary, or lies in the window after it
// (a value near a change is inside the merged window there); at least one
// microsecond on, so the walk always advances. A value near a change jumps to the
// last instant of the merged stretch (T + shift - 1): no boundary lies between, and
// buckets far shorter than the shift (250 ms in an hour) would otherwise take
// thousands of steps to cross it.
int64_t ZonedBucketCalendar::step(int64_t lower) {
	int64_t next = rule_->next_bucket(lower), at, shift, last;
	if (next <= lower)
		next = lower + 1;
	if (rule_->change_near(next, &at, &shift) && !__builtin_add_overflow(at, shift - 1, &last) && last > next)
		next = last;
	return next;
}

} // namespace flownode
