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
 * The range of a sorted, disjoint array that holds ts, or NULL. Every row a trigger
 * marks asks this once per flow, so it lives here, inlinable from the C trigger path
 * as well as the C++ core (DirtyTimeWindows::containing). Rows scattered over time
 * make the branches of a classic binary search unpredictable: this one halves
 * [base, base + n] around the first range ending after ts with a conditional move
 * instead, as many instructions but no mispredicted branch (marking rows scattered
 * over a year, bench/marking_bench: 54 ns/row with std::partition_point, 15 ns with
 * this).
 */
static inline const FnTimeRange *fn_ranges_containing(const FnTimeRange *ranges, uint32_t count, int64_t ts) {
	const FnTimeRange *base = ranges;
	const FnTimeRange *x;
	uint32_t n = count;

	if (n == 0)
		return NULL;
	while (n > 1) {
		uint32_t half = n / 2;

		base = base[half].end <= ts ? base + half : base;
		n -= half;
	}
	x = base + (base->end <= ts);
	return x != ranges + count && x->start <= ts ? x : NULL;
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

#endif
