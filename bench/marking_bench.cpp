// marking_bench: the trigger's per-row marking path in isolation (Google Benchmark).
//
// The marking triggers' WHEN clause (src/source_marks.c, mark_value) does, per
// row and group of nesting flows:
//   1. if ts is inside the range this transaction added last: nothing more;
//   2. if ts is inside a range of the transaction's local set (a union of whole
//      windows; fn_ranges_search): nothing more;
//   3. else the window of ts (a fixed stride: integer arithmetic from an anchor,
//      fn_stride_window; calendar windows: TimeWindowExpr::window_of, in production
//      PostgreSQL's date_trunc behind a PG_TRY);
//   4. the window joins a neighbouring range in place if it touches one (or, once
//      the set has coalesced, lies near one: fn_ranges_absorb), else it is staged;
//      a full stage (256) is merged into the set (DirtyTimeWindows::merge_stage,
//      which coalesces to the set's 256 ranges when needed).
// mark() below is that code path over the real core (src/core/*.cpp and the inline
// functions of time_range.h); only the PostgreSQL glue (the WHEN clause's function
// call, the column fetch) is left out: the SQL benchmarks measure the whole trigger.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/dirty_time_windows.hpp"
#include "core/time_window_expr.hpp"

using flownode::DirtyTimeWindows;
using flownode::TimeWindowExpr;

namespace {

constexpr int64_t kUsecPerMin = 60LL * 1000000;
constexpr int64_t kOrigin = 0; // 2000-01-01 in PostgreSQL's epoch
constexpr int64_t kYear = 366LL * 86400 * 1000000;
constexpr int64_t kStart = 24LL * 365 * 86400 * 1000000; // about 2024, PostgreSQL epoch
constexpr uint32_t kLocalRanges = 256;                   // flownode.local_ranges_per_flow

// date_bin(stride, ts, origin) in integer math (PostgreSQL's timestamp_bin).
class DateBinCalendar final : public flownode::WindowCalendar {
  public:
	explicit DateBinCalendar(int64_t stride) : stride_(stride) {}
	int64_t truncate(int64_t ts) override {
		int64_t d = ts - kOrigin;
		int64_t bin = d - d % stride_;
		if (d % stride_ < 0)
			bin -= stride_;
		return kOrigin + bin;
	}
	int64_t step(int64_t lower) override { return lower + stride_; }

