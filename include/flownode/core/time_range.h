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
 * PostgreSQL's timestamp range (MIN_TIMESTAMP and END_TIMESTAMP of datatype/timestamp.h;
 * the bridge checks they agree): every finite timestamp t, with or without time zone,
 * has FN_TS_MIN <= t < FN_TS_END, from 4714-11-24 00:00 BC to 294276-12-31
 * 23:59:59.999999 (UTC for timestamptz). FN_TS_NOEND is DT_NOEND, 'infinity'.
 */
#define FN_TS_MIN INT64_C(-211813488000000000)
#define FN_TS_END INT64_C(9223371331200000000)
#define FN_TS_NOEND INT64_MAX

/*
 * A window as flownode keeps it (docs/internals.md §3, "Windows at the ends of the
 * timestamp range"). Windows tile [FN_TS_MIN, FN_TS_END): the window holding the
 * largest timestamp ends at infinity (its upper bound is past every timestamp, where
 * PostgreSQL can name none: date_trunc's next month or date_bin's next bin would be
 * "timestamp out of range"), and the window holding the smallest starts at it (its
 * own lower bound would lie before it; date_trunc and date_bin then fail for its rows,
 * and so does the flow's refresh of it, visibly). A lower bound of -infinity would
 * also take rows at -infinity, which belong to no window. Every path that computes a
 * window ends here, so all of them agree on the windows at the ends.
 */
static inline FnTimeRange fn_window_clamp(int64_t start, int64_t end) {
	FnTimeRange w;

	w.start = start < FN_TS_MIN ? FN_TS_MIN : start;
	w.end = end >= FN_TS_END ? FN_TS_NOEND : end;
	return w;
}

/* Out of line: the fixed-stride window of a timestamp whose distance from the anchor
 * overflows 64-bit arithmetic (anchor and timestamp near opposite ends of the range). */
__attribute__((unused, noinline, cold)) static FnTimeRange fn_stride_window_wide(int64_t anchor,
                                                                                 int64_t stride, int64_t ts) {
	__int128 diff = (__int128)ts - anchor;
	__int128 q = diff / stride - (diff % stride < 0);
	__int128 start = anchor + q * stride; /* in (ts - stride, ts]: no overflow of __int128 */
	__int128 end = start + stride;

	return fn_window_clamp(start < FN_TS_MIN ? FN_TS_MIN : (int64_t)start,
	                       end >= FN_TS_END ? FN_TS_NOEND : (int64_t)end);
}

/*
 * A fixed stride (date_bin; date_trunc to at most a week in a fixed-offset zone): the
 * window of ts lies a whole number of strides from an anchor, a window's lower bound
 * (date_bin's origin, or one that PostgreSQL computed), so the arithmetic is exact:
 * date_bin's own definition. For every timestamp, near the anchor or not, clamped at
 * the ends of the range (fn_window_clamp); a time past the largest timestamp is in the
 * last window, one before the smallest in the first. The stride is positive. Shared by
 * the C++ core (TimeWindowExpr) and, inlined, by the trigger path.
 */
static inline FnTimeRange fn_stride_window(int64_t anchor, int64_t stride, int64_t ts) {
	int64_t diff, start, end;

	ts = ts < FN_TS_MIN ? FN_TS_MIN : ts >= FN_TS_END ? FN_TS_END - 1 : ts;
	if (__builtin_sub_overflow(ts, anchor, &diff) ||
	    __builtin_mul_overflow(diff / stride - (diff % stride < 0), stride, &start) ||
	    __builtin_add_overflow(start, anchor, &start) || __builtin_add_overflow(start, stride, &end))
		return fn_stride_window_wide(anchor, stride, ts);
	return fn_window_clamp(start, end);
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
