// The one C++ file at the PostgreSQL boundary: it implements the C functions of
// core_bridge.h over the pure core, and WindowCalendar over PostgreSQL's own
// date_bin / date_trunc so window bounds match the user's query exactly.
#include "bridge/pg_guard.hpp"

extern "C" {
#include "fmgr.h"
#include "parser/scansup.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"

#include "bridge/time_bucket.h"
#include "compat/pg_compat.h"
}

// The core's timestamp range is PostgreSQL's (time_range.h).
static_assert(FN_TS_MIN == MIN_TIMESTAMP && FN_TS_END == END_TIMESTAMP && FN_TS_NOEND == DT_NOEND,
              "flownode's timestamp range differs from PostgreSQL's");

#include <cstring>
#include <new>
#include <string>

#include "bridge/core_bridge.h"
#include "core/dirty_time_windows.hpp"
#include "core/key_marks.hpp"
#include "core/task_state.hpp"
#include "core/time_window_expr.hpp"
#include "core/zoned_buckets.hpp"

using flownode::DirtyTimeWindows;
using flownode::invoke_cpp;
using flownode::pg_call;
using flownode::TimeWindowExpr;

namespace {

// Every date_trunc unit: its canonical name, DecodeUnits' code, one unit as an
// interval (the calendar's step), and its usual width for scheduling (a month is 30
// days, a year and longer "long"). The one list of units: the query analysis names
// them from it, the calendar steps and sizes by it.
struct TruncUnit {
	const char *name;
	int dtk;
	Interval step; // {time, day, month}
	int64_t nominal_usec;
};

const TruncUnit kTruncUnits[] = {
    {"microseconds", DTK_MICROSEC, {1, 0, 0}, 1},
    {"milliseconds", DTK_MILLISEC, {1000, 0, 0}, 1000},
    {"second", DTK_SECOND, {USECS_PER_SEC, 0, 0}, USECS_PER_SEC},
    {"minute", DTK_MINUTE, {USECS_PER_MINUTE, 0, 0}, USECS_PER_MINUTE},
    {"hour", DTK_HOUR, {USECS_PER_HOUR, 0, 0}, USECS_PER_HOUR},
    {"day", DTK_DAY, {0, 1, 0}, USECS_PER_DAY},
    {"week", DTK_WEEK, {0, 7, 0}, 7 * USECS_PER_DAY},
    {"month", DTK_MONTH, {0, 0, 1}, 30 * USECS_PER_DAY},
    {"quarter", DTK_QUARTER, {0, 0, 3}, 91 * USECS_PER_DAY},
    {"year", DTK_YEAR, {0, 0, 12}, 365 * USECS_PER_DAY},
    {"decade", DTK_DECADE, {0, 0, 120}, 365 * USECS_PER_DAY},
    {"century", DTK_CENTURY, {0, 0, 1200}, 365 * USECS_PER_DAY},
    {"millennium", DTK_MILLENNIUM, {0, 0, 12000}, 365 * USECS_PER_DAY},
};

const TruncUnit &trunc_unit(const char *name) {
	for (const TruncUnit &u : kTruncUnits)
		if (strcmp(name, u.name) == 0)
			return u;
	throw std::invalid_argument(std::string("unsupported date_trunc unit \"") + name + "\"");
}

// Every datum it passes lives in this object, which lives in a PostgreSQL memory
// context: nothing here owns a C++ resource, so freeing the context frees it all.
class PgCalendar final : public flownode::WindowCalendar {
  public:
	explicit PgCalendar(const FnWindowSpec &spec) : spec_(spec) {
		stride_.time = spec.stride_time;
		stride_.day = spec.stride_day;
		stride_.month = 0;
		if (spec.kind == FN_WINDOW_DATE_TRUNC) {
			unit_ = pg_call([&] { return cstring_to_text(spec.unit); });
			zone_ = pg_call([&] { return cstring_to_text(spec.zone); });
			step_ = trunc_unit(spec.unit).step;
			if (spec.with_time_zone)
				tz_ = pg_call([&] { return resolve_zone(spec.zone); });
		}
	}