  private:
	int64_t stride_;
};

constexpr uint32_t kStage = 256; // LOCAL_STAGE

struct LocalMarks {
	FnTimeRange last{0, 0};
	uint32_t count = 0;
	uint64_t absorb_below = 1;
	uint32_t staged = 0;
	FnTimeRange stage[kStage];
	FnTimeRange ranges[kLocalRanges + kStage];
	void reset() {
		last = FnTimeRange{0, 0};
		count = staged = 0;
		absorb_below = 1;
	}
	void flush() {
		if (staged == 0)
			return;
		absorb_below =
		    DirtyTimeWindows(ranges, &count, kLocalRanges).merge_stage(stage, staged, kStage, absorb_below);
		staged = 0;
	}
	// mark_window(): r is in no range of the set, in the gap before ranges[pos]
	void insert(uint32_t pos, FnTimeRange r) {
		last = r;
		if (fn_ranges_absorb(ranges, &count, pos, r, absorb_below))
			return;
		stage[staged++] = r;
		if (staged == kStage)
			flush();
	}
};

// mark_value() of src/source_marks.c, for one group with a fixed stride.
inline void mark(TimeWindowExpr &expr, LocalMarks &lm, int64_t ts) {
	int64_t anchor = 0, stride = 0;
	if (ts >= lm.last.start && ts < lm.last.end)
		return;
	uint32_t pos = fn_ranges_search(lm.ranges, lm.count, ts);
	if (pos < lm.count && lm.ranges[pos].start <= ts)
		return;
	FnTimeRange r = expr.stride_anchor(&anchor, &stride) ? fn_stride_window(anchor, stride, ts)
	                                                     : expr.window_of(ts).range();
	lm.insert(pos, r);
}

constexpr size_t kRows = 1 << 20;

std::vector<int64_t> in_order(int64_t step_usec) {
	std::vector<int64_t> v(kRows);
	for (size_t i = 0; i < kRows; i++)
		v[i] = kStart + static_cast<int64_t>(i) * step_usec;
	return v;
}

std::vector<int64_t> scattered(int64_t span) {
	std::mt19937_64 rng(42);
	std::vector<int64_t> v(kRows);
	for (auto &x : v)
		x = kStart + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
	return v;
}

// One iteration = one row. The transaction's local set starts empty at each pass
// over the 2^20 rows (a new transaction).
void run_mark(benchmark::State &state, const std::vector<int64_t> &ts) {
	DateBinCalendar cal(kUsecPerMin);
	TimeWindowExpr expr = TimeWindowExpr::fixed(kUsecPerMin, &cal);
	LocalMarks lm;
	size_t i = 0;
	for (auto _ : state) {
		mark(expr, lm, ts[i]);
		if (++i == kRows) {
			i = 0;
			lm.reset();
		}
	}
	benchmark::DoNotOptimize(lm.count);
	state.SetItemsProcessed(state.iterations());
}

// Rows in time order, 100 per 1-minute window (one every 0.6 s): the common case.
void BM_Mark_InOrder_100PerWindow(benchmark::State &state) {
	static const auto ts = in_order(600000);
	run_mark(state, ts);
}

// Rows in time order, each in the next window: a calendar call and a merge per row.
void BM_Mark_InOrder_NewWindowEachRow(benchmark::State &state) {
	static const auto ts = in_order(kUsecPerMin);
	run_mark(state, ts);
}

// Backfill: rows uniformly scattered over a year (527k windows): a calendar call and
// an insert into a full local set (256 ranges, nearest coalesced) per row.
void BM_Mark_ScatteredOverYear(benchmark::State &state) {
	static const auto ts = scattered(kYear);
	run_mark(state, ts);
}

// Scattered within one hour (60 windows): the set never fills.
void BM_Mark_ScatteredOverHour(benchmark::State &state) {
	static const auto ts = scattered(60 * kUsecPerMin);
	run_mark(state, ts);
}

// The window computation alone (uncached: every row in another window).
void BM_WindowOf_Uncached(benchmark::State &state) {
	static const auto ts = scattered(kYear);
	DateBinCalendar cal(kUsecPerMin);
	TimeWindowExpr expr = TimeWindowExpr::fixed(kUsecPerMin, &cal);
	size_t i = 0;
	for (auto _ : state) {
		expr.forget();
		benchmark::DoNotOptimize(expr.window_of(ts[i]));
		i = (i + 1) & (kRows - 1);
	}
	state.SetItemsProcessed(state.iterations());
}

// The local-set insert alone (search, join or stage, merges), of a window adjacent to
// the last one: it joins the last range in place.
void BM_LocalSetInsert_Adjacent(benchmark::State &state) {
	LocalMarks lm;
	int64_t w = kStart;
	for (auto _ : state) {
		lm.insert(fn_ranges_search(lm.ranges, lm.count, w), FnTimeRange{w, w + kUsecPerMin});
		w += kUsecPerMin;
	}
	benchmark::DoNotOptimize(lm.count);
	state.SetItemsProcessed(state.iterations());
}

// The local-set insert alone, of a random window of a year not yet in the set
// (windows already in it are skipped uncounted, as the trigger's containment check
// would): the set fills, coalesces, and then joins most windows to a neighbour.
void BM_LocalSetInsert_ScatteredFull(benchmark::State &state) {
	static const auto ts = scattered(kYear);
	LocalMarks lm;
	size_t i = 0;
	for (auto _ : state) {
		int64_t lo = ts[i] - ts[i] % kUsecPerMin;
		uint32_t pos = fn_ranges_search(lm.ranges, lm.count, lo);
		if (!(pos < lm.count && lm.ranges[pos].start <= lo))
			lm.insert(pos, FnTimeRange{lo, lo + kUsecPerMin});
		if ((i = (i + 1) & (kRows - 1)) % 1000 == 0)
			lm.reset(); // a transaction of 1,000 rows, as in the SQL benchmarks
	}
	benchmark::DoNotOptimize(lm.count);
	state.SetItemsProcessed(state.iterations());
}

// The local-set insert alone, scattered within one hour (never full).
void BM_LocalSetInsert_ScatteredHour(benchmark::State &state) {
	static const auto ts = scattered(60 * kUsecPerMin);
	LocalMarks lm;
	size_t i = 0;
	for (auto _ : state) {
		int64_t lo = ts[i] - ts[i] % kUsecPerMin;
		uint32_t pos = fn_ranges_search(lm.ranges, lm.count, lo);
		if (!(pos < lm.count && lm.ranges[pos].start <= lo))
			lm.insert(pos, FnTimeRange{lo, lo + kUsecPerMin});
		i = (i + 1) & (kRows - 1);
	}
	benchmark::DoNotOptimize(lm.count);
	state.SetItemsProcessed(state.iterations());
}

} // namespace

BENCHMARK(BM_Mark_InOrder_100PerWindow);
BENCHMARK(BM_Mark_InOrder_NewWindowEachRow);
BENCHMARK(BM_Mark_ScatteredOverHour);
BENCHMARK(BM_Mark_ScatteredOverYear);
BENCHMARK(BM_WindowOf_Uncached);
BENCHMARK(BM_LocalSetInsert_Adjacent);
BENCHMARK(BM_LocalSetInsert_ScatteredHour);
BENCHMARK(BM_LocalSetInsert_ScatteredFull);

BENCHMARK_MAIN();
