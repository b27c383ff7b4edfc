// The two error guards between C++ and PostgreSQL (DESIGN §6). A PostgreSQL ERROR is
// a longjmp that would skip C++ destructors; a C++ exception must not unwind through
// PostgreSQL's C frames. So:
//  - pg_call(f): every call from C++ into a PostgreSQL function that can ereport runs
//    inside PG_TRY; an ERROR becomes a PgError exception carrying the ErrorData.
//  - invoke_cpp(what, f): every entry from PostgreSQL into C++ catches everything and,
//    once no C++ frame with a destructor is left, re-raises it as a PostgreSQL ERROR.
// Only boundary files (src/core_bridge.cpp) include this header.
#pragma once
#define FLOWNODE_PG_BOUNDARY 1

extern "C" {
#include "postgres.h"

#include "utils/elog.h"
#include "utils/memutils.h"
}

#include <exception>
#include <stdexcept>
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
	ErrorData *edata = nullptr;
	R result{};
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

// Runs f, returning its result; any exception becomes ereport(ERROR) raised from
// this frame, after the exception object is destroyed.
template <typename F> auto invoke_cpp(const char *what, F &&f) -> decltype(f()) {
	ErrorData *edata = nullptr;
	char message[256];
	int sqlstate = ERRCODE_INTERNAL_ERROR;
	message[0] = '\0';
	try {
		return f();
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
	if (edata != nullptr)
		ReThrowError(edata);
	ereport(ERROR, (errcode(sqlstate), errmsg("flownode: %s: %s", what, message)));
	pg_unreachable();
}

} // namespace flownode