	// The window bound PostgreSQL gives; WindowRangeError when it is no timestamp
	// (its "timestamp out of range": the core then knows the window is the first or
	// the last of the range, time_range.h).
	int64_t truncate(int64_t ts) override {
		if (spec_.kind == FN_WINDOW_DATE_BIN) {
			PGFunction bin = spec_.with_time_zone ? timestamptz_bin : timestamp_bin;
			return in_range([&] {
				return DatumGetTimestamp(DirectFunctionCall3(bin, IntervalPGetDatum(&stride_),
				                                             TimestampGetDatum(ts),
				                                             TimestampGetDatum(spec_.origin)));
			});
		}
		if (spec_.with_time_zone && tz_ != nullptr)
			return in_zone([&] {
				return DatumGetTimestampTz(
				    DirectFunctionCall2(timestamptz_trunc, PointerGetDatum(unit_), TimestampTzGetDatum(ts)));
			});
		if (spec_.with_time_zone)
			return in_range([&] {
				return DatumGetTimestampTz(DirectFunctionCall3(timestamptz_trunc_zone, PointerGetDatum(unit_),
				                                               TimestampTzGetDatum(ts),
				                                               PointerGetDatum(zone_)));
			});
		return in_range([&] {
			return DatumGetTimestamp(
			    DirectFunctionCall2(timestamp_trunc, PointerGetDatum(unit_), TimestampGetDatum(ts)));
		});
	}

	// One calendar unit later, in the flow's local time: a day after midnight is the
	// next midnight even across a DST change, a month after the 1st is the next 1st.
	int64_t step(int64_t lower) override {
		if (spec_.with_time_zone && tz_ != nullptr) {
			try {
				return in_zone([&] {
					Datum local = DirectFunctionCall1(timestamptz_timestamp, TimestampTzGetDatum(lower));
					Datum next = DirectFunctionCall2(timestamp_pl_interval, local, IntervalPGetDatum(&step_));
					return DatumGetTimestampTz(DirectFunctionCall1(timestamp_timestamptz, next));
				});
			} catch (const flownode::WindowRangeError &) {
				// The local time is no timestamp while the time itself is one: west of
				// UTC in the first hours of the range (the first window's upper bound is
				// found stepping from the smallest timestamp), east of UTC in its last
				// hours. Step the timestamptz in the zone: only the result is checked
				// (out of range when it is past the largest timestamp)
				return in_zone([&] {
					return DatumGetTimestampTz(DirectFunctionCall2(
					    timestamptz_pl_interval, TimestampTzGetDatum(lower), IntervalPGetDatum(&step_)));
				});
			}
		}
		return in_range([&] {
			if (!spec_.with_time_zone)
				return DatumGetTimestamp(DirectFunctionCall2(timestamp_pl_interval, TimestampGetDatum(lower),
				                                             IntervalPGetDatum(&step_)));
			Datum local =
			    DirectFunctionCall2(timestamptz_zone, PointerGetDatum(zone_), TimestampTzGetDatum(lower));
			Datum next = DirectFunctionCall2(timestamp_pl_interval, local, IntervalPGetDatum(&step_));
			return DatumGetTimestampTz(DirectFunctionCall2(timestamp_zone, PointerGetDatum(zone_), next));
		});
	}

	// Whether every window is [lower, lower + nominal size): always for date_bin (its
	// stride has no months), and for date_trunc to a unit of at most a week in a
	// zone whose UTC offset never changes (a timestamp column, UTC, a fixed offset
	// such as EST): local days are then always 24 hours and weeks 7 days, so the
	// window is computed from one PostgreSQL answer instead of asked for again at
	// every new window. Months, years and zones with DST or history stay calendar.
	bool fixed_stride() const { return spec_.kind == FN_WINDOW_DATE_BIN || fixed_stride_trunc(spec_); }

	static bool fixed_stride_trunc(const FnWindowSpec &spec) {
		// a unit without months: days (and weeks) are 24 (168) hours where the offset is fixed
		if (spec.kind != FN_WINDOW_DATE_TRUNC || trunc_unit(spec.unit).step.month != 0)
			return false;
		if (!spec.with_time_zone)
			return true;
		pg_tz *tz = pg_call([&] { return resolve_zone(spec.zone); });
		long gmtoff = 0;
		return tz != nullptr && pg_get_timezone_offset(tz, &gmtoff);
	}

