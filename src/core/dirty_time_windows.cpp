#include "core/dirty_time_windows.hpp"

#include <algorithm>

namespace flownode {

namespace {

// Ranges in the set are non-adjacent, so the true gap is in (0, 2^64): the unsigned
// difference is exact even when the int64 one would overflow.
uint64_t gap(const FnTimeRange &prev, const FnTimeRange &next) noexcept {
	return static_cast<uint64_t>(next.start) - static_cast<uint64_t>(prev.end);
}

// Sets at least this large coalesce in batches (see add()); smaller ones close
// exactly one gap, the smallest, per window that does not fit.
constexpr uint32_t kBatchFrom = 64;
// Gaps looked at to choose the batch's threshold: all of them up to this many, an
// even sample beyond (on the stack: nothing here may allocate).
constexpr uint32_t kGapSample = 1024;

} // namespace

uint64_t DirtyTimeWindows::kth_smallest_gap(uint32_t k) const noexcept {
	uint32_t n = *count_;
	if (n < 2 || k == 0)
		return 0;
	uint32_t ngaps = n - 1;
	k = std::min(k, ngaps);
	uint64_t sample[kGapSample];
	uint32_t stride = (ngaps + kGapSample - 1) / kGapSample;
	uint32_t m = 0;
	for (uint32_t i = 1; i < n && m < kGapSample; i += stride)
		sample[m++] = gap(ranges_[i - 1], ranges_[i]);
	uint32_t q = static_cast<uint32_t>((static_cast<uint64_t>(k) - 1) * m / ngaps);
	std::nth_element(sample, sample + q, sample + m);
	return sample[q];
}

uint64_t DirtyTimeWindows::coalesce_batch(uint32_t k) noexcept {
	uint32_t n = *count_;
	if (n < 2 || k == 0)
		return 0;
	k = std::min(k, n - 1);
	uint64_t threshold = kth_smallest_gap(k);
	uint32_t below = 0;
	for (uint32_t i = 1; i < n; i++)
		below += gap(ranges_[i - 1], ranges_[i]) < threshold;
	// Gaps below the threshold all close; gaps equal to it close first come, first
	// served, up to k in all. The threshold is a gap of the set, so at least one closes.
	uint32_t ties = below < k ? k - below : 0;
	uint32_t out = 0;
	for (uint32_t i = 1; i < n; i++) {
		// ranges_[out] ends where range i - 1 ended: this is range i's own gap
		uint64_t g = gap(ranges_[out], ranges_[i]);
		bool close = g < threshold;
		if (!close && g == threshold && ties > 0) {
			close = true;
			ties--;
		}
		if (close)
			ranges_[out].end = ranges_[i].end;
		else
			ranges_[++out] = ranges_[i];
	}
	*count_ = out + 1;
	return threshold;
}

void DirtyTimeWindows::add(FnTimeRange r) noexcept {
	// Zero capacity breaks the contract and could hold nothing; refuse it rather than
	// recurse below without end.
	if (r.start >= r.end || capacity_ == 0)
		return;
	FnTimeRange *begin = ranges_, *end = ranges_ + *count_;
	// [first, last) are the ranges that overlap or touch r: they all merge with it.
	FnTimeRange *first =
	    std::partition_point(begin, end, [&](const FnTimeRange &x) { return x.end < r.start; });
	FnTimeRange *last =
	    std::partition_point(first, end, [&](const FnTimeRange &x) { return x.start <= r.end; });

	if (first != last) {
		first->start = std::min(first->start, r.start);
		first->end = std::max((last - 1)->end, r.end);
		if (last - first > 1) { // else nothing to close up: the tail stays where it is
			std::copy(last, end, first + 1);
			*count_ -= static_cast<uint32_t>(last - first - 1);
		}
		return;
	}

	if (*count_ == capacity_ && capacity_ >= kBatchFrom) {
		// Full and large: close the set's smallest eighth of gaps at once, then r goes
		// in. One linear pass buys room for capacity/8 more windows, so a stream of
		// scattered windows costs O(1) amortized scans instead of one scan per window
		// (which, in shared memory, would run under the slot's exclusive lock).
		coalesce_batch(capacity_ / 8);
		add(r);
		return;
	}
	if (*count_ == capacity_) {
		// Full: close the smallest gap of the set with r in it, the first one on a tie.
		// The gap across r is wider than either gap to r, so it is never the choice.
		uint32_t pos = static_cast<uint32_t>(first - begin);
		uint64_t before = UINT64_MAX, after = UINT64_MAX;
		for (uint32_t i = 1; i < *count_; i++) {
			if (i < pos)
				before = std::min(before, gap(ranges_[i - 1], ranges_[i]));
			else if (i > pos)
				after = std::min(after, gap(ranges_[i - 1], ranges_[i]));
		}
		uint64_t to_prev = first != begin ? gap(first[-1], r) : UINT64_MAX;
		uint64_t to_next = first != end ? gap(r, *first) : UINT64_MAX;
		uint64_t smallest = std::min({before, to_prev, to_next, after});
		if (before != smallest && to_prev == smallest) {
			first[-1].end = r.end;
		} else if (before != smallest && to_next == smallest) {
			first->start = r.start;
		} else {
			// Frees a slot away from r, so r then goes in on its own.
			coalesce_smallest_gap();
			add(r);
		}
		return;
	}

	std::copy_backward(first, end, end + 1);
	*first = r;
	++*count_;
}

bool DirtyTimeWindows::add_exact(FnTimeRange r) noexcept {
	if (r.start >= r.end)
		return true;
	if (*count_ == capacity_) {
		const FnTimeRange *begin = ranges_, *end = ranges_ + *count_;
		const FnTimeRange *first =
		    std::partition_point(begin, end, [&](const FnTimeRange &x) { return x.end < r.start; });
		if (first == end || first->start > r.end)
			return false; // r touches nothing: only a coalesce would make room
	}
	add(r);
	return true;
}

void DirtyTimeWindows::add_all_exact(const FnTimeRange *rs, uint32_t n) noexcept {
	// One by one, each range shifted the array: a commit of thousands of scattered
	// windows cost O(n * size()) under the slot's lock (a 1,000-row multi-row INSERT
	// scattered over a year spent most of its extra instructions in that memmove).
	// The ranges that fit for certain (as many as the set has room for) merge in one
	// pass; they are the ones add_exact would have added first, one by one. The rest
	// go one by one: while there is room each goes in, and once the set is full only
	// those touching a range of it (cheap: a binary search each).
	if (n > 1 && sorted_disjoint(rs, n)) {
		uint32_t fit = std::min(n, capacity_ - *count_);
		if (fit > 1) {
			merge_sorted(rs, fit);
			rs += fit;
			n -= fit;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		(void)add_exact(rs[i]);
}

void DirtyTimeWindows::add_all(const FnTimeRange *rs, uint32_t n) noexcept {
	if (n > 1 && n < capacity_ && sorted_disjoint(rs, n)) {
		// Another set's ranges: made room for first (the smallest gaps of this set
		// close, as add() would close them one window at a time), then merged in one
		// pass. Adding them one by one shifted the array per range: a transaction of
		// thousands of scattered windows held the slot's lock for O(n * size()).
		// While it does not fit, the set holds at least two ranges (n < capacity), so
		// each pass closes a gap at least.
		while (*count_ + n > capacity_)
			coalesce_batch(*count_ + n - capacity_);
		merge_sorted(rs, n);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		add(rs[i]);
}

bool DirtyTimeWindows::sorted_disjoint(const FnTimeRange *rs, uint32_t n) noexcept {
	for (uint32_t i = 0; i < n; i++)
		if (rs[i].start >= rs[i].end || (i > 0 && rs[i].start <= rs[i - 1].end))
			return false;
	return true;
}

void DirtyTimeWindows::merge_sorted(const FnTimeRange *rs, uint32_t m) noexcept {
	// Merge from the back into ranges_[0, count + m), by start: nothing is
	// overwritten before it is read.
	uint32_t a = *count_, b = m, out = *count_ + m;
	while (b > 0) {
		if (a > 0 && ranges_[a - 1].start > rs[b - 1].start)
			ranges_[--out] = ranges_[--a];
		else
			ranges_[--out] = rs[--b];
	}
	// Sorted by start now; fold overlapping and touching neighbours together.
	uint32_t total = *count_ + m, k = 0;
	for (uint32_t i = 1; i < total; i++) {
		if (ranges_[i].start <= ranges_[k].end)
			ranges_[k].end = std::max(ranges_[k].end, ranges_[i].end);
		else
			ranges_[++k] = ranges_[i];
	}
	*count_ = k + 1;
}

uint64_t DirtyTimeWindows::add_batch(FnTimeRange *rs, uint32_t n) noexcept {
	if (capacity_ == 0)
		return 0;
	// rs sorted and normalized in place: non-empty, disjoint, non-adjacent.
	std::sort(rs, rs + n, [](const FnTimeRange &a, const FnTimeRange &b) { return a.start < b.start; });
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (rs[i].start >= rs[i].end)
			continue;
		if (m > 0 && rs[i].start <= rs[m - 1].end)
			rs[m - 1].end = std::max(rs[m - 1].end, rs[i].end);
		else
			rs[m++] = rs[i];
	}
	if (m == 0)
		return 0;
	merge_sorted(rs, m);
	uint64_t threshold = 0;
	if (*count_ > capacity_) {
		uint32_t room = capacity_ >= kBatchFrom ? capacity_ / 8 : 0;
		threshold = coalesce_batch(*count_ - capacity_ + room);
		while (*count_ > capacity_) // a sampled threshold may close fewer
			threshold = std::max(threshold, coalesce_batch(*count_ - capacity_));
	}
	return threshold;
}

uint64_t DirtyTimeWindows::make_room() noexcept {
	if (*count_ < capacity_)
		return 0;
	return coalesce_batch(std::max<uint32_t>(1, capacity_ / 8));
}

uint64_t DirtyTimeWindows::merge_stage(FnTimeRange *stage, uint32_t n, uint32_t stage_capacity,
                                       uint64_t below) noexcept {
	uint64_t threshold = add_batch(stage, n);
	if (threshold == 0)
		threshold = make_room();
	if (threshold == 0 && below <= 1)
		return 1; // never coalesced: exact, only touching windows join
	// The next full stage merged into this set would close about as many gaps as it
	// brings windows: stage_capacity of size() + stage_capacity gaps, the smallest.
	uint64_t k =
	    static_cast<uint64_t>(*count_) * stage_capacity / (static_cast<uint64_t>(capacity_) + stage_capacity);
	return std::max({threshold, below, kth_smallest_gap(static_cast<uint32_t>(std::max<uint64_t>(k, 1)))});
}

void DirtyTimeWindows::subtract(FnTimeRange r) noexcept {
	if (r.start >= r.end)
		return;
	uint32_t out = 0;
	for (uint32_t i = 0; i < *count_; i++) {
		FnTimeRange x = ranges_[i];
		if (x.end <= r.start || x.start >= r.end) {
			ranges_[out++] = x;
		} else if (x.start < r.start && x.end > r.end) {
			// r lies strictly inside x, the only range it touches.
			if (*count_ == capacity_) {
				ranges_[out++] = x;
			} else {
				std::copy_backward(ranges_ + i + 1, ranges_ + *count_, ranges_ + *count_ + 1);
				ranges_[out++] = FnTimeRange{x.start, r.start};
				ranges_[out++] = FnTimeRange{r.end, x.end};
				++*count_;
				i++;
			}
		} else if (x.start < r.start) {
			ranges_[out++] = FnTimeRange{x.start, r.start};
		} else if (x.end > r.end) {
			ranges_[out++] = FnTimeRange{r.end, x.end};
		}
	}
	*count_ = out;
}

bool DirtyTimeWindows::cut_below(int64_t t) noexcept {
	// Sorted and disjoint, so ends are sorted too: the dropped ranges are a prefix,
	// and only the first range kept can straddle t.
	FnTimeRange *end = ranges_ + *count_;
	FnTimeRange *keep = std::partition_point(ranges_, end, [&](const FnTimeRange &x) { return x.end <= t; });
	uint32_t dropped = static_cast<uint32_t>(keep - ranges_);
	bool cut = keep != end && keep->start < t;

	if (cut)
		keep->start = t;
	std::copy(keep, end, ranges_);
	*count_ -= dropped;
	return dropped > 0 || cut;
}

void DirtyTimeWindows::drop_overlapping(FnTimeRange r) noexcept {
	if (r.start >= r.end)
		return;
	FnTimeRange *end = ranges_ + *count_;
	FnTimeRange *out = std::remove_if(
	    ranges_, end, [&](const FnTimeRange &x) { return x.start < r.end && r.start < x.end; });
	*count_ = static_cast<uint32_t>(out - ranges_);
}

bool DirtyTimeWindows::covers(FnTimeRange r) const noexcept {
	return r.start >= r.end || containing(r) != nullptr;
}

const FnTimeRange *DirtyTimeWindows::containing(FnTimeRange r) const noexcept {
	if (r.start >= r.end)
		return nullptr;
	// Non-adjacent ranges: a fully marked range lies inside a single one.
	const FnTimeRange *begin = ranges_, *end = ranges_ + *count_;
	const FnTimeRange *x =
	    std::partition_point(begin, end, [&](const FnTimeRange &y) { return y.end < r.end; });
	return x != end && x->start <= r.start ? x : nullptr;
}

const FnTimeRange *DirtyTimeWindows::containing(int64_t ts) const noexcept {
	return fn_ranges_containing(ranges_, *count_, ts);
}

void DirtyTimeWindows::coalesce_smallest_gap() noexcept {
	if (*count_ < 2)
		return;
	uint32_t best = 1;
	for (uint32_t i = 2; i < *count_; i++)
		if (gap(ranges_[i - 1], ranges_[i]) < gap(ranges_[best - 1], ranges_[best]))
			best = i;
	ranges_[best - 1].end = ranges_[best].end;
	std::copy(ranges_ + best + 1, ranges_ + *count_, ranges_ + best);
	--*count_;
}

} // namespace flownode
