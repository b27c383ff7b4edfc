// The two error guards between C++ and PostgreSQL (docs/internals.md §7). A PostgreSQL ERROR is
// a longjmp that would skip C++ destructors; a C++ exception must not unwind through
// PostgreSQL's C frames. So:
//  - pg_call(f): every call from C++ into a PostgreSQL function that can ereport runs
//    inside PG_TRY; an ERROR becomes a PgError exception carrying the ErrorData.
//  - invoke_cpp(what, f): every entry from PostgreSQL into C++ catches everything and,
//    once no C++ frame with a destructor is left, re-raises it as a PostgreSQL ERROR.
// Only boundary files (src/bridge/core_bridge.cpp) include this header.
#pragma once
#define FLOWNODE_PG_BOUNDARY 1

extern "C" {
#include "postgres.h"

#include "utils/elog.h"
#include "utils/memutils.h"
}

#include <exception>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "core/time_window_expr.hpp"

namespace flownode {

// A PostgreSQL ERROR caught by pg_call, carried across C++ frames as an exception.
struct PgError : std::exception {
	explicit PgError(ErrorData *e) : edata(e) {}
	const char *what() const noexcept override { return edata->message ? edata->message : "error"; }
	ErrorData *edata; // palloc'd, re-thrown by invoke_cpp
};

template <typename F> auto pg_call(F &&f) -> decltype(f()) {
	using R = decltype(f());
	MemoryContext ctx = CurrentMemoryContext;
	// both change between the setjmp of PG_TRY and a longjmp into PG_CATCH
	ErrorData *volatile edata = nullptr;
	volatile R result{};
	PG_TRY();
	{ result = f(); }
	PG_CATCH();
	{
		MemoryContextSwitchTo(ctx);
		edata = CopyErrorData();
		FlushErrorState();
	}
	PG_END_TRY();
	if (edata != nullptr)
		throw PgError(edata);
	return result;
}

// PostgreSQL's error handlers in effect: PG_TRY pushes one, PG_END_TRY pops it. A
// C++ exception thrown inside a PG_TRY block (rather than by pg_call, after it)
// unwinds past its PG_END_TRY and leaves these pointing into dead frames, where the
// next ERROR would longjmp. invoke_cpp compares them with its entry's at every exit.
struct PgHandlers {
	sigjmp_buf *exception_stack;
	ErrorContextCallback *context_stack;
	static PgHandlers current() noexcept { return {PG_exception_stack, error_context_stack}; }
	bool intact() const noexcept {
		return PG_exception_stack == exception_stack && error_context_stack == context_stack;
	}
	void restore() const noexcept {
		PG_exception_stack = exception_stack;
		error_context_stack = context_stack;
	}
};

// Runs f, returning its result; any exception becomes ereport(ERROR) raised from
// this frame, after the exception object is destroyed. f's result must need no
// destructor: a PostgreSQL ERROR raised here must not skip one.
template <typename F> auto invoke_cpp(const char *what, F &&f) -> decltype(f()) {
	using R = decltype(f());
	static_assert(std::is_trivially_destructible<R>::value, "invoke_cpp returns plain data only");
	const PgHandlers entry = PgHandlers::current();
	ErrorData *edata = nullptr;
	char message[256];
	int sqlstate = ERRCODE_INTERNAL_ERROR;
	message[0] = '\0';
	try {
		R result = f();
		if (entry.intact())
			return result;
	} catch (PgError &e) {
		edata = e.edata;
	} catch (WindowRangeError &e) {
		strlcpy(message, e.what(), sizeof(message));
		sqlstate = ERRCODE_DATETIME_VALUE_OUT_OF_RANGE;
	} catch (std::bad_alloc &) {
		strlcpy(message, "out of memory", sizeof(message));
		sqlstate = ERRCODE_OUT_OF_MEMORY;
	} catch (std::exception &e) {
		strlcpy(message, e.what(), sizeof(message));
	} catch (...) {
		strlcpy(message, "unknown C++ exception", sizeof(message));
	}
	if (!entry.intact()) {
		// a bug of ours, not the user's: the handlers are put back so that this
		// ERROR, and every later one, lands where it should
		entry.restore();
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
		                errmsg("flownode: %s: a C++ exception crossed a PostgreSQL error handler", what)));
	}
	if (edata != nullptr)
		ReThrowError(edata);
	ereport(ERROR, (errcode(sqlstate), errmsg("flownode: %s: %s", what, message)));
	pg_unreachable();
}

} // namespace flownode