	// The zone as date_trunc(unit, ts, zone) resolves it (a fixed-offset or dynamic
	// abbreviation, else a full name), once per flow instead of at every call: it
	// parsed and looked the name up three times per window. nullptr when PostgreSQL
	// would reject it; the text-taking functions then raise its own error.
	static pg_tz *resolve_zone(const char *zone) {
		char *lower = downcase_truncate_identifier(zone, static_cast<int>(strlen(zone)), false);
		int offset = 0;
		pg_tz *tz = nullptr;
		int type = fn_decode_timezone_abbrev(lower, &offset, &tz);
		if (type == TZ || type == DTZ)
			return pg_tzset_offset(-offset);
		if (type == DYNTZ)
			return tz;
		return pg_tzset(zone);
	}

	// pg_call(f), with PostgreSQL's "timestamp out of range" (and date_bin's "interval
	// out of range", the same SQLSTATE) as the core's WindowRangeError.
	template <typename F> static int64_t in_range(F &&f) {
		try {
			return pg_call(std::forward<F>(f));
		} catch (flownode::PgError &e) {
			if (e.edata->sqlerrcode != ERRCODE_DATETIME_VALUE_OUT_OF_RANGE)
				throw;
			std::string message = e.what();
			FreeErrorData(e.edata);
			throw flownode::WindowRangeError(message);
		}
	}

  private:
	// Runs f with the flow's zone as the session's: timestamptz_trunc and the
	// timestamp <-> timestamptz casts are then the zone-taking functions above,
	// minus the parsing. The session's zone is back before anything else runs.
	template <typename F> int64_t in_zone(F &&f) {
		pg_tz *saved = session_timezone;
		session_timezone = tz_;
		try {
			int64_t r = in_range(std::forward<F>(f));
			session_timezone = saved;
			return r;
		} catch (...) {
			session_timezone = saved;
			throw;
		}
	}

	FnWindowSpec spec_;
	Interval stride_{};
	Interval step_{};
	text *unit_ = nullptr;
	text *zone_ = nullptr;
	pg_tz *tz_ = nullptr; // resolved zone_ (with_time_zone date_trunc only)
};

// time_bucket's windows (and date_bin's in a zone): the bucket of the local time,
// computed by flownode.time_bucket's own C function and converted with the very
// functions of `ts AT TIME ZONE z`, so a window's bound is the query's value.
class PgBucketRule final : public flownode::BucketRule {
  public:
	explicit PgBucketRule(const FnWindowSpec &spec) : spec_(spec) {
		width_ = Interval{spec.stride_time, spec.stride_day, spec.stride_month};
		offset_ = Interval{spec.offset_time, spec.offset_day, spec.offset_month};
		has_offset_ = spec.offset_time != 0 || spec.offset_day != 0 || spec.offset_month != 0;
		if (spec.kind == FN_WINDOW_TIME_BUCKET && spec.zone[0] != '\0') {
			zone_ = pg_call([&] { return cstring_to_text(spec.zone); });
			tz_ = pg_call([&] { return PgCalendar::resolve_zone(spec.zone); });
		}
	}

	int64_t bucket_of(int64_t ts) override {
		return PgCalendar::in_range([&] {
			Timestamp local = to_local(ts);
			Timestamp b = has_offset_ ? fn_time_bucket_offset(&width_, local, spec_.origin, &offset_)
			                          : fn_time_bucket_timestamp(&width_, local, spec_.origin);
			return to_utc(b);
		});
	}

	// The bucket after ts's, on the grid without the offset (month starts for month
	// widths), then shifted: a month offset cannot leave it on the same bucket.
	int64_t next_bucket(int64_t ts) override {
		return PgCalendar::in_range([&] {
			Datum local = TimestampGetDatum(to_local(ts));
			if (has_offset_)
				local = DirectFunctionCall2(timestamp_mi_interval, local, IntervalPGetDatum(&offset_));
			Datum b =
			    TimestampGetDatum(fn_time_bucket_timestamp(&width_, DatumGetTimestamp(local), spec_.origin));
			Datum next = DirectFunctionCall2(timestamp_pl_interval, b, IntervalPGetDatum(&width_));
			if (has_offset_)
				next = DirectFunctionCall2(timestamp_pl_interval, next, IntervalPGetDatum(&offset_));
			return to_utc(DatumGetTimestamp(next));
		});
	}

