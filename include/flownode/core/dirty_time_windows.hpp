// DirtyTimeWindows: GreptimeDB's set of dirty time ranges, as a view over storage that
// someone else owns (a flow's slot in shared memory, or a transaction's local set).
//
// Invariants: ranges are sorted by start, non-overlapping and non-adjacent (a range
// ending where the next starts is merged with it), each non-empty. Every boundary a
// caller adds is a window boundary, so every merge keeps the set a union of whole
// windows. No operation allocates, throws or drops a mark: when the storage is full,
// the two neighbouring ranges with the smallest gap are coalesced; a set of 64 ranges
// or more closes its smallest eighth of gaps at once, so that a stream of scattered
// windows costs amortized O(1) scans (over-approximation is safe: refreshing a clean
// window rewrites what is already there).
#pragma once
#include "core/cpp_only.hpp"

#include <cstdint>

#include "core/time_range.h"

namespace flownode {

class DirtyTimeWindows {
  public:
	// `ranges` has room for `capacity` (>= 1) entries; `*count` of them are in use.
	DirtyTimeWindows(FnTimeRange *ranges, uint32_t *count, uint32_t capacity) noexcept
	    : ranges_(ranges), count_(count), capacity_(capacity) {}

	uint32_t size() const noexcept { return *count_; }
	uint32_t capacity() const noexcept { return capacity_; }
	bool empty() const noexcept { return *count_ == 0; }
	const FnTimeRange &operator[](uint32_t i) const noexcept { return ranges_[i]; }

	// Marks [r.start, r.end). Empty or inverted ranges are ignored.
	void add(FnTimeRange r) noexcept;
	// Marks every range of rs. Another set's ranges (sorted, disjoint, non-adjacent)
	// merge in one pass after the set makes room for them; anything else is added
	// range by range.
	void add_all(const FnTimeRange *rs, uint32_t n) noexcept;
	// Marks every range of rs (any order, overlaps allowed; rs is reordered) in one
	// pass: sorts rs, merges it into the set from the back, then coalesces the set
	// back to its capacity (closing the smallest gaps, as add() would, plus an eighth
	// for room when the set is large). For a stream of scattered windows this costs
	// O(log n) per window instead of add()'s shift of the array. The storage must
	// have room for capacity() + n entries. Returns the threshold of the coalescing
	// (every gap below it was closed; see fn_ranges_absorb), 0 when there was none.
	uint64_t add_batch(FnTimeRange *rs, uint32_t n) noexcept;
	// When the set is full, closes its smallest eighth of gaps (at least one) at once,
	// as add() does before it adds to a full large set, and returns the threshold (see
	// coalesce_batch); 0 when the set is not full. For a transaction's own set that has
	// just filled up: the windows it writes next can join the set's ranges in place
	// (fn_ranges_absorb) instead of being staged and merged.
	uint64_t make_room() noexcept;
	// A transaction's set, after its stage of n windows (stage_capacity deep) is
	// merged: add_batch, then make_room if the set is full. Returns the gap below
	// which the windows written next join a neighbouring range in place
	// (fn_ranges_absorb), given the current one (`below`): 1 (touching windows only:
	// exact) while the set has never coalesced; afterwards about the gap that the
	// next full stage's merge would close (with a stage as deep as the set, its
	// median gap), never less than before. Joining such windows at once is what
	// that merge would do, without staging, sorting and merging them first.
	uint64_t merge_stage(FnTimeRange *stage, uint32_t n, uint32_t stage_capacity, uint64_t below) noexcept;
	// Marks r only when that needs no coalescing (there is room, or r merges with a
	// range it overlaps or touches); returns whether r was marked. For sets that must
	// never claim more than was added.
	bool add_exact(FnTimeRange r) noexcept;
	// add_exact for every range of rs, in order, with the same result. Of another
	// set's ranges (sorted, disjoint, non-adjacent), those the set has room for merge
	// in one pass (a merge only folds ranges that overlap or touch: exact); the rest,
	// and anything else, go range by range.
	void add_all_exact(const FnTimeRange *rs, uint32_t n) noexcept;

	// Unmarks [r.start, r.end). When that would split a range and the storage is
	// full, the range is left whole (still marked: safe, never a lost mark).
	void subtract(FnTimeRange r) noexcept;

	// Removes everything before `t` (expire_after: `t` is the start of the first
	// window that has not expired): ranges that end at or before it go, one that
	// straddles it starts at `t`. Never needs room. Returns whether anything changed.
	bool cut_below(int64_t t) noexcept;

	// Removes every range that overlaps [r.start, r.end), whole. Unlike subtract()
	// this under-approximates: it is for sets that must never claim too much (the
	// set of windows known to be durably recorded).
	void drop_overlapping(FnTimeRange r) noexcept;

	void clear() noexcept { *count_ = 0; }

	// True when [r.start, r.end) is entirely marked.
	bool covers(FnTimeRange r) const noexcept;

	// The range holding ts, or nullptr. The set is a union of whole windows, so the
	// window of a contained ts is marked already and need not be computed.
	const FnTimeRange *containing(int64_t ts) const noexcept;
	// The range holding all of [r.start, r.end), or nullptr (also for an empty r).
	const FnTimeRange *containing(FnTimeRange r) const noexcept;

	// The k-th smallest gap between neighbouring ranges (1-based, at most the number
	// of gaps; from an even sample of them in sets of more than 1,024), 0 if none.
	uint64_t kth_smallest_gap(uint32_t k) const noexcept;
	// Closes the k smallest gaps (ties: the first ones) in one pass and returns the
	// threshold: the gap every smaller one of which was closed (0 if none was).
	// Public for tests.
	uint64_t coalesce_batch(uint32_t k) noexcept;

  private:
	void coalesce_smallest_gap() noexcept;
	static bool sorted_disjoint(const FnTimeRange *rs, uint32_t n) noexcept;
	// Merges sorted, disjoint rs into the set; the storage has room for size() + m.
	void merge_sorted(const FnTimeRange *rs, uint32_t m) noexcept;

	FnTimeRange *ranges_;
	uint32_t *count_;
	uint32_t capacity_;
};

} // namespace flownode
