/*
 * A half-open range of timestamps [start, end) in PostgreSQL's internal unit
 * (microseconds since 2000-01-01, the same int64 for timestamp and timestamptz).
 * Shared by the C shims and the C++ core: it lives in shared memory.
 */
#ifndef FLOWNODE_TIME_RANGE_H
#define FLOWNODE_TIME_RANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct FnTimeRange {
	int64_t start;
	int64_t end;
} FnTimeRange;

/*
 * The index of the first range of a sorted, disjoint array that ends after ts
 * (count if none): the range holding ts if any holds it, else the one after the gap
 * ts lies in. Every row a trigger marks asks this once per group of flows, so it lives here,
 * inlinable from the C trigger path as well as the C++ core
 * (DirtyTimeWindows::containing). Rows scattered over time make the branches of a
 * classic binary search unpredictable: this one halves [base, base + n] around the
 * first range ending after ts with a conditional move instead, as many instructions
 * but no mispredicted branch (marking rows scattered over a year,
 * bench/marking_bench: 54 ns/row with std::partition_point, 15 ns with this).
 */
static inline uint32_t fn_ranges_search(const FnTimeRange *ranges, uint32_t count, int64_t ts) {
	const FnTimeRange *base = ranges;
	uint32_t n = count;

	if (n == 0)
		return 0;
	while (n > 1) {
		uint32_t half = n / 2;

		base = base[half].end <= ts ? base + half : base;
		n -= half;
	}
	return (uint32_t)(base - ranges) + (base->end <= ts);
}

/* The range of a sorted, disjoint array that holds ts, or NULL. */
static inline const FnTimeRange *fn_ranges_containing(const FnTimeRange *ranges, uint32_t count, int64_t ts) {
	uint32_t i = fn_ranges_search(ranges, count, ts);

	return i < count && ranges[i].start <= ts ? ranges + i : NULL;
}

/*
 * Joins w to the nearer of its neighbours in a sorted set of non-adjacent ranges, if
 * the gap between them is below `below`; w lies in the gap before ranges[pos]
 * (pos from fn_ranges_search, w overlapping neither neighbour). Returns whether it
 * did; when w fills the gap between both neighbours, they become one range. A
 * set that had to coalesce (a transaction writing rows scattered over time) passes
 * about the gap that its next merge of a full stage would close
 * (DirtyTimeWindows::merge_stage): joining such a window now is what that merge
 * would do, without staging, sorting and merging it first. With `below` 1 only a
 * window touching a neighbour joins, which claims nothing more than was written.
 * Ranges are unions of whole windows and so is every gap between them, so the set
 * stays one.
 */
static inline bool fn_ranges_absorb(FnTimeRange *ranges, uint32_t *count, uint32_t pos, FnTimeRange w,
                                    uint64_t below) {
	uint32_t n = *count;
	uint64_t to_prev = UINT64_MAX, to_next = UINT64_MAX;

	if ((pos > 0 && ranges[pos - 1].end > w.start) || (pos < n && w.end > ranges[pos].start))
		return false; /* overlaps a neighbour: not what the caller promised; stage it */
	/* unsigned differences: exact for any gap of int64 bounds */
	if (pos > 0)
		to_prev = (uint64_t)w.start - (uint64_t)ranges[pos - 1].end;
	if (pos < n)
		to_next = (uint64_t)ranges[pos].start - (uint64_t)w.end;
	if (to_next < to_prev) {
		if (to_next >= below)
			return false;
		ranges[pos].start = w.start; /* to_prev > 0: it stays apart from the previous one */
		return true;
	}
	if (to_prev >= below || to_prev == UINT64_MAX) /* no previous range either */
		return false;
	ranges[pos - 1].end = w.end;
	if (to_next == 0) { /* w filled the gap: both neighbours become one range */
		ranges[pos - 1].end = ranges[pos].end;
		for (uint32_t i = pos; i + 1 < n; i++)
			ranges[i] = ranges[i + 1];
		*count = n - 1;
	}
	return true;
}

/*
 * A fixed stride (date_bin; date_trunc to at most a week in a fixed-offset zone):
 * the window of ts lies a whole number of strides from an anchor, a window's lower
 * bound that PostgreSQL computed (date_bin's own definition, so the arithmetic is
 * exact). False when ts is too far from the anchor for it to be trusted (2^60 us,
 * some 36,000 years, far inside int64 while PostgreSQL's timestamp range is wider):
 * the calendar is asked instead (and raises the errors date_bin raises). Shared by the C++ core
 * (TimeWindowExpr) and, inlined, by the trigger path.
 */
#define FN_ANCHOR_REACH (INT64_C(1) << 60)

static inline bool fn_stride_window(int64_t anchor, int64_t stride, int64_t ts, FnTimeRange *w) {
	int64_t diff, q;

	if (__builtin_sub_overflow(ts, anchor, &diff) || diff >= FN_ANCHOR_REACH || diff <= -FN_ANCHOR_REACH)
		return false;
	/* floor(diff / stride) * stride: |diff| < 2^60 and the stride is positive, so
	 * neither the product nor lower + stride leaves int64 (checked anyway) */
	q = diff / stride - (diff % stride < 0);
	w->start = anchor + q * stride;
	return !__builtin_add_overflow(w->start, stride, &w->end);
}

/*
 * Whether every window of (anchor, stride) is a union of windows of (fine_anchor,
 * fine_stride): the stride is a multiple of the fine one and the anchors lie on one
 * grid of it (date_bin of 1 minute and of 5 minutes from one origin; an hour and a
 * day in UTC). Flows on one column whose windows nest are marked once per row.
 */
static inline bool fn_stride_nests(int64_t anchor, int64_t stride, int64_t fine_anchor, int64_t fine_stride) {
	int64_t diff;

	if (stride <= 0 || fine_stride <= 0 || stride % fine_stride != 0)
		return false;
	if (__builtin_sub_overflow(anchor, fine_anchor, &diff))
		return false;
	return diff % fine_stride == 0;
}

#endif