	// PostgreSQL's own list of the zone's changes (pg_next_dst_boundary, as
	// DetermineTimeZoneOffset reads it), from a day before t.
	bool change_near(int64_t t, int64_t *at, int64_t *shift) override {
		constexpr int64_t kUnixToPg = (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
		constexpr int64_t kReach = 2 * SECS_PER_DAY; // larger than any change of offset
		if (tz_ == nullptr)
			return false;
		int64_t t_sec = t / USECS_PER_SEC + kUnixToPg;
		pg_time_t from = static_cast<pg_time_t>(t_sec - kReach);
		for (int i = 0; i < 16; i++) {
			long before_off, after_off;
			int before_dst, after_dst;
			pg_time_t boundary;
			if (pg_next_dst_boundary(&from, &before_off, &before_dst, &boundary, &after_off, &after_dst,
			                         tz_) != 1 ||
			    boundary > t_sec + kReach)
				return false;
			int64_t s =
			    (after_off > before_off ? after_off - before_off : before_off - after_off) * USECS_PER_SEC;
			int64_t when = (static_cast<int64_t>(boundary) - kUnixToPg) * USECS_PER_SEC;
			if (s > 0 && t > when - s && t < when + s) {
				*at = when;
				*shift = s;
				return true;
			}
			from = boundary;
		}
		return false;
	}

  private:
	Timestamp to_local(int64_t ts) {
		if (zone_ == nullptr)
			return ts;
		return DatumGetTimestamp(
		    DirectFunctionCall2(timestamptz_zone, PointerGetDatum(zone_), TimestampTzGetDatum(ts)));
	}
	int64_t to_utc(Timestamp local) {
		if (zone_ == nullptr)
			return local;
		return DatumGetTimestampTz(
		    DirectFunctionCall2(timestamp_zone, PointerGetDatum(zone_), TimestampGetDatum(local)));
	}

	FnWindowSpec spec_;
	Interval width_{};
	Interval offset_{};
	bool has_offset_ = false;
	text *zone_ = nullptr;
	pg_tz *tz_ = nullptr;
};

int64_t nominal_usec(const FnWindowSpec &spec) {
	int64_t days, stride;
	if (spec.kind == FN_WINDOW_TIME_BUCKET && spec.stride_month != 0)
		return int64_t(spec.stride_month) * 30 * USECS_PER_DAY; // a month's usual width, as date_trunc's
	if (spec.kind != FN_WINDOW_DATE_BIN && spec.kind != FN_WINDOW_TIME_BUCKET)
		return trunc_unit(spec.unit).nominal_usec;
	if (__builtin_mul_overflow(int64_t(spec.stride_day), USECS_PER_DAY, &days) ||
	    __builtin_add_overflow(days, spec.stride_time, &stride))
		throw std::invalid_argument("date_bin stride out of range");
	return stride;
}

} // namespace

// The C handle: a calendar and the expression over it, both placement-new'd into one
// palloc'd chunk, followed by a calendar expression's memo of windows.
struct FnWindow {
	PgCalendar calendar;
	PgBucketRule rule;
	flownode::ZonedBucketCalendar buckets;
	TimeWindowExpr expr;
	FnWindow(const FnWindowSpec &spec, flownode::Window *memo, uint32_t memo_slots)
	    : calendar(spec), rule(spec), buckets(&rule), expr(make_expr(spec, memo, memo_slots)) {}

