#include "core/key_marks.hpp"

#include <algorithm>
#include <cstring>

namespace flownode {

namespace {

bool mark_less(const FnKeyMark &a, const FnKeyMark &b) noexcept {
	if (a.window.start != b.window.start)
		return a.window.start < b.window.start;
	return a.hash < b.hash;
}

bool mark_equal(const FnKeyMark &a, const FnKeyMark &b) noexcept {
	return a.window.start == b.window.start && a.hash == b.hash;
}

// Whether the window starting at `start` lies in one of the sorted, disjoint ranges.
bool inside(const FnTimeRange *rs, uint32_t n, FnTimeRange window) noexcept {
	uint32_t i = fn_ranges_search(rs, n, window.start);
	return i < n && rs[i].start <= window.start && window.end <= rs[i].end;
}

} // namespace

uint32_t KeyMarks::lower_bound(int64_t start, uint64_t hash) const noexcept {
	FnKeyMark probe{{start, start}, hash};
	return static_cast<uint32_t>(std::lower_bound(marks_, marks_ + *count_, probe, mark_less) - marks_);
}

void KeyMarks::erase(uint32_t from, uint32_t to) noexcept {
	if (from >= to)
		return;
	std::memmove(marks_ + from, marks_ + to, sizeof(FnKeyMark) * (*count_ - to));
	*count_ -= to - from;
}

uint32_t KeyMarks::keys_in(int64_t start) const noexcept {
	uint32_t end = start == INT64_MAX ? *count_ : lower_bound(start + 1, 0);
	return end - lower_bound(start, 0);
}

bool KeyMarks::contains(FnTimeRange window, uint64_t hash) const noexcept {
	uint32_t i = lower_bound(window.start, hash);
	return i < *count_ && marks_[i].window.start == window.start && marks_[i].hash == hash;
}

bool KeyMarks::add(FnTimeRange window, uint64_t hash) noexcept {
	uint32_t i = lower_bound(window.start, hash);
	if (i < *count_ && marks_[i].window.start == window.start && marks_[i].hash == hash)
		return true;
	if (per_window_ == 0 || keys_in(window.start) >= per_window_ || *count_ >= capacity_) {
		drop_within({window.start, window.start + 1});
		return false;
	}
	std::memmove(marks_ + i + 1, marks_ + i, sizeof(FnKeyMark) * (*count_ - i));
	marks_[i] = FnKeyMark{window, hash};
	(*count_)++;
	return true;
}

void KeyMarks::drop_within(FnTimeRange r) noexcept {
	if (r.start >= r.end)
		return;
	erase(lower_bound(r.start, 0), lower_bound(r.end, 0));
}

uint32_t plan_key_refresh(FnKeyMark *marks, uint32_t n, const FnTimeRange *whole, uint32_t nwhole,
                          uint32_t per_window, FnTimeRange *to_whole, uint32_t *n_whole) noexcept {
	std::sort(marks, marks + n, mark_less);
	n = static_cast<uint32_t>(std::unique(marks, marks + n, mark_equal) - marks);
	uint32_t kept = 0;
	*n_whole = 0;
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i;
		while (j < n && marks[j].window.start == marks[i].window.start)
			j++;
		if (inside(whole, nwhole, marks[i].window)) {
			// refreshed whole anyway
		} else if (j - i > per_window) {
			to_whole[(*n_whole)++] = marks[i].window;
		} else {
			std::memmove(marks + kept, marks + i, sizeof(FnKeyMark) * (j - i));
			kept += j - i;
		}
		i = j;
	}
	return kept;
}

} // namespace flownode
