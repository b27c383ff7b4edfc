// KeyMarks: the groups a transaction wrote, per window, as key marks (window, hash
// of the group's keys), as a view over storage someone else owns. A window with more
// distinct keys than the budget, or one that finds the storage full, is handed back
// to the caller to be marked whole; its key marks are dropped then, since a whole
// window's refresh recomputes every group of it. So nothing a transaction wrote is
// ever unmarked, and what it keeps is bounded by the storage (docs/internals.md §3,
// *Key marks*).
//
// Invariants: marks sorted by (window.start, hash), no two equal; every window one
// of the flow's whole windows (the caller's), so two marks of one window have the
// same start and end. No operation allocates or throws.
#pragma once
#include "core/cpp_only.hpp"

#include <cstdint>

#include "core/key_marks.h"

namespace flownode {

class KeyMarks {
  public:
	// `marks` has room for `capacity` entries, `*count` in use; at most `per_window`
	// distinct keys per window (0: every window is marked whole).
	KeyMarks(FnKeyMark *marks, uint32_t *count, uint32_t capacity, uint32_t per_window) noexcept
	    : marks_(marks), count_(count), capacity_(capacity), per_window_(per_window) {}

	uint32_t size() const noexcept { return *count_; }
	const FnKeyMark &operator[](uint32_t i) const noexcept { return marks_[i]; }

	// Marks the group `hash` of `window`. True: kept as a key mark (or it was one
	// already). False: the caller must mark the window whole; the window's key marks
	// are gone (the budget is spent, or the storage is full).
	bool add(FnTimeRange window, uint64_t hash) noexcept;
	// Drops the key marks of every window that starts inside r: r is marked whole.
	void drop_within(FnTimeRange r) noexcept;
	// The distinct keys marked in the window starting at `start`.
	uint32_t keys_in(int64_t start) const noexcept;
	bool contains(FnTimeRange window, uint64_t hash) const noexcept;

  private:
	uint32_t lower_bound(int64_t start, uint64_t hash) const noexcept;
	void erase(uint32_t from, uint32_t to) noexcept;

	FnKeyMark *marks_;
	uint32_t *count_;
	uint32_t capacity_;
	uint32_t per_window_;
};

// What a refresh does with the key marks it took (marks: any order, duplicates
// allowed; reordered in place). Marks of a window inside one of `whole` (sorted,
// disjoint: the windows refreshed whole anyway) are dropped; a window with more than
// `per_window` distinct keys is appended to `to_whole` (room for n entries; its
// count in *n_whole), since recomputing it whole reads fewer rows than key by key.
// Returns m: marks[0, m) are the distinct key marks left, sorted by (start, hash).
uint32_t plan_key_refresh(FnKeyMark *marks, uint32_t n, const FnTimeRange *whole, uint32_t nwhole,
                          uint32_t per_window, FnTimeRange *to_whole, uint32_t *n_whole) noexcept;

} // namespace flownode