	// date_bin's windows lie on the grid of its origin: the calendar is never asked
	// (for a row far from the origin PostgreSQL's date_bin fails, "interval out of
	// range", but the row's window is still known). A date_trunc of fixed stride
	// learns its grid from PostgreSQL's first window. time_bucket's windows are
	// always asked for: months vary, and a zone's changes of offset merge buckets.
	TimeWindowExpr make_expr(const FnWindowSpec &spec, flownode::Window *memo, uint32_t memo_slots) {
		if (spec.kind == FN_WINDOW_DATE_BIN)
			return TimeWindowExpr::fixed_at(nominal_usec(spec), spec.origin, &calendar);
		if (spec.kind == FN_WINDOW_TIME_BUCKET)
			return TimeWindowExpr::calendar(nominal_usec(spec), &buckets, memo, memo_slots);
		if (calendar.fixed_stride())
			return TimeWindowExpr::fixed(nominal_usec(spec), &calendar);
		return TimeWindowExpr::calendar(nominal_usec(spec), &calendar, memo, memo_slots);
	}
	flownode::WindowCalendar &own_calendar(const FnWindowSpec &spec) {
		return spec.kind == FN_WINDOW_TIME_BUCKET ? static_cast<flownode::WindowCalendar &>(buckets)
		                                          : calendar;
	}
};

extern "C" FnWindow *fn_window_create(const FnWindowSpec *spec) {
	return invoke_cpp("window", [&] {
		if ((spec->kind == FN_WINDOW_DATE_BIN || spec->kind == FN_WINDOW_TIME_BUCKET) &&
		    nominal_usec(*spec) <= 0)
			throw std::invalid_argument("date_bin stride must be positive");
		// a fixed stride needs no memo (sized before the calendar exists: the same test)
		uint32_t slots = spec->kind == FN_WINDOW_DATE_BIN || PgCalendar::fixed_stride_trunc(*spec)
		                     ? 0
		                     : TimeWindowExpr::memo_slots_for(nominal_usec(*spec));
		size_t head = MAXALIGN(sizeof(FnWindow));
		size_t size = head + sizeof(flownode::Window) * slots;
		// zeroed: an entry with lower == upper is empty
		char *mem = static_cast<char *>(pg_call([&] { return palloc0(size); }));
		auto *memo = slots ? reinterpret_cast<flownode::Window *>(mem + head) : nullptr;
		return new (mem) FnWindow(*spec, memo, slots);
	});
}

extern "C" FnTimeRange fn_window_of(FnWindow *w, int64_t ts) {
	return invoke_cpp("window", [&] { return w->expr.window_of(ts).range(); });
}

extern "C" uint64_t fn_window_count(FnWindow *w, FnTimeRange r, uint64_t cap) {
	return invoke_cpp("window", [&] {
		uint64_t counted = 0;
		w->expr.advance(r, cap, &counted);
		return counted;
	});
}

extern "C" int64_t fn_window_nominal_usec(FnWindow *w) {
	return w->expr.nominal_size();
}

extern "C" int fn_window_stride(FnWindow *w, int64_t *anchor, int64_t *stride) {
	if (!w->expr.is_fixed())
		return -1;
	return w->expr.stride_anchor(anchor, stride) ? 1 : 0;
}

extern "C" void fn_window_check(const FnWindowSpec *spec) {
	FnWindow *w = fn_window_create(spec);
	// PostgreSQL's own window of 2000-01-01: a stride, unit or zone it refuses fails
	// here (date_bin's windows are otherwise computed without asking it)
	(void)invoke_cpp("window", [&] { return w->own_calendar(*spec).truncate(0); });
	(void)fn_window_of(w, 0);
	pfree(w);
}

extern "C" const char *fn_trunc_unit_name(int dtk) {
	for (const TruncUnit &u : kTruncUnits)
		if (u.dtk == dtk)
			return u.name;
	return nullptr;
}

extern "C" void fn_dirty_add(FnDirtySet s, FnTimeRange r) {
	DirtyTimeWindows(s.ranges, s.count, s.capacity).add(r);
}

extern "C" uint64_t fn_dirty_merge_stage(FnDirtySet s, FnTimeRange *stage, uint32_t n,
                                         uint32_t stage_capacity, uint64_t below) {
	return DirtyTimeWindows(s.ranges, s.count, s.capacity).merge_stage(stage, n, stage_capacity, below);
}

extern "C" void fn_dirty_add_all(FnDirtySet s, const FnTimeRange *rs, uint32_t n) {
	DirtyTimeWindows(s.ranges, s.count, s.capacity).add_all(rs, n);
}

extern "C" void fn_dirty_subtract(FnDirtySet s, FnTimeRange r) {
	DirtyTimeWindows(s.ranges, s.count, s.capacity).subtract(r);
}

extern "C" bool fn_dirty_cut_below(FnDirtySet s, int64_t t) {
	return DirtyTimeWindows(s.ranges, s.count, s.capacity).cut_below(t);
}

extern "C" bool fn_dirty_covers(FnDirtySet s, FnTimeRange r) {
	return DirtyTimeWindows(s.ranges, s.count, s.capacity).covers(r);
}

extern "C" void fn_durable_add_all(FnDirtySet s, const FnTimeRange *rs, uint32_t n) {
	DirtyTimeWindows(s.ranges, s.count, s.capacity).add_all_exact(rs, n);
}

extern "C" void fn_durable_remove(FnDirtySet s, FnTimeRange r) {
	DirtyTimeWindows set(s.ranges, s.count, s.capacity);

	if (set.size() < set.capacity()) // room for a split: exact
		set.subtract(r);
	else
		set.drop_overlapping(r);
}

namespace {

// A RowProbe over the C callbacks: each call into PostgreSQL guarded.
class CallbackProbe final : public flownode::RowProbe {
  public:
	explicit CallbackProbe(FnRowProbe *p) : p_(p) {}
	uint64_t rows(FnTimeRange r, uint64_t limit, int64_t *last) override {
		return pg_call([&] { return p_->rows(p_->arg, r, limit, last); });
	}

