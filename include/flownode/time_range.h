/*
 * A half-open range of timestamps [start, end) in PostgreSQL's internal unit
 * (microseconds since 2000-01-01, the same int64 for timestamp and timestamptz).
 * Shared by the C shims and the C++ core: it lives in shared memory.
 */
#ifndef FLOWNODE_TIME_RANGE_H
#define FLOWNODE_TIME_RANGE_H

#include <stdint.h>

typedef struct FnTimeRange {
	int64_t start;
	int64_t end;
} FnTimeRange;

#endif