  private:
	FnRowProbe *p_;
};

} // namespace

extern "C" uint32_t fn_plan_take(FnWindow *w, const FnTimeRange *ranges, uint32_t n, uint64_t max_rows,
                                 FnRowProbe *probe, FnTimeRange *out, uint64_t *windows, uint64_t *rows,
                                 bool *backlog_remains) {
	return invoke_cpp("plan", [&] {
		flownode::TakePlan plan;
		if (probe != nullptr && w != nullptr) {
			CallbackProbe source(probe);
			plan = flownode::plan_take_rows(ranges, n, max_rows, source, w->expr);
		} else
			plan = flownode::plan_take_all(ranges, n, w != nullptr ? &w->expr : nullptr);
		uint32_t k = 0;
		for (const FnTimeRange &r : plan.ranges)
			out[k++] = r;
		*windows = plan.windows;
		*rows = plan.rows;
		*backlog_remains = plan.backlog_remains;
		return k;
	});
}

extern "C" uint64_t fn_next_row_budget(uint64_t budget, uint64_t cap, int64_t last_run_usec, bool failed) {
	return flownode::next_row_budget(budget, cap, last_run_usec, failed);
}

extern "C" bool fn_fold_holds(int64_t line, int64_t reported) {
	return flownode::fold_holds(line, reported);
}

extern "C" int64_t fn_fold_next_line(int64_t line, int64_t reported, int64_t slack, int64_t window_end) {
	return flownode::fold_next_line(line, reported, slack, window_end);
}

extern "C" int64_t fn_fold_slack_after_late_row(int64_t slack, int64_t window_width) {
	return flownode::fold_slack_after_late_row(slack, window_width);
}

extern "C" int64_t fn_fold_slack_after_fold(int64_t slack) {
	return flownode::fold_slack_after_fold(slack);
}

extern "C" int64_t fn_next_sleep_usec(int64_t eval_interval_usec, int64_t window_size_usec,
                                      int64_t min_refresh_usec, int64_t max_backoff_usec,
                                      int64_t last_run_usec, bool backlog_remains,
                                      uint32_t consecutive_failures) {
	flownode::Cadence c{eval_interval_usec, window_size_usec, min_refresh_usec, max_backoff_usec};
	return flownode::next_sleep_usec(c, last_run_usec, backlog_remains, consecutive_failures);
}

extern "C" int64_t fn_next_eval_at(int64_t eval_interval_usec, int64_t window_size_usec,
                                   int64_t min_refresh_usec, int64_t max_backoff_usec, int64_t started,
                                   int64_t finished, bool backlog_remains, uint32_t consecutive_failures) {
	flownode::Cadence c{eval_interval_usec, window_size_usec, min_refresh_usec, max_backoff_usec};
	return flownode::next_eval_at(c, started, finished, backlog_remains, consecutive_failures);
}

extern "C" int64_t fn_next_eval_after_upstream(int64_t eval_interval_usec, int64_t min_refresh_usec,
                                               int64_t now, int64_t next_eval,
                                               uint32_t consecutive_failures) {
	flownode::Cadence c{eval_interval_usec, 0, min_refresh_usec, 0};
	return flownode::next_eval_after_upstream(c, now, next_eval, consecutive_failures);
}

extern "C" bool fn_key_marks_add(FnKeyMark *marks, uint32_t *count, uint32_t capacity, uint32_t per_window,
                                 FnTimeRange window, uint64_t hash) {
	return invoke_cpp("key marks", [&] {
		return flownode::KeyMarks(marks, count, capacity, per_window).add(window, hash);
	});
}

extern "C" uint32_t fn_key_marks_plan(FnKeyMark *marks, uint32_t n, const FnTimeRange *whole, uint32_t nwhole,
                                      uint32_t per_window, FnTimeRange *to_whole, uint32_t *n_whole) {
	return invoke_cpp("key marks", [&] {
		return flownode::plan_key_refresh(marks, n, whole, nwhole, per_window, to_whole, n_whole);
	});
}
